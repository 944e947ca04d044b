"""SPEC-1 peer: a server on PyPI `fastmcp` 4.x (its own venv), over stdio or Streamable HTTP
(stateful, with `Mcp-Session-Id`, or stateless). Tools: `echo` (returns its text) and `add`.

Every JSON-RPC message it receives is tapped before FastMCP reads it and appended to the file
$WAVE_FASTMCP_LOG as one JSON line `{"method", "pid", "request", "metaVersion", "header", "session",
"initialize"}` (`metaVersion` is `_meta["io.modelcontextprotocol/protocolVersion"]`, `header` the
`MCP-Protocol-Version` header, `request` false for a notification, `session` the `Mcp-Session-Id` header, `initialize` the offered
`protocolVersion` of an `initialize`), so tests assert the wire.

With $WAVE_FASTMCP_SLOW_PROBE=<file> on stdio, the first process (the one that finds no <file>,
and creates it) holds the first message it receives (the `server/discover` probe) for 12 s before
FastMCP reads it, like a server that starts slowly: the probe's answer comes after the client's
10 s probe timeout.

Usage: py_fastmcp.py stdio | py_fastmcp.py http PORT [--stateless]
"""

import json
import os
import sys
import threading
import time

from fastmcp import FastMCP

LOG = os.environ.get("WAVE_FASTMCP_LOG")
META_VERSION = "io.modelcontextprotocol/protocolVersion"

mcp = FastMCP("py-fastmcp", instructions="FastMCP peer for wave-mcp.")


@mcp.tool
def echo(text: str) -> str:
    """Returns its text."""
    return f"echo: {text}"


@mcp.tool
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


def note(raw: bytes, headers: dict | None = None) -> None:
    """Appends what the wire assertions need from one received message to the log."""
    if not LOG:
        return
    try:
        message = json.loads(raw)
    except ValueError:
        return
    if not isinstance(message, dict) or "method" not in message:
        return
    params = message.get("params") or {}
    entry = {
        "method": message["method"],
        "pid": os.getpid(),
        "request": "id" in message,
        "metaVersion": (params.get("_meta") or {}).get(META_VERSION),
    }
    if message["method"] == "initialize":
        entry["initialize"] = params.get("protocolVersion")
    if headers is not None:
        entry["header"] = headers.get("mcp-protocol-version")
        entry["session"] = headers.get("mcp-session-id")
    with open(LOG, "a") as log:
        log.write(json.dumps(entry) + "\n")


def tap_stdin() -> None:
    """Puts a pipe in place of fd 0 and copies the real stdin into it line by line, noting each
    message; the pipe closes when the real stdin does, so FastMCP still sees end of input."""
    real_stdin = os.fdopen(os.dup(0), "rb", buffering=0)
    read_end, write_end = os.pipe()
    os.dup2(read_end, 0)
    os.close(read_end)

    slow = os.environ.get("WAVE_FASTMCP_SLOW_PROBE")
    hold_first = False
    if slow:
        try:
            with open(slow, "x"):
                hold_first = True
        except FileExistsError:
            pass

    def copy() -> None:
        nonlocal hold_first
        with os.fdopen(write_end, "wb", buffering=0) as pipe:
            for line in real_stdin:
                note(line)
                if hold_first:
                    hold_first = False
                    time.sleep(12)
                pipe.write(line)

    threading.Thread(target=copy, daemon=True).start()


class TapHttp:
    """ASGI middleware noting each POSTed message with its protocol headers."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        note(body, headers)
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(scope, replay, send)


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        tap_stdin()
        mcp.run(show_banner=False)
    else:
        from starlette.middleware import Middleware

        mcp.run(
            "http",
            show_banner=False,
            host="127.0.0.1",
            port=int(sys.argv[2]),
            stateless_http="--stateless" in sys.argv,
            middleware=[Middleware(TapHttp)],
            log_level="warning",
        )
