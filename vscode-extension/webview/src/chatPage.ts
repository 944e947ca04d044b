// The chat (session) view: the workspace's session as the sidecar records it (CHAT-1), an
// input, Send. `/mcp` opens the settings page instead of being sent (UI-1).

import type {
  ChatMessage,
  HostTeardownAppsParams,
  SessionApproveServersParams,
  SessionConfirmToolParams,
  SessionDeltaParams,
  SessionElicitParams,
  SessionElicitationCompleteParams,
  SessionMessageParams,
  SessionProgressParams,
  SessionTurnEndedParams,
} from "../../src/protocol.generated";
import type { HostBridge } from "./bridge";
import {
  addMessage,
  conversation,
  historyLoaded,
  initialChat,
  inputAction,
  isBusy,
  isVisible,
  placeholderSelection,
  sendAccepted,
  sendFailed,
  sendStarted,
  turnEnded,
  type ChatState,
} from "./chatState";
import { CompletionMenu } from "./completions";
import { stopShown } from "./appState";
import { AppViews } from "./appViews";
import { h, reconcile } from "./dom";
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
  type LiveState,
} from "./liveState";
import { ConsentCards } from "./consentCards";
import { ElicitDialog } from "./elicitForm";
import { t, type Lang } from "./i18n";
import { copyClicked, copyText, linkClicked, renderMarkdown } from "./markdown";
import { errorText } from "./settingsPage";

export class ChatPage {
  private state: ChatState;
  private readonly log: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly status: HTMLElement;
  /** LONG-1 … LONG-3: streaming text, progress, Stop. */
  private live: LiveState = initialLive();
  private readonly stopButton: HTMLButtonElement;
  /** The text element of each streaming message the log shows, by turn (set by `render`). */
  private streamingText = new Map<number, HTMLElement>();
  /** LONG-1, USE-4: turns whose streaming text changed since their markdown was last built. */
  private streamingDirty = new Set<number>();
  private streamingFrame: number | undefined;
  /** Tool calls whose results arrived, so no longer running. */
  private running = new Set<string>();
  /** A server's question to the user (LONG-5, LONG-6), above the input. */
  readonly elicit: ElicitDialog;
  /** Project servers to approve and tool calls to allow (TRUST-3, TRUST-5), above the input. */
  readonly consent: ConsentCards;
  /** `/` offers the servers' prompts, `@` their resources (PRM-1, PRM-3). */
  private readonly menu: CompletionMenu;
  /** MCP Apps shown under their tool calls (APPS-2 … APPS-5). */
  private readonly apps: AppViews;

