import { describe, expect, it } from "vitest";
import {
  addPrompt,
  applySnapshot,
  approvalReason,
  askDelete,
  authReason,
  endLogin,
  iconSrc,
  isCurrentLogin,
  loginFailure,
  startLogin,
  STATUS_TEXT,
  cancelDelete,
  configFileOf,
  confirmText,
  currentTab,
  editPrompt,
  emptyState,
  endAction,
  endpointText,
  formatTime,
  initialState,
  isStale,
  planAdd,
  planBack,
  planEdit,
  rowButtons,
  rowKey,
  selectTab,
  serversInTab,
  startAction,
  toolMarks,
  toolsText,
  visibleTabs,
} from "../../webview/src/settingsState";
import { paths, server, snap } from "./fixtures";
import type { McpServerView } from "../../src/protocol.generated";
import { t } from "../../webview/src/i18n";

/** The row key of the fixtures' project server `name`. */
const K = (name: string) => rowKey(server(name));

describe("snapshot ordering (UI-11, UI-5)", () => {
  it("takes the first snapshot and every newer one", () => {
    let s = initialState("default");
    s = applySnapshot(s, snap(3, [server("a")]));
    expect(s.snapshot?.version).toBe(3);
    s = applySnapshot(s, snap(5, [server("a", { status: "connected" })]));
    expect(s.snapshot?.servers[0].status).toBe("connected");
  });

  it("UI-11: drops a snapshot older than the one shown", () => {
    let s = applySnapshot(initialState("default"), snap(7, [server("a", { status: "connected" })]));
    const before = s;
    s = applySnapshot(s, snap(6, [server("a", { status: "connecting" })]));
    expect(s).toBe(before);
    expect(s.snapshot?.servers[0].status).toBe("connected");
    expect(isStale(s.snapshot, snap(6, []))).toBe(true);
    expect(isStale(s.snapshot, snap(7, []))).toBe(false);
    expect(isStale(null, snap(0, []))).toBe(false);
  });

  it("a reply older than a notification already shown does not roll the row back", () => {
    // connect: notifications connecting(v2), connected(v3) arrive before the reply (v3 or less).
    let s = applySnapshot(initialState("default"), snap(1, [server("a")]));
    s = startAction(s, K("a"), "connecting");
    s = applySnapshot(s, snap(3, [server("a", { status: "connected", toolCount: 2 })]));
    s = endAction(s, K("a"), { snapshot: snap(2, [server("a", { status: "connecting" })]) });
    expect(s.snapshot?.servers[0].status).toBe("connected");
    expect(s.pending).toEqual({});
  });

  it("ignores another session's snapshot", () => {
    const s = applySnapshot(initialState("default"), snap(1, [server("a")]));
    expect(applySnapshot(s, snap(9, [], "other"))).toBe(s);
  });

  it("drops row state of servers that left the list", () => {
    let s = applySnapshot(initialState("default"), snap(1, [server("a"), server("b")]));
    s = startAction(s, K("b"), "connecting");
    s = endAction(s, K("a"), { error: "boom" });
    s = applySnapshot(s, snap(2, [server("c")]));
    expect(s.pending).toEqual({});
    expect(s.rowErrors).toEqual({});
  });
});

