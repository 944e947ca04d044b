// The host side of one MCP App view (ext-apps 2026-01-26, APPS-3): the JSON-RPC conversation
// between the chat page and an app running in the sidecar's sandbox proxy (an iframe on another
// origin, app_sandbox.rs). Pure module: no DOM; the page gives it a way to post to the proxy and
// the host calls it needs, and feeds it the proxy's messages (their sender already checked).
//
// Order, as the spec asks: the proxy says `ui/notifications/sandbox-proxy-ready`, the page sends
// the HTML (`ui/notifications/sandbox-resource-ready`); the app asks `ui/initialize` (answered
// with host info, capabilities and context) and says `ui/notifications/initialized`; only then
// does anything go to the app: `tool-input` once, then `tool-result` or `tool-cancelled`. Before
// the view is removed, `ui/resource-teardown` is sent and its answer awaited (bounded); an app
// may ask for that itself (`ui/notifications/request-teardown`).

/** The app spec revision this host speaks. */
export const APP_PROTOCOL_VERSION = "2026-01-26";

/** A JSON-RPC message as the app and the proxy send it. */
export interface RpcMessage {
  jsonrpc: "2.0";
  id?: string | number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** The app's UI resource, as the sidecar read it (`text/html;profile=mcp-app`). */
export interface AppResource {
  html: string;
  csp?: Record<string, string[] | undefined>;
  permissions?: Record<string, unknown>;
}

/** What the app may ask of the host, each through the sidecar's rules (APPS-4). */
export interface AppHostCalls {
  /** `tools/call` of the app's own server (visibility "app", permission rules and consent). */
  callTool(name: string, args: Record<string, unknown>): Promise<unknown>;
  /** `resources/read` of the app's own server. */
  readResource(uri: string): Promise<unknown>;
  /** `ui/open-link`: opens only after the user confirms; rejects when declined. */
  openLink(url: string): Promise<void>;
  /** `ui/message`: into the chat's input for the user to send, never silently to the model. */
  message(text: string): Promise<void>;
  /**
   * `ui/update-model-context`: kept for the next turn. A host without it does not declare the
   * capability at `ui/initialize`, and the request is "method not found".
   */
  updateModelContext?(params: Record<string, unknown>): Promise<void>;
  /** `notifications/message` from the app: the host's log. */
  log(params: unknown): void;
  /** `ui/notifications/size-changed`. */
  resize(width: number | undefined, height: number | undefined): void;
  /**
   * `ui/notifications/request-teardown`: the app asks to be closed. The host decides; this
   * host tears the view down as its own Stop would (`ui/resource-teardown` first, APPS-3).
   */
  requestTeardown(): void;
}

/** The context the app gets at `ui/initialize` (a subset of the spec's HostContext). */
export interface AppHostContext {
  theme: "light" | "dark";
  displayMode: "inline";
  availableDisplayModes: ["inline"];
  locale?: string;
  timeZone?: string;
  platform: "desktop";
  toolInfo?: { id?: string | number; tool: Record<string, unknown> };
}

export interface AppBridgeOptions {
  /** Posts to the sandbox proxy (the outer iframe's window). */
  post(message: RpcMessage): void;
  resource: AppResource;
  hostInfo: { name: string; version: string };
  context: AppHostContext;
  calls: AppHostCalls;
  /** How long teardown waits for the app's answer. */
  teardownMs?: number;
}

type Phase = "loading" | "initializing" | "ready" | "closed";

/** Reserved for the page and the proxy: never relayed to or from the app. */
const isSandboxMethod = (method: string | undefined) => method?.startsWith("ui/notifications/sandbox-") ?? false;

export class AppBridge {
  private phase: Phase = "loading";
  private input: Record<string, unknown> | undefined;
  private inputSent = false;
  private ending: RpcMessage | undefined;
  private endingSent = false;
  private nextId = 1;
  private readonly pending = new Map<string | number, (m: RpcMessage) => void>();
  /** Every method the app sent, in order (for tests and the host's log). */
  readonly seen: string[] = [];

  constructor(private readonly o: AppBridgeOptions) {}

  get state(): Phase {
    return this.phase;
  }

  /** The tool's complete arguments (sent once, after `initialized`). */
  toolInput(args: Record<string, unknown>): void {
    if (this.input !== undefined) return;
    this.input = args;
    this.flush();
  }

  /** The tool's full result (`CallToolResult`: content, structuredContent, _meta). */
  toolResult(result: Record<string, unknown>): void {
    if (this.ending) return;
    this.ending = { jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result };
    this.flush();
  }

  /** The call was stopped or failed before a result. */
  toolCancelled(reason: string): void {
    if (this.ending) return;
    this.ending = { jsonrpc: "2.0", method: "ui/notifications/tool-cancelled", params: { reason } };
    this.flush();
  }

  /**
   * `ui/resource-teardown` before the view goes; resolves when the app answered (true: a result
   * or an error, the app heard it), or after `teardownMs` (false). A view the app never
   * initialized is simply closed (false). From then on the app is not heard: its `tools/call`s
   * reach no host call.
   */
  async teardown(reason: string): Promise<boolean> {
    if (this.phase === "closed") return false;
    const wasReady = this.phase === "ready";
    this.phase = "closed";
    if (!wasReady) return false;
    const id = `host-${this.nextId++}`;
    const answered = new Promise<boolean>((resolve) => {
      this.pending.set(id, () => resolve(true));
      setTimeout(() => resolve(false), this.o.teardownMs ?? 1000);
    });
    // The reason is ours to log: the spec's schema (ext-apps 2.0.4) allows no field in params.
    void reason;
    this.o.post({ jsonrpc: "2.0", id, method: "ui/resource-teardown", params: {} });
    const heard = await answered;
    this.pending.clear();
    return heard;
  }

