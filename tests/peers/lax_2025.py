"""A bare MCP server of the 2025-06-18 revision over stdio, written without an SDK, that answers
every request it does not know with an empty result — as some hand-written servers, and the
official conformance suite's mocks, do. A client probing with `server/discover` (2026-07-28) gets
`{}` back and must fall back to `initialize` (SPEC-1). Every request's method is appended to the
file named by the first argument, so a test sees the wire.

    lax_2025.py METHODS_FILE
"""

import json
import sys

METHODS = sys.argv[1]

TOOLS = [{
    "name": "echo",
    "description": "Echo the given text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}]


def answer(message):
    method = message.get("method", "")
    params = message.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "lax-2025", "version": "1.0.0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        text = (params.get("arguments") or {}).get("text", "")
        return {"content": [{"type": "text", "text": text}]}
    return {}


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    with open(METHODS, "a", encoding="utf-8") as log:
        log.write(f"{message.get('method', 'response')}\n")
    if "id" not in message or "method" not in message:
        continue
    reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer(message)}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
