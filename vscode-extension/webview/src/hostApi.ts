// What the shared webview asks of its host, and what the host pushes to it. Every host (the VS
// Code extension, the JetBrains plugin, the Chromium test harness) implements exactly this.
//
// Every message is declared in protocol/ (generated into `src/protocol.generated.ts`, documented
// in docs/protocol.md): `wave/*` requests the hosts forward to the sidecar unchanged (adding
// nothing but transport) and answer with its result or error; `host/*` requests the host does
// itself. Pushes are the sidecar's forwarded notifications plus the host's `host/*` pushes.

import type {
  ErrorData,
  ForwardedNotification,
  ForwardedRequest,
  HostOwnPageRequests,
  HostOwnPushes,
  HostOwnRequests,
  Notifications,
  PageAnsweredRequest,
  Requests,
} from "../../src/protocol.generated";

/**
 * What a page may ask: the sidecar requests the hosts forward unchanged (declared in protocol/,
 * `FORWARDED_REQUESTS`) and the host's own `host/*` requests (docs/protocol.md).
 */
export type HostRequests = Pick<Requests, ForwardedRequest> & HostOwnRequests;

/** The sidecar's notifications the hosts forward unchanged, and the host's own pushes. */
export type HostPushes = Pick<Notifications, ForwardedNotification> & HostOwnPushes;

/**
 * What the host hands to the chat page to answer (a push with an `id`, answered with
 * `host/answer`): the sidecar's requests (`PAGE_ANSWERED_REQUESTS`) and the host's own
 * (`host/teardownApps`).
 */
export type PageRequests = Pick<Requests, PageAnsweredRequest> & HostOwnPageRequests;
export type PageRequestMethod = keyof PageRequests;

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
  | { kind: "push"; method: string; params: unknown; id?: number };

/** The JCEF channel: what `window.waveHostQuery(json)` receives and resolves with. */
export type JcefQuery = { method: string; params: unknown };
export type JcefAnswer = { result?: unknown; error?: HostErrorPayload };
/** What `window.waveReceive(json)` receives; with `id`, a sidecar request the page answers with `host/answer`. */
export type JcefPush = { method: string; params: unknown; id?: number };