describe("tabs (UI-8, UI-10)", () => {
  const all = snap(1, [
    server("u1", { source: "user", configPath: "/home/u/.wave/mcp.json" }),
    server("p1"),
    server("p2"),
    server("pl", { source: "plugin", readOnly: true, configPath: "/home/u/.wave/plugins/x/.mcp.json" }),
  ]);

  it("groups servers by source, project flat and in the sidecar's order", () => {
    expect(serversInTab(all, "user").map((s) => s.name)).toEqual(["u1"]);
    expect(serversInTab(all, "project").map((s) => s.name)).toEqual(["p1", "p2"]);
    expect(serversInTab(all, "plugin").map((s) => s.name)).toEqual(["pl"]);
  });

  it("shows User, Project, Plugin always and Host only with constructor servers", () => {
    expect(visibleTabs(all).map((t) => [t.id, t.count])).toEqual([
      ["user", 1],
      ["project", 2],
      ["plugin", 1],
    ]);
    const withHost = snap(2, [...all.servers, server("c", { source: "constructor", readOnly: true, configPath: undefined })]);
    expect(visibleTabs(withHost).map((t) => t.id)).toEqual(["user", "project", "plugin", "host"]);
    expect(serversInTab(withHost, "host").map((s) => s.name)).toEqual(["c"]);
  });

  it("opens on the first tab with servers, then keeps the user's pick", () => {
    let s = applySnapshot(initialState("default"), snap(1, [server("p1")]));
    expect(currentTab(s)).toBe("project");
    s = selectTab(s, "plugin");
    expect(currentTab(s)).toBe("plugin");
    expect(currentTab(applySnapshot(initialState("default"), snap(1, [])))).toBe("user");
  });

  it("empty states: loading, nothing configured (UI-6), empty tab (UI-10)", () => {
    let s = initialState("default");
    expect(emptyState(s)).toBe("loading");
    expect(emptyState({ ...s, loadError: "x" })).toBe("loadError");
    s = applySnapshot(s, snap(1, []));
    expect(emptyState(s)).toBe("noServers");
    s = applySnapshot(s, snap(2, [server("p1")]));
    expect(emptyState(s)).toBe(null);
    s = selectTab(s, "user");
    expect(emptyState(s)).toBe("emptyTab");
    s = selectTab(s, "plugin");
    expect(emptyState(s)).toBe("emptyTab");
  });
});

describe("row buttons (UI-3, UI-4, DEL-4)", () => {
  it("Connect / Disconnect / Reconnect by status", () => {
    expect(rowButtons(server("a"), undefined).primary).toEqual({ label: "connect", action: "connect", disabled: false });
    expect(rowButtons(server("a", { status: "connected" }), undefined).primary).toEqual({
      label: "disconnect",
      action: "disconnect",
      disabled: false,
    });
    expect(rowButtons(server("a", { status: "reconnecting" }), undefined).primary.action).toBe("disconnect");
    expect(rowButtons(server("a", { status: "error", error: "x" }), undefined).primary).toEqual({
      label: "reconnect",
      action: "connect",
      disabled: false,
    });
    expect(rowButtons(server("a", { status: "connecting" }), undefined).primary).toEqual({
      label: "connectingEllipsis",
      action: "connect",
      disabled: true,
    });
  });

  it("UI-4: Connecting... / Disconnecting... and disabled while running", () => {
    const c = rowButtons(server("a"), "connecting");
    expect(c.primary).toEqual({ label: "connectingEllipsis", action: "connect", disabled: true });
    expect(c.busy).toBe(true);
    const d = rowButtons(server("a", { status: "connected" }), "disconnecting");
    expect(d.primary).toEqual({ label: "disconnectingEllipsis", action: "disconnect", disabled: true });
  });

  it("UI-4: the button is released when the action ends, with or without an error", () => {
    let s = applySnapshot(initialState("default"), snap(1, [server("a", { status: "connected" })]));
    s = startAction(s, K("a"), "disconnecting");
    expect(s.pending[K("a")]).toBe("disconnecting");
    s = endAction(s, K("a"), { error: "teardown failed" });
    expect(s.pending[K("a")]).toBeUndefined();
    expect(s.rowErrors[K("a")]).toBe("teardown failed");
    expect(s.snapshot?.version).toBe(1); // list unchanged
    s = startAction(s, K("a"), "connecting");
    expect(s.rowErrors[K("a")]).toBeUndefined(); // a new attempt clears the old error
  });

  it("DEL-4: Edit and Delete only for user and project rows", () => {
    expect(rowButtons(server("a", { source: "user" }), undefined)).toMatchObject({ edit: true, delete: true });
    expect(rowButtons(server("a", { source: "project" }), undefined)).toMatchObject({ edit: true, delete: true });
    expect(rowButtons(server("a", { source: "plugin", readOnly: true }), undefined)).toMatchObject({ edit: false, delete: false });
    expect(rowButtons(server("a", { source: "constructor", readOnly: true }), undefined)).toMatchObject({
      edit: false,
      delete: false,
    });
  });
});

