// USE-4: the assistant's markdown as the chat builds it (markdown-it's tokens into a tree of
// allowed elements; the DOM step is tested in Chromium), and the VS Code host's answer to the
// page's `host/openExternal`.

import { describe, expect, it } from "vitest";
import { markdownTree, safeLinkUrl, type MdNode } from "../../webview/src/markdown";
import { checkLink, openLink } from "../../src/openLink";

/** The tags of a tree, depth first. */
const tags = (nodes: MdNode[]): string[] => nodes.flatMap((n) => (typeof n === "string" ? [] : [n.tag, ...tags(n.children)]));
/** All texts of a tree, joined. */
const text = (nodes: MdNode[]): string => nodes.map((n) => (typeof n === "string" ? n : text(n.children))).join("");

describe("USE-4: markdown of the assistant", () => {
  it("USE-4: headings, lists, emphasis, inline and fenced code become their elements", () => {
    const tree = markdownTree("# Title\n\nSome **bold** and *em* and `code`.\n\n- one\n- two\n\n1. first\n\n```rust\nfn main() {}\n```\n");
    expect(tags(tree)).toEqual(["h1", "p", "strong", "em", "code", "ul", "li", "li", "ol", "li", "pre", "code"]);
    const pre = tree.find((n) => typeof n !== "string" && n.tag === "pre");
    expect(pre).toEqual({ tag: "pre", attrs: { "data-lang": "rust" }, children: [{ tag: "code", attrs: { "data-lang": "rust" }, children: ["fn main() {}\n"] }] });
  });

  it("USE-4: raw HTML is text, never an element", () => {
    const source = 'hi <img src=x onerror="alert(1)"> <script>alert(2)</script>\n\n<div onclick="x()">block</div>\n';
    const tree = markdownTree(source);
    expect(tags(tree)).toEqual(["p", "p"]);
    expect(text(tree)).toContain('<img src=x onerror="alert(1)">');
    expect(text(tree)).toContain("<script>alert(2)</script>");
    expect(text(tree)).toContain('<div onclick="x()">block</div>');
  });

  it("USE-4: only http, https and mailto links are links; javascript:, data:, file: and relative ones stay text", () => {
    const tree = markdownTree("[ok](https://example.com/a?b=1) [mail](mailto:a@example.com) [bad](javascript:alert(1)) [data](data:text/html,x) [file](file:///etc/passwd) [rel](docs/x.md)");
    const links = (nodes: MdNode[]): Record<string, string>[] =>
      nodes.flatMap((n) => (typeof n === "string" ? [] : [...(n.tag === "a" ? [n.attrs] : []), ...links(n.children)]));
    expect(links(tree)).toEqual([
      { "data-href": "https://example.com/a?b=1", title: "https://example.com/a?b=1" },
      { "data-href": "mailto:a@example.com", title: "mailto:a@example.com" },
    ]);
    expect(text(tree)).toContain("[bad](javascript:alert(1))");
    expect(safeLinkUrl("JavaScript:alert(1)")).toBeUndefined();
    expect(safeLinkUrl(" https://example.com")).toBe("https://example.com/");
  });

  it("USE-4: images load nothing (off); a bare URL becomes a link (linkify)", () => {
    const tree = markdownTree("![pixel](https://tracker.example/p.gif) see https://example.org");
    expect(tags(tree)).not.toContain("img");
    expect(JSON.stringify(tree)).toContain('"data-href":"https://example.org/"');
  });

  it("USE-4: an unfinished answer (streaming) renders what it has: an open fence is a code block so far", () => {
    expect(tags(markdownTree("Here:\n\n```js\nconst a = 1;\n"))).toEqual(["p", "pre", "code"]);
  });
});

describe("USE-4: host/openExternal in VS Code", () => {
  const deps = (pick: string | undefined) => {
    const opened: string[] = [];
    const asked: string[] = [];
    return {
      opened,
      asked,
      zh: false,
      confirm: async (_message: string, detail: string, open: string) => {
        asked.push(detail);
        return pick === "open" ? open : pick;
      },
      openExternal: async (url: string) => {
        opened.push(url);
        return true;
      },
    };
  };

  it("USE-4: the link opens only after the user confirms; the question shows the URL", async () => {
    const yes = deps("open");
    expect(await openLink({ url: "https://example.com/x" }, yes)).toBe(true);
    expect(yes.asked).toEqual(["https://example.com/x"]);
    expect(yes.opened).toEqual(["https://example.com/x"]);
    const no = deps(undefined);
    expect(await openLink({ url: "https://example.com/x" }, no)).toBe(false);
    expect(no.asked).toEqual(["https://example.com/x"]);
    expect(no.opened).toEqual([]);
  });

  it("USE-4: another scheme is refused before anyone is asked", async () => {
    for (const url of ["javascript:alert(1)", "file:///etc/passwd", "command:workbench.action.quit", "vscode://x", "not a url", ""]) {
      const d = deps("open");
      await expect(openLink({ url }, d)).rejects.toThrow(/^host\/openExternal/);
      expect(d.asked).toEqual([]);
      expect(d.opened).toEqual([]);
    }
    expect(checkLink({ url: "mailto:a@example.com" })).toEqual({ url: "mailto:a@example.com" });
  });
});
