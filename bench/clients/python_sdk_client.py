"""Row 7 of the bench (docs/performance.md): the python MCP SDK client (PyPI `mcp`:
`ClientSession` over `stdio_client`, what many other hosts run), driven by `wave-mcp-bench`
beside wave-mcp on the same servers.

  python python_sdk_client.py roundtrip --calls N --warmup W -- SERVER [ARGS...]
      connects one stdio server, lists its tools, makes W `echo` calls (not timed), then N timed
      ones; prints {"samples": [seconds, ...]} (each call timed in-process with
      time.perf_counter_ns, every result checked)
  python python_sdk_client.py ready --servers K -- SERVER [ARGS...]
      connects K such servers concurrently (all spawned, then initialize + tools/list of all
      gathered) and prints {"seconds": s, "tools": n}: from before the first spawn until every
      list has arrived
  python python_sdk_client.py rss -- SERVER [ARGS...]
      imports the SDK, prints {"state": "loaded"}, waits for a line on stdin, connects the server
      (tools/list and one `echo` call), prints {"state": "connected"} and stays until stdin
      closes; the bench reads this process's VmRSS in both states

Run it with the venv's python that scripts/install-peers.sh makes ($WAVE_PEERS_DIR/venv, default
~/.cache/wave-mcp-peers/venv). Logs go to stderr; stdout carries the JSON lines only.
"""

import asyncio
import contextlib
import json
import os
import sys
import time

try:
    from mcp import ClientSession, StdioServerParameters, stdio_client
except ImportError as error:
    peers = os.environ.get("WAVE_PEERS_DIR") or os.path.expanduser("~/.cache/wave-mcp-peers")
    sys.exit(
        f"python_sdk_client: error: the python `mcp` SDK cannot be imported ({error}); run this "
        f"with {peers}/venv/bin/python (scripts/install-peers.sh installs it, or set WAVE_PEERS_DIR)"
    )


def parse(argv):
    if len(argv) < 3 or "--" not in argv or argv.index("--") + 1 >= len(argv):
        sys.exit("usage: python_sdk_client.py roundtrip|ready|rss [OPTIONS] -- SERVER [ARGS...]")
    dashes = argv.index("--")
    options = argv[1:dashes]

    def option(name, fallback):
        return int(options[options.index(name) + 1]) if name in options else fallback

    server = StdioServerParameters(command=argv[dashes + 1], args=argv[dashes + 2 :])
    return argv[0], option, server


async def echo(session, i):
    text = f"call {i}"
    result = await session.call_tool("echo", {"text": text})
    answer = result.content[0].text if result.content else None
    if result.is_error or answer != text:
        raise RuntimeError(f"echo call {i} answered {result!r}")


async def connect(stack, server):
    read, write = await stack.enter_async_context(stdio_client(server))
    return await stack.enter_async_context(ClientSession(read, write))


async def listed(session):
    await session.initialize()
    return (await session.list_tools()).tools


async def roundtrip(option, server):
    calls, warmup = option("--calls", 1000), option("--warmup", 100)
    async with contextlib.AsyncExitStack() as stack:
        session = await connect(stack, server)
        await listed(session)
        for i in range(warmup):
            await echo(session, i)
        samples = []
        for i in range(calls):
            start = time.perf_counter_ns()
            await echo(session, i)
            samples.append((time.perf_counter_ns() - start) / 1e9)
    print(json.dumps({"samples": samples}), flush=True)


async def ready(option, server):
    servers = option("--servers", 5)
    async with contextlib.AsyncExitStack() as stack:
        start = time.perf_counter_ns()
        sessions = [await connect(stack, server) for _ in range(servers)]
        lists = await asyncio.gather(*(listed(s) for s in sessions))
        seconds = (time.perf_counter_ns() - start) / 1e9
    print(json.dumps({"seconds": seconds, "tools": sum(len(t) for t in lists)}), flush=True)


async def rss(option, server):
    loop = asyncio.get_running_loop()
    print(json.dumps({"state": "loaded"}), flush=True)
    await loop.run_in_executor(None, sys.stdin.readline)
    async with contextlib.AsyncExitStack() as stack:
        session = await connect(stack, server)
        await listed(session)
        await echo(session, 0)
        print(json.dumps({"state": "connected"}), flush=True)
        while await loop.run_in_executor(None, sys.stdin.readline):
            pass  # stay connected until stdin closes


def main():
    mode, option, server = parse(sys.argv[1:])
    modes = {"roundtrip": roundtrip, "ready": ready, "rss": rss}
    if mode not in modes:
        sys.exit(f"python_sdk_client: error: unknown mode {mode} (known: roundtrip, ready, rss)")
    asyncio.run(modes[mode](option, server))


if __name__ == "__main__":
    main()