describe("row texts (UI-2, UI-9, SEC-1, CACHE-2)", () => {
  it("shows command and args or the URL exactly as written", () => {
    expect(endpointText(server("a", { command: "npx", args: ["-y", "@x/server", "${HOME}/dir"] }))).toBe(
      "npx -y @x/server ${HOME}/dir",
    );
    expect(endpointText(server("a", { command: "run", args: ["two words", ""] }))).toBe('run "two words" ""');
    expect(
      endpointText(server("a", { transport: "http", command: undefined, args: [], url: "https://h/mcp?key=${TOKEN}" })),
    ).toBe("https://h/mcp?key=${TOKEN}");
  });

  it("formats RFC 3339 times in local time", () => {
    expect(formatTime("2026-03-04T05:06:07Z", 0)).toBe("2026-03-04 05:06");
    expect(formatTime("2026-03-04T05:06:07Z", -480)).toBe("2026-03-04 13:06");
    expect(formatTime("garbage", 0)).toBe("garbage");
  });

  it("marks cached tools with the last connection time", () => {
    const cached = server("a", { toolCount: 3, toolsFromCache: true, lastConnectedAt: "2026-03-04T05:06:07Z" });
    expect(toolsText("en", cached, 0)).toEqual({ count: "3 tools", detail: "cached, last connected 2026-03-04 05:06" });
    expect(toolsText("zh", cached, 0)).toEqual({ count: "3 个工具", detail: "来自缓存，上次连接 2026-03-04 05:06" });
    const live = server("a", { status: "connected", toolCount: 1, lastConnectedAt: "2026-03-04T05:06:07Z" });
    expect(toolsText("en", live, 0)).toEqual({ count: "1 tool", detail: "last connected 2026-03-04 05:06" });
    expect(toolsText("en", server("a"), 0)).toEqual({ count: "no tools", detail: "never connected" });
  });
});

describe("prompts (ADD-1, ADD-2, EDIT-1) in both languages", () => {
  it("Chinese prompts are exactly the specification's", () => {
    expect(addPrompt("zh", "user")).toBe("/settings 帮我配个用户级 MCP 服务器<名字>：连<command/url>，参数<args>");
    expect(addPrompt("zh", "project", "wave-mcp")).toBe(
      "/settings 帮我在【wave-mcp】下配 MCP 服务器<名字>：连<command/url>，参数<args>",
    );
    expect(editPrompt("zh", "alpha")).toBe("帮我编辑 MCP 服务器alpha：把<要改的内容>改成<新内容>");
  });

  it("English equivalents", () => {
    expect(addPrompt("en", "user")).toBe("/settings Help me add a user-level MCP server <name>: connect to <command/url>, args <args>");
    expect(addPrompt("en", "project", "wave-mcp")).toBe(
      '/settings Help me add an MCP server <name> to the project "wave-mcp": connect to <command/url>, args <args>',
    );
    expect(editPrompt("en", "alpha")).toBe("Help me edit the MCP server alpha: change <what to change> to <new value>");
  });

  it("a project prompt without a known project name keeps a placeholder", () => {
    expect(addPrompt("zh", "project")).toBe("/settings 帮我在【项目名称】下配 MCP 服务器<名字>：连<command/url>，参数<args>");
  });
});

