"""An MCP server on the official Python SDK (PyPI `mcp` 2.x) whose tools ask the user
(elicitation, LONG-5 ... LONG-7), used as a third-party test peer over stdio.

    py_elicit.py

Tools:
  - ask_form: a form (name, age, subscribe, colour) with `ctx.elicit`; returns what came back
  - ask_url: a URL-mode elicitation with `ctx.elicit_url`; after accept it sends
    notifications/elicitation/complete for id "url-1"
  - ask_malformed: an elicitation whose schema has an object property (not allowed); returns
    the error the client answered with
  - ask_two: two form elicitations at once (asyncio.gather); returns both answers

`ctx.elicit` is a request from the server in the middle of a call, which only the 2025
revisions have (2026-07-28 asks with `input_required` instead): the server leaves out
`server/discover`, so it speaks only the 2025 revisions, as a server written for them does.
With `WAVE_PY_SILENT_PROBE_LOG=<file>` it never answers the `server/discover` probe (each one
is logged there) instead of refusing it.
"""

import asyncio
import json
import os
from typing import Literal

from pydantic import BaseModel, Field

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError


class Profile(BaseModel):
    name: str = Field(description="Your name", min_length=2)
    age: int = Field(description="Your age", ge=0, le=150)
    subscribe: bool = Field(default=False, description="Send news?")
    colour: Literal["red", "green"] = Field(default="green", description="Favourite colour")


class Confirm(BaseModel):
    ok: bool


def outcome(result) -> str:
    data = getattr(result, "data", None)
    if data is not None:
        return f"{result.action}: {json.dumps(data.model_dump(mode='json'), sort_keys=True)}"
    return str(result.action)


def build() -> MCPServer:
    server = MCPServer("py-elicit")

    @server.tool()
    async def ask_form(ctx: Context) -> str:
        """Asks for a profile."""
        result = await ctx.elicit("Tell me about you", Profile)
        return outcome(result)

    @server.tool()
    async def ask_url(ctx: Context) -> str:
        """Asks the user to open a page."""
        result = await ctx.elicit_url(
            "Open the page to connect your account",
            "https://accounts.example.com/connect?session=1",
            "url-1",
        )
        if result.action == "accept":
            await ctx.request_context.session.send_elicit_complete("url-1")
        return str(result.action)

    @server.tool()
    async def ask_malformed(ctx: Context) -> str:
        """Sends an elicitation whose schema is not an object of primitive properties."""
        schema = {
            "type": "object",
            "properties": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
        }
        try:
            result = await ctx.request_context.session.elicit_form("Where do you live?", schema)
        except MCPError as e:
            return f"error {e.error.code}: {e.error.message}"
        return f"answered: {result.action}"

    @server.tool()
    async def ask_two(ctx: Context) -> str:
        """Two questions at once."""
        first, second = await asyncio.gather(
            ctx.elicit("First question", Confirm),
            ctx.elicit("Second question", Confirm),
        )
        return f"{outcome(first)} | {outcome(second)}"

    return server


if __name__ == "__main__":
    # `ctx.elicit` is a 2025 request: this peer speaks only the 2025 revisions (SPEC-1 fallback).
    import anyio

    from legacy2025 import serve_2025_only

    anyio.run(serve_2025_only, build())
