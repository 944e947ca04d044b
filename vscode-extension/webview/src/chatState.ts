// State of the chat (session) view: pure functions, no DOM, no host.

import type { ChatMessage, SessionMessageParams } from "../../src/protocol.generated";

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

export interface ChatEntry {
  /** Local echo of what the user sent, until (if ever) the sidecar reports it. */
  local?: boolean;
  turn?: number;
  message: ChatMessage;
}

export interface ChatState {
  sessionId: string;
  entries: ChatEntry[];
  running: Set<number>;
  /** A send request on its way (its turn number is not known yet). */
  sending: boolean;
  errors: string[];
}

export function initialChat(sessionId: string): ChatState {
  return { sessionId, entries: [], running: new Set(), sending: false, errors: [] };
}

export function userMessage(text: string): ChatMessage {
  return { role: "user", content: text, toolCalls: [], isError: false, isMeta: false };
}

/** Meta messages (MCP instructions and the like) are for the model only: hidden (INS-2). */
export function isVisible(message: ChatMessage): boolean {
  return !message.isMeta;
}

export function localSend(state: ChatState, text: string): ChatState {
  return { ...state, sending: true, entries: [...state.entries, { local: true, message: userMessage(text) }] };
}

/** The sidecar accepted the message that was echoed last; its turn is now running. */
export function sendAccepted(state: ChatState, turn: number): ChatState {
  const entries = [...state.entries];
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i].local && entries[i].turn === undefined) {
      entries[i] = { ...entries[i], turn };
      break;
    }
  }
  return { ...state, sending: false, entries, running: new Set([...state.running, turn]) };
}

export function sendFailed(state: ChatState, error: string): ChatState {
  return { ...state, sending: false, errors: [...state.errors, error] };
}

export function addMessage(state: ChatState, params: SessionMessageParams): ChatState {
  if (params.sessionId !== state.sessionId) return state;
  const m = params.message;
  if (m.role === "user") {
    // The sidecar's copy of a message we already show as the local echo.
    const i = state.entries.findIndex(
      (e) => e.local && e.message.content === m.content && (e.turn === undefined || e.turn === params.turn),
    );
    if (i >= 0) {
      const entries = [...state.entries];
      entries[i] = { turn: params.turn, message: m };
      return { ...state, entries };
    }
  }
  return { ...state, entries: [...state.entries, { turn: params.turn, message: m }] };
}

export function turnEnded(state: ChatState, sessionId: string, turn: number, error?: string): ChatState {
  if (sessionId !== state.sessionId) return state;
  const running = new Set(state.running);
  running.delete(turn);
  return { ...state, running, errors: error ? [...state.errors, error] : state.errors };
}

export function isBusy(state: ChatState): boolean {
  return state.sending || state.running.size > 0;
}

/** Where the caret goes after a prefill: select the first `<placeholder>` so typing replaces it. */
export function placeholderSelection(text: string): { start: number; end: number } {
  const m = /<[^<>]+>/.exec(text);
  return m ? { start: m.index, end: m.index + m[0].length } : { start: text.length, end: text.length };
}