describe("host step plans (ADD-1, EDIT-1..3, UI-7)", () => {
  it("ADD: only closes the page with the prompt; never opens a file", () => {
    expect(planAdd("zh", "user", paths)).toEqual([
      { kind: "closeSettings", prefill: "/settings 帮我配个用户级 MCP 服务器<名字>：连<command/url>，参数<args>" },
    ]);
    const project = planAdd("en", "project", paths);
    expect(project).toHaveLength(1);
    expect(project[0]).toMatchObject({ kind: "closeSettings" });
    expect((project[0] as { prefill: string }).prefill).toContain('project "proj"');
    expect(project.some((s) => s.kind === "openFile")).toBe(false);
  });

  it("EDIT-3: open-file comes before close-settings, with the absolute path of the row's source", () => {
    expect(planEdit("zh", server("alpha"), paths)).toEqual([
      { kind: "openFile", path: "/work/proj/.mcp.json" },
      { kind: "closeSettings", prefill: "帮我编辑 MCP 服务器alpha：把<要改的内容>改成<新内容>" },
    ]);
    const user = planEdit("en", server("u", { source: "user", configPath: undefined }), paths);
    expect(user[0]).toEqual({ kind: "openFile", path: "/home/u/.wave/mcp.json" });
    expect(user.map((s) => s.kind)).toEqual(["openFile", "closeSettings"]);
  });

  it("EDIT-2: without a known absolute path only the prompt is prefilled", () => {
    const noPaths = planEdit("en", server("a", { configPath: undefined }), undefined);
    expect(noPaths).toEqual([{ kind: "closeSettings", prefill: editPrompt("en", "a") }]);
    // A relative or ~ path is never used.
    const relative = planEdit("en", server("a", { configPath: "~/.wave/mcp.json" }), {
      ...paths,
      projectConfigPath: ".mcp.json",
    });
    expect(relative.map((s) => s.kind)).toEqual(["closeSettings"]);
    // Falls back to the row's absolute configPath when configPaths is unavailable.
    expect(planEdit("en", server("a"), undefined)[0]).toEqual({ kind: "openFile", path: "/work/proj/.mcp.json" });
    expect(configFileOf(server("w", { configPath: "C:\\proj\\.mcp.json" }))).toBe("C:\\proj\\.mcp.json");
  });

  it("UI-7: Back closes the page and prefills nothing", () => {
    expect(planBack()).toEqual([{ kind: "closeSettings" }]);
  });
});

describe("delete confirmation (DEL-1..3)", () => {
  it("names the server and its config file; cancel changes nothing", () => {
    let s = applySnapshot(initialState("default"), snap(1, [server("alpha"), server("beta")]));
    s = { ...s, configPaths: paths };
    const asked = askDelete(s, s.snapshot!.servers[0]);
    expect(asked.confirm).toEqual({ name: "alpha", source: "project", path: "/work/proj/.mcp.json" });
    expect(confirmText("en", asked.confirm!)).toBe('"alpha" will be removed from /work/proj/.mcp.json. This cannot be undone.');
    expect(confirmText("zh", asked.confirm!)).toBe("将从 /work/proj/.mcp.json 中删除“alpha”，此操作无法撤销。");
    const cancelled = cancelDelete(asked);
    expect(cancelled.confirm).toBeUndefined();
    expect(cancelled.snapshot).toBe(s.snapshot);
  });

  it("DEL-4: no confirmation for read-only sources", () => {
    const s = applySnapshot(initialState("default"), snap(1, [server("p", { source: "plugin", readOnly: true })]));
    expect(askDelete(s, s.snapshot!.servers[0])).toBe(s);
  });

  it("DEL-3: a failed delete keeps the list and shows the error", () => {
    let s = applySnapshot(initialState("default"), snap(4, [server("alpha")]));
    s = startAction(s, K("alpha"), "deleting");
    s = endAction(s, K("alpha"), { error: "permission denied" });
    expect(s.snapshot?.servers.map((x) => x.name)).toEqual(["alpha"]);
    expect(s.rowErrors[K("alpha")]).toBe("permission denied");
  });

  it("DEL-2: a successful delete's snapshot drops the row", () => {
    let s = applySnapshot(initialState("default"), snap(4, [server("alpha"), server("beta")]));
    s = startAction(s, K("alpha"), "deleting");
    s = endAction(s, K("alpha"), { snapshot: snap(5, [server("beta")]) });
    expect(s.snapshot?.servers.map((x) => x.name)).toEqual(["beta"]);
    expect(s.pending).toEqual({});
  });
});

