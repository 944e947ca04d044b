// MCP Apps in the chat (APPS-2 … APPS-5): one view per tool call whose tool has an app, shown
// inline under the call from the call's start, with the server's name and a way to collapse it.
// The app runs in the sidecar's sandbox proxy (an iframe on the sandbox origin, never the
// page's); this module fetches its HTML (`wave/app/resource`), frames the proxy, and talks to it
// through an `AppBridge`, taking only messages whose sender is that view's iframe. Each view is
// one element kept across renders (`ChatPage` reconciles the log, so the iframe is never
// detached and never reloads). Closing the chat or destroying its session tears views down with
// `ui/resource-teardown` first.

import type { ChatAppRef, JsonValue } from "../../src/protocol.generated";
import { AppBridge, type AppHostCalls, type AppResource } from "./appBridge";
import type { HostBridge } from "./bridge";
import { h } from "./dom";
import { t, type Lang } from "./i18n";

/** What a view needs from the chat page. */
export interface AppViewsHost {
  bridge: HostBridge;
  lang: Lang;
  sessionId: () => string;
  /** `ui/message`: the text goes into the chat's input for the user to send. */
  prefill(text: string): void;
}

/** One app view: its element (kept across renders) and its bridge. */
interface AppView {
  readonly element: HTMLElement;
  readonly frame: HTMLIFrameElement;
  bridge?: AppBridge;
  sandboxUrl?: string;
}

/** The page's theme as the app spec names it, from VS Code's body class (JetBrains sets it too). */
export function pageTheme(doc: Document): "light" | "dark" {
  const classes = doc.body.classList;
  if (classes.contains("vscode-light") || classes.contains("vscode-high-contrast-light")) return "light";
  if (classes.contains("vscode-dark") || classes.contains("vscode-high-contrast")) return "dark";
  return doc.defaultView?.matchMedia?.("(prefers-color-scheme: light)").matches ? "light" : "dark";
}

export class AppViews {
  private readonly views = new Map<string, AppView>();

  constructor(private readonly host: AppViewsHost) {
    window.addEventListener("message", (event) => {
      for (const view of this.views.values()) {
        // APPS-2, TRUST-8: a view hears only its own iframe (the proxy), nothing else.
        if (view.frame.contentWindow !== null && event.source === view.frame.contentWindow) {
          view.bridge?.handle(event.data);
          return;
        }
      }
    });
  }

  /** The view of `callId`, made on first sight; the same element afterwards. */
  element(callId: string, app: ChatAppRef, args: string): HTMLElement {
    const existing = this.views.get(callId);
    if (existing) return existing.element;
    const L = (k: Parameters<typeof t>[1], v?: Record<string, string | number>) => t(this.host.lang, k, v);
    const frame = h("iframe", {
      class: "app-frame",
      title: L("appFrameTitle", { server: app.server, tool: app.tool }),
      sandbox: "allow-scripts allow-same-origin allow-forms",
      referrerpolicy: "no-referrer",
    }) as HTMLIFrameElement;
    const status = h("div", { class: "app-status muted" }, L("appLoading"));
    const body = h("div", { class: "app-body" }, status, frame);
    const toggle = h("button", { class: "link app-toggle", "aria-expanded": "true" }, L("appCollapse")) as HTMLButtonElement;
    toggle.addEventListener("click", () => {
      const open = toggle.getAttribute("aria-expanded") === "true";
      toggle.setAttribute("aria-expanded", open ? "false" : "true");
      toggle.textContent = open ? L("appExpand") : L("appCollapse");
      body.hidden = open;
    });
    const element = h(
      "div",
      { class: "app-view", "data-call": callId, "data-server": app.server, "data-resource": app.resourceUri },
      h("div", { class: "app-header" }, h("span", { class: "app-server" }, L("appFrom", { server: app.server, tool: app.tool })), toggle),
      body,
    );
    const view: AppView = { element, frame };
    this.views.set(callId, view);
    void this.open(view, callId, app, args, status);
    return element;
  }

  /** The call's full result arrived (live, or from the history): the app gets it. */
  result(callId: string, result: unknown, isError: boolean): void {
    const bridge = this.views.get(callId)?.bridge;
    if (!bridge) {
      this.pendingResults.set(callId, { result, isError });
      return;
    }
    deliver(bridge, result, isError);
  }

