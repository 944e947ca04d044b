// The page's only way to its host. Two adapters, chosen at run time:
// - VS Code: `acquireVsCodeApi().postMessage` with request ids, answers and pushes arriving as
//   `message` events;
// - JetBrains JCEF: a query function the plugin injects, `window.waveHostQuery(json) =>
//   Promise<json>`, and `window.waveReceive(json)`, which the page defines and the plugin calls
//   for pushes (through `executeJavaScript`).
//
// TRUST-8: the page believes only its own host. The VS Code adapter takes a `message` event only
// when it comes from the webview's host frame, the window that contains the page as one of its
// frames (it relays the extension's messages with `postMessage(message, window.origin)`; VS Code
// sets the page's `window.parent` to the page itself, so the sender is asked, not `parent`), and
// carries the page's own origin. A message from any other frame or window (an iframe, another
// tab, the page itself) is dropped, so no one else can answer a request, push a notification or
// answer a question (`wave/session/approveServers`, `wave/session/confirmTool`) in the host's name. The JCEF
// adapter takes no `message` events at all: its host calls `window.waveReceive` through
// `executeJavaScript`; the only frames the page's CSP lets in are MCP apps in the sidecar's sandbox
// proxy (another origin, APPS-2), which cannot call a function of the page.

import {
  HostError,
  type HostErrorPayload,
  type HostMethod,
  type HostPushes,
  type HostRequests,
  type HostToPage,
  type JcefAnswer,
  type JcefPush,
  type PageRequestMethod,
  type PageRequests,
  type PageToHost,
  type PushMethod,
} from "./hostApi";

export type PushHandler = <M extends PushMethod>(method: M, params: HostPushes[M]) => void;

/** Answers a sidecar request the host handed to the page (`PAGE_ANSWERED_REQUESTS`). */
export type PageRequestHandler = <M extends PageRequestMethod>(
  method: M,
  params: PageRequests[M]["params"],
) => Promise<PageRequests[M]["result"]>;

export interface HostBridge {
  readonly kind: "vscode" | "jcef";
  request<M extends HostMethod>(method: M, params: HostRequests[M]["params"]): Promise<HostRequests[M]["result"]>;
  onPush(handler: PushHandler): void;
  /** Answers the host's page requests (a push with an `id`) through `host/answer`. */
  onRequest(handler: PageRequestHandler): void;
}

/** The part of `acquireVsCodeApi()` the page uses. */
export interface VsCodeApi {
  postMessage(message: unknown): void;
}

/** What the bridge may ask of the window that posted a message (cross-origin readable). */
export interface SenderWindow {
  /** How many frames it has. */
  readonly length: number;
  /** Its frames, by index. */
  readonly [index: number]: unknown;
}

/** What the adapters read of a `message` event. */
export interface BridgeMessageEvent {
  data: unknown;
  /** The window that posted it. */
  source?: unknown;
  /** The origin of the window that posted it. */
  origin?: string;
}

/** The parts of `window` the adapters touch (a fake in tests). */
export interface BridgeWindow {
  addEventListener(type: "message", listener: (event: BridgeMessageEvent) => void): void;
  /** The page's own origin (`window.origin`). */
  readonly origin?: string;
  acquireVsCodeApi?: () => VsCodeApi;
  waveHostQuery?: (json: string) => Promise<string>;
  waveReceive?: (json: string) => void;
}

/** Pushes that arrive before the page registered its handler are kept and replayed. */
class PushQueue {
  private handler?: PushHandler;
  private early: { method: string; params: unknown }[] = [];
  deliver(method: string, params: unknown): void {
    if (this.handler) this.handler(method as PushMethod, params as never);
    else this.early.push({ method, params });
  }
  set(handler: PushHandler): void {
    this.handler = handler;
    const early = this.early;
    this.early = [];
    for (const p of early) handler(p.method as PushMethod, p.params as never);
  }
}

/**
 * Page requests (pushes with an `id`): each is answered once with `host/answer`, by the handler,
 * or with an error when the handler fails. Those that arrive before the handler wait for it.
 */
class PageRequestQueue {
  private handler?: PageRequestHandler;
  private early: { method: string; params: unknown; id: number }[] = [];
  constructor(private readonly answer: (params: HostRequests["host/answer"]["params"]) => Promise<unknown>) {}
  deliver(method: string, params: unknown, id: number): void {
    if (!this.handler) {
      this.early.push({ method, params, id });
      return;
    }
    const handler = this.handler;
    void handler(method as PageRequestMethod, params as never)
      .then((result) => this.answer({ id, result: result as never }))
      .catch((e: unknown) => this.answer({ id, error: e instanceof Error ? e.message : String(e) }))
      .catch(() => undefined);
  }
  set(handler: PageRequestHandler): void {
    this.handler = handler;
    const early = this.early;
    this.early = [];
    for (const r of early) this.deliver(r.method, r.params, r.id);
  }
}

