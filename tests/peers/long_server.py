"""A long-running-tools MCP server on the official Python SDK (PyPI `mcp` 2.x), a test peer for
LONG-2 … LONG-4: progress (`ctx.report_progress`) and cancellation (`notifications/cancelled`).

    long_server.py --log FILE

Every event is appended to FILE as one line, `<event> <request id>`, so a test can check on the
server side what arrived: `started`, `progress`, `finished`, and `cancelled` (the SDK cancels a
handler only for a `notifications/cancelled` whose `requestId` is that request's).
"""

import argparse

import anyio
from mcp.server.mcpserver import Context, MCPServer


def build(log_path: str) -> MCPServer:
    server = MCPServer("long-peer")

    def log(event: str, ctx: Context) -> None:
        with open(log_path, "a", encoding="utf-8") as log_file:
            log_file.write(f"{event} {ctx.request_id}\n")

    @server.tool()
    async def sleepy(seconds: float, ctx: Context) -> str:
        """Sleeps without reporting progress, then answers."""
        log("started", ctx)
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            log("cancelled", ctx)
            raise
        log("finished", ctx)
        return f"slept {seconds}s"

    @server.tool()
    async def steps(count: int, interval: float, ctx: Context) -> str:
        """Works through `count` steps of `interval` seconds, reporting progress after each."""
        log("started", ctx)
        try:
            for step in range(1, count + 1):
                await anyio.sleep(interval)
                await ctx.report_progress(step, count, f"step {step} of {count}")
                log("progress", ctx)
        except anyio.get_cancelled_exc_class():
            log("cancelled", ctx)
            raise
        log("finished", ctx)
        return f"did {count} steps"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    build(args.log).run()


if __name__ == "__main__":
    main()