  /** One message from the proxy (the caller checked it comes from this view's iframe). */
  handle(data: unknown): void {
    if (this.phase === "closed" && !isAnswer(data)) return;
    if (!isRpc(data)) return;
    const m = data;
    if (m.method === undefined) {
      // An answer to a request of ours (teardown).
      const waiter = m.id !== undefined ? this.pending.get(m.id) : undefined;
      if (waiter && m.id !== undefined) {
        this.pending.delete(m.id);
        waiter(m);
      }
      return;
    }
    this.seen.push(m.method);
    if (m.method === "ui/notifications/sandbox-proxy-ready") {
      if (this.phase !== "loading") return;
      this.phase = "initializing";
      const { html, csp, permissions } = this.o.resource;
      this.o.post({ jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: { html, csp, permissions } });
      return;
    }
    if (isSandboxMethod(m.method)) return;
    if (m.id !== undefined) {
      void this.request(m.id, m.method, m.params);
      return;
    }
    this.notification(m.method, m.params);
  }

  private notification(method: string, params: unknown): void {
    switch (method) {
      case "ui/notifications/initialized":
        if (this.phase !== "initializing") return;
        this.phase = "ready";
        this.flush();
        return;
      case "ui/notifications/size-changed": {
        const p = (params ?? {}) as { width?: unknown; height?: unknown };
        const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);
        this.o.calls.resize(num(p.width), num(p.height));
        return;
      }
      case "notifications/message":
        this.o.calls.log(params);
        return;
      case "ui/notifications/request-teardown":
        // Only an app that is running (initialized) may ask; `teardown` then closes the bridge.
        if (this.phase !== "ready") return;
        this.o.calls.requestTeardown();
        return;
      default:
        return;
    }
  }

  private async request(id: string | number, method: string, params: unknown): Promise<void> {
    const answer = (result: unknown) => this.o.post({ jsonrpc: "2.0", id, result });
    const fail = (code: number, message: string) => this.o.post({ jsonrpc: "2.0", id, error: { code, message } });
    const p = (params ?? {}) as Record<string, unknown>;
    if (method === "ui/initialize") {
      answer({
        protocolVersion: APP_PROTOCOL_VERSION,
        hostInfo: this.o.hostInfo,
        hostCapabilities: {
          openLinks: {},
          serverTools: {},
          serverResources: {},
          logging: {},
          ...(this.o.calls.updateModelContext ? { updateModelContext: {} } : {}),
          message: {},
          sandbox: { csp: this.o.resource.csp ?? {}, permissions: this.o.resource.permissions ?? {} },
        },
        hostContext: this.o.context,
      });
      return;
    }
    if (method === "ping") return answer({});
    // Nothing but the handshake before `initialized` (the spec's order, APPS-3).
    if (this.phase !== "ready") return fail(-32600, `"${method}" before ui/notifications/initialized`);
    try {
      switch (method) {
        case "tools/call": {
          if (typeof p.name !== "string") return fail(-32602, "tools/call needs a tool name");
          const args = isObject(p.arguments) ? p.arguments : {};
          return answer(await this.o.calls.callTool(p.name, args));
        }
        case "resources/read":
          if (typeof p.uri !== "string") return fail(-32602, "resources/read needs a uri");
          return answer(await this.o.calls.readResource(p.uri));
        case "ui/open-link":
          if (typeof p.url !== "string" || !/^https?:\/\//i.test(p.url)) return fail(-32602, "ui/open-link needs an http(s) url");
          await this.o.calls.openLink(p.url);
          return answer({});
        case "ui/message": {
          const text = messageText(p);
          if (text === undefined) return fail(-32602, "ui/message needs text content");
          await this.o.calls.message(text);
          return answer({});
        }
        case "ui/update-model-context":
          if (!this.o.calls.updateModelContext) return fail(-32601, `the host does not support "${method}"`);
          await this.o.calls.updateModelContext(p);
          return answer({});
        case "ui/request-display-mode":
          return answer({ mode: "inline" });
        default:
          return fail(-32601, `the host does not support "${method}"`);
      }
    } catch (e) {
      fail(-32000, e instanceof Error ? e.message : String(e));
    }
  }

  /** Sends what the app may have now: nothing before `initialized`, input before the result. */
  private flush(): void {
    if (this.phase !== "ready") return;
    if (this.input !== undefined && !this.inputSent) {
      this.inputSent = true;
      this.o.post({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: this.input } });
    }
    if (this.ending && !this.endingSent && (this.inputSent || this.ending.method === "ui/notifications/tool-cancelled")) {
      this.endingSent = true;
      this.o.post(this.ending);
    }
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isRpc(v: unknown): v is RpcMessage {
  return isObject(v) && v.jsonrpc === "2.0";
}

function isAnswer(v: unknown): boolean {
  return isRpc(v) && v.method === undefined && v.id !== undefined;
}

/** The text of a `ui/message` (`content` one block or a list of text blocks). */
function messageText(p: Record<string, unknown>): string | undefined {
  const blocks = Array.isArray(p.content) ? p.content : [p.content];
  const texts = blocks.filter(isObject).filter((b) => b.type === "text" && typeof b.text === "string").map((b) => b.text as string);
  return texts.length ? texts.join("\n") : undefined;
}
