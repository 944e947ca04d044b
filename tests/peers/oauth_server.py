"""A test authorization server of our own plus two MCP resource servers, for the sign-in tests.

    oauth_server.py [--mcp-port N] [--mcp-port-b N] [--as-port N] [--expires-in SECONDS]
                    [--no-metadata] [--no-s256] [--refuse-registration] [--callback-error]
                    [--wrong-state] [--token-error] [--refresh-error] [--insecure-endpoint]

One process, all on 127.0.0.1 (port 0 = a free one):

- two MCP resource servers ("a" at --mcp-port, "b" at --mcp-port-b) on the official Python SDK
  (PyPI `mcp` 2.x) over Streamable HTTP at /mcp, each requiring a Bearer token issued for its own
  URL (the SDK's resource-server auth: `token_verifier` + `AuthSettings`, RFC 9728 metadata,
  401 + WWW-Authenticate); one tool, `whoami`, names the server and the calling client;
- in a thread, an authorization server on stdlib http.server: RFC 8414 metadata, /register
  (RFC 7591), /authorize (approves at once: 302 to the redirect URI with code and state),
  /token (authorization_code with PKCE S256 verified and `resource` recorded; refresh_token with
  rotation: each refresh token is good once, a reuse is `invalid_grant` and counted), /revoke
  (RFC 7009), and for the tests GET /stats (JSON: requests per endpoint, refreshes, refresh-token
  reuses, revoked tokens, the tokens each resource server was presented, every secret handed out
  or received) and POST /fault?name=NAME&on=1|0 (turns a fault on or off at run time; the flags
  above turn them on at start), /fault?name=expires-in&value=S, /fault?name=refresh-delay-ms&value=MS
  (holds each refresh so that concurrent ones overlap).

SIGUSR1 prints every thread's Python stack on stderr (a test's diagnosis of a hang).

When everything listens it prints one JSON line on stdout:
{"pid": ..., "a": "http://127.0.0.1:P/mcp", "b": "http://127.0.0.1:P2/mcp", "as": "http://127.0.0.1:Q"}
"""

import argparse
import asyncio
import base64
import faulthandler
import hashlib
import json
import os
import secrets
import signal
import socket
import sys
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

FAULTS = [
    "no-metadata",
    "no-s256",
    "refuse-registration",
    "callback-error",
    "wrong-state",
    "token-error",
    "refresh-error",
    "insecure-endpoint",
]


