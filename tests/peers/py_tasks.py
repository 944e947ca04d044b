"""SRV-5 peer: a FastMCP server with the PyPI `fastmcp-tasks` extension (SEP-2663,
`io.modelcontextprotocol/tasks`, in-memory Docket backend). `crunch` runs only as a task and
reports its steps with `ctx.report_progress` (the task's status messages); `wait_forever` says
"waiting" and holds until cancelled, then writes `cancelled` to the file `--cancel-marker` names.

Usage: py_tasks.py [--cancel-marker FILE]
"""

import argparse
import asyncio
import pathlib
from datetime import timedelta

from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

parser = argparse.ArgumentParser()
parser.add_argument("--cancel-marker")
args = parser.parse_args()

mcp = FastMCP("py-tasks")
mcp.add_extension(TasksExtension(url="memory://"))

# Task-only tools, polled every 50 ms (the server's `pollIntervalMs`).
TASK_ONLY = TaskConfig(mode="required", poll_interval=timedelta(milliseconds=50))


@mcp.tool(task=TASK_ONLY)
async def crunch(steps: int, ctx: Context) -> str:
    """Counts to `steps` as a background task."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, None, f"crunching {step} of {steps}")
        await asyncio.sleep(0.05)
    return f"crunched {steps}"


@mcp.tool(task=TASK_ONLY)
async def wait_forever(ctx: Context) -> str:
    """Holds until cancelled."""
    await ctx.report_progress(0, None, "waiting")
    try:
        while True:
            await asyncio.sleep(0.1)
    except asyncio.CancelledError:
        if args.cancel_marker:
            pathlib.Path(args.cancel_marker).write_text("cancelled\n")
        raise


if __name__ == "__main__":
    mcp.run(show_banner=False)