  constructor(
    root: HTMLElement,
    private readonly bridge: HostBridge,
    private readonly lang: Lang,
    sessionId: string,
  ) {
    this.state = initialChat(sessionId);
    const L = (k: Parameters<typeof t>[1]) => t(lang, k);
    this.log = h("div", { class: "chat-log", id: "chat-log", role: "log", "aria-live": "polite" });
    this.input = h("textarea", {
      id: "chat-input",
      class: "chat-input",
      rows: 3,
      placeholder: L("chatPlaceholder"),
      "aria-label": L("chatPlaceholder"),
    }) as HTMLTextAreaElement;
    this.sendButton = h("button", { class: "primary", id: "chat-send", onclick: () => void this.submit() }, L("send")) as HTMLButtonElement;
    this.status = h("div", { class: "chat-status muted", id: "chat-status" });
    this.stopButton = h("button", { id: "chat-stop", class: "secondary", hidden: true, onclick: () => void this.stop() }, L("stop")) as HTMLButtonElement;
    this.menu = new CompletionMenu(this.input, bridge, sessionId);
    this.apps = new AppViews({
      bridge,
      lang,
      sessionId: () => this.state.sessionId,
      prefill: (text) => this.prefill(text),
      changed: () => this.showStop(),
    });
    this.input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        void this.submit();
      }
    });
    const toolbar = h(
      "div",
      { class: "chat-toolbar" },
      h("button", { class: "link", id: "open-mcp", onclick: () => void this.bridge.request("host/openSettings", {}) }, L("openMcp")),
    );
    const elicitRoot = h("div", { class: "chat-elicit", id: "chat-elicit" });
    this.elicit = new ElicitDialog(elicitRoot, lang);
    const consentRoot = h("div", { class: "chat-consent", id: "chat-consent" });
    this.consent = new ConsentCards(consentRoot, lang, () => {
      if (this.consent) this.render();
    });
    // USE-4: a link in the answer opens through the host, which asks the user first; the page
    // itself never navigates. A code block's button copies its code.
    this.log.addEventListener("click", (ev) => this.markdownClick(ev));
    this.log.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") this.markdownClick(ev);
    });
    root.replaceChildren(
      toolbar,
      this.log,
      consentRoot,
      elicitRoot,
      h("div", { class: "chat-compose" }, this.status, this.menu.element, this.input, h("div", { class: "compose-actions" }, this.stopButton, this.sendButton)),
    );
    // The sidecar's questions the chat page answers (PAGE_ANSWERED_REQUESTS).
    bridge.onRequest((method, params) => {
      if (method === "wave/session/approveServers") return this.consent.approveServers(params as SessionApproveServersParams) as never;
      if (method === "wave/session/confirmTool") return this.consent.confirmTool(params as SessionConfirmToolParams) as never;
      if (method === "wave/session/elicit") return this.elicit.ask(params as SessionElicitParams) as never;
      // APPS-3: the host is about to destroy the session or this page; the apps are told first.
      if (method === "host/teardownApps") return this.apps.teardownAll((params as HostTeardownAppsParams).reason) as never;
      return Promise.reject(new Error(`unknown request ${String(method)}`));
    });
    bridge.onPush((method, params) => {
      if (method === "wave/session/delta") {
        const p = params as SessionDeltaParams;
        const next = deltaArrived(this.live, this.state.sessionId, p);
        if (next === this.live) return;
        this.live = next;
        // LONG-1: a delta changes one streaming message's text; the rest of the log stays.
        if (!this.updateStreaming(p.turn)) this.render();
      } else if (method === "wave/session/progress") {
        this.setLive(progressArrived(this.live, this.state.sessionId, params as SessionProgressParams));
      } else if (method === "wave/session/message") {
        const p = params as SessionMessageParams;
        const next = addMessage(this.state, p);
        if (p.sessionId === this.state.sessionId) {
          this.live = messageArrived(this.live, p.turn, p.message.role);
          if (p.message.role === "tool") this.live = toolResultArrived(this.live, p.turn, runningCalls(next.entries, next.running));
        }
        this.set(next);
        if (this.state.gap) void this.loadHistory();
      } else if (method === "wave/session/turnEnded") {
        const p = params as SessionTurnEndedParams;
        if (p.sessionId === this.state.sessionId) {
          this.live = turnOver(this.live, p.turn);
          // APPS-3: an app whose call never got its result hears why.
          const reason = p.error ? t(lang, "turnFailed", { reason: p.error }) : t(lang, "turnStopped");
          for (const callId of runningCalls(this.state.entries, this.state.running)) this.apps.cancelled(callId, reason);
        }
        // The sidecar took an open question of that turn as cancelled (Stop): its card closes.
        this.consent.turnEnded(p);
        const note = p.error ? t(lang, "turnFailed", { reason: p.error }) : p.cancelled ? t(lang, "turnStopped") : undefined;
        this.set(turnEnded(this.state, p.sessionId, p.turn, note));
      } else if (method === "wave/session/elicitationComplete") {
        this.elicit.completed(params as SessionElicitationCompleteParams);
      } else if (method === "host/prefill") this.prefill((params as { text: string }).text);
      else if (method === "wave/mcp/serversChanged") this.menu.invalidate();
    });
    this.render();
  }

  /** The page opened: tell the host (and take a prefill that waited), then load the conversation. */
  async load(): Promise<void> {
    const opened = await this.bridge.request("host/chatOpened", {}).catch(() => undefined);
    await this.loadHistory();
    if (opened?.prefill !== undefined) this.prefill(opened.prefill);
  }

  /** CHAT-1: the sidecar's record of the conversation, all of it. */
  private async loadHistory(): Promise<void> {
    try {
      const history = await this.bridge.request("wave/session/history", { sessionId: this.state.sessionId });
      this.set(historyLoaded(this.state, history));
    } catch (e) {
      this.set(sendFailed(this.state, errorText(e)));
    }
  }

  get current(): ChatState {
    return this.state;
  }

  /** ADD-1, EDIT-1: the text goes in the input, focused, not sent. */
  prefill(text: string): void {
    this.input.value = text;
    this.input.focus();
    const sel = placeholderSelection(text);
    this.input.setSelectionRange(sel.start, sel.end);
  }

  private async submit(): Promise<void> {
    const action = inputAction(this.input.value);
    if (action.kind === "none") return;
    if (action.kind === "openSettings") {
      this.input.value = "";
      await this.bridge.request("host/openSettings", {});
      return;
    }
    this.input.value = "";
    this.set(sendStarted(this.state));
    try {
      const accepted = await this.bridge.request("wave/session/send", { sessionId: this.state.sessionId, text: action.text });
      this.set(sendAccepted(this.state, accepted.turn));
    } catch (e) {
      const message = t(this.lang, "sendFailed", { reason: errorText(e) });
      // Not accepted, so not in the conversation: give the text back to the input.
      if (this.input.value === "") this.input.value = action.text;
      this.set(sendFailed(this.state, message));
      void this.bridge.request("host/notify", { level: "error", message }).catch(() => undefined);
    }
  }

  /**
   * LONG-3, APPS-3: the Stop button. It cancels the running turn, if one runs (the apps of its
   * running calls hear `tool-cancelled` first), and tears down every live app view of the chat:
   * their cards stay in the log, stopped, each with "Start again".
   */
  private async stop(): Promise<void> {
    const reason = t(this.lang, "turnStopped");
    const turnRunning = this.state.running.size > 0;
    if (turnRunning) {
      for (const callId of runningCalls(this.state.entries, this.state.running)) this.apps.cancelled(callId, reason);
      this.setLive(stopRequested(this.live));
    }
    const teardown = this.apps.stopAll(reason);
    if (turnRunning) {
      try {
        await this.bridge.request("wave/session/cancel", { sessionId: this.state.sessionId });
      } catch (e) {
        this.setLive(turnOver(this.live, -1));
        this.set(sendFailed(this.state, errorText(e)));
      }
    }
    await teardown;
  }

  /** The Stop button shows while a turn runs or an app view of the chat is live (APPS-3). */
  private showStop(): void {
    this.stopButton.hidden = !stopShown(this.state.running.size, this.apps.phases());
    this.stopButton.disabled = this.live.stopping;
  }

  private setLive(next: LiveState): void {
    if (next === this.live) return;
    this.live = next;
    this.render();
  }

  private set(next: ChatState): void {
    if (next === this.state) return;
    this.state = next;
    this.render();
  }

  private render(): void {
    const L = (k: Parameters<typeof t>[1], v?: Record<string, string | number>) => t(this.lang, k, v);
    const atBottom = this.atBottom();
    const visible = conversation(this.state).filter((e) => isVisible(e.message));
    this.running = runningCalls(this.state.entries, this.state.running);
    const items: HTMLElement[] = visible.flatMap((e) => [this.messageEl(e.message), ...this.appEls(e.message)]);
    this.streamingText = new Map();
    for (const [turn, text] of this.live.streaming) {
      if (!this.state.running.has(turn) || text === "") continue;
      const textEl = this.markdownEl(text);
      this.streamingText.set(turn, textEl);
      items.push(
        h(
          "div",
          { class: "msg msg-assistant streaming", "data-role": "assistant-streaming", "data-turn": turn },
          h("div", { class: "msg-who" }, L("agent")),
          textEl,
        ),
      );
    }
    if (items.length === 0) items.push(h("div", { class: "chat-empty muted" }, L("chatEmpty")));
    for (const err of this.state.errors) items.push(h("div", { class: "chat-error error-text" }, err));
    reconcile(this.log, items);
    if (atBottom) this.log.scrollTop = this.log.scrollHeight;
    this.status.textContent = isBusy(this.state) ? L("thinking") : "";
    this.showStop();
  }

  /**
   * The streaming text of `turn` changed: sets it on the element the log already shows, as
   * `render` would. False when the log does not show that turn's streaming message yet (its
   * first text, a turn not known as running): then the page renders in full.
   */
  private updateStreaming(turn: number): boolean {
    const el = this.streamingText.get(turn);
    const text = this.live.streaming.get(turn);
    if (!el || !el.isConnected || !this.state.running.has(turn) || !text) return false;
    // USE-4: the markdown is built again at most once a frame, however many deltas came.
    this.streamingDirty.add(turn);
    this.streamingFrame ??= requestAnimationFrame(() => this.flushStreaming());
    return true;
  }

  /** Builds the markdown of the streaming texts that changed (one frame's deltas at once). */
  private flushStreaming(): void {
    this.streamingFrame = undefined;
    const turns = [...this.streamingDirty];
    this.streamingDirty.clear();
    const atBottom = this.atBottom();
    for (const turn of turns) {
      const el = this.streamingText.get(turn);
      const text = this.live.streaming.get(turn);
      if (!el || !el.isConnected || !text) continue;
      el.replaceChildren(...this.markdownNodes(text));
    }
    if (atBottom) this.log.scrollTop = this.log.scrollHeight;
  }

  private markdownNodes(text: string): Node[] {
    return renderMarkdown(text, { copyLabel: t(this.lang, "copyCode"), copiedLabel: t(this.lang, "copiedCode") });
  }

  /** USE-4: the assistant's text as markdown. */
  private markdownEl(text: string): HTMLElement {
    return h("div", { class: "msg-text md" }, ...this.markdownNodes(text));
  }

  /** A click (or Enter) in the log: a markdown link asks the host to open it, a copy button copies. */
  private markdownClick(ev: Event): void {
    const url = linkClicked(ev);
    if (url !== undefined) {
      ev.preventDefault();
      void this.bridge.request("host/openExternal", { url }).catch((e) => {
        void this.bridge.request("host/notify", { level: "error", message: errorText(e) }).catch(() => undefined);
      });
      return;
    }
    if (ev.type !== "click") return;
    const copy = copyClicked(ev);
    if (!copy) return;
    void copyText(copy.code).then((copied) => {
      if (!copied) return;
      copy.button.textContent = copy.button.dataset.copied ?? "";
      copy.button.dataset.state = "copied";
      setTimeout(() => {
        copy.button.textContent = copy.button.dataset.label ?? "";
        delete copy.button.dataset.state;
      }, 2000);
    });
  }

  /** The log is scrolled to (near) its end: new content keeps it there. */
  private atBottom(): boolean {
    return this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 40;
  }

  private messageEl(m: ChatMessage): HTMLElement {
    const L = (k: Parameters<typeof t>[1], v?: Record<string, string | number>) => t(this.lang, k, v);
    if (m.role === "tool") {
      const name = m.toolName ?? "tool";
      return h(
        "details",
        { class: m.isError ? "msg msg-tool tool-error" : "msg msg-tool", "data-role": "tool" },
        h("summary", {}, L(m.isError ? "toolError" : "toolResult", { name })),
        h("pre", {}, m.content),
      );
    }
    const who = m.role === "user" ? L("you") : L("agent");
    return h(
      "div",
      { class: `msg msg-${m.role}`, "data-role": m.role },
      h("div", { class: "msg-who" }, who),
      // USE-4: the assistant's markdown is rendered; the user's own text stays as typed.
      m.content ? (m.role === "assistant" ? this.markdownEl(m.content) : h("div", { class: "msg-text" }, m.content)) : null,
      m.toolCalls.map((c) =>
        h(
          "div",
          { class: "tool-call muted" },
          "→ ",
          L("toolCall", { name: c.name }),
          " ",
          h("code", {}, c.arguments),
          this.running.has(c.id) ? this.progressEl(c.id, c.name) : null,
        ),
      ),
    );
  }

  /**
   * APPS-2, APPS-5: the app views of a message's tool calls (the same elements on every render),
   * and a tool message's full result handed to its app.
   */
  private appEls(m: ChatMessage): HTMLElement[] {
    if (m.role === "tool") {
      if (m.app && m.toolCallId) this.apps.result(m.toolCallId, m.app.result, m.isError);
      return [];
    }
    return m.toolCalls.flatMap((c) => (c.app ? [this.apps.element(c.id, c.app, c.arguments)] : []));
  }

  /** LONG-2: a running call: a bar when the total is known, else its message and a spinner. */
  private progressEl(callId: string, name: string): HTMLElement {
    const p = this.live.progress.get(callId);
    const share = p ? fraction(p) : undefined;
    // TRUST-5: a call whose confirmation card is open has not started: it waits for the user.
    if (this.consent.waitingCalls(this.state.sessionId).has(callId)) {
      return h("div", { class: "tool-running tool-waiting", "data-call": callId }, h("span", { class: "tool-progress-text" }, t(this.lang, "toolWaitingForYou", { name })));
    }
    const label = p?.message ?? t(this.lang, "toolRunning", { name });
    if (share !== undefined) {
      return h(
        "div",
        { class: "tool-running", "data-call": callId },
        h("progress", { class: "tool-progress", max: 1, value: share }),
        h("span", { class: "tool-progress-text" }, label),
      );
    }
    return h("div", { class: "tool-running", "data-call": callId }, h("span", { class: "spinner", "aria-hidden": "true" }), h("span", { class: "tool-progress-text" }, label));
  }
}
