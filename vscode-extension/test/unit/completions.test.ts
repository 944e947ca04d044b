import { describe, expect, it, vi } from "vitest";
import { applyItem, argumentHint, FetchedList, initialActive, moveActive, promptItems, resourceItems, templateItems, triggerAt } from "../../webview/src/completions";
import type { McpPromptView, McpResourceTemplateView, McpResourceView } from "../../src/protocol.generated";

const review: McpPromptView = {
  server: "docs",
  name: "review",
  fullName: "mcp__docs__review",
  description: "Review a file",
  arguments: [
    { name: "file", required: true },
    { name: "focus", required: false },
  ],
  fromCache: false,
};
const hello: McpPromptView = { server: "docs", name: "hello", fullName: "mcp__docs__hello", arguments: [], fromCache: true };
const docTemplate: McpResourceTemplateView = { server: "docs", uriTemplate: "test://doc/{n}", name: "doc", mimeType: "text/plain", fromCache: false };
const doc = (n: number): McpResourceView => ({ server: "docs", uri: `test://doc/${n}`, name: `doc-${n}`, mimeType: "text/plain", fromCache: false });

describe("chat menus (PRM-1, PRM-3)", () => {
  it("PRM-1: `/` at the start opens the prompt menu; `@` at a word's start the resource menu", () => {
    expect(triggerAt("/", 1)).toEqual({ kind: "prompt", query: "", start: 0, end: 1 });
    expect(triggerAt("/mcp__d", 7)).toEqual({ kind: "prompt", query: "mcp__d", start: 0, end: 7 });
    expect(triggerAt("/mcp__docs__review a", 20)).toBeUndefined();
    expect(triggerAt("a /x", 4)).toBeUndefined();
    expect(triggerAt("see @do", 7)).toEqual({ kind: "resource", query: "do", start: 4, end: 7 });
    expect(triggerAt("@", 1)).toEqual({ kind: "resource", query: "", start: 0, end: 1 });
    expect(triggerAt("mail@x", 6)).toBeUndefined();
  });

  it("PRM-1: prompts are offered as commands with argument hints, filtered by name or description", () => {
    expect(argumentHint(review)).toBe("<file> [focus]");
    expect(promptItems([review, hello], "")).toEqual([
      { insert: "/mcp__docs__review", hint: "<file> [focus]", detail: "Review a file" },
      { insert: "/mcp__docs__hello", hint: "", detail: "" },
    ]);
    expect(promptItems([review, hello], "FILE").map((i) => i.insert)).toEqual(["/mcp__docs__review"]);
  });

  it("PRM-3: resources are offered as @server:uri, filtered by uri or name", () => {
    const items = resourceItems([doc(1), doc(2), doc(12)], "doc/1");
    expect(items.map((i) => i.insert)).toEqual(["@docs:test://doc/1", "@docs:test://doc/12"]);
    expect(items[0]).toEqual({ insert: "@docs:test://doc/1", hint: "text/plain", detail: "doc-1" });
  });

  it("PRM-3: resource templates are offered as @server:template, filtered like resources; inserting one selects its first variable", () => {
    const fileTemplate: McpResourceTemplateView = { server: "fs", uriTemplate: "file:///{+path}", name: "file", description: "A file", fromCache: true };
    expect(templateItems([docTemplate, fileTemplate], "")).toEqual([
      { insert: "@docs:test://doc/{n}", hint: "text/plain", detail: "doc", template: true },
      { insert: "@fs:file:///{+path}", hint: "", detail: "file — A file", template: true },
    ]);
    expect(templateItems([docTemplate, fileTemplate], "docs:").map((i) => i.insert)).toEqual(["@docs:test://doc/{n}"]);
    expect(templateItems([docTemplate, fileTemplate], "a file").map((i) => i.insert)).toEqual(["@fs:file:///{+path}"]);
    const trigger = triggerAt("read @do", 8)!;
    const [item] = templateItems([docTemplate], trigger.query);
    const next = applyItem("read @do", trigger, item);
    expect(next).toEqual({ text: "read @docs:test://doc/{n} ", cursor: 26, select: { start: 22, end: 25 } });
    expect(next.text.slice(next.select!.start, next.select!.end)).toBe("{n}");
    // A resource's URI is inserted as it is, the cursor after it.
    expect(applyItem("read @do", trigger, resourceItems([doc(1)], "")[0]).select).toBeUndefined();
  });

  it("inserting replaces the typed word and leaves one space before the cursor", () => {
    const trigger = triggerAt("see @do more", 7)!;
    expect(applyItem("see @do more", trigger, { insert: "@docs:test://doc/1", hint: "", detail: "" })).toEqual({
      text: "see @docs:test://doc/1 more",
      cursor: 23,
    });
    const slash = triggerAt("/re", 3)!;
    expect(applyItem("/re", slash, { insert: "/mcp__docs__review", hint: "", detail: "" })).toEqual({ text: "/mcp__docs__review ", cursor: 19 });
  });

  it("UI-1, PRM-1: exactly `/mcp` opens the menu with no row selected, so Enter runs the command; arrows select a row to pick", () => {
    // `/mcp` matches `/mcp__…` prompts, but Send would open the settings page: nothing is selected.
    expect(triggerAt("/mcp", 4)?.kind).toBe("prompt");
    expect(initialActive("/mcp")).toBe(-1);
    // Anything else typed after `/` selects the first row, which Enter inserts.
    for (const text of ["/", "/m", "/mc", "/mcp_", "/mcpx", "/mcp__docs__review", "/settings"]) expect(initialActive(text), text).toBe(0);
    // From no selection, down selects the first row and up the last; then they wrap around.
    expect(moveActive(-1, 1, 3)).toBe(0);
    expect(moveActive(-1, -1, 3)).toBe(2);
    expect(moveActive(2, 1, 3)).toBe(0);
    expect(moveActive(0, -1, 3)).toBe(2);
    expect(moveActive(0, 1, 3)).toBe(1);
  });

  it("PRM-4: a list asked before a change (invalidate) is not kept; the list is asked again and that one kept", async () => {
    const answers: ((v: string) => void)[] = [];
    const list = new FetchedList(() => new Promise<string>((resolve) => answers.push(resolve)));
    const first = list.get();
    await Promise.resolve();
    expect(answers.length).toBe(1);
    list.invalidate(); // serversChanged while the request is on its way
    answers[0]("before the change");
    await vi.waitFor(() => expect(answers.length).toBe(2));
    answers[1]("after the change");
    await expect(first).resolves.toBe("after the change");
    await expect(list.get()).resolves.toBe("after the change");
    expect(answers.length).toBe(2);
    // A failed request is not kept either: the next get asks again.
    let fail = true;
    const flaky = new FetchedList(async () => {
      if (fail) throw new Error("sidecar restarting");
      return "listed";
    });
    await expect(flaky.get()).rejects.toThrow("sidecar restarting");
    fail = false;
    await expect(flaky.get()).resolves.toBe("listed");
  });
});
