// State of the "MCP services" settings page: pure functions over plain data, no DOM, no host.
// The page (settingsPage.ts) renders what these return and feeds them the host's answers.

import type { ConfigPaths, McpServerView, McpSource, McpStatus, ServersSnapshot } from "../../src/protocol.generated";
import { t, type Lang, type TextKey } from "./i18n";

export type TabId = "user" | "project" | "plugin" | "host";
export type Pending = "connecting" | "disconnecting" | "deleting" | "signingIn" | "signingOut" | "switching" | "approving" | "revoking";

/**
 * A row's identity: source and name. The same name can be listed twice, a user or plugin server
 * and an unapproved project entry of that name beside it (TRUST-1: `needs-approval`, with
 * `approval.shadows`), so row state is never keyed by the name alone.
 */
export type RowKey = string;

export function rowKey(server: Pick<McpServerView, "name" | "source">): RowKey {
  return `${server.source}/${server.name}`;
}

export interface SettingsState {
  sessionId: string;
  /** null while the first list is loading. */
  snapshot: ServersSnapshot | null;
  loadError?: string;
  /** The tab the user picked; before that, the first tab with servers. */
  tab?: TabId;
  /** Actions running per row (`rowKey`, UI-4). */
  pending: Record<RowKey, Pending>;
  /** The last failed action per row (`rowKey`), shown in its row (UI-12, DEL-3). */
  rowErrors: Record<RowKey, string>;
  /** A failure that belongs to no row. */
  banner?: string;
  /** The delete confirmation being shown (DEL-1). */
  confirm?: { name: string; source: McpSource; path?: string };
  configPaths?: ConfigPaths;
  /**
   * The sign-in attempt running per row (`rowKey`, AUTH-9). A reply of an older attempt (one the
   * user cancelled, or replaced by a newer Sign in) must not end the newer one.
   */
  loginAttempts: Record<RowKey, number>;
  /** The last attempt number handed out (attempts are unique per page). */
  lastAttempt: number;
}

export function initialState(sessionId: string): SettingsState {
  return { sessionId, snapshot: null, pending: {}, rowErrors: {}, loginAttempts: {}, lastAttempt: 0 };
}

/**
 * UI-11: a snapshot older than the one shown is dropped; so is one of another session. A snapshot
 * of the same version is the same list (replies and notifications share one counter) and is
 * taken as is.
 */
export function isStale(shown: ServersSnapshot | null, incoming: ServersSnapshot): boolean {
  return shown !== null && incoming.version < shown.version;
}

export function applySnapshot(state: SettingsState, incoming: ServersSnapshot): SettingsState {
  if (incoming.sessionId !== state.sessionId) return state;
  if (isStale(state.snapshot, incoming)) return state;
  // A server that left the list takes its row state with it.
  const keys = new Set(incoming.servers.map(rowKey));
  const keep = <T>(rec: Record<RowKey, T>) =>
    Object.fromEntries(Object.entries(rec).filter(([key]) => keys.has(key))) as Record<RowKey, T>;
  return {
    ...state,
    snapshot: incoming,
    loadError: undefined,
    pending: keep(state.pending),
    rowErrors: keep(state.rowErrors),
    loginAttempts: keep(state.loginAttempts),
  };
}

export const TAB_ORDER: TabId[] = ["user", "project", "plugin", "host"];

export function tabOf(source: McpSource): TabId {
  return source === "constructor" ? "host" : source;
}

/** The servers of one tab, in the order the sidecar lists them (project servers flat, UI-8). */
export function serversInTab(snapshot: ServersSnapshot | null, tab: TabId): McpServerView[] {
  return (snapshot?.servers ?? []).filter((s) => tabOf(s.source) === tab);
}

export interface TabInfo {
  id: TabId;
  label: TextKey;
  count: number;
}

/** User, Project and Plugin always; Host (constructor servers) only when it has any. */
export function visibleTabs(snapshot: ServersSnapshot | null): TabInfo[] {
  const labels: Record<TabId, TextKey> = { user: "tabUser", project: "tabProject", plugin: "tabPlugin", host: "tabHost" };
  return TAB_ORDER.map((id) => ({ id, label: labels[id], count: serversInTab(snapshot, id).length })).filter(
    (tab) => tab.id !== "host" || tab.count > 0,
  );
}

export function currentTab(state: SettingsState): TabId {
  const tabs = visibleTabs(state.snapshot);
  if (state.tab && tabs.some((x) => x.id === state.tab)) return state.tab;
  return tabs.find((x) => x.count > 0)?.id ?? "user";
}

