import { describe, expect, it } from "vitest";
import { applyValue, promptArgumentAt, quoteValue, templateVariableAt, unquote } from "../../webview/src/valueCompletion";
import type { McpPromptView, McpResourceTemplateView } from "../../src/protocol.generated";

const review: McpPromptView = {
  server: "docs",
  name: "review",
  fullName: "mcp__docs__review",
  arguments: [
    { name: "file", required: true },
    { name: "focus", required: false },
  ],
  fromCache: false,
};
const hello: McpPromptView = { server: "docs", name: "hello", fullName: "mcp__docs__hello", arguments: [], fromCache: false };
const doc: McpResourceTemplateView = { server: "docs", uriTemplate: "test://doc/{n}", name: "doc", fromCache: false };
const pair: McpResourceTemplateView = { server: "gh", uriTemplate: "repo://{owner}/{repo}/readme", name: "readme", fromCache: false };
const prompts = [review, hello];

describe("argument values (SRV-3)", () => {
  it("SRV-3: the cursor after a chosen prompt is in its first argument; the next word is the next argument, with the first as context", () => {
    const text = "/mcp__docs__review ";
    expect(promptArgumentAt(text, text.length, prompts)).toEqual({
      server: "docs",
      ref: { type: "ref/prompt", name: "review" },
      argument: "file",
      value: "",
      context: {},
      start: 19,
      end: 19,
      promptArgument: true,
    });
    const second = '/mcp__docs__review "src/a b.rs" st';
    expect(promptArgumentAt(second, second.length, prompts)).toMatchObject({ argument: "focus", value: "st", context: { file: "src/a b.rs" }, start: 32, end: 34 });
    // In the middle of the first word: what is typed up to the cursor.
    expect(promptArgumentAt(second, 23, prompts)).toMatchObject({ argument: "file", value: "src", context: { focus: "st" }, start: 19, end: 31 });
  });

  it("SRV-3: key=value names the argument; no menu past the last argument, for a prompt without arguments, or on the command", () => {
    const named = "/mcp__docs__review focus=na src/x";
    expect(promptArgumentAt(named, 27, prompts)).toMatchObject({ argument: "focus", value: "na", start: 25, end: 27 });
    expect(promptArgumentAt(named, named.length, prompts)).toMatchObject({ argument: "file", value: "src/x", context: { focus: "na" } });
    expect(promptArgumentAt("/mcp__docs__review a b ", 23, prompts)).toBeUndefined();
    expect(promptArgumentAt("/mcp__docs__hello ", 18, prompts)).toBeUndefined();
    expect(promptArgumentAt("/mcp__docs__review x", 5, prompts)).toBeUndefined();
    expect(promptArgumentAt("/other x", 8, prompts)).toBeUndefined();
  });

  it("SRV-3: values are quoted as the sidecar reads them", () => {
    expect(quoteValue("src/a.rs")).toBe("src/a.rs");
    expect(quoteValue('say "hi"')).toBe('"say \\"hi\\""');
    expect(quoteValue("")).toBe('""');
    expect(unquote('"say \\"hi\\""')).toBe('say "hi"');
    expect(unquote('"unclosed sp')).toBe("unclosed sp");
    const target = promptArgumentAt("/mcp__docs__review sr more", 21, prompts)!;
    expect(applyValue("/mcp__docs__review sr more", target, "src/a b.rs")).toEqual({ text: '/mcp__docs__review "src/a b.rs" more', cursor: 32 });
  });

  it("SRV-3: a template's selected `{…}` or its value being typed is the variable; the others are context", () => {
    const text = "see @docs:test://doc/{n} now";
    expect(templateVariableAt(text, 21, 24, [doc])).toEqual({
      server: "docs",
      ref: { type: "ref/resource", uri: "test://doc/{n}" },
      argument: "n",
      value: "",
      context: {},
      start: 21,
      end: 24,
      promptArgument: false,
    });
    // `{n}` not selected: the cursor on it is not a value being typed.
    expect(templateVariableAt(text, 22, 22, [doc])).toBeUndefined();
    expect(templateVariableAt("@docs:test://doc/12", 18, 18, [doc])).toMatchObject({ argument: "n", value: "1", start: 17, end: 19 });
    const two = "@gh:repo://wave/{repo}/readme";
    const target = templateVariableAt(two, 16, 22, [doc, pair])!;
    expect(target).toMatchObject({ argument: "repo", value: "", context: { owner: "wave" } });
    expect(templateVariableAt("@gh:repo://wa", 13, 13, [pair])).toMatchObject({ argument: "owner", value: "wa", context: {} });
    expect(templateVariableAt("@gh:repo://wave/re", 18, 18, [pair])).toMatchObject({ argument: "repo", value: "re", context: { owner: "wave" }, start: 16, end: 18 });
    // Typed up to the cursor only when the cursor ends the mention.
    expect(templateVariableAt("@gh:repo://wa x", 13, 13, [pair])).toMatchObject({ argument: "owner", value: "wa" });
    expect(templateVariableAt("@gh:repo://wa/", 13, 13, [pair])).toBeUndefined();
    expect(templateVariableAt("@other:test://doc/1", 19, 19, [doc])).toBeUndefined();
  });

  it("SRV-3: a picked variable value is put in; the mention's next `{…}` is then selected", () => {
    const two = "@gh:repo://{owner}/{repo}/readme x";
    const target = templateVariableAt(two, 11, 18, [pair])!;
    expect(applyValue(two, target, "wave")).toEqual({ text: "@gh:repo://wave/{repo}/readme x", cursor: 15, select: { start: 16, end: 22 } });
    const last = templateVariableAt("@docs:test://doc/1 x", 18, 18, [doc])!;
    expect(applyValue("@docs:test://doc/1 x", last, "17")).toEqual({ text: "@docs:test://doc/17 x", cursor: 19 });
  });
});
