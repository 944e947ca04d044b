#!/usr/bin/env python3
"""Prints the tools/list of one stdio MCP server as JSON, every field as the server sent it
(title, annotations, inputSchema included), with the official python SDK (PyPI `mcp`):
    list-tools.py COMMAND [ARGS...]   (the environment is passed on)
Used by scripts/record-catalog.sh (bench row 8, BUD-7)."""
import asyncio, json, os, sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def main():
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        # Declaring elicitation and sampling, as our client does: some servers list a tool only
        # for a client that has them (server-everything's trigger-elicitation-request).
        async def decline(context, params):
            return types.ElicitResult(action="decline")

        async with ClientSession(read, write, elicitation_callback=decline) as session:
            await session.initialize()
            tools, cursor = [], None
            while True:
                page = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
                tools += [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in page.tools]
                cursor = page.nextCursor
                if not cursor:
                    break
    json.dump({"tools": tools}, sys.stdout)


asyncio.run(main())
