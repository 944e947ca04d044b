// MCP Apps in the chat (APPS-2 … APPS-5): one view per tool call whose tool has an app, shown
// inline under the call from the call's start, with the server's name, a way to collapse it and
// a Stop of its own. The app runs in the sidecar's sandbox proxy (an iframe on the sandbox
// origin, never the page's); this module fetches its HTML (`wave/app/resource`), frames the
// proxy, and talks to it through an `AppBridge`, taking only messages whose sender is that
// view's iframe. Each view is one element kept across renders (`ChatPage` reconciles the log, so
// the iframe is never detached and never reloads).
//
// Stop (the card's own, the chat's for every live view, the app's own request-teardown, or the
// host's `host/teardownApps` before it destroys the session or the page) tears a view down: the app gets
// `ui/resource-teardown` (its answer awaited, bounded), the iframe goes (and with it the app's
// polling: nothing of it reaches `wave/app/callTool` again), the sidecar forgets its sandbox URL
// (`wave/app/closed`), and the card stays in the log saying it was stopped, with "Start again":
// the same resource read again, the stored tool input and result replayed, no new tool call.

import type { ChatAppRef, HostAppsTornDown, JsonValue } from "../../src/protocol.generated";
import { AppBridge, type AppHostCalls, type AppResource } from "./appBridge";
import { deliver, isLive, replay, storeEnding, teardownEvery, type AppEnding, type AppPhase } from "./appState";
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
  /** A view started or stopped (the chat's Stop button may show or hide). */
  changed(): void;
}

/** One app view: its card (kept across renders) and, while it runs, its frame and bridge. */
interface AppView {
  readonly callId: string;
  readonly app: ChatAppRef;
  readonly args: string;
  readonly element: HTMLElement;
  readonly body: HTMLElement;
  readonly stopButton: HTMLButtonElement;
  phase: AppPhase;
  /** How the call ended (kept so the app can be started again with it). */
  ending?: AppEnding;
  frame?: HTMLIFrameElement;
  bridge?: AppBridge;
  sandboxUrl?: string;
  /** Counts the view's starts and stops: an opening that a Stop overtook does nothing. */
  run: number;
  /** While it is being torn down: resolves with whether the app answered its teardown. */
  stopping?: Promise<boolean>;
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
  /** Endings of calls whose view is not made yet. */
  private readonly pendingEndings = new Map<string, AppEnding>();

  constructor(private readonly host: AppViewsHost) {
    window.addEventListener("message", (event) => {
      for (const view of this.views.values()) {
        // APPS-2, TRUST-8: a view hears only its own iframe (the proxy), nothing else.
        const source = view.frame?.contentWindow;
        if (source && event.source === source) {
          view.bridge?.handle(event.data);
          return;
        }
      }
    });
  }

  private L(k: Parameters<typeof t>[1], v?: Record<string, string | number>): string {
    return t(this.host.lang, k, v);
  }

  /** The view of `callId`, made (and started) on first sight; the same element afterwards. */
  element(callId: string, app: ChatAppRef, args: string): HTMLElement {
    const existing = this.views.get(callId);
    if (existing) return existing.element;
    const body = h("div", { class: "app-body" });
    const toggle = h("button", { class: "link app-toggle", "aria-expanded": "true" }, this.L("appCollapse")) as HTMLButtonElement;
    toggle.addEventListener("click", () => {
      const open = toggle.getAttribute("aria-expanded") === "true";
      toggle.setAttribute("aria-expanded", open ? "false" : "true");
      toggle.textContent = open ? this.L("appExpand") : this.L("appCollapse");
      body.hidden = open;
    });
    const stopButton = h("button", { class: "link app-stop", title: this.L("appStopTitle") }, this.L("appStop")) as HTMLButtonElement;
    const element = h(
      "div",
      { class: "app-view", "data-call": callId, "data-server": app.server, "data-resource": app.resourceUri },
      h(
        "div",
        { class: "app-header" },
        h("span", { class: "app-server" }, this.L("appFrom", { server: app.server, tool: app.tool })),
        h("span", { class: "app-actions" }, stopButton, toggle),
      ),
      body,
    );
    const view: AppView = { callId, app, args, element, body, stopButton, phase: "loading", ending: this.pendingEndings.get(callId), run: 0 };
    this.pendingEndings.delete(callId);
    stopButton.addEventListener("click", () => void this.stopView(view, this.L("appStoppedReason")));
    this.views.set(callId, view);
    this.start(view);
    return element;
  }

  /** The call's full result arrived (live, or from the history): the app gets it. */
  result(callId: string, result: unknown, isError: boolean): void {
    this.ended(callId, { kind: "result", result, isError });
  }

  /** The call ended without a result (Stop, an error before the server answered). */
  cancelled(callId: string, reason: string): void {
    this.ended(callId, { kind: "cancelled", reason });
  }

  /** The phases of this chat's views (the chat's Stop shows while one is live). */
  phases(): AppPhase[] {
    return [...this.views.values()].map((v) => v.phase);
  }

  /** APPS-3: the chat's Stop: every live view is torn down; their cards stay, stopped. */
  async stopAll(reason: string): Promise<void> {
    await Promise.all([...this.views.values()].map((v) => this.stopView(v, reason)));
  }