export type EmptyState = "loading" | "loadError" | "noServers" | "emptyTab" | null;

/** UI-6 (nothing configured anywhere) and UI-10 (this tab has nothing). */
export function emptyState(state: SettingsState): EmptyState {
  if (!state.snapshot) return state.loadError ? "loadError" : "loading";
  if (state.snapshot.servers.length === 0) return "noServers";
  if (serversInTab(state.snapshot, currentTab(state)).length === 0) return "emptyTab";
  return null;
}

export type RowAction = "connect" | "disconnect" | "login" | "approve";

export interface RowButtons {
  primary: { label: TextKey; action: RowAction; disabled: boolean };
  /** A "Cancel" beside "Waiting for browser..." while sign-in runs (AUTH-9). */
  cancelLogin: boolean;
  /** "Sign out" for a server with stored credentials (AUTH-5, AUTH-9); null: no such button. */
  logout: { label: TextKey; disabled: boolean } | null;
  /** "Revoke approval" for an approved project server (TRUST-3); null: no such button. */
  revoke: { label: TextKey; disabled: boolean } | null;
  /** Edit and Delete exist for user and project rows only (DEL-4, UI-9). */
  edit: boolean;
  delete: boolean;
  /** Every button of the row is disabled while an action runs (except Cancel of a sign-in). */
  busy: boolean;
}

/** UI-3, UI-4, AUTH-9, TRUST-3: the row's buttons for its status and the action running on it. */
export function rowButtons(server: McpServerView, pending: Pending | undefined): RowButtons {
  const editable = !server.readOnly && (server.source === "user" || server.source === "project");
  const busy = pending !== undefined;
  let primary: RowButtons["primary"];
  if (pending === "connecting") primary = { label: "connectingEllipsis", action: "connect", disabled: true };
  else if (pending === "disconnecting") primary = { label: "disconnectingEllipsis", action: "disconnect", disabled: true };
  else if (pending === "approving") primary = { label: "approvingEllipsis", action: "approve", disabled: true };
  else if (pending === "signingIn")
    // The browser came back and the sidecar now connects with the new tokens.
    primary = { label: server.status === "connecting" ? "connectingEllipsis" : "waitingForBrowser", action: "login", disabled: true };
  else
    switch (server.status) {
      case "connected":
      case "reconnecting":
        primary = { label: "disconnect", action: "disconnect", disabled: busy };
        break;
      case "connecting":
        // A dial the agent started (first turn): it ends by itself.
        primary = { label: "connectingEllipsis", action: "connect", disabled: true };
        break;
      case "error":
        primary = { label: "reconnect", action: "connect", disabled: busy };
        break;
      case "needs-auth":
        // AUTH-1: a 401 is not an error to retry; the way forward is signing in.
        primary = { label: "signIn", action: "login", disabled: busy };
        break;
      case "needs-approval":
        // TRUST-1, TRUST-3: a project entry runs only once the user approved it as written;
        // TRUST-9: not at all while the IDE does not trust the workspace (the reason says so).
        primary = { label: "approve", action: "approve", disabled: busy || server.approval?.workspaceUntrusted === true };
        break;
      default:
        primary = { label: "connect", action: "connect", disabled: busy };
    }
  let logout: RowButtons["logout"] = null;
  if (pending === "signingOut") logout = { label: "signingOutEllipsis", disabled: true };
  else if (server.signedIn && pending !== "signingIn") logout = { label: "signOut", disabled: busy };
  let revoke: RowButtons["revoke"] = null;
  if (pending === "revoking") revoke = { label: "revokingEllipsis", disabled: true };
  else if (isApprovedProjectServer(server)) revoke = { label: "revokeApproval", disabled: busy };
  return { primary, cancelLogin: pending === "signingIn", logout, revoke, edit: editable, delete: editable, busy };
}

/** A project server the user approved (every project row not waiting for approval): it can be revoked. */
export function isApprovedProjectServer(server: McpServerView): boolean {
  return server.source === "project" && server.status !== "needs-approval";
}

export const STATUS_TEXT: Record<McpStatus, TextKey> = {
  connected: "statusConnected",
  connecting: "statusConnecting",
  reconnecting: "statusReconnecting",
  error: "statusError",
  disconnected: "statusDisconnected",
  "needs-auth": "statusNeedsAuth",
  "needs-approval": "statusNeedsApproval",
};

