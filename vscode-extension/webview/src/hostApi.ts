// What the shared webview asks of its host, and what the host pushes to it. Every host (the VS
// Code extension, the JetBrains plugin, the Chromium test harness) implements exactly this.
//
// Requests whose method starts with `wave/` are the sidecar's methods (see
// `src/protocol.generated.ts` and docs/protocol.md): the host forwards them unchanged (adding
// nothing but transport) and answers with the sidecar's result or error. Requests starting with
// `host/` are done by the host itself. Pushes mirror the sidecar's notifications, plus `host/*`.

import type { ErrorData, Notifications, Requests, SessionMessageParams } from "../../src/protocol.generated";

/** The sidecar requests a page may make; the host forwards them unchanged. */
export type ForwardedMethod =
  | "wave/mcp/servers"
  | "wave/mcp/connect"
  | "wave/mcp/disconnect"
  | "wave/mcp/delete"
  | "wave/mcp/configPaths"
  | "wave/mcp/login"
  | "wave/mcp/logout"
  | "wave/session/send";

export type HostRequests = Pick<Requests, ForwardedMethod> & {
  /** Open this absolute path in an editor tab (EDIT-1). Must be sent before `host/closeSettings`. */
  "host/openFile": { params: { path: string }; result: null };
  /**
   * Close the settings page and return to the chat (UI-7); with `prefill`, put that text in the
   * chat input, focused, not sent (ADD-1, ADD-2, EDIT-1). The page is gone after this.
   */
  "host/closeSettings": { params: { prefill?: string }; result: null };
  /** Open the settings page on "MCP services" (UI-1; the chat's `/mcp`). */
  "host/openSettings": { params: Record<string, never>; result: null };
  /** A host notification (never a chat message, UI-12). */
  "host/notify": { params: { level: "info" | "warning" | "error"; message: string }; result: null };
  /**
   * Cancel the running `wave/mcp/login` of this server (AUTH-9, the row's Cancel): the host
   * sends LSP `$/cancelRequest` for it; that login then fails with -32800 (RequestCancelled),
   * quietly. Nothing running: nothing happens.
   */
  "host/cancelLogin": { params: { name: string; sessionId?: string }; result: null };
  /** The chat so far and the pending prefill, for a chat page that (re)loads. */
  "host/chatState": { params: Record<string, never>; result: ChatHostState };
};

export interface ChatHostState {
  sessionId: string;
  messages: SessionMessageParams[];
  /** Turns started and not ended yet. */
  runningTurns: number[];
  prefill?: string;
}

/** The sidecar's notifications, forwarded unchanged, and the host's own pushes. */
export type HostPushes = Notifications & {
  /** Put this text in the chat input (the settings page's Add/Edit). */
  "host/prefill": { text: string };
  /** The sidecar (re)started: reload what the page shows. */
  "host/sidecarRestarted": Record<string, never>;
};

export type HostMethod = keyof HostRequests;
export type PushMethod = keyof HostPushes;

/** A failed request: the sidecar's JSON-RPC error (code, message, data) or the host's own. */
export interface HostErrorPayload {
  message: string;
  code?: number;
  data?: ErrorData | unknown;
}

export class HostError extends Error {
  readonly code?: number;
  readonly data?: unknown;
  constructor(payload: HostErrorPayload) {
    super(payload.message);
    this.name = "HostError";
    this.code = payload.code;
    this.data = payload.data;
  }
}

/** Messages on the VS Code `postMessage` channel (both ways). */
export type PageToHost = { kind: "request"; id: number; method: string; params: unknown };
export type HostToPage =
  | { kind: "response"; id: number; result?: unknown; error?: HostErrorPayload }
  | { kind: "push"; method: string; params: unknown };

/** The JCEF channel: what `window.waveHostQuery(json)` receives and resolves with. */
export type JcefQuery = { method: string; params: unknown };
export type JcefAnswer = { result?: unknown; error?: HostErrorPayload };
/** What `window.waveReceive(json)` receives. */
export type JcefPush = { method: string; params: unknown };