describe("sign-in rows (AUTH-1, AUTH-5, AUTH-9, UI-12)", () => {
  const remote = (over: Partial<McpServerView> = {}) =>
    server("remote", { transport: "http", command: undefined, args: [], url: "http://localhost:1/mcp", ...over });

  it("AUTH-1, AUTH-9: a needs-auth row offers Sign in, shows its status and reason", () => {
    const row = remote({ status: "needs-auth", error: "the server answered 401 Unauthorized; sign in with ..." });
    const b = rowButtons(row, undefined);
    expect(b.primary).toEqual({ label: "signIn", action: "login", disabled: false });
    expect(b.cancelLogin).toBe(false);
    expect(b.logout).toBeNull();
    expect(STATUS_TEXT["needs-auth"]).toBe("statusNeedsAuth");
    expect(t("en", "statusNeedsAuth")).toBe("Sign-in required");
    expect(t("zh", "statusNeedsAuth")).toBe("需要登录");
    expect(authReason(row)).toMatch(/401/);
    // The reason is only the needs-auth text; an error row shows its error the usual way (UI-3).
    expect(authReason(remote({ status: "error", error: "boom" }))).toBeUndefined();
  });

  it("AUTH-9: while sign-in runs: Waiting for browser... (disabled) and Cancel; Edit and Delete disabled", () => {
    let s = applySnapshot(initialState("default"), snap(1, [remote({ status: "needs-auth" })]));
    const { state, attempt } = startLogin(s, K("remote"));
    s = state;
    expect(attempt).toBe(1);
    expect(s.pending[K("remote")]).toBe("signingIn");
    const b = rowButtons(s.snapshot!.servers[0], s.pending[K("remote")]);
    expect(b.primary).toEqual({ label: "waitingForBrowser", action: "login", disabled: true });
    expect(t("en", b.primary.label)).toBe("Waiting for browser...");
    expect(t("zh", b.primary.label)).toBe("等待浏览器...");
    expect(b.cancelLogin).toBe(true);
    expect(b.busy).toBe(true);
    expect(b.logout).toBeNull();
    // Signed in, now connecting with the new tokens: Connecting...
    const connecting = rowButtons(remote({ status: "connecting", signedIn: true }), "signingIn");
    expect(connecting.primary).toEqual({ label: "connectingEllipsis", action: "login", disabled: true });
    expect(connecting.logout).toBeNull();
  });

  it("AUTH-9, AUTH-5: a signed-in row offers Sign out beside Disconnect; Signing out... while it runs", () => {
    const row = remote({ status: "connected", signedIn: true, toolCount: 3 });
    const b = rowButtons(row, undefined);
    expect(b.primary.label).toBe("disconnect");
    expect(b.logout).toEqual({ label: "signOut", disabled: false });
    expect(rowButtons(row, "signingOut").logout).toEqual({ label: "signingOutEllipsis", disabled: true });
    // Credentials stored but rejected (a failed refresh, AUTH-4): Sign in again, or Sign out.
    const stale = rowButtons(remote({ status: "needs-auth", signedIn: true }), undefined);
    expect(stale.primary.action).toBe("login");
    expect(stale.logout?.label).toBe("signOut");
    // Not signed in: no Sign out.
    expect(rowButtons(remote({ status: "connected" }), undefined).logout).toBeNull();
  });

  it("a sign-in reply ends the attempt and shows the row connected and signed in", () => {
    let s = applySnapshot(initialState("default"), snap(1, [remote({ status: "needs-auth" })]));
    const started = startLogin(s, K("remote"));
    s = endLogin(started.state, K("remote"), started.attempt, { snapshot: snap(4, [remote({ status: "connected", signedIn: true })]) });
    expect(s.pending).toEqual({});
    expect(s.loginAttempts).toEqual({});
    expect(s.snapshot?.servers[0]).toMatchObject({ status: "connected", signedIn: true });
  });

  it("AUTH-9: Cancel ends the attempt at once; its late cancelled reply cannot end a newer attempt", () => {
    let s = applySnapshot(initialState("default"), snap(1, [remote({ status: "needs-auth" })]));
    const first = startLogin(s, K("remote"));
    s = endLogin(first.state, K("remote"), first.attempt, {}); // the user's Cancel
    expect(s.pending).toEqual({});
    expect(rowButtons(s.snapshot!.servers[0], s.pending[K("remote")]).primary.label).toBe("signIn");
    const second = startLogin(s, K("remote"));
    expect(second.attempt).toBe(2);
    s = second.state;
    // The first attempt's error (RequestCancelled) arrives now: the second still runs.
    s = endLogin(s, K("remote"), first.attempt, {});
    expect(s.pending[K("remote")]).toBe("signingIn");
    expect(isCurrentLogin(s, K("remote"), second.attempt)).toBe(true);
    expect(isCurrentLogin(s, K("remote"), first.attempt)).toBe(false);
  });

  it("UI-12: a cancelled sign-in is quiet; any other failure is reported", () => {
    expect(loginFailure({ code: -32800 })).toBe("cancelled");
    expect(loginFailure({ code: -32803, data: { kind: "signInCancelled" } })).toBe("cancelled");
    expect(loginFailure({ code: -32803, data: { kind: "signInFailed" } })).toBe("failed");
    expect(loginFailure({ code: -32803, data: { kind: "unknownServer" } })).toBe("failed");
    expect(loginFailure({})).toBe("failed");
    expect(loginFailure(undefined)).toBe("failed");
    let s = applySnapshot(initialState("default"), snap(1, [remote({ status: "needs-auth" })]));
    const started = startLogin(s, K("remote"));
    s = endLogin(started.state, K("remote"), started.attempt, { error: "Could not sign in" });
    expect(s.rowErrors[K("remote")]).toBe("Could not sign in");
    expect(t("en", "signInFailed", { name: "remote", reason: "no callback" })).toBe('Could not sign in to "remote": no callback');
    expect(t("zh", "signInFailed", { name: "remote", reason: "x" })).toBe("无法登录“remote”：x");
  });

  it("a server that left the list takes its sign-in attempt with it", () => {
    let s = applySnapshot(initialState("default"), snap(1, [remote({ status: "needs-auth" })]));
    s = startLogin(s, K("remote")).state;
    s = applySnapshot(s, snap(2, []));
    expect(s.loginAttempts).toEqual({});
    expect(s.pending).toEqual({});
  });
});