function errorOf(payload: HostErrorPayload | undefined): HostError {
  return new HostError(payload ?? { message: "unknown error" });
}

/** Frames a host frame may have (VS Code's has the page's frame and, briefly, the next one). */
const MAX_HOST_FRAMES = 16;

/**
 * TRUST-8: a `message` event from the VS Code webview's host: posted, from the page's own origin,
 * by the window that holds this page as one of its frames (its parent). Not the page itself, not
 * a frame of its own, not a sibling, not another origin. A page in no frame takes nothing.
 */
export function fromVsCodeHost(win: BridgeWindow, event: BridgeMessageEvent): boolean {
  if (typeof win.origin !== "string" || win.origin === "null" || event.origin !== win.origin) return false;
  const source = event.source as SenderWindow | null | undefined;
  if (source === null || source === undefined || (source as unknown) === win) return false;
  let frames: number;
  try {
    frames = Math.min(Number(source.length) || 0, MAX_HOST_FRAMES);
  } catch {
    return false;
  }
  for (let i = 0; i < frames; i++) {
    try {
      if (source[i] === win) return true;
    } catch {
      return false;
    }
  }
  return false;
}

export function createVsCodeBridge(win: BridgeWindow, api: VsCodeApi): HostBridge {
  let nextId = 1;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  const pushes = new PushQueue();
  const requests = new PageRequestQueue((params) => bridge.request("host/answer", params));
  win.addEventListener("message", (event) => {
    if (!fromVsCodeHost(win, event)) return;
    const msg = event.data as HostToPage | undefined;
    if (!msg || typeof msg !== "object") return;
    if (msg.kind === "response") {
      const w = waiting.get(msg.id);
      if (!w) return;
      waiting.delete(msg.id);
      if (msg.error) w.reject(errorOf(msg.error));
      else w.resolve(msg.result ?? null);
    } else if (msg.kind === "push") {
      if (typeof msg.method !== "string") return;
      if (typeof msg.id === "number") requests.deliver(msg.method, msg.params, msg.id);
      else pushes.deliver(msg.method, msg.params);
    }
  });
  const bridge: HostBridge = {
    kind: "vscode",
    request(method, params) {
      const id = nextId++;
      const message: PageToHost = { kind: "request", id, method, params };
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        api.postMessage(message);
      });
    },
    onPush: (handler) => pushes.set(handler),
    onRequest: (handler) => requests.set(handler),
  };
  return bridge;
}

export function createJcefBridge(win: BridgeWindow): HostBridge {
  const pushes = new PushQueue();
  const requests = new PageRequestQueue((params) => bridge.request("host/answer", params));
  win.waveReceive = (json: string) => {
    let push: JcefPush;
    try {
      push = JSON.parse(json) as JcefPush;
    } catch {
      return;
    }
    if (!push || typeof push !== "object" || typeof push.method !== "string") return;
    if (typeof push.id === "number") requests.deliver(push.method, push.params, push.id);
    else pushes.deliver(push.method, push.params);
  };
  const bridge: HostBridge = {
    kind: "jcef",
    async request(method, params) {
      const query = win.waveHostQuery;
      if (!query) throw new HostError({ message: "the host query function is missing" });
      let text: string;
      try {
        text = await query(JSON.stringify({ method, params }));
      } catch (e) {
        // JBCefJSQuery reports failures as (code, message); a plugin may reject with a string.
        throw new HostError({ message: e instanceof Error ? e.message : String(e) });
      }
      const answer = JSON.parse(text) as JcefAnswer;
      if (answer.error) throw errorOf(answer.error);
      return (answer.result ?? null) as never;
    },
    onPush: (handler) => pushes.set(handler),
    onRequest: (handler) => requests.set(handler),
  };
  return bridge;
}

/**
 * The bridge of the host the page runs in. A JCEF host may inject `waveHostQuery` only after the
 * page loaded: wait for it (it dispatches `wave-host-ready`, or we poll) up to `timeoutMs`.
 */
export async function selectBridge(win: BridgeWindow, timeoutMs = 10_000): Promise<HostBridge> {
  if (typeof win.acquireVsCodeApi === "function") return createVsCodeBridge(win, win.acquireVsCodeApi());
  // Define waveReceive at once so that early pushes are queued, not lost.
  const bridge = createJcefBridge(win);
  const start = Date.now();
  while (typeof win.waveHostQuery !== "function") {
    if (Date.now() - start > timeoutMs) throw new HostError({ message: "no host bridge" });
    await new Promise((r) => setTimeout(r, 25));
  }
  return bridge;
}
