"""An MCP server on the official Python SDK (PyPI `mcp` 2.x) that logs (SRV-2), a third-party
test peer of the per-server log: it writes a line to stderr when it starts, and its tool `work`
sends one log message at each of four levels (`ctx.debug/info/warning/error`, logger "worker")
and writes one more stderr line. Logging exists only on the 2025 revisions (2026-07-28 removed
it, SEP-2577), so this peer speaks only those, as a server written for them does.
"""

import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("py-logging")


@server.tool(description="Does some work, logging as it goes.")
async def work(ctx: Context) -> str:
    await ctx.debug("debug detail", logger_name="worker")
    await ctx.info("started the work", logger_name="worker")
    await ctx.warning("the cache is cold", logger_name="worker")
    await ctx.error("one item failed", logger_name="worker")
    print("work done (stderr)", file=sys.stderr, flush=True)
    return "done"


if __name__ == "__main__":
    import anyio

    from legacy2025 import serve_2025_only

    print("py-logging ready (stderr)", file=sys.stderr, flush=True)
    anyio.run(serve_2025_only, server)
