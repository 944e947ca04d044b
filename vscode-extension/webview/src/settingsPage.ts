// The "MCP services" settings page: renders SettingsState and turns clicks into host requests.
// All decisions live in settingsState.ts; this file only wires them to the DOM and the bridge.

import type { McpLogAppendedParams, McpServerView, ServersSnapshot } from "../../src/protocol.generated";
import type { HostBridge } from "./bridge";
import { h } from "./dom";
import { HostError } from "./hostApi";
import { t, type Lang } from "./i18n";
import { approvalDetails } from "./consentCards";
import { toolBadges } from "./consent";
import { appendLog, levelClass, loadedLog, openLog, shortTime, type LogView } from "./logView";
import { RegistryBrowser } from "./registryBrowser";
import {
  applySnapshot,
  approvalReason,
  askDelete,
  authReason,
  endLogin,
  isCurrentLogin,
  loginFailure,
  startLogin,
  cancelDelete,
  confirmText,
  currentTab,
  emptyState,
  endAction,
  endpointText,
  iconSrc,
  initialState,
  planAdd,
  planBack,
  planEdit,
  rowButtons,
  rowKey,
  selectTab,
  serversInTab,
  startAction,
  STATUS_TEXT,
  toolMarks,
  toolsText,
  visibleTabs,
  type HostStep,
  type SettingsState,
  type TabId,
} from "./settingsState";

export function errorText(e: unknown): string {
  if (e instanceof HostError || e instanceof Error) return e.message;
  return String(e);
}

export class SettingsPage {
  private state: SettingsState;
  private closing = false;
  /** Rows (`rowKey`) whose tool list the user expanded; kept across re-renders (BUD-2). */
  private readonly expanded = new Set<string>();
  /** The server log shown over the page (SRV-2), if any. */
  private log: LogView | null = null;
  /** "Browse registry" (USE-3), shown over the page while open. */
  private readonly registry: RegistryBrowser;

