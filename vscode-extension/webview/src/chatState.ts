// State of the chat (session) view: pure functions, no DOM, no host. The conversation itself is
// the sidecar's (CHAT-1): the page shows the messages of `wave/session/history` and of
// `wave/session/message`, by their index, and keeps no transcript of its own.

import type {
  ChatMessage,
  SessionHistoryEntry,
  SessionHistoryResult,
  SessionMessageParams,
} from "../../src/protocol.generated";

/** What pressing Send does with the input (UI-1, ADD-4). */
export type InputAction = { kind: "openSettings" } | { kind: "send"; text: string } | { kind: "none" };

/**
 * `/mcp` alone opens the settings page on "MCP services" and sends nothing (UI-1). Everything
 * else that is not blank is sent verbatim — `/settings …` included, which is not a local command
 * in the GUI (ADD-4).
 */
export function inputAction(text: string): InputAction {
  if (/^\s*\/mcp\s*$/.test(text)) return { kind: "openSettings" };
  if (text.trim() === "") return { kind: "none" };
  return { kind: "send", text };
}

export interface ChatState {
  sessionId: string;
  /** The sidecar's messages; `entries[i].index === i`. */
  entries: SessionHistoryEntry[];
  running: Set<number>;
  /** Turns whose end arrived (a history reply that is older may still list them as running). */
  ended: Set<number>;
  /** A send request on its way. */
  sending: boolean;
  /** A message arrived whose index is past the end: the page reloads the history. */
  gap: boolean;
  errors: string[];
}

export function initialChat(sessionId: string): ChatState {
  return { sessionId, entries: [], running: new Set(), ended: new Set(), sending: false, gap: false, errors: [] };
}

/** Meta messages (MCP instructions and the like) are for the model only: hidden (INS-2). */
export function isVisible(message: ChatMessage): boolean {
  return !message.isMeta;
}

/** What the view shows: grouped by turn, each turn in the sidecar's order (a stable sort). */
export function conversation(state: ChatState): SessionHistoryEntry[] {
  return [...state.entries].sort((a, b) => a.turn - b.turn || a.index - b.index);
}

/** `wave/session/history` arrived: the sidecar's record, plus whatever was pushed after it. */
export function historyLoaded(state: ChatState, history: SessionHistoryResult): ChatState {
  if (history.sessionId !== state.sessionId) return state;
  const entries = [...history.messages];
  for (const e of state.entries) if (e.index === entries.length) entries.push(e);
  const running = new Set([...history.runningTurns, ...state.running].filter((t) => !state.ended.has(t)));
  return { ...state, entries, running, gap: false };
}

export function sendStarted(state: ChatState): ChatState {
  return { ...state, sending: true };
}

/** The sidecar accepted the message (it has already sent it back as the turn's first message). */
export function sendAccepted(state: ChatState, turn: number): ChatState {
  const running = state.ended.has(turn) ? state.running : new Set([...state.running, turn]);
  return { ...state, sending: false, running };
}

export function sendFailed(state: ChatState, error: string): ChatState {
  return { ...state, sending: false, errors: [...state.errors, error] };
}

/** A pushed message: appended when it is the next one, skipped when it is already shown. */
export function addMessage(state: ChatState, params: SessionMessageParams): ChatState {
  if (params.sessionId !== state.sessionId) return state;
  if (params.index < state.entries.length) return state;
  if (params.index > state.entries.length) return { ...state, gap: true };
  const entry: SessionHistoryEntry = { turn: params.turn, index: params.index, message: params.message };
  return { ...state, entries: [...state.entries, entry] };
}

export function turnEnded(state: ChatState, sessionId: string, turn: number, error?: string): ChatState {
  if (sessionId !== state.sessionId) return state;
  const running = new Set(state.running);
  running.delete(turn);
  const ended = new Set([...state.ended, turn]);
  return { ...state, running, ended, errors: error ? [...state.errors, error] : state.errors };
}

export function isBusy(state: ChatState): boolean {
  return state.sending || state.running.size > 0;
}

/** Where the caret goes after a prefill: select the first `<placeholder>` so typing replaces it. */
export function placeholderSelection(text: string): { start: number; end: number } {
  const m = /<[^<>]+>/.exec(text);
  return m ? { start: m.index, end: m.index + m[0].length } : { start: text.length, end: text.length };
}
