"""An MCP server on the official Python SDK (PyPI `mcp` 2.x) whose tools change at run time, and
that can also serve a large generated catalog: the third-party peer of the BUD-* tests.

    dynamic_server.py [--catalog N]

stdio only. Its `add_tool` tool registers a new tool named by the caller (it upper-cases its
`text`) and then sends `notifications/tools/list_changed` with `ctx.session.send_tool_list_changed()`.
`--catalog N` adds N generated tools with realistic names, descriptions and input schemas
(strings, integers, booleans, enums and arrays with descriptions), like a big SaaS server's.
"""

import argparse
from typing import Annotated, Literal

from pydantic import Field

from mcp.server.mcpserver import Context, MCPServer

DOMAINS = [
    ("issue", "issues", "an issue in a repository's tracker"),
    ("pull_request", "pull requests", "a pull request of a repository"),
    ("branch", "branches", "a git branch of a repository"),
    ("release", "releases", "a published release with its assets"),
    ("workflow", "workflows", "a CI workflow and its runs"),
    ("calendar_event", "calendar events", "an event in a shared calendar"),
    ("invoice", "invoices", "a customer invoice in the billing system"),
    ("customer", "customers", "a customer record in the CRM"),
    ("ticket", "support tickets", "a support ticket in the help desk"),
    ("dashboard", "dashboards", "a monitoring dashboard and its panels"),
    ("alert", "alerts", "a monitoring alert rule"),
    ("database_table", "database tables", "a table of the analytics database"),
    ("bucket_object", "storage objects", "an object in a cloud storage bucket"),
    ("dns_record", "DNS records", "a record of a DNS zone"),
    ("channel_message", "chat messages", "a message in a team chat channel"),
]

ACTIONS = [
    ("create", "Create {a}.", "Creates {a} with the given fields and returns its id."),
    ("get", "Get {a} by id.", "Returns every field of {a}, looked up by its id."),
    ("list", "List {p}.", "Lists {p}, newest first, one page at a time."),
    ("update", "Update {a}.", "Changes the given fields of {a}; other fields stay as they are."),
    ("delete", "Delete {a}.", "Deletes {a} permanently. This cannot be undone."),
    ("search", "Search {p}.", "Full-text search over {p}; returns the best matches first."),
    ("archive", "Archive {a}.", "Moves {a} to the archive, where it is kept read-only."),
    ("export", "Export {p}.", "Exports {p} as CSV or JSON for offline analysis."),
]

SOURCE = '''
def {name}(
    {id_param}
    project: Annotated[str, Field(description="The project or organisation that owns it, e.g. 'acme/web'.")],
    query: Annotated[str, Field(description="Free text to match against titles and bodies.")] = "",
    limit: Annotated[int, Field(description="How many results at most (1-100).", ge=1, le=100)] = 20,
    include_archived: Annotated[bool, Field(description="Also return archived items.")] = False,
    format: Annotated[Literal["json", "csv", "markdown"], Field(description="The output format.")] = "json",
    labels: Annotated[list[str], Field(description="Only items carrying all of these labels.")] = [],
) -> str:
    return "{name} " + project
'''


def add_catalog(server: MCPServer, count: int) -> None:
    for i in range(count):
        domain, plural, what = DOMAINS[i % len(DOMAINS)]
        verb, summary, detail = ACTIONS[(i // len(DOMAINS)) % len(ACTIONS)]
        round_ = i // (len(DOMAINS) * len(ACTIONS))
        name = f"{verb}_{domain}" if round_ == 0 else f"{verb}_{domain}_v{round_ + 1}"
        id_param = (
            'item_id: Annotated[str, Field(description="The id of the item.")],'
            if verb in ("get", "update", "delete", "archive")
            else ""
        )
        scope = {"Annotated": Annotated, "Field": Field, "Literal": Literal}
        exec(SOURCE.format(name=name, id_param=id_param), scope)
        description = summary.format(a=what, p=plural) + " " + detail.format(a=what, p=plural)
        server.add_tool(scope[name], name=name, description=description)


def build(catalog: int) -> MCPServer:
    server = MCPServer("py-dynamic")

    @server.tool()
    def echo(text: str) -> str:
        """Returns its text unchanged."""
        return text

    @server.tool()
    async def add_tool(name: str, ctx: Context) -> str:
        """Adds a tool of that name (it upper-cases its text), then announces the new tool list."""

        def shout(text: str) -> str:
            return text.upper()

        server.add_tool(shout, name=name, description=f"Upper-cases its text (added at run time as {name}).")
        # 2025 clients get the notification; 2026-07-28 ones, their `subscriptions/listen` stream.
        await ctx.session.send_tool_list_changed()
        await ctx.notify_tools_changed()
        return f"added {name}"

    add_catalog(server, catalog)
    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--catalog", type=int, default=0)
    args = parser.parse_args()
    build(args.catalog).run()


if __name__ == "__main__":
    main()
