"""Serving an official Python SDK (PyPI `mcp` 2.x) server as one written for the 2025
revisions only: a `server/discover` probe is refused (or, with `WAVE_PY_SILENT_PROBE_LOG=<file>`,
never answered and logged there), so the client falls back to `initialize` (SPEC-1). Used by
peers whose features exist only on those revisions (mid-call elicitation, logging).
"""

import io
import json
import os
import sys

import anyio


class Legacy2025Stdin:
    """Stdin for a 2025-only server: a `server/discover` probe is answered "method not found"
    here and never reaches the SDK, whose connection then opens with `initialize`."""

    def __init__(self, stdin, stdout):
        self.stdin = stdin
        self.stdout = stdout

    def __aiter__(self):
        return self.lines()

    async def lines(self):
        async for line in self.stdin:
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            if isinstance(message, dict) and message.get("method") == "server/discover":
                silent = os.environ.get("WAVE_PY_SILENT_PROBE_LOG")
                if silent:
                    # A server that never answers the probe: the client waits out its timeout.
                    with open(silent, "a") as log:
                        log.write("discover\n")
                    continue
                error = {"code": -32601, "message": "Method not found", "data": "server/discover"}
                await self.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "error": error}) + "\n")
                await self.stdout.flush()
                continue
            yield line


async def serve_2025_only(server) -> None:
    """Runs `server` (an `MCPServer`) on stdio, 2025 revisions only."""
    from mcp.server.stdio import stdio_server

    stdin = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8"))
    lowlevel = server._lowlevel_server
    async with stdio_server(Legacy2025Stdin(stdin, stdout), stdout) as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