  constructor(
    private readonly root: HTMLElement,
    private readonly bridge: HostBridge,
    private readonly lang: Lang,
    sessionId: string,
  ) {
    this.state = initialState(sessionId);
    this.registry = new RegistryBrowser(
      bridge,
      lang,
      () => this.state.sessionId,
      () => this.render(),
      (servers, scope) => this.set(selectTab(applySnapshot(this.state, servers), scope)),
    );
    bridge.onPush((method, params) => {
      if (method === "wave/mcp/serversChanged") this.set(applySnapshot(this.state, params as ServersSnapshot));
      if (method === "wave/mcp/logAppended" && this.log) this.setLog(appendLog(this.log, params as McpLogAppendedParams));
      if (method === "host/sidecarRestarted") {
        // A new sidecar counts versions from 1 again: forget the old list, keep the tab.
        this.set({ ...initialState(this.state.sessionId), tab: this.state.tab });
        void this.load();
      }
    });
    document.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape" && this.state.confirm) this.set(cancelDelete(this.state));
      else if (ev.key === "Escape" && this.log) this.setLog(null);
      else if (ev.key === "Escape" && this.registry.isOpen) this.registry.close();
    });
  }

  /** For tests and hosts: the state shown. */
  get current(): SettingsState {
    return this.state;
  }

  async load(): Promise<void> {
    const sessionId = this.state.sessionId;
    this.set({ ...this.state, loadError: undefined });
    // Config paths are only needed for Add/Edit/Delete; a failure there must not hide the list.
    void this.bridge
      .request("wave/mcp/configPaths", { sessionId })
      .then((configPaths) => this.set({ ...this.state, configPaths }))
      .catch(() => undefined);
    try {
      const snapshot = await this.bridge.request("wave/mcp/servers", { sessionId });
      this.set(applySnapshot(this.state, snapshot));
    } catch (e) {
      if (!this.state.snapshot) this.set({ ...this.state, loadError: errorText(e) });
    }
  }

  private set(next: SettingsState): void {
    if (next === this.state) return;
    this.state = next;
    this.render();
  }

  private setLog(next: LogView | null): void {
    if (next === this.log) return;
    this.log = next;
    this.render();
  }

  // ---- actions ----

  /** SRV-2: the server's log over the page, following new entries. */
  private async openLogs(server: McpServerView): Promise<void> {
    const view = openLog(this.state.sessionId, server.name);
    this.setLog(view);
    try {
      const result = await this.bridge.request("wave/mcp/logs", { sessionId: view.sessionId, name: view.name });
      if (this.log?.name === view.name) this.setLog(loadedLog(this.log, result));
    } catch (e) {
      if (this.log?.name === view.name) this.setLog({ ...this.log, loaded: true, error: errorText(e) });
    }
  }

  private async connectOrDisconnect(server: McpServerView, action: "connect" | "disconnect"): Promise<void> {
    const name = server.name;
    const key = rowKey(server);
    this.set(startAction(this.state, key, action === "connect" ? "connecting" : "disconnecting"));
    try {
      const snapshot = await this.bridge.request(action === "connect" ? "wave/mcp/connect" : "wave/mcp/disconnect", {
        name,
        sessionId: this.state.sessionId,
      });
      this.set(endAction(this.state, key, { snapshot }));
    } catch (e) {
      // UI-12: a failure is the row's error plus a host notification, never a chat message.
      const message = t(this.lang, action === "connect" ? "connectFailed" : "disconnectFailed", { name, reason: errorText(e) });
      this.set(endAction(this.state, key, { error: message }));
      void this.bridge.request("host/notify", { level: "error", message }).catch(() => undefined);
      // UI-4: never leave the row stuck; fetch the latest list.
      void this.bridge
        .request("wave/mcp/servers", { sessionId: this.state.sessionId })
        .then((s) => this.set(applySnapshot(this.state, s)))
        .catch(() => undefined);
    }
  }

  /**
   * AUTH-2, AUTH-9: sign in. The host forwards `wave/mcp/login`; the sidecar asks the host to
   * open the authorization URL (`wave/mcp/openUrl`) and answers once signed in and connected.
   * Meanwhile the row reads "Waiting for browser..." with Cancel.
   */
  private async login(server: McpServerView): Promise<void> {
    const name = server.name;
    const key = rowKey(server);
    const sessionId = this.state.sessionId;
    const started = startLogin(this.state, key);
    this.set(started.state);
    try {
      const snapshot = await this.bridge.request("wave/mcp/login", { name, sessionId });
      this.set(endLogin(this.state, key, started.attempt, { snapshot }));
    } catch (e) {
      const current = isCurrentLogin(this.state, key, started.attempt);
      if (loginFailure(e as HostError) === "cancelled" || !current) {
        // Cancelled (by the user's Cancel or a newer Sign in): quiet, no notification.
        this.set(endLogin(this.state, key, started.attempt, {}));
      } else {
        // UI-12, AUTH-8: the sidecar's message names the server and the cause.
        const message = t(this.lang, "signInFailed", { name, reason: errorText(e) });
        this.set(endLogin(this.state, key, started.attempt, { error: message }));
        void this.bridge.request("host/notify", { level: "error", message }).catch(() => undefined);
      }
      this.refresh();
    }
  }

  /** AUTH-9: Cancel while waiting for the browser: the row is back at once; the host cancels. */
  private cancelLogin(server: McpServerView): void {
    const name = server.name;
    const key = rowKey(server);
    const attempt = this.state.loginAttempts[key];
    if (attempt === undefined) return;
    this.set(endLogin(this.state, key, attempt, {}));
    void this.bridge.request("host/cancelLogin", { name, sessionId: this.state.sessionId }).catch(() => undefined);
  }

  /** AUTH-5: sign out (disconnects and forgets the stored credentials). */
  private async logout(server: McpServerView): Promise<void> {
    const name = server.name;
    const key = rowKey(server);
    this.set(startAction(this.state, key, "signingOut"));
    try {
      const snapshot = await this.bridge.request("wave/mcp/logout", { name, sessionId: this.state.sessionId });
      this.set(endAction(this.state, key, { snapshot }));
    } catch (e) {
      const message = t(this.lang, "signOutFailed", { name, reason: errorText(e) });
      this.set(endAction(this.state, key, { error: message }));
      void this.bridge.request("host/notify", { level: "error", message }).catch(() => undefined);
      this.refresh();
    }
  }

  /**
   * TRUST-3: Approve (a `needs-approval` project row: approves the entry exactly as written and
   * connects it) or Revoke approval (an approved project row: disconnects it and forgets the
   * approval). A failure (e.g. `untrusted`, TRUST-9) is the row's error and a notification.
   */
  private async approveOrRevoke(server: McpServerView, action: "approve" | "revoke"): Promise<void> {
    const name = server.name;
    const key = rowKey(server);
    this.set(startAction(this.state, key, action === "approve" ? "approving" : "revoking"));
    try {
      const snapshot = await this.bridge.request(action === "approve" ? "wave/mcp/approve" : "wave/mcp/revoke", {
        name,
        sessionId: this.state.sessionId,
      });
      this.set(endAction(this.state, key, { snapshot }));
    } catch (e) {
      const message = t(this.lang, action === "approve" ? "approveFailed" : "revokeFailed", { name, reason: errorText(e) });
      this.set(endAction(this.state, key, { error: message }));
      void this.bridge.request("host/notify", { level: "error", message }).catch(() => undefined);
      this.refresh();
    }
  }

  /** UI-4: never leave a row stuck; fetch the latest list. */
  private refresh(): void {
    void this.bridge
      .request("wave/mcp/servers", { sessionId: this.state.sessionId })
      .then((s) => this.set(applySnapshot(this.state, s)))
      .catch(() => undefined);
  }

  /** BUD-2: a tool's switch edits the entry's `disabledTools` (or `enabledTools`) in its file. */
  private async setToolEnabled(server: McpServerView, tool: string, enabled: boolean): Promise<void> {
    const name = server.name;
    const key = rowKey(server);
    this.set(startAction(this.state, key, "switching"));
    try {
      const snapshot = await this.bridge.request("wave/mcp/setToolEnabled", {
        name,
        source: server.source,
        tool,
        enabled,
        sessionId: this.state.sessionId,
      });
      this.set(endAction(this.state, key, { snapshot }));
    } catch (e) {
      const message = t(this.lang, "toolSwitchFailed", { name, tool, reason: errorText(e) });
      this.set(endAction(this.state, key, { error: message }));
      void this.bridge.request("host/notify", { level: "error", message }).catch(() => undefined);
      this.refresh();
    }
  }

  private async confirmDelete(): Promise<void> {
    const c = this.state.confirm;
    if (!c) return;
    const key = rowKey(c);
    this.set(startAction(cancelDelete(this.state), key, "deleting"));
    try {
      const snapshot = await this.bridge.request("wave/mcp/delete", {
        name: c.name,
        source: c.source,
        sessionId: this.state.sessionId,
      });
      this.set(endAction(this.state, key, { snapshot }));
    } catch (e) {
      // DEL-3: the error is shown, the list stays as it was.
      const message = t(this.lang, "deleteFailed", { name: c.name, reason: errorText(e) });
      this.set(endAction(this.state, key, { error: message }));
      void this.bridge.request("host/notify", { level: "error", message }).catch(() => undefined);
    }
  }

  /** Runs host steps strictly in order, each after the previous one was answered (EDIT-3). */
  private async run(steps: HostStep[]): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    try {
      for (const step of steps) {
        if (step.kind === "openFile") {
          try {
            await this.bridge.request("host/openFile", { path: step.path });
          } catch (e) {
            void this.bridge.request("host/notify", { level: "warning", message: errorText(e) }).catch(() => undefined);
          }
        } else {
          await this.bridge.request("host/closeSettings", step.prefill === undefined ? {} : { prefill: step.prefill });
        }
      }
    } finally {
      this.closing = false;
    }
  }

  // ---- rendering ----

  render(): void {
    const focusedKey = (document.activeElement as HTMLElement | null)?.dataset?.key;
    const s = this.state;
    const L = (k: Parameters<typeof t>[1], v?: Record<string, string | number>) => t(this.lang, k, v);
    const tab = currentTab(s);
    const empty = emptyState(s);

    const header = h(
      "header",
      { class: "page-header" },
      h("button", { class: "link back", "data-key": "back", onclick: () => void this.run(planBack()) }, "← ", L("back")),
      h("h1", {}, L("settingsTitle")),
    );

    const nav = h(
      "nav",
      { class: "settings-nav", "aria-label": L("settingsTitle") },
      h("a", { class: "nav-item selected", "aria-current": "page", id: "nav-mcp" }, L("navMcp")),
    );

    const tabs = h(
      "div",
      { class: "source-tabs", role: "tablist" },
      visibleTabs(s.snapshot).map((x) =>
        h(
          "button",
          {
            class: x.id === tab ? "source-tab selected" : "source-tab",
            role: "tab",
            "aria-selected": x.id === tab ? "true" : "false",
            "data-tab": x.id,
            "data-key": `tab-${x.id}`,
            onclick: () => this.set(selectTab(this.state, x.id)),
          },
          L(x.label),
          s.snapshot ? h("span", { class: "count" }, String(x.count)) : null,
        ),
      ),
    );

    const addButton = (source: "user" | "project", primary = false) =>
      h(
        "button",
        {
          class: primary ? "primary add" : "secondary add",
          "data-add": source,
          "data-key": `add-${source}`,
          onclick: () => void this.run(planAdd(this.lang, source, this.state.configPaths)),
        },
        L(source === "user" ? "addUser" : "addProject"),
      );

    const browseButton = () =>
      h(
        "button",
        {
          class: "secondary browse-registry",
          "data-action": "browse-registry",
          "data-key": "browse-registry",
          onclick: () => this.registry.show(),
        },
        L("registryBrowse"),
      );

    const toolbar =
      tab === "user" || tab === "project"
        ? h("div", { class: "toolbar" }, browseButton(), addButton(tab, true))
        : h("div", { class: "toolbar" }, browseButton());

    let body: HTMLElement;
    if (empty === "loading") body = h("div", { class: "empty", id: "loading" }, L("loading"));
    else if (empty === "loadError")
      body = h(
        "div",
        { class: "empty error-state" },
        h("p", { class: "error-text" }, L("loadFailed", { reason: s.loadError ?? "" })),
        h("button", { class: "secondary", onclick: () => void this.load() }, L("retry")),
      );
    else if (empty === "noServers")
      body = h(
        "div",
        { class: "empty empty-all", id: "empty-all" },
        h("h2", {}, L("emptyAllTitle")),
        h("p", {}, L("emptyAllBody")),
        h("div", { class: "empty-actions" }, addButton("user", true), addButton("project"), browseButton()),
      );
    else if (empty === "emptyTab") body = h("div", { class: "empty empty-tab", id: "empty-tab" }, this.emptyTabText(tab));
    else body = h("ul", { class: "server-list" }, serversInTab(s.snapshot, tab).map((server) => this.row(server)));

    const banner = s.banner
      ? h(
          "div",
          { class: "banner error-text", role: "alert" },
          s.banner,
          h("button", { class: "link", onclick: () => this.set({ ...this.state, banner: undefined }) }, L("dismiss")),
        )
      : null;

    const main = h(
      "main",
      { class: "settings-main" },
      h("h2", { class: "section-title" }, L("navMcp")),
      tabs,
      empty === "noServers" ? null : toolbar,
      banner,
      body,
    );

    const dialog = s.confirm
      ? this.confirmDialog()
      : this.log
        ? this.logDialog(this.log)
        : this.registry.isOpen
          ? this.registry.el
          : null;
    this.root.replaceChildren(header, h("div", { class: "settings-layout" }, nav, main), ...(dialog ? [dialog] : []));

    const again = focusedKey ? this.root.querySelector<HTMLElement>(`[data-key="${CSS.escape(focusedKey)}"]`) : null;
    if (dialog && dialog === this.registry.el) {
      // The registry dialog keeps its elements: focus (and the search box's caret) stays put.
      (again && dialog.contains(again) ? again : dialog.querySelector<HTMLElement>("#registry-query"))?.focus();
    } else if (dialog) dialog.querySelector<HTMLElement>("button.cancel")?.focus();
    else if (again && !again.hasAttribute("disabled")) again.focus();
  }

  private emptyTabText(tab: TabId): string {
    const project = this.state.configPaths?.projectName ?? "";
    switch (tab) {
      case "user":
        return t(this.lang, "emptyUser");
      case "project":
        return t(this.lang, "emptyProject", { project });
      case "plugin":
        return t(this.lang, "emptyPlugin");
      default:
        return t(this.lang, "emptyHost");
    }
  }

  private row(server: McpServerView): HTMLElement {
    const L = (k: Parameters<typeof t>[1], v?: Record<string, string | number>) => t(this.lang, k, v);
    const key = rowKey(server);
    const pending = this.state.pending[key];
    const buttons = rowButtons(server, pending === "deleting" ? undefined : pending);
    const busy = pending !== undefined;
    const tools = toolsText(this.lang, server);
    const sourceKey =
      server.source === "user"
        ? "sourceUser"
        : server.source === "project"
          ? "sourceProject"
          : server.source === "plugin"
            ? "sourcePlugin"
            : "sourceConstructor";
    const actions = h(
      "div",
      { class: "row-actions" },
      h(
        "button",
        {
          class: "primary",
          "data-action": buttons.primary.action,
          "data-key": `primary-${key}`,
          disabled: buttons.primary.disabled || busy,
          onclick: () => {
            const action = buttons.primary.action;
            if (action === "login") void this.login(server);
            else if (action === "approve") void this.approveOrRevoke(server, "approve");
            else void this.connectOrDisconnect(server, action);
          },
        },
        pending === "deleting" ? L("deletingEllipsis") : L(buttons.primary.label),
      ),
      buttons.cancelLogin
        ? h(
            "button",
            {
              class: "secondary cancel-login",
              "data-action": "cancel-login",
              "data-key": `cancel-login-${key}`,
              onclick: () => this.cancelLogin(server),
            },
            L("cancelSignIn"),
          )
        : null,
      buttons.logout
        ? h(
            "button",
            {
              class: "secondary",
              "data-action": "logout",
              "data-key": `logout-${key}`,
              disabled: buttons.logout.disabled || busy,
              onclick: () => void this.logout(server),
            },
            L(buttons.logout.label),
          )
        : null,
      buttons.revoke
        ? h(
            "button",
            {
              class: "secondary",
              "data-action": "revoke",
              "data-key": `revoke-${key}`,
              disabled: buttons.revoke.disabled || busy,
              onclick: () => void this.approveOrRevoke(server, "revoke"),
            },
            L(buttons.revoke.label),
          )
        : null,
      // SRV-2: what the server logged (messages and stderr); nothing for one that never ran.
      server.status === "needs-approval"
        ? null
        : h(
            "button",
            { class: "secondary", "data-action": "logs", "data-key": `logs-${key}`, onclick: () => void this.openLogs(server) },
            L("logs"),
          ),
      buttons.edit
        ? h(
            "button",
            {
              class: "secondary",
              "data-action": "edit",
              "data-key": `edit-${key}`,
              disabled: busy,
              onclick: () => void this.run(planEdit(this.lang, server, this.state.configPaths)),
            },
            L("edit"),
          )
        : null,
      buttons.delete
        ? h(
            "button",
            {
              class: "secondary danger",
              "data-action": "delete",
              "data-key": `delete-${key}`,
              disabled: busy,
              onclick: () => this.set(askDelete(this.state, server)),
            },
            L("delete"),
          )
        : null,
      !buttons.edit ? h("span", { class: "badge muted" }, L("readOnly")) : null,
    );
    const rowError = this.state.rowErrors[key];
    return h(
      "li",
      { class: `server-row status-${server.status}`, "data-server": server.name, "data-source": server.source, "data-status": server.status },
      h(
        "div",
        { class: "row-main" },
        h(
          "div",
          { class: "row-title" },
          rowIcon(iconSrc(server.icons)),
          h("span", { class: "server-name" }, server.name),
          h("span", { class: "badge transport", title: "type" }, server.transport),
          h("span", { class: "badge source" }, L(sourceKey)),
          h(
            "span",
            { class: `status status-${server.status}`, "data-status": server.status },
            h("span", { class: "dot", "aria-hidden": "true" }),
            L(STATUS_TEXT[server.status]),
          ),
          server.signedIn ? h("span", { class: "badge signed-in" }, L("signedIn")) : null,
          // SPEC-1: the negotiated MCP revision (the last one when not connected now).
          server.protocolVersion
            ? h("span", { class: "badge mcp-revision", title: "MCP revision" }, `MCP ${server.protocolVersion}`)
            : null,
        ),
        // A row waiting for approval shows its whole command line below, as approving runs it.
        server.status === "needs-approval" && server.approval
          ? null
          : h("div", { class: "endpoint", title: endpointText(server) }, endpointText(server)),
        h(
          "div",
          { class: "tools-line" },
          h("span", { class: "tool-count" }, tools.count),
          tools.detail
            ? h("span", { class: server.toolsFromCache ? "badge cached tools-detail" : "muted tools-detail" }, tools.detail)
            : null,
        ),
        server.status === "error" && server.error ? h("div", { class: "error-text server-error" }, server.error) : null,
        authReason(server) ? h("div", { class: "auth-reason" }, authReason(server)!) : null,
        approvalReason(server) ? h("div", { class: "approval-reason" }, approvalReason(server)!) : null,
        server.status === "needs-approval" && server.approval ? approvalDetails(this.lang, server.approval) : null,
        pending === "signingIn" ? h("div", { class: "sign-in-hint muted", role: "status" }, L("signInHint")) : null,
        rowError ? h("div", { class: "error-text action-error", role: "alert" }, rowError) : null,
        server.tools.length > 0 ? this.toolList(server, busy) : null,
      ),
      actions,
    );
  }

  /** BUD-2: each tool with a switch; read-only for plugin and constructor servers. */
  private toolList(server: McpServerView, busy: boolean): HTMLElement {
    const L = (k: Parameters<typeof t>[1]) => t(this.lang, k);
    const key = rowKey(server);
    const details = h(
      "details",
      { class: "tool-list", open: this.expanded.has(key), "data-key": `tools-${key}` },
      h("summary", {}, L("showTools")),
      h(
        "ul",
        {},
        server.tools.map((tool) =>
          h(
            "li",
            { class: tool.enabled ? "tool enabled" : "tool disabled", "data-tool": tool.name },
            h(
              "label",
              { class: "tool-switch", title: server.readOnly ? L("toolSwitchReadOnly") : "" },
              h("input", {
                type: "checkbox",
                role: "switch",
                "data-key": `tool-${key}-${tool.name}`,
                "aria-label": tool.name,
                checked: tool.enabled,
                disabled: server.readOnly || busy,
                onchange: (ev: Event) =>
                  void this.setToolEnabled(server, tool.name, (ev.target as HTMLInputElement).checked),
              }),
              rowIcon(iconSrc(tool.icons)),
              h("code", {}, tool.name),
            ),
            // SRV-4: the server's title for the tool and its hints (never guarantees).
            tool.annotations?.title ? h("span", { class: "tool-title" }, tool.annotations.title) : null,
            toolBadges(this.lang, tool.annotations).map((b) =>
              h("span", { class: `badge hint hint-${b.kind}`, "data-badge": b.kind, title: b.tooltip }, b.label),
            ),
            // TRUST-6, TRUST-7: a permission that no longer applies; hidden characters removed.
            toolMarks(tool).map((mark) =>
              h(
                "span",
                {
                  class: mark === "definitionChanged" ? "badge tool-mark warn" : "badge tool-mark",
                  "data-mark": mark,
                  title: L(mark === "definitionChanged" ? "toolChangedTooltip" : "toolHiddenTextTooltip"),
                },
                L(mark === "definitionChanged" ? "toolChangedMark" : "toolHiddenTextMark"),
              ),
            ),
            tool.description ? h("span", { class: "muted" }, " — " + tool.description) : null,
          ),
        ),
      ),
    );
    details.addEventListener("toggle", () => {
      if ((details as HTMLDetailsElement).open) this.expanded.add(key);
      else this.expanded.delete(key);
    });
    return details;
  }

  private logDialog(view: LogView): HTMLElement {
    const L = (k: Parameters<typeof t>[1], v?: Record<string, string | number>) => t(this.lang, k, v);
    const lines = h(
      "ol",
      { class: "log-lines", "aria-live": view.follow ? "polite" : "off" },
      view.entries.map((entry) =>
        h(
          "li",
          { class: `log-line ${levelClass(entry)}`, "data-source": entry.source, "data-level": entry.level ?? "" },
          h("span", { class: "log-time" }, shortTime(entry.time)),
          h("span", { class: "log-level" }, entry.source === "stderr" ? "stderr" : (entry.level ?? "info")),
          entry.logger ? h("span", { class: "log-logger" }, `[${entry.logger}]`) : null,
          h("span", { class: "log-text" }, entry.text),
        ),
      ),
    );
    const dialog = h(
      "div",
      {
        class: "overlay",
        onclick: (ev: Event) => {
          if (ev.target === ev.currentTarget) this.setLog(null);
        },
      },
      h(
        "div",
        { class: "dialog log-dialog", role: "dialog", "aria-modal": "true", "aria-labelledby": "log-title", id: "server-log", "data-server": view.name },
        h(
          "header",
          { class: "log-header" },
          h("h2", { id: "log-title" }, L("logTitle", { name: view.name })),
          h(
            "label",
            { class: "log-follow" },
            h("input", {
              type: "checkbox",
              checked: view.follow,
              "data-key": "log-follow",
              onchange: (ev: Event) => this.setLog({ ...view, follow: (ev.target as HTMLInputElement).checked }),
            }),
            L("logFollow"),
          ),
          h("button", { class: "secondary log-close", "data-key": "log-close", onclick: () => this.setLog(null) }, L("logClose")),
        ),
        view.dropped > 0 ? h("p", { class: "muted log-dropped" }, L("logDropped", { n: view.dropped })) : null,
        view.error ? h("p", { class: "error-text", role: "alert" }, view.error) : null,
        view.loaded && view.entries.length === 0 && !view.error ? h("p", { class: "muted log-empty" }, L("logEmpty")) : null,
        lines,
      ),
    );
    if (view.follow) requestAnimationFrame(() => (lines.scrollTop = lines.scrollHeight));
    return dialog;
  }

  private confirmDialog(): HTMLElement {
    const c = this.state.confirm!;
    const L = (k: Parameters<typeof t>[1]) => t(this.lang, k);
    return h(
      "div",
      {
        class: "overlay",
        onclick: (ev: Event) => {
          if (ev.target === ev.currentTarget) this.set(cancelDelete(this.state));
        },
      },
      h(
        "div",
        { class: "dialog", role: "dialog", "aria-modal": "true", "aria-labelledby": "confirm-title", id: "confirm-delete" },
        h("h2", { id: "confirm-title" }, L("confirmDeleteTitle")),
        h("p", { class: "confirm-body" }, confirmText(this.lang, c)),
        h(
          "div",
          { class: "dialog-actions" },
          h("button", { class: "secondary cancel", onclick: () => this.set(cancelDelete(this.state)) }, L("cancel")),
          h("button", { class: "primary danger confirm", onclick: () => void this.confirmDelete() }, L("confirmDelete")),
        ),
      ),
    );
  }
}

/** A 16-pixel icon of a server or tool, or nothing; it sends no referrer (SRV-4). */
function rowIcon(src: string | undefined): HTMLElement | null {
  if (!src) return null;
  return h("img", { class: "row-icon", src, alt: "", width: "16", height: "16", referrerpolicy: "no-referrer", loading: "lazy" });
}