class State:
    """Everything the authorization server knows, shared with the resource servers' verifier."""

    def __init__(self, expires_in: int, faults: set[str]):
        self.lock = threading.Lock()
        self.expires_in = expires_in
        self.faults = set(faults)
        self.clients: dict[str, dict] = {}
        self.codes: dict[str, dict] = {}
        self.access: dict[str, dict] = {}
        self.refresh: dict[str, dict] = {}
        self.requests: dict[str, int] = {}
        self.refresh_ok = 0
        self.refresh_reuse = 0
        self.revoked: list[str] = []
        self.presented: dict[str, list[str]] = {"a": [], "b": []}
        self.resources_asked: list[str] = []
        # Every secret handed out or received (codes, verifiers, tokens), for leak checks.
        self.secrets: list[str] = []
        self.refresh_delay = 0.0

    def count(self, endpoint: str) -> None:
        with self.lock:
            self.requests[endpoint] = self.requests.get(endpoint, 0) + 1

    def fault(self, name: str) -> bool:
        with self.lock:
            return name in self.faults

    def issue(self, client_id: str, resource: str, scope: str) -> dict:
        access = "at-" + secrets.token_urlsafe(24)
        refresh = "rt-" + secrets.token_urlsafe(24)
        self.access[access] = {
            "client_id": client_id,
            "resource": resource,
            "scope": scope,
            "expires_at": int(time.time()) + self.expires_in,
        }
        self.secrets += [access, refresh]
        self.refresh[refresh] = {"client_id": client_id, "resource": resource, "scope": scope, "used": False}
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
            "refresh_token": refresh,
            "scope": scope,
        }

    def stats(self) -> dict:
        with self.lock:
            return {
                "requests": dict(self.requests),
                "as_requests": sum(n for k, n in self.requests.items() if k.startswith("as:")),
                "clients": len(self.clients),
                "refresh_ok": self.refresh_ok,
                "refresh_reuse": self.refresh_reuse,
                "revoked": list(self.revoked),
                "presented": {k: list(v) for k, v in self.presented.items()},
                "issued": {t: r["resource"] for t, r in self.access.items()},
                "resources_asked": list(self.resources_asked),
                "secrets": list(self.secrets),
                "faults": sorted(self.faults),
            }


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def make_as_handler(state: State, issuer_box: list):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet
            pass

        def reply(self, status: int, body, headers: dict | None = None) -> None:
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            if body is not None:
                self.send_header("content-type", "application/json")
            self.send_header("cache-control", "no-store")
            self.send_header("content-length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def form(self) -> dict:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length).decode() if length else ""
            if "json" in (self.headers.get("content-type") or ""):
                return json.loads(raw or "{}")
            return {k: v[0] for k, v in parse_qs(raw).items()}

        def metadata(self) -> dict:
            issuer = issuer_box[0]
            token_endpoint = issuer + "/token"
            if state.fault("insecure-endpoint"):
                # Unresolvable on purpose: nothing must ever try it.
                token_endpoint = "http://as.invalid/token"
            return {
                "issuer": issuer,
                "authorization_endpoint": issuer + "/authorize",
                "token_endpoint": token_endpoint,
                "registration_endpoint": issuer + "/register",
                "revocation_endpoint": issuer + "/revoke",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["plain"] if state.fault("no-s256") else ["S256"],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
                "scopes_supported": ["mcp"],
            }

        def do_GET(self) -> None:
            url = urlparse(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            if url.path == "/stats":
                return self.reply(200, state.stats())
            if url.path.startswith("/.well-known/"):
                state.count("as:metadata")
                if state.fault("no-metadata"):
                    return self.reply(404, {"error": "not_found"})
                if url.path.startswith(("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")):
                    return self.reply(200, self.metadata())
                return self.reply(404, {"error": "not_found"})
            if url.path == "/authorize":
                state.count("as:authorize")
                return self.authorize(query)
            state.count("as:other")
            self.reply(404, {"error": "not_found"})

        def authorize(self, q: dict) -> None:
            client_id, redirect_uri = q.get("client_id", ""), q.get("redirect_uri", "")
            with state.lock:
                client = state.clients.get(client_id)
            known = client is not None or client_id.startswith("pre-")
            if not known or (client and redirect_uri not in client["redirect_uris"]):
                return self.reply(400, {"error": "invalid_request", "error_description": "unknown client or redirect"})
            if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
                return self.reply(400, {"error": "invalid_request", "error_description": "PKCE S256 required"})
            state_param = q.get("state", "")
            if state.fault("callback-error"):
                target = {"error": "access_denied", "error_description": "the user said no", "state": state_param}
            else:
                code = "code-" + secrets.token_urlsafe(16)
                with state.lock:
                    state.codes[code] = {
                        "client_id": client_id,
                        "redirect_uri": redirect_uri,
                        "challenge": q["code_challenge"],
                        "resource": q.get("resource", ""),
                        "scope": q.get("scope", "mcp"),
                    }
                    state.resources_asked.append(q.get("resource", ""))
                    state.secrets.append(code)
                forged = "forged-" + secrets.token_urlsafe(8)
                target = {"code": code, "state": forged if state.fault("wrong-state") else state_param}
            sep = "&" if "?" in redirect_uri else "?"
            self.reply(302, None, {"location": redirect_uri + sep + urlencode(target)})

        def do_POST(self) -> None:
            url = urlparse(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            if url.path == "/fault":
                name = query.get("name", "")
                if name == "expires-in":
                    state.expires_in = int(query.get("value", "3600"))
                    return self.reply(200, state.stats())
                if name == "refresh-delay-ms":
                    # Holds each refresh this long, so that concurrent refreshes overlap.
                    state.refresh_delay = int(query.get("value", "0")) / 1000
                    return self.reply(200, state.stats())
                if name not in FAULTS:
                    return self.reply(400, {"error": f"unknown fault {name}"})
                with state.lock:
                    if query.get("on", "1") == "1":
                        state.faults.add(name)
                    else:
                        state.faults.discard(name)
                return self.reply(200, state.stats())
            try:
                body = self.form()
            except ValueError:
                return self.reply(400, {"error": "invalid_request"})
            if url.path == "/register":
                state.count("as:register")
                if state.fault("refuse-registration"):
                    return self.reply(
                        400, {"error": "invalid_client_metadata", "error_description": "registration is closed"}
                    )
                client_id = "client-" + secrets.token_urlsafe(8)
                with state.lock:
                    state.clients[client_id] = {"redirect_uris": list(body.get("redirect_uris") or [])}
                return self.reply(
                    201,
                    {
                        "client_id": client_id,
                        "client_id_issued_at": int(time.time()),
                        "redirect_uris": body.get("redirect_uris") or [],
                        "client_name": body.get("client_name", ""),
                        "token_endpoint_auth_method": "none",
                        "grant_types": ["authorization_code", "refresh_token"],
                        "response_types": ["code"],
                    },
                )
            if url.path == "/token":
                state.count("as:token")
                return self.token(body)
            if url.path == "/revoke":
                state.count("as:revoke")
                token = body.get("token") or query.get("token", "")
                with state.lock:
                    found = state.access.pop(token, None) or state.refresh.pop(token, None)
                    if found is not None:
                        state.revoked.append(token)
                return self.reply(200, None)
            state.count("as:other")
            self.reply(404, {"error": "not_found"})

        def token(self, body: dict) -> None:
            grant = body.get("grant_type")
            if grant == "authorization_code":
                state.count("as:token:authorization_code")
                if state.fault("token-error"):
                    return self.reply(
                        400, {"error": "invalid_grant", "error_description": "the test server refuses this code"}
                    )
                with state.lock:
                    if body.get("code_verifier"):
                        state.secrets.append(body["code_verifier"])
                    code = state.codes.pop(body.get("code", ""), None)
                    if code is None or code["client_id"] != body.get("client_id"):
                        return self.reply(400, {"error": "invalid_grant", "error_description": "unknown code"})
                    if code["redirect_uri"] != body.get("redirect_uri"):
                        return self.reply(400, {"error": "invalid_grant", "error_description": "redirect_uri differs"})
                    if s256(body.get("code_verifier", "")) != code["challenge"]:
                        return self.reply(400, {"error": "invalid_grant", "error_description": "PKCE verification failed"})
                    resource = body.get("resource") or code["resource"]
                    return self.reply(200, state.issue(code["client_id"], resource, code["scope"]))
            if grant == "refresh_token":
                state.count("as:token:refresh_token")
                if state.fault("refresh-error"):
                    return self.reply(400, {"error": "invalid_grant", "error_description": "refresh refused"})
                if state.refresh_delay:
                    time.sleep(state.refresh_delay)
                with state.lock:
                    record = state.refresh.get(body.get("refresh_token", ""))
                    if record is None:
                        return self.reply(400, {"error": "invalid_grant", "error_description": "unknown refresh token"})
                    if record["used"]:
                        state.refresh_reuse += 1
                        return self.reply(400, {"error": "invalid_grant", "error_description": "refresh token reused"})
                    record["used"] = True
                    state.refresh_ok += 1
                    resource = body.get("resource") or record["resource"]
                    return self.reply(200, state.issue(record["client_id"], resource, record["scope"]))
            self.reply(400, {"error": "unsupported_grant_type"})

    return Handler


def listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    return sock


def resource_app(name: str, url: str, issuer: str, state: State):
    from mcp.server.auth.middleware.auth_context import get_access_token
    from mcp.server.auth.provider import AccessToken
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.mcpserver import MCPServer

    class Verifier:
        async def verify_token(self, token: str) -> AccessToken | None:
            with state.lock:
                state.presented[name].append(token)
                record = state.access.get(token)
            if record is None or record["expires_at"] <= int(time.time()):
                return None
            return AccessToken(
                token=token,
                client_id=record["client_id"],
                scopes=record["scope"].split(),
                expires_at=record["expires_at"],
                resource=record["resource"],
            )

    server = MCPServer(
        f"oauth-peer-{name}",
        token_verifier=Verifier(),
        auth=AuthSettings(
            issuer_url=issuer,
            resource_server_url=url,
            validate_token_resource=True,
            required_scopes=["mcp"],
        ),
    )

    @server.tool()
    def whoami() -> str:
        """Names this server and the client whose token called it."""
        token = get_access_token()
        return json.dumps({"server": name, "client_id": token.client_id if token else None})

    app = server.streamable_http_app(host="127.0.0.1")

    async def guarded(scope, receive, send):
        # --no-metadata: the protected-resource metadata is gone too.
        if scope["type"] == "http" and scope["path"].startswith("/.well-known/") and state.fault("no-metadata"):
            await send({"type": "http.response.start", "status": 404, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    return guarded


async def serve(apps: list) -> None:
    import uvicorn

    servers = []
    for app, sock in apps:
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        servers.append((uvicorn.Server(config), sock))
    await asyncio.gather(*(s.serve(sockets=[sock]) for s, sock in servers))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mcp-port", type=int, default=0)
    parser.add_argument("--mcp-port-b", type=int, default=0)
    parser.add_argument("--as-port", type=int, default=0)
    parser.add_argument("--expires-in", type=int, default=3600)
    for fault in FAULTS:
        parser.add_argument("--" + fault, action="store_true")
    args = parser.parse_args()
    faults = {f for f in FAULTS if getattr(args, f.replace("-", "_"))}
    state = State(args.expires_in, faults)
    warnings.simplefilter("ignore")
    # A test that finds us hung sends SIGUSR1: every thread's stack goes to stderr.
    faulthandler.register(signal.SIGUSR1, all_threads=True)

    as_sock, a_sock, b_sock = listen(args.as_port), listen(args.mcp_port), listen(args.mcp_port_b)
    issuer = f"http://127.0.0.1:{as_sock.getsockname()[1]}"
    issuer_box = [issuer]
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_as_handler(state, issuer_box), bind_and_activate=False)
    httpd.socket.close()
    httpd.socket = as_sock
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()

    a_url = f"http://127.0.0.1:{a_sock.getsockname()[1]}/mcp"
    b_url = f"http://127.0.0.1:{b_sock.getsockname()[1]}/mcp"
    apps = [(resource_app("a", a_url, issuer, state), a_sock), (resource_app("b", b_url, issuer, state), b_sock)]
    print(json.dumps({"pid": os.getpid(), "a": a_url, "b": b_url, "as": issuer}), flush=True)
    asyncio.run(serve(apps))
    sys.exit(0)


if __name__ == "__main__":
    main()