/** The command line or URL exactly as written in the config (SEC-1: never expanded). */
export function endpointText(server: McpServerView): string {
  if (server.url) return server.url;
  if (server.command) return [server.command, ...server.args].map(quoteArg).join(" ");
  return "";
}

function quoteArg(arg: string): string {
  return arg === "" || /[\s"']/.test(arg) ? JSON.stringify(arg) : arg;
}

/** `2026-03-04T05:06:07Z` → `2026-03-04 13:06` in the page's local time. */
export function formatTime(iso: string, tzOffsetMinutes = new Date(iso).getTimezoneOffset()): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const d = new Date(ms - tzOffsetMinutes * 60_000);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
}

/** Tool count with its origin: "3 tools", "3 tools · cached, last connected …" (UI-2, CACHE-2). */
export function toolsText(lang: Lang, server: McpServerView, tz?: number): { count: string; detail?: string } {
  const n = server.toolCount;
  const count = n === 0 ? t(lang, "noTools") : n === 1 ? t(lang, "tool") : t(lang, "tools", { n });
  const time = server.lastConnectedAt ? formatTime(server.lastConnectedAt, tz) : undefined;
  if (server.toolsFromCache) return { count, detail: time ? t(lang, "cachedAt", { time }) : t(lang, "cached") };
  if (time) return { count, detail: t(lang, "lastConnected", { time }) };
  return { count, detail: server.status === "connected" ? undefined : t(lang, "neverConnected") };
}

// ---- Add / Edit / Delete ----------------------------------------------------------------

/** A step the page asks its host to do, in this order. */
export type HostStep = { kind: "openFile"; path: string } | { kind: "closeSettings"; prefill?: string };

export function addPrompt(lang: Lang, source: "user" | "project", projectName?: string): string {
  if (source === "user") return t(lang, "promptAddUser");
  const project = projectName && projectName.length > 0 ? projectName : t(lang, "projectPlaceholder");
  return t(lang, "promptAddProject", { project });
}

export function editPrompt(lang: Lang, name: string): string {
  return t(lang, "promptEdit", { name });
}

/** ADD-1, ADD-2, ADD-4: close the page and prefill the prompt; never open a file. */
export function planAdd(lang: Lang, source: "user" | "project", paths?: ConfigPaths): HostStep[] {
  return [{ kind: "closeSettings", prefill: addPrompt(lang, source, paths?.projectName) }];
}

function isAbsolutePath(p: string | undefined): p is string {
  return !!p && (p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith("\\\\"));
}

/**
 * The config file of a row, as the host resolved it (EDIT-2): the absolute path from
 * `wave/mcp/configPaths` for its source, else the row's own absolute `configPath`; never a
 * path the page builds.
 */
export function configFileOf(server: McpServerView, paths?: ConfigPaths): string | undefined {
  const fromPaths =
    server.source === "user" ? paths?.userConfigPath : server.source === "project" ? paths?.projectConfigPath : undefined;
  if (isAbsolutePath(fromPaths)) return fromPaths;
  if (isAbsolutePath(server.configPath)) return server.configPath;
  return undefined;
}

/**
 * EDIT-1…3: open the config file first (closing the page disposes it, so a request sent after
 * the close would be lost), then close the page with the edit prompt. Path unknown: only the
 * prompt.
 */
export function planEdit(lang: Lang, server: McpServerView, paths?: ConfigPaths): HostStep[] {
  const path = configFileOf(server, paths);
  const close: HostStep = { kind: "closeSettings", prefill: editPrompt(lang, server.name) };
  return path ? [{ kind: "openFile", path }, close] : [close];
}

/** UI-7: Back only closes the page; it prefills nothing and sends nothing. */
export function planBack(): HostStep[] {
  return [{ kind: "closeSettings" }];
}

export function confirmText(lang: Lang, c: NonNullable<SettingsState["confirm"]>): string {
  if (c.path) return t(lang, "confirmDeleteBody", { name: c.name, path: c.path });
  const source = t(lang, c.source === "user" ? "sourceUser" : "sourceProject");
  return t(lang, "confirmDeleteUnknownPath", { name: c.name, source });
}

// ---- transitions the controller uses ----------------------------------------------------

export function selectTab(state: SettingsState, tab: TabId): SettingsState {
  return { ...state, tab };
}

export function startAction(state: SettingsState, key: RowKey, pending: Pending): SettingsState {
  const rowErrors = { ...state.rowErrors };
  delete rowErrors[key];
  return { ...state, pending: { ...state.pending, [key]: pending }, rowErrors };
}