  /**
   * APPS-3, `host/teardownApps`: the host is about to destroy the session or the page (sidecar
   * restart, the chat closing). Every live view is torn down as its Stop would (the app gets
   * `ui/resource-teardown` first); views already stopping are waited for. Settles once all are
   * down, with how many were live and how many apps answered. The cards stay, stopped (a later
   * render must not start them again).
   */
  teardownAll(reason: string): Promise<HostAppsTornDown> {
    return teardownEvery(this.views.values(), (v) => this.stopView(v, reason));
  }

  private ended(callId: string, ending: AppEnding): void {
    const view = this.views.get(callId);
    if (!view) {
      this.pendingEndings.set(callId, storeEnding(this.pendingEndings.get(callId), ending));
      return;
    }
    view.ending = storeEnding(view.ending, ending);
    // The bridge tells the app only the first ending it gets.
    if (view.bridge) deliver(view.bridge, ending);
  }

  /** Shows the phase on the card (`data-state`) and tells the page. */
  private sync(view: AppView): void {
    view.element.dataset.state = view.phase;
    view.stopButton.hidden = !isLive(view.phase);
    this.host.changed();
  }

  /** A new frame for the view (its first start, or "Start again" after a Stop). */
  private start(view: AppView): void {
    const run = ++view.run;
    const frame = h("iframe", {
      class: "app-frame",
      title: this.L("appFrameTitle", { server: view.app.server, tool: view.app.tool }),
      sandbox: "allow-scripts allow-same-origin allow-forms",
      referrerpolicy: "no-referrer",
    }) as HTMLIFrameElement;
    const status = h("div", { class: "app-status muted" }, this.L("appLoading"));
    view.frame = frame;
    view.bridge = undefined;
    view.sandboxUrl = undefined;
    view.phase = "loading";
    delete view.element.dataset.teardown;
    view.body.replaceChildren(status, frame);
    this.sync(view);
    void this.open(view, run, frame, status);
  }

  /**
   * Tears one view down: `ui/resource-teardown` (bounded wait), the iframe removed, the sandbox
   * URL forgotten by the sidecar; the card stays, saying so, with "Start again".
   */
  private stopView(view: AppView, reason: string): Promise<boolean> {
    if (view.stopping) return view.stopping;
    if (!isLive(view.phase)) return Promise.resolve(false);
    view.stopping = this.tearDown(view, reason).finally(() => {
      view.stopping = undefined;
    });
    return view.stopping;
  }

  private async tearDown(view: AppView, reason: string): Promise<boolean> {
    view.run++;
    view.phase = "stopping";
    this.sync(view);
    const { bridge, frame, sandboxUrl } = view;
    const heard = (await bridge?.teardown(reason)) ?? false;
    frame?.remove();
    view.frame = undefined;
    view.bridge = undefined;
    view.sandboxUrl = undefined;
    if (sandboxUrl) await this.closed(sandboxUrl);
    // Whether the app answered its teardown (a result or an error: it heard it), for tests.
    view.element.dataset.teardown = heard ? "answered" : "unanswered";
    const again = h("button", { class: "link app-start" }, this.L("appStartAgain")) as HTMLButtonElement;
    again.addEventListener("click", () => {
      if (view.phase === "stopped") this.start(view);
    });
    view.body.replaceChildren(h("div", { class: "app-status app-stopped muted" }, this.L("appStopped"), " ", again));
    view.phase = "stopped";
    this.sync(view);
    return heard;
  }

  private async closed(url: string): Promise<void> {
    await this.host.bridge.request("wave/app/closed", { url }).catch(() => undefined);
  }

  private async open(view: AppView, run: number, frame: HTMLIFrameElement, status: HTMLElement): Promise<void> {
    const { callId, app } = view;
    const sessionId = this.host.sessionId();
    let resource: AppResource & { sandboxUrl: string; prefersBorder?: boolean };
    try {
      resource = await this.host.bridge.request("wave/app/resource", { sessionId, server: app.server, uri: app.resourceUri });
    } catch (e) {
      if (view.run !== run) return;
      status.textContent = this.L("appFailed", { reason: e instanceof Error ? e.message : String(e) });
      frame.remove();
      view.frame = undefined;
      view.phase = "failed";
      this.sync(view);
      return;
    }
    // Stopped while its resource was on the way: the sidecar forgets the URL, nothing is framed.
    if (view.run !== run) {
      await this.closed(resource.sandboxUrl);
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
        if (height !== undefined) frame.style.height = `${Math.min(Math.max(height, 40), 2000)}px`;
      },
      // The app asked to close: torn down as by its card's Stop (only the run that asked).
      requestTeardown: () => {
        if (view.run === run) void this.stopView(view, this.L("appStoppedReason"));
      },
    };
    view.sandboxUrl = resource.sandboxUrl;
    const bridge = new AppBridge({
      post: (message) => frame.contentWindow?.postMessage(message, new URL(resource.sandboxUrl).origin),
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
    view.bridge = bridge;
    view.element.classList.toggle("app-borderless", resource.prefersBorder === false);
    const permissions = allowAttribute(resource.permissions);
    if (permissions) frame.setAttribute("allow", permissions);
    // The stored call: its input, and its ending once known (a start again replays the same).
    replay(bridge, view.args, view.ending);
    status.remove();
    frame.src = resource.sandboxUrl;
    view.phase = "live";
    this.sync(view);
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
