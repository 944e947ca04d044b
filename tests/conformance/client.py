#!/usr/bin/env python3
"""The client the official MCP conformance suite runs (`client.py <server-url>`): it drives only
the public CLI of `wave-mcp`, as a user would.

It writes a project `.mcp.json` with one server `s` (HTTP, the scenario's URL; the `oauth`
object from `MCP_CONFORMANCE_CONTEXT` where the scenario gives credentials), approves it, lists
its tools (`wave-mcp tools s --json`) and calls each one (`wave-mcp call`) on a pseudo-terminal,
accepting a server's questions with their defaults. When a command says the server needs
sign-in, it runs `wave-mcp login s` with `$BROWSER` set to browser.py (follows redirects), at
most 3 times, and tries again. Exits non-zero when a command it needed failed.

Environment: WAVE_MCP_BIN (the wave-mcp binary), MCP_CONFORMANCE_SCENARIO,
MCP_CONFORMANCE_CONTEXT (JSON, optional).
"""
import json
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("WAVE_MCP_BIN", "wave-mcp")
MAX_LOGINS = 3
# The document the conformance suite's CIMD scenario expects as client id.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def log(*parts):
    print("adapter:", *parts, file=sys.stderr, flush=True)


def oauth_entry(scenario, ctx, tmp):
    """The entry's `oauth` object for this scenario's credentials (README: `oauth` keys)."""
    if "idp_id_token" in ctx:
        return {
            "grant": "jwt-bearer",
            "clientId": ctx["client_id"],
            "clientSecret": ctx["client_secret"],
            "idp": {
                "issuer": ctx["idp_issuer"],
                "tokenEndpoint": ctx["idp_token_endpoint"],
                "clientId": ctx["idp_client_id"],
                "idToken": ctx["idp_id_token"],
            },
        }
    if "private_key_pem" in ctx:
        key = os.path.join(tmp, "client-key.pem")
        with open(key, "w") as f:
            f.write(ctx["private_key_pem"])
        return {
            "grant": "client_credentials",
            "clientId": ctx["client_id"],
            "privateKeyPath": key,
            "signingAlgorithm": ctx.get("signing_algorithm", "ES256"),
        }
    if "client_id" in ctx and scenario.startswith("auth/client-credentials"):
        return {
            "grant": "client_credentials",
            "clientId": ctx["client_id"],
            "clientSecret": ctx["client_secret"],
        }
    if "client_id" in ctx:
        entry = {"clientId": ctx["client_id"]}
        if "client_secret" in ctx:
            entry["clientSecret"] = ctx["client_secret"]
        return entry
    if scenario.startswith("auth/"):
        return {"clientMetadataUrl": CLIENT_METADATA_URL}
    return None


def run(args, env, answer=False, timeout=25):
    """Runs `wave-mcp ARGS`; with `answer`, on a pseudo-terminal that accepts questions with
    their defaults. Returns (exit code, all output, standard output)."""
    cmd = [BIN, *args]
    log("$", " ".join(cmd))
    if not answer:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        out = p.stdout + p.stderr
        sys.stderr.write(out)
        return p.returncode, out, p.stdout
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(cmd[0], cmd, env)
    out, pending, deadline = b"", b"", time.time() + timeout
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            text = pending.decode(errors="replace")
            if "[a]ccept" in text and text.rstrip().endswith("?"):
                os.write(fd, b"a\n")
                pending = b""
            elif text.endswith(": "):
                os.write(fd, b"\n")
                pending = b""
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        pending += chunk
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    text = out.decode(errors="replace").replace("\r\n", "\n")
    sys.stderr.write(text)
    return os.waitstatus_to_exitcode(status), text, text


def needs_sign_in(output):
    return re.search(r"needs-auth|needs sign-in|wave-mcp login", output) is not None


def arguments_for(schema):
    values = {"number": 1, "integer": 1, "boolean": True, "string": "text"}
    props = (schema or {}).get("properties") or {}
    return {name: values.get(p.get("type"), "text") for name, p in props.items()}


def main():
    url = sys.argv[1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    ctx = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    tmp = tempfile.mkdtemp(prefix="wave-conformance-")
    home, work = os.path.join(tmp, "home"), os.path.join(tmp, "work")
    os.makedirs(home)
    os.makedirs(work)
    entry = {"type": "http", "url": url}
    oauth = oauth_entry(scenario, ctx, tmp)
    if oauth is not None:
        entry["oauth"] = oauth
    with open(os.path.join(work, ".mcp.json"), "w") as f:
        json.dump({"mcpServers": {"s": entry}}, f)
    env = dict(os.environ, HOME=home, BROWSER=os.path.join(HERE, "browser.py"),
               WAVE_LOGIN_TIMEOUT_SECS="20")
    w = ["--workdir", work]
    code, _, _ = run(["approve", "s", *w], env)
    if code != 0:
        return 1
    logins = 0

    def with_sign_in(args, answer=False):
        nonlocal logins
        while True:
            code, out, stdout = run(args, env, answer=answer)
            if code == 0 or not needs_sign_in(out) or logins >= MAX_LOGINS:
                return code, stdout
            logins += 1
            if run(["login", "s", *w], env)[0] != 0:
                return code, stdout

    code, out = with_sign_in(["tools", "s", "--json", *w])
    if code != 0:
        return 1
    tools = json.loads(out[out.index("{"):out.rindex("}") + 1])["tools"]
    failed = False
    for tool in tools:
        args = json.dumps(arguments_for(tool.get("inputSchema")))
        code, _ = with_sign_in(["call", "s", tool["name"], args, *w], answer=True)
        failed |= code != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
