"""A small MCP server on the official Python SDK (PyPI `mcp` 2.x), used as a third-party test peer.

    py_server.py [--transport stdio|streamable-http|sse] [--port N] [--instructions TEXT]

stdio by default; the HTTP transports listen on 127.0.0.1 only (Streamable HTTP at /mcp, SSE at
/sse with messages posted to /messages/). Installed by scripts/install-peers.sh into its venv.
"""

import argparse
import os

from mcp.server.mcpserver import MCPServer

DEFAULT_INSTRUCTIONS = """Python peer for wave-mcp tests.
  Tools:
    - echo: returns its text unchanged
    - add: adds two integers

This line follows a blank line."""


def build(instructions: str) -> MCPServer:
    server = MCPServer("py-peer", instructions=instructions)

    @server.tool()
    def echo(text: str) -> str:
        """Returns its text unchanged."""
        return text

    @server.tool()
    def add(a: int, b: int) -> str:
        """Adds two integers."""
        return str(a + b)

    @server.tool()
    def pid() -> str:
        """The process id of this server."""
        return str(os.getpid())

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "streamable-http", "sse"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--instructions", default=DEFAULT_INSTRUCTIONS)
    args = parser.parse_args()
    server = build(args.instructions)
    if args.transport == "stdio":
        server.run()
    else:
        if args.port <= 0:
            parser.error("--port is required for the HTTP transports")
        server.run(args.transport, host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
