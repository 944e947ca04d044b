// What the chat shows of a turn while it runs (LONG-1 … LONG-3): assistant text as it streams
// (`wave/session/delta`, display only: the complete `wave/session/message` replaces it), the
// progress of running tool calls (`wave/session/progress`), and whether Stop was pressed.
// Pure functions, no DOM.

import type { SessionDeltaParams, SessionHistoryEntry, SessionProgressParams } from "../../src/protocol.generated";

export interface CallProgress {
  /** The turn the call belongs to: its entry goes when the turn is over. */
  turn: number;
  progress: number;
  total?: number;
  message?: string;
}

export interface LiveState {
  /** Streaming text by turn (cleared when the turn's next complete message arrives). */
  streaming: Map<number, string>;
  /** Latest progress by tool call id, of calls that are running (dropped at their result). */
  progress: Map<string, CallProgress>;
  /** A `wave/session/cancel` is on its way. */
  stopping: boolean;
}

export function initialLive(): LiveState {
  return { streaming: new Map(), progress: new Map(), stopping: false };
}

export function deltaArrived(live: LiveState, sessionId: string, params: SessionDeltaParams): LiveState {
  if (params.sessionId !== sessionId) return live;
  const streaming = new Map(live.streaming);
  streaming.set(params.turn, (streaming.get(params.turn) ?? "") + params.text);
  return { ...live, streaming };
}

/** A complete message of `turn` arrived: the text streamed for it is now in the message. */
export function messageArrived(live: LiveState, turn: number, role: string): LiveState {
  if (role !== "assistant" || !live.streaming.has(turn)) return live;
  const streaming = new Map(live.streaming);
  streaming.delete(turn);
  return { ...live, streaming };
}

export function progressArrived(live: LiveState, sessionId: string, params: SessionProgressParams): LiveState {
  if (params.sessionId !== sessionId) return live;
  const progress = new Map(live.progress);
  progress.set(params.toolCallId, { turn: params.turn, progress: params.progress, total: params.total, message: params.message });
  return { ...live, progress };
}

/**
 * A tool result of `turn` arrived: the progress of that turn's calls that are no longer running
 * (`stillRunning`, from `runningCalls`) is dropped, so the map holds running calls only.
 */
export function toolResultArrived(live: LiveState, turn: number, stillRunning: Set<string>): LiveState {
  const done = [...live.progress].filter(([id, p]) => p.turn === turn && !stillRunning.has(id));
  if (done.length === 0) return live;
  const progress = new Map(live.progress);
  for (const [id] of done) progress.delete(id);
  return { ...live, progress };
}

/** The turn is over: its streaming text and its calls' progress go, and Stop is no longer pending. */
export function turnOver(live: LiveState, turn: number): LiveState {
  const streaming = new Map(live.streaming);
  streaming.delete(turn);
  const progress = new Map([...live.progress].filter(([, p]) => p.turn !== turn));
  return { ...live, streaming, progress, stopping: false };
}

export function stopRequested(live: LiveState): LiveState {
  return { ...live, stopping: true };
}

/**
 * Tool calls of running turns that have no result yet: a turn's tool results follow its
 * assistant message in call order, so the calls past the results seen are still running.
 */
export function runningCalls(entries: SessionHistoryEntry[], running: Set<number>): Set<string> {
  const calls = new Set<string>();
  for (const turn of running) {
    const own = entries.filter((e) => e.turn === turn && !e.message.isMeta);
    const lastCall = own.map((e) => e.message.toolCalls.length > 0 && e.message.role === "assistant").lastIndexOf(true);
    if (lastCall < 0) continue;
    const results = own.slice(lastCall + 1).filter((e) => e.message.role === "tool").length;
    for (const call of own[lastCall].message.toolCalls.slice(results)) calls.add(call.id);
  }
  return calls;
}

/** A bar's fill, 0…1, when the total is known. */
export function fraction(p: CallProgress): number | undefined {
  if (p.total === undefined || p.total <= 0) return undefined;
  return Math.max(0, Math.min(1, p.progress / p.total));
}
