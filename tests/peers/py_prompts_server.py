"""An MCP server on the official Python SDK (PyPI `mcp` 2.x) with prompts and resources, used as a
third-party test peer for PRM-1 .. PRM-4 (stdio only).

Prompts: `greet` (argument `name` required, `style` optional), `status` (no arguments), `picture`
(a text and an image). Resources: `notes://readme` (text), `notes://logo` (a PNG blob),
`notes://config` (a JSON blob); template `notes://item/{id}`. The tool `add_prompt` registers one
more prompt at run time and sends `notifications/prompts/list_changed`; `add_note` adds a resource
and sends `notifications/resources/list_changed` (PRM-4).
"""

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.prompts.base import Prompt, UserMessage
from mcp.server.mcpserver.resources import FunctionResource

# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf0000000301010018dd8db00000000049454e44ae426082"
)


def build() -> MCPServer:
    server = MCPServer("py-prompts", instructions="Python peer with prompts and resources.")

    @server.prompt(description="Greets someone")
    def greet(name: str, style: str = "plain") -> str:
        return f"Greet {name} in a {style} way."

    @server.prompt(description="Reports the status")
    def status() -> list:
        return [UserMessage("What is the status?"), UserMessage("Answer in one line.")]

    @server.prompt(description="A picture to describe")
    def picture() -> list:
        return [UserMessage("Describe this picture."), UserMessage(Image(data=PNG, format="png"))]

    @server.resource("notes://readme", name="readme", description="Read me first", mime_type="text/plain")
    def readme() -> str:
        return "Read me first: the notes server."

    @server.resource("notes://logo", name="logo", mime_type="image/png")
    def logo() -> bytes:
        return PNG

    @server.resource("notes://config", name="config", mime_type="application/json")
    def config() -> bytes:
        return b'{"answer": 42}'

    @server.resource("notes://item/{id}", name="item", mime_type="text/plain")
    def item(id: str) -> str:
        return f"item {id}"

    @server.tool()
    async def add_prompt(name: str, ctx: Context) -> str:
        """Registers a prompt `name` and announces the change."""

        def added() -> str:
            return f"The added prompt {name}."

        server.add_prompt(Prompt.from_function(added, name=name, description=f"added at run time: {name}"))
        # 2025 clients get the notification; 2026-07-28 ones, their `subscriptions/listen` stream.
        await ctx.session.send_prompt_list_changed()
        await ctx.notify_prompts_changed()
        return f"added {name}"

    @server.tool()
    async def add_note(name: str, ctx: Context) -> str:
        """Adds the resource `notes://<name>` and announces the change."""
        server.add_resource(
            FunctionResource(uri=f"notes://{name}", name=name, mime_type="text/plain", fn=lambda: f"note {name}")
        )
        await ctx.session.send_resource_list_changed()
        await ctx.notify_resources_changed()
        return f"added notes://{name}"

    return server


if __name__ == "__main__":
    build().run()