  /** The call ended without a result (Stop, an error before the server answered). */
  cancelled(callId: string, reason: string): void {
    const bridge = this.views.get(callId)?.bridge;
    if (bridge) bridge.toolCancelled(reason);
    else this.pendingResults.set(callId, { cancelled: reason });
  }

  /** Every view goes, after `ui/resource-teardown` (the chat closed, its session destroyed). */
  async teardownAll(reason: string): Promise<void> {
    const views = [...this.views.values()];
    this.views.clear();
    await Promise.all(views.map((v) => this.teardown(v, reason)));
  }

  private readonly pendingResults = new Map<string, { result?: unknown; isError?: boolean; cancelled?: string }>();

  private async teardown(view: AppView, reason: string): Promise<void> {
    await view.bridge?.teardown(reason);
    view.frame.remove();
    if (view.sandboxUrl) void this.host.bridge.request("wave/app/closed", { url: view.sandboxUrl }).catch(() => undefined);
  }

  private async open(view: AppView, callId: string, app: ChatAppRef, args: string, status: HTMLElement): Promise<void> {
    const sessionId = this.host.sessionId();
    let resource: AppResource & { sandboxUrl: string; prefersBorder?: boolean };
    try {
      resource = await this.host.bridge.request("wave/app/resource", { sessionId, server: app.server, uri: app.resourceUri });
    } catch (e) {
      status.textContent = t(this.host.lang, "appFailed", { reason: e instanceof Error ? e.message : String(e) });
      view.frame.hidden = true;
      return;
    }
    const calls: AppHostCalls = {
      callTool: (name, args) => this.host.bridge.request("wave/app/callTool", { sessionId, server: app.server, name, arguments: args as { [key: string]: JsonValue }, toolCallId: callId }),
      readResource: (uri) => this.host.bridge.request("wave/app/readResource", { sessionId, server: app.server, uri }),
      openLink: async (url) => {
        await this.host.bridge.request("host/openExternal", { url });
      },
      message: async (text) => this.host.prefill(text),
      // No `updateModelContext`: this host does not add an app's context to the model, so the
      // app is not told it does (no such capability at ui/initialize).
      log: () => undefined,
      resize: (_width, height) => {
        if (height !== undefined) view.frame.style.height = `${Math.min(Math.max(height, 40), 2000)}px`;
      },
    };
    view.sandboxUrl = resource.sandboxUrl;
    view.bridge = new AppBridge({
      post: (message) => view.frame.contentWindow?.postMessage(message, new URL(resource.sandboxUrl).origin),
      resource,
      hostInfo: { name: "wave-mcp", version: "0.1.0" },
      context: {
        theme: pageTheme(document),
        displayMode: "inline",
        availableDisplayModes: ["inline"],
        platform: "desktop",
        locale: navigator.language,
        timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
        // The spec's Tool needs an inputSchema; the page knows only the name (the app gets the
        // arguments with tool-input).
        toolInfo: { id: callId, tool: { name: app.tool, inputSchema: { type: "object" } } },
      },
      calls,
    });
    if (resource.prefersBorder === false) view.element.classList.add("app-borderless");
    const permissions = allowAttribute(resource.permissions);
    if (permissions) view.frame.setAttribute("allow", permissions);
    view.bridge.toolInput(parseArguments(args));
    const pending = this.pendingResults.get(callId);
    if (pending) {
      this.pendingResults.delete(callId);
      if (pending.cancelled !== undefined) view.bridge.toolCancelled(pending.cancelled);
      else deliver(view.bridge, pending.result, pending.isError ?? false);
    }
    status.remove();
    view.frame.src = resource.sandboxUrl;
  }
}

function deliver(bridge: AppBridge, result: unknown, isError: boolean): void {
  const full = typeof result === "object" && result !== null ? (result as Record<string, unknown>) : { content: [] };
  bridge.toolResult(isError && full.isError === undefined ? { ...full, isError: true } : full);
}

function parseArguments(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The outer iframe's `allow`, so the proxy can pass the features on to the app. */
function allowAttribute(permissions: Record<string, unknown> | undefined): string {
  if (!permissions) return "";
  const features: [string, string][] = [
    ["camera", "camera"],
    ["microphone", "microphone"],
    ["geolocation", "geolocation"],
    ["clipboardWrite", "clipboard-write"],
  ];
  return features
    .filter(([key]) => permissions[key] !== undefined)
    .map(([, feature]) => feature)
    .join("; ");
}
