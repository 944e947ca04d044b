import { describe, expect, it } from "vitest";
import {
  addMessage,
  initialChat,
  inputAction,
  isBusy,
  isVisible,
  localSend,
  placeholderSelection,
  sendAccepted,
  sendFailed,
  turnEnded,
} from "../../webview/src/chatState";
import type { ChatMessage } from "../../src/protocol.generated";

const msg = (over: Partial<ChatMessage>): ChatMessage => ({
  role: "assistant",
  content: "",
  toolCalls: [],
  isError: false,
  isMeta: false,
  ...over,
});

describe("chat input (UI-1, ADD-4)", () => {
  it("UI-1: /mcp opens the settings page and sends nothing", () => {
    expect(inputAction("/mcp")).toEqual({ kind: "openSettings" });
    expect(inputAction("  /mcp \n")).toEqual({ kind: "openSettings" });
  });

  it("ADD-4: /settings prompts and anything else are sent verbatim", () => {
    const prompt = "/settings 帮我配个用户级 MCP 服务器x：连npx，参数-y";
    expect(inputAction(prompt)).toEqual({ kind: "send", text: prompt });
    expect(inputAction("/mcp please")).toEqual({ kind: "send", text: "/mcp please" });
    expect(inputAction(" keep  spaces ")).toEqual({ kind: "send", text: " keep  spaces " });
    expect(inputAction("   ")).toEqual({ kind: "none" });
  });

  it("selects the first placeholder of a prefill", () => {
    const text = "帮我编辑 MCP 服务器alpha：把<要改的内容>改成<新内容>";
    const sel = placeholderSelection(text);
    expect(text.slice(sel.start, sel.end)).toBe("<要改的内容>");
    expect(placeholderSelection("plain")).toEqual({ start: 5, end: 5 });
  });
});

describe("chat messages", () => {
  it("INS-2: meta messages are hidden", () => {
    expect(isVisible(msg({ isMeta: true, content: "instructions" }))).toBe(false);
    expect(isVisible(msg({ content: "hi" }))).toBe(true);
  });

  it("a sent message is echoed once, even when the sidecar reports it too", () => {
    let s = localSend(initialChat("default"), "hello");
    expect(isBusy(s)).toBe(true);
    s = addMessage(s, { sessionId: "default", turn: 1, message: msg({ role: "user", content: "hello" }) });
    s = sendAccepted(s, 1);
    s = addMessage(s, { sessionId: "default", turn: 1, message: msg({ content: "hi there" }) });
    expect(s.entries.map((e) => [e.message.role, e.message.content])).toEqual([
      ["user", "hello"],
      ["assistant", "hi there"],
    ]);
    expect(isBusy(s)).toBe(true);
    s = turnEnded(s, "default", 1);
    expect(isBusy(s)).toBe(false);
  });

  it("the same text sent twice shows twice", () => {
    let s = localSend(initialChat("default"), "again");
    s = sendAccepted(s, 1);
    s = addMessage(s, { sessionId: "default", turn: 1, message: msg({ role: "user", content: "again" }) });
    s = localSend(s, "again");
    s = sendAccepted(s, 2);
    s = addMessage(s, { sessionId: "default", turn: 2, message: msg({ role: "user", content: "again" }) });
    expect(s.entries.filter((e) => e.message.role === "user")).toHaveLength(2);
  });

  it("ignores other sessions and records failures", () => {
    const s = initialChat("default");
    expect(addMessage(s, { sessionId: "x", turn: 1, message: msg({ content: "no" }) })).toBe(s);
    const failed = sendFailed(localSend(s, "a"), "chat unavailable");
    expect(failed.errors).toEqual(["chat unavailable"]);
    expect(isBusy(failed)).toBe(false);
    const ended = turnEnded(sendAccepted(localSend(s, "a"), 1), "default", 1, "model unreachable");
    expect(ended.errors).toEqual(["model unreachable"]);
  });
});