describe("trust rows (TRUST-1, TRUST-3, TRUST-6, TRUST-7, TRUST-9)", () => {
  const approval = {
    name: "db",
    configPath: "/work/proj/.mcp.json",
    transport: "stdio",
    command: "node",
    args: ["db.js"],
    envKeys: ["DB_URL"],
    variables: [],
    changed: false,
    shadows: "user" as const,
    workspaceUntrusted: false,
  };

  it("TRUST-1: a needs-approval row offers Approve, shows its status and reason; Approving... while it runs", () => {
    const row = server("db", { status: "needs-approval", error: "not approved yet: run wave-mcp approve db", approval });
    const b = rowButtons(row, undefined);
    expect(b.primary).toEqual({ label: "approve", action: "approve", disabled: false });
    expect(b.revoke).toBeNull();
    expect(b.edit).toBe(true);
    expect(rowButtons(row, "approving").primary).toEqual({ label: "approvingEllipsis", action: "approve", disabled: true });
    expect(STATUS_TEXT["needs-approval"]).toBe("statusNeedsApproval");
    expect(t("en", "statusNeedsApproval")).toBe("Needs approval");
    expect(t("zh", "statusNeedsApproval")).toBe("需要批准");
    expect(approvalReason(row)).toBe("not approved yet: run wave-mcp approve db");
    expect(approvalReason(server("db", { status: "error", error: "boom" }))).toBeUndefined();
  });

  it("TRUST-9: a row of an untrusted workspace offers no working Approve", () => {
    const row = server("db", { status: "needs-approval", error: "the workspace is not trusted", approval: { ...approval, workspaceUntrusted: true } });
    expect(rowButtons(row, undefined).primary).toEqual({ label: "approve", action: "approve", disabled: true });
  });

  it("TRUST-3: an approved project row can be revoked; user, plugin and host rows cannot", () => {
    for (const status of ["connected", "disconnected", "error", "needs-auth"] as const) {
      expect(rowButtons(server("db", { status }), undefined).revoke).toEqual({ label: "revokeApproval", disabled: false });
    }
    expect(rowButtons(server("db", { status: "connected" }), "revoking").revoke).toEqual({ label: "revokingEllipsis", disabled: true });
    expect(rowButtons(server("db", { status: "connected" }), "connecting").revoke).toEqual({ label: "revokeApproval", disabled: true });
    expect(rowButtons(server("db", { source: "user", status: "connected" }), undefined).revoke).toBeNull();
    expect(rowButtons(server("db", { source: "plugin", readOnly: true }), undefined).revoke).toBeNull();
    expect(rowButtons(server("db", { source: "constructor", readOnly: true }), undefined).revoke).toBeNull();
  });

  it("TRUST-1: the same name twice (a user server and the project entry waiting beside it) keeps two rows' states apart", () => {
    const user = server("db", { source: "user", status: "connected", configPath: "/home/u/.wave/mcp.json" });
    const project = server("db", { status: "needs-approval", approval });
    expect(rowKey(user)).not.toBe(rowKey(project));
    let s = applySnapshot(initialState("default"), snap(1, [user, project]));
    expect(serversInTab(s.snapshot, "user")).toEqual([user]);
    expect(serversInTab(s.snapshot, "project")).toEqual([project]);
    s = startAction(s, rowKey(project), "approving");
    s = startAction(s, rowKey(user), "disconnecting");
    s = endAction(s, rowKey(project), { error: "the workspace is not trusted" });
    expect(s.pending).toEqual({ [rowKey(user)]: "disconnecting" });
    expect(s.rowErrors).toEqual({ [rowKey(project)]: "the workspace is not trusted" });
    // Approved: the project's row runs, the user row is gone; its state goes with it.
    s = applySnapshot(s, snap(2, [server("db", { status: "connected" })]));
    expect(s.pending).toEqual({});
    expect(s.rowErrors).toEqual({ [rowKey(project)]: "the workspace is not trusted" });
  });

  it("TRUST-6, TRUST-7: tools marked changed and with hidden text removed", () => {
    const tool = { name: "q", fullName: "mcp__db__q", enabled: true, definitionChanged: false, hiddenText: false, icons: [] };
    expect(toolMarks(tool)).toEqual([]);
    expect(toolMarks({ ...tool, definitionChanged: true })).toEqual(["definitionChanged"]);
    expect(toolMarks({ ...tool, definitionChanged: true, hiddenText: true })).toEqual(["definitionChanged", "hiddenText"]);
    expect(t("en", "toolChangedMark")).toBe("changed");
    expect(t("zh", "toolHiddenTextMark")).toBe("已移除隐藏字符");
  });
});

describe("SRV-4: icons", () => {
  it("shows the first https: or raster data: icon, never SVG, http: or javascript:", () => {
    expect(iconSrc(undefined)).toBeUndefined();
    expect(iconSrc([{ src: "data:image/svg+xml;base64,PHN2Zz4=" }, { src: "http://x/i.png" }, { src: "javascript:alert(1)" }])).toBeUndefined();
    expect(iconSrc([{ src: "file:///i.png" }, { src: "https://x/i.png" }, { src: "data:image/png;base64,AA" }])).toBe("https://x/i.png");
    expect(iconSrc([{ src: "DATA:IMAGE/WEBP;base64,AA" }])).toBe("DATA:IMAGE/WEBP;base64,AA");
  });
});
