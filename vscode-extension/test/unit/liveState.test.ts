// LONG-1 … LONG-3: the chat's live state (streaming text, progress of running calls, Stop).
import { describe, expect, test } from "vitest";
import type { SessionHistoryEntry } from "../../src/protocol.generated";
import { deltaArrived, fraction, initialLive, messageArrived, progressArrived, runningCalls, stopRequested, turnOver } from "../../webview/src/liveState";

const entry = (turn: number, index: number, role: "user" | "assistant" | "tool", calls: string[] = []): SessionHistoryEntry => ({
  turn,
  index,
  message: { role, content: "", toolCalls: calls.map((id) => ({ id, name: "mcp__a__x", arguments: "{}" })), isError: false, isMeta: false },
});

describe("live state", () => {
  test("LONG-1: deltas add up per turn; the complete assistant message clears them", () => {
    let live = initialLive();
    live = deltaArrived(live, "default", { sessionId: "default", turn: 2, messageIndex: 3, text: "Hel" });
    live = deltaArrived(live, "default", { sessionId: "default", turn: 2, messageIndex: 3, text: "lo" });
    live = deltaArrived(live, "default", { sessionId: "other", turn: 2, messageIndex: 3, text: "x" });
    expect(live.streaming.get(2)).toBe("Hello");
    expect(messageArrived(live, 2, "tool").streaming.get(2)).toBe("Hello");
    expect(messageArrived(live, 2, "assistant").streaming.has(2)).toBe(false);
  });

  test("LONG-2: calls past the results seen are running; a bar only with a total", () => {
    const entries = [entry(1, 0, "user"), entry(1, 1, "assistant", ["c1", "c2"]), entry(1, 2, "tool")];
    expect([...runningCalls(entries, new Set([1]))]).toEqual(["c2"]);
    expect([...runningCalls(entries, new Set())]).toEqual([]);
    let live = progressArrived(initialLive(), "default", { sessionId: "default", turn: 1, toolCallId: "c2", progress: 3, total: 4 });
    expect(fraction(live.progress.get("c2")!)).toBe(0.75);
    live = progressArrived(live, "default", { sessionId: "default", turn: 1, toolCallId: "c2", progress: 3, message: "working" });
    expect(fraction(live.progress.get("c2")!)).toBeUndefined();
  });

  test("LONG-3: Stop is pending until the turn is over", () => {
    const live = stopRequested(initialLive());
    expect(live.stopping).toBe(true);
    expect(turnOver(live, 1).stopping).toBe(false);
  });
});
