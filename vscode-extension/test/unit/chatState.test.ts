import { describe, expect, it } from "vitest";
import {
  addMessage,
  conversation,
  historyLoaded,
  initialChat,
  inputAction,
  isBusy,
  isVisible,
  placeholderSelection,
  sendAccepted,
  sendFailed,
  sendStarted,
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

  it("CHAT-1: the page shows only the sidecar's messages: no local echo, each index once", () => {
    let s = sendStarted(initialChat("default"));
    expect(isBusy(s)).toBe(true);
    expect(s.entries).toEqual([]);
    // The sidecar sends the user's own message back first, then the reply.
    s = addMessage(s, { sessionId: "default", turn: 1, index: 0, message: msg({ role: "user", content: "hello" }) });
    s = sendAccepted(s, 1);
    s = addMessage(s, { sessionId: "default", turn: 1, index: 1, message: msg({ content: "hi there" }) });
    s = addMessage(s, { sessionId: "default", turn: 1, index: 1, message: msg({ content: "hi there" }) });
    expect(s.entries.map((e) => [e.message.role, e.message.content])).toEqual([
      ["user", "hello"],
      ["assistant", "hi there"],
    ]);
    expect(isBusy(s)).toBe(true);
    s = turnEnded(s, "default", 1);
    expect(isBusy(s)).toBe(false);
  });

  it("CHAT-1: the same text sent twice shows twice (two indexes)", () => {
    let s = initialChat("default");
    s = addMessage(s, { sessionId: "default", turn: 1, index: 0, message: msg({ role: "user", content: "again" }) });
    s = addMessage(s, { sessionId: "default", turn: 2, index: 1, message: msg({ role: "user", content: "again" }) });
    expect(s.entries.filter((e) => e.message.role === "user")).toHaveLength(2);
  });

  it("CHAT-1: a reopened page shows the history, then what is pushed after it; a gap asks for the history", () => {
    let s = initialChat("default");
    // A push that arrived while the history was on its way, and is in it too.
    s = addMessage(s, { sessionId: "default", turn: 1, index: 0, message: msg({ role: "user", content: "one" }) });
    s = historyLoaded(s, {
      sessionId: "default",
      runningTurns: [2],
      messages: [
        { turn: 1, index: 0, message: msg({ role: "user", content: "one" }) },
        { turn: 2, index: 1, message: msg({ role: "user", content: "two" }) },
        { turn: 1, index: 2, message: msg({ content: "reply to one" }) },
      ],
    });
    expect(s.entries).toHaveLength(3);
    expect(isBusy(s)).toBe(true);
    // Grouped by turn: the conversation as the model had it.
    expect(conversation(s).map((e) => e.message.content)).toEqual(["one", "reply to one", "two"]);
    s = addMessage(s, { sessionId: "default", turn: 2, index: 3, message: msg({ content: "reply to two" }) });
    s = turnEnded(s, "default", 2);
    expect(conversation(s).map((e) => e.message.content)).toEqual(["one", "reply to one", "two", "reply to two"]);
    expect(isBusy(s)).toBe(false);
    const gap = addMessage(s, { sessionId: "default", turn: 3, index: 9, message: msg({ content: "later" }) });
    expect(gap.gap).toBe(true);
    expect(gap.entries).toHaveLength(4);
    // A history reply older than a turn's end does not mark it running again.
    const stale = historyLoaded(s, { sessionId: "default", runningTurns: [2], messages: s.entries });
    expect(isBusy(stale)).toBe(false);
  });

  it("ignores other sessions and records failures", () => {
    const s = initialChat("default");
    expect(addMessage(s, { sessionId: "x", turn: 1, index: 0, message: msg({ content: "no" }) })).toBe(s);
    const failed = sendFailed(sendStarted(s), "chat unavailable");
    expect(failed.errors).toEqual(["chat unavailable"]);
    expect(isBusy(failed)).toBe(false);
    const ended = turnEnded(sendAccepted(sendStarted(s), 1), "default", 1, "model unreachable");
    expect(ended.errors).toEqual(["model unreachable"]);
  });
});