/** The action ended: clear its pending mark, apply the reply's snapshot if any, keep an error. */
export function endAction(
  state: SettingsState,
  key: RowKey,
  outcome: { snapshot?: ServersSnapshot; error?: string },
): SettingsState {
  const pending = { ...state.pending };
  delete pending[key];
  let next: SettingsState = { ...state, pending };
  if (outcome.snapshot) next = applySnapshot(next, outcome.snapshot);
  if (outcome.error) next = { ...next, rowErrors: { ...next.rowErrors, [key]: outcome.error } };
  return next;
}

export function askDelete(state: SettingsState, server: McpServerView): SettingsState {
  if (server.source !== "user" && server.source !== "project") return state;
  return { ...state, confirm: { name: server.name, source: server.source, path: configFileOf(server, state.configPaths) } };
}

export function cancelDelete(state: SettingsState): SettingsState {
  return { ...state, confirm: undefined };
}

// ---- sign-in (AUTH-9) -----------------------------------------------------------------------

/** Sign in started: the row waits for the browser; the attempt number identifies this run. */
export function startLogin(state: SettingsState, key: RowKey): { state: SettingsState; attempt: number } {
  const attempt = state.lastAttempt + 1;
  const next = startAction(state, key, "signingIn");
  return { state: { ...next, lastAttempt: attempt, loginAttempts: { ...next.loginAttempts, [key]: attempt } }, attempt };
}

/** Whether `attempt` is the sign-in still running for the row `key`. */
export function isCurrentLogin(state: SettingsState, key: RowKey, attempt: number): boolean {
  return state.loginAttempts[key] === attempt && state.pending[key] === "signingIn";
}

/**
 * A sign-in ended (its reply, its error, or the user's Cancel). A stale attempt only
 * contributes its snapshot (the version check decides); it never ends the newer attempt.
 */
export function endLogin(
  state: SettingsState,
  key: RowKey,
  attempt: number,
  outcome: { snapshot?: ServersSnapshot; error?: string },
): SettingsState {
  if (!isCurrentLogin(state, key, attempt)) return outcome.snapshot ? applySnapshot(state, outcome.snapshot) : state;
  const loginAttempts = { ...state.loginAttempts };
  delete loginAttempts[key];
  return endAction({ ...state, loginAttempts }, key, outcome);
}

/** How a failed sign-in is reported: quietly (cancelled) or as a notification and row error (UI-12). */
export type LoginFailure = "cancelled" | "failed";

/**
 * A cancelled sign-in (the user's Cancel: the sidecar answers the `$/cancelRequest` with
 * -32800 RequestCancelled; a newer sign-in: `data.kind` `signInCancelled`) is quiet; anything
 * else is a failure to show.
 */
export function loginFailure(error: { code?: number; data?: unknown } | undefined): LoginFailure {
  if (!error) return "failed";
  if (error.code === -32800) return "cancelled";
  const kind = (error.data as { kind?: unknown } | undefined)?.kind;
  return kind === "signInCancelled" ? "cancelled" : "failed";
}

/** The reason shown under a `needs-auth` row (AUTH-1: it says how to sign in). */
export function authReason(server: McpServerView): string | undefined {
  return server.status === "needs-auth" ? server.error : undefined;
}

/**
 * The reason shown under a `needs-approval` row (TRUST-1: how to approve it; TRUST-9: that the
 * workspace is not trusted).
 */
export function approvalReason(server: McpServerView): string | undefined {
  return server.status === "needs-approval" ? server.error : undefined;
}

/** TRUST-6, TRUST-7: the marks a tool gets in its server's list. */
export function toolMarks(tool: McpServerView["tools"][number]): ("definitionChanged" | "hiddenText")[] {
  const marks: ("definitionChanged" | "hiddenText")[] = [];
  if (tool.definitionChanged) marks.push("definitionChanged");
  if (tool.hiddenText) marks.push("hiddenText");
  return marks;
}

/**
 * The icon a row shows (SRV-4): the first of `icons` that is an `https:` URL or a `data:` URL of
 * a PNG, JPEG, GIF or WebP image. The sidecar keeps no other; the page checks again.
 */
export function iconSrc(icons: readonly { src: string }[] | undefined): string | undefined {
  return icons?.map((i) => i.src).find((src) => /^(https:\/\/|data:image\/(png|jpeg|gif|webp)[;,])/i.test(src));
}
