// LONG-1 … LONG-3: the chat's live state (streaming text, progress of running calls, Stop).
import { describe, expect, test } from "vitest";
import type { SessionHistoryEntry } from "../../src/protocol.generated";
import {
  deltaArrived,
  fraction,
  initialLive,
  messageArrived,
  progressArrived,
  runningCalls,
  stopRequested,
  toolResultArrived,
  turnOver,
} from "../../webview/src/liveState";

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

  test("LONG-2: a call's progress is dropped when its result arrives, the rest of a turn's when it ends", () => {
    const progress = (turn: number, toolCallId: string) => ({ sessionId: "default", turn, toolCallId, progress: 1, total: 4 });
    let live = initialLive();
    for (const [turn, id] of [[1, "c1"], [1, "c2"], [2, "d1"]] as const) live = progressArrived(live, "default", progress(turn, id));
    // Turn 1's first result: c1 is done, c2 still runs.
    const entries = [entry(1, 0, "user"), entry(1, 1, "assistant", ["c1", "c2"]), entry(1, 2, "tool")];
    live = toolResultArrived(live, 1, runningCalls(entries, new Set([1, 2])));
    expect([...live.progress.keys()]).toEqual(["c2", "d1"]);
    // Another turn's result leaves turn 1's running call alone.
    expect(toolResultArrived(live, 2, new Set())).toEqual({ ...live, progress: new Map([["c2", live.progress.get("c2")]]) });
    live = turnOver(live, 1);
    expect([...live.progress.keys()]).toEqual(["d1"]);
    live = turnOver(live, 2);
    expect(live.progress.size).toBe(0);
  });

  test("LONG-3: Stop is pending until the turn is over", () => {
    const live = stopRequested(initialLive());
    expect(live.stopping).toBe(true);
    expect(turnOver(live, 1).stopping).toBe(false);
  });
});
