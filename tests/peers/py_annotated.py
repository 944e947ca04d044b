"""An MCP server on the official Python SDK (PyPI `mcp` 2.x) whose tools carry MCP annotations
(title and the read-only / destructive / open-world hints), used as a third-party test peer of
tool-call consent (TRUST-5): the confirmation card shows its title and badges.

    py_annotated.py CALLS_FILE [DESCRIPTION_FILE]

DESCRIPTION_FILE, when it exists at start, is appended to `lookup`'s description: a test changes
the tool's definition (TRUST-6) without changing the server's entry.

Tools (each call appends one line `<tool> <json arguments>` to CALLS_FILE, so a test sees
whether a tool really ran):
  - drop_table(table): title "Drop a table", destructiveHint
  - lookup(query): title "Look something up", readOnlyHint and openWorldHint
  - plain(text): no annotations
"""

import json
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

CALLS = sys.argv[1]
EXTRA = ""
if len(sys.argv) > 2 and os.path.exists(sys.argv[2]):
    with open(sys.argv[2], encoding="utf-8") as f:
        EXTRA = " " + f.read().strip()

server = MCPServer("py-annotated")


def record(tool: str, arguments: dict) -> None:
    with open(CALLS, "a", encoding="utf-8") as f:
        f.write(f"{tool} {json.dumps(arguments, sort_keys=True)}\n")


@server.tool(
    title="Drop a table",
    description="Deletes a table and all of its rows.",
    annotations=ToolAnnotations(destructiveHint=True, readOnlyHint=False, openWorldHint=False),
)
def drop_table(table: str) -> str:
    record("drop_table", {"table": table})
    return f"dropped {table}"


@server.tool(
    title="Look something up",
    description="Searches the web." + EXTRA,
    annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=True),
)
def lookup(query: str) -> str:
    record("lookup", {"query": query})
    return f"found {query}"


@server.tool(description="Returns its text.")
def plain(text: str) -> str:
    record("plain", {"text": text})
    return text


if __name__ == "__main__":
    server.run()
