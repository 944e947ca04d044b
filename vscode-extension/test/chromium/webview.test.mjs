// The shared settings webview in headless Chromium, against the REAL sidecar (`wave-mcp lsp`)
// and our test MCP server. The page talks through the JCEF adapter: this test injects
// `window.waveHostQuery` and calls `window.waveReceive`, exactly as the JetBrains plugin does.
//
// Run: node --test test/chromium/  (after `npm run build` and `cargo build --bin wave-mcp --bin
// wave-mcp-test-server`). Screenshots: target/test-output/webview-chromium/.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  attachRelay,
  browse,
  browserScript,
  makeSandbox,
  outputDir,
  pidAlive,
  processesMentioning,
  projectConfigText,
  serverPids,
  startOAuthMcpServer,
  startSidecar,
  testServerBin,
  until,
  useBrowser,
  writeProject,
} from "./support.mjs";

const ui = useBrowser();

async function openPage({ lang = "en", sandbox, injectLate = false, env, unprivileged = false } = {}) {
  const sidecar = await startSidecar(sandbox, { env, unprivileged });
  const context = await ui.browser.newContext({ viewport: { width: 1100, height: 760 } });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  const relay = await attachRelay(page, sidecar, { injectLate });
  await page.goto(`${ui.web.url}?page=settings&lang=${lang}`);
  if (injectLate) await relay.injectNow();
  await page.waitForSelector("body[data-ready=true]");
  return {
    page,
    sidecar,
    relay,
    errors,
    async close() {
      await context.close();
      return sidecar.stop();
    },
  };
}

const shot = (page, name) => page.screenshot({ path: path.join(outputDir, `${name}.png`), fullPage: true });
const row = (page, name) => page.locator(`li.server-row[data-server="${name}"]`);
const tab = (page, id) => page.locator(`button.source-tab[data-tab="${id}"]`);

describe("settings page against the real sidecar (JCEF bridge)", () => {
  let sandbox;
  let ui;

  before(async () => {
    sandbox = makeSandbox();
    ui = await openPage({ sandbox });
  });

  after(async () => {
    const { code } = await ui.close();
    assert.equal(code, 0, "the sidecar exits cleanly after shutdown/exit");
    if (ui.alphaPid) assert.equal(pidAlive(ui.alphaPid), false, "shutdown ended alpha's process");
    sandbox.cleanup();
    assert.deepEqual(ui.errors, [], "no script or CSP errors in the page");
  });

  test("UI-8, UI-9, UI-2, SEC-1: source tabs and rows (name, type, command as written, status)", async () => {
    const { page } = ui;
    await page.waitForSelector("li.server-row");
    assert.equal(await page.locator("#nav-mcp.selected").textContent(), "MCP services");
    assert.deepEqual(await page.locator("button.source-tab").evaluateAll((els) => els.map((e) => e.dataset.tab)), [
      "user",
      "project",
      "plugin",
    ]);
    // The first tab with servers is User (gamma).
    assert.equal(await tab(page, "user").getAttribute("aria-selected"), "true");
    assert.equal(await row(page, "gamma").count(), 1);
    await tab(page, "project").click();
    assert.deepEqual(await page.locator("li.server-row").evaluateAll((els) => els.map((e) => e.dataset.server)), [
      "alpha",
      "beta",
      "broken",
    ]);
    const broken = row(page, "broken");
    assert.equal(await broken.locator(".badge.transport").textContent(), "stdio");
    // SEC-1: ${SECRET_TOKEN} is shown as written, never expanded.
    assert.equal(await broken.locator(".endpoint").textContent(), "/nonexistent/wave-missing-server --token ${SECRET_TOKEN}");
    assert.equal(await row(page, "alpha").locator(".status").textContent(), "Disconnected");
    assert.equal(await row(page, "alpha").locator("button[data-action=connect]").textContent(), "Connect");
    // UI-9: Edit and Delete on project rows.
    assert.equal(await row(page, "alpha").locator("button[data-action=edit]").count(), 1);
    assert.equal(await row(page, "alpha").locator("button[data-action=delete]").count(), 1);
    await shot(page, "01-project-tab");
  });

  test("DEL-4: plugin rows are read-only (no Edit, no Delete)", async () => {
    const { page } = ui;
    await tab(page, "plugin").click();
    const plugin = row(page, "plugin-tools");
    assert.equal(await plugin.count(), 1);
    assert.equal(await plugin.locator(".endpoint").textContent(), "http://127.0.0.1:9/mcp");
    assert.equal(await plugin.locator("button[data-action=edit]").count(), 0);
    assert.equal(await plugin.locator("button[data-action=delete]").count(), 0);
    assert.equal(await plugin.locator(".badge.muted").textContent(), "read-only");
    await shot(page, "02-plugin-tab");
  });

  test("UI-4, LAZY-5: Connect shows Connecting... disabled, then connected with its tool count", async () => {
    const { page } = ui;
    await tab(page, "project").click();
    const alpha = row(page, "alpha");
    await alpha.locator("button[data-action=connect]").click();
    // alpha's initialize takes 700 ms: the running state is observable.
    const busy = alpha.locator("button[data-action=connect]");
    await until(async () => (await busy.textContent()) === "Connecting...", "Connecting...");
    assert.equal(await busy.isDisabled(), true);
    assert.equal(await alpha.locator("button[data-action=edit]").isDisabled(), true);
    await shot(page, "03-connecting");
    await until(async () => (await alpha.getAttribute("data-status")) === "connected", "alpha connected");
    assert.equal(await alpha.locator(".status").textContent(), "Connected");
    assert.equal(await alpha.locator(".tool-count").textContent(), "3 tools");
    assert.equal(await alpha.locator("button[data-action=disconnect]").textContent(), "Disconnect");
    assert.equal(await alpha.locator("button[data-action=disconnect]").isDisabled(), false);
    await shot(page, "04-connected");
  });

  test("UI-4, CACHE-2: Disconnect ends the server; its tools stay visible, marked cached", async () => {
    const { page } = ui;
    const [pid] = serverPids(sandbox, "alpha");
    assert.ok(pid && pidAlive(pid), "alpha's process runs while connected");
    const alpha = row(page, "alpha");
    await alpha.locator("button[data-action=disconnect]").click();
    await until(async () => (await alpha.getAttribute("data-status")) === "disconnected", "alpha disconnected");
    assert.equal(await alpha.locator(".status").textContent(), "Disconnected");
    await until(() => !pidAlive(pid), "alpha's process ended (LIFE-6)");
    assert.equal(await alpha.locator("button[data-action=connect]").textContent(), "Connect");
    assert.equal(await alpha.locator(".badge.cached").count(), 1);
    assert.match(await alpha.locator(".tools-detail").textContent(), /^cached, last connected \d{4}-\d\d-\d\d \d\d:\d\d$/);
    await shot(page, "05-disconnected-cached");
  });

  test("UI-3: a failing server shows its reason in red and a Reconnect button", async () => {
    const { page } = ui;
    const broken = row(page, "broken");
    await broken.locator("button[data-action=connect]").click();
    await until(async () => (await broken.getAttribute("data-status")) === "error", "broken in error");
    const reason = broken.locator(".server-error");
    assert.match(await reason.textContent(), /SECRET_TOKEN/);
    const color = await reason.evaluate((el) => getComputedStyle(el).color);
    assert.equal(color, "rgb(207, 34, 46)", "the reason is red");
    assert.equal(await broken.locator("button[data-action=connect]").textContent(), "Reconnect");
    // Each status has its own colour.
    const statusColors = await page
      .locator("li.server-row .status")
      .evaluateAll((els) => Object.fromEntries(els.map((e) => [e.dataset.status, getComputedStyle(e).color])));
    assert.notEqual(statusColors.error, statusColors.disconnected);
    await shot(page, "06-error-reconnect");
  });

  test("UI-5, UI-11: live pushes refresh the list; an older snapshot is ignored", async () => {
    const { page, sidecar, relay } = ui;
    // A background change: the sidecar connects beta on its own (as a turn would) and pushes.
    const before = relay.pushes.length;
    await sidecar.request("wave/mcp/connect", { name: "beta" });
    await until(() => relay.pushes.length > before, "a serversChanged push");
    const beta = row(page, "beta");
    await until(async () => (await beta.getAttribute("data-status")) === "connected", "beta connected by push");
    const shown = await page.evaluate(() => window.wavePage.current.snapshot.version);
    // A stale snapshot (older version) claiming everything is disconnected must not win.
    const latest = relay.pushes.at(-1).params;
    const stale = {
      ...latest,
      version: shown - 1,
      servers: latest.servers.map((s) => ({ ...s, status: "disconnected", toolCount: 0, tools: [] })),
    };
    await relay.push("wave/mcp/serversChanged", stale);
    await page.waitForTimeout(200);
    assert.equal(await beta.getAttribute("data-status"), "connected");
    assert.equal(await page.evaluate(() => window.wavePage.current.snapshot.version), shown);
    // A snapshot of another session is ignored too.
    await relay.push("wave/mcp/serversChanged", { ...latest, version: shown + 100, sessionId: "other", servers: [] });
    await page.waitForTimeout(100);
    assert.equal(await row(page, "beta").count(), 1);
    await sidecar.request("wave/mcp/disconnect", { name: "beta" });
    await until(async () => (await beta.getAttribute("data-status")) === "disconnected", "beta disconnected by push");
  });

  test("DEL-1, DEL-2: Delete asks (server + path); Cancel changes nothing; Confirm removes only that entry", async () => {
    const { page } = ui;
    const file = path.join(sandbox.workdir, ".mcp.json");
    const original = fs.readFileSync(file, "utf8");
    assert.equal(original, projectConfigText(sandbox.root));
    await row(page, "beta").locator("button[data-action=delete]").click();
    const dialog = page.locator("#confirm-delete");
    await dialog.waitFor();
    assert.equal(await dialog.locator(".confirm-body").textContent(), `"beta" will be removed from ${file}. This cannot be undone.`);
    await shot(page, "07-delete-confirm");
    await dialog.locator("button.cancel").click();
    assert.equal(await dialog.count(), 0);
    assert.equal(fs.readFileSync(file, "utf8"), original, "cancel leaves the file alone");
    assert.equal(await row(page, "beta").count(), 1);
    // Escape closes it too.
    await row(page, "beta").locator("button[data-action=delete]").click();
    await dialog.waitFor();
    await page.keyboard.press("Escape");
    assert.equal(await dialog.count(), 0);

    await row(page, "beta").locator("button[data-action=delete]").click();
    await dialog.locator("button.confirm").click();
    await until(async () => (await row(page, "beta").count()) === 0, "beta gone from the list");
    const now = fs.readFileSync(file, "utf8");
    const parsed = JSON.parse(now);
    assert.deepEqual(Object.keys(parsed.mcpServers), ["alpha", "broken"]);
    // Only beta's entry went; alpha's and broken's text is byte-identical.
    const alphaText = original.slice(original.indexOf('    "alpha"'), original.indexOf('    "beta"'));
    assert.ok(now.includes(alphaText.trimEnd().replace(/,$/, "")), "alpha kept as written");
    assert.ok(now.includes(original.slice(original.indexOf('    "broken"'))), "broken kept as written");
    // DEL-2: under no tab.
    for (const id of ["user", "project", "plugin"]) {
      await tab(page, id).click();
      assert.equal(await row(page, "beta").count(), 0);
    }
    await tab(page, "project").click();
    await shot(page, "08-after-delete");
  });

  test("EDIT-1..3: Edit opens the absolute config path BEFORE closing the page, then prefills", async () => {
    const { page, relay } = ui;
    relay.hostLog.length = 0;
    await row(page, "alpha").locator("button[data-action=edit]").click();
    await until(() => relay.hostLog.some((e) => e.method === "host/closeSettings"), "closeSettings");
    assert.deepEqual(
      relay.hostLog.map((e) => [e.method, e.params]),
      [
        ["host/openFile", { path: path.join(sandbox.workdir, ".mcp.json") }],
        ["host/closeSettings", { prefill: "Help me edit the MCP server alpha: change <what to change> to <new value>" }],
      ],
    );
  });

  test("ADD-1, ADD-2: Add closes the page with the prompt and opens no file; UI-7 Back prefills nothing", async () => {
    const { page, relay } = ui;
    relay.hostLog.length = 0;
    await page.locator("button[data-add=project]").click();
    await until(() => relay.hostLog.length >= 1, "add project");
    await tab(page, "user").click();
    await page.locator("button[data-add=user]").click();
    await until(() => relay.hostLog.length >= 2, "add user");
    await page.locator("button.back").click();
    await until(() => relay.hostLog.length >= 3, "back");
    assert.deepEqual(
      relay.hostLog.map((e) => [e.method, e.params]),
      [
        [
          "host/closeSettings",
          { prefill: '/settings Help me add an MCP server <name> to the project "demo-project": connect to <command/url>, args <args>' },
        ],
        ["host/closeSettings", { prefill: "/settings Help me add a user-level MCP server <name>: connect to <command/url>, args <args>" }],
        ["host/closeSettings", {}],
      ],
    );
  });

  test("LAZY-8: a connected server runs until the sidecar shuts down", async () => {
    const { page } = ui;
    await tab(page, "project").click();
    fs.rmSync(path.join(sandbox.root, "alpha.pid"), { force: true });
    await row(page, "alpha").locator("button[data-action=connect]").click();
    await until(async () => (await row(page, "alpha").getAttribute("data-status")) === "connected", "alpha connected again");
    const [pid] = serverPids(sandbox, "alpha");
    assert.ok(pid && pidAlive(pid));
    ui.alphaPid = pid; // checked dead after the sidecar's shutdown (the after hook)
  });
});

describe("settings page, other states", () => {
  test("UI-6: no server anywhere → how to create user-level or project-level servers; Chinese texts", async () => {
    const sandbox = makeSandbox({ empty: true });
    const ui = await openPage({ sandbox, lang: "zh-cn" });
    try {
      const { page } = ui;
      await page.waitForSelector("#empty-all");
      assert.equal(await page.locator("#empty-all h2").textContent(), "还没有配置任何 MCP 服务");
      assert.match(await page.locator("#empty-all p").textContent(), /~\/\.wave\/mcp\.json/);
      assert.equal(await page.locator("#empty-all button[data-add=user]").textContent(), "新增用户级 MCP 服务");
      assert.equal(await page.locator("#empty-all button[data-add=project]").textContent(), "新增项目级 MCP 服务");
      assert.deepEqual(await page.locator("button.source-tab").allTextContents(), ["用户级 MCP0", "项目级 MCP0", "插件 MCP0"]);
      await shot(page, "10-empty-zh");
      await page.locator("#empty-all button[data-add=project]").click();
      await until(() => ui.relay.hostLog.length > 0, "closeSettings");
      assert.deepEqual(ui.relay.hostLog[0].params, {
        prefill: "/settings 帮我在【demo-project】下配 MCP 服务器<名字>：连<command/url>，参数<args>",
      });
      // ADD-3: a server written to the file (by the AI, here by hand) shows up under its tab.
      fs.writeFileSync(
        path.join(sandbox.workdir, ".mcp.json"),
        JSON.stringify({ mcpServers: { added: { command: "x" } } }, null, 2),
      );
      await page.waitForSelector('li.server-row[data-server="added"]', { timeout: 15_000 });
      assert.equal(await tab(page, "project").getAttribute("aria-selected"), "true");
      await tab(page, "user").click();
      assert.equal(await page.locator("#empty-tab").textContent(), "没有用户级 MCP 服务。用户级服务对所有项目可用（~/.wave/mcp.json）。");
      await shot(page, "11-empty-tab-zh");
      assert.deepEqual(ui.errors, []);
    } finally {
      await ui.close();
      sandbox.cleanup();
    }
  });

  test("Chinese rows and prompts; the JCEF query function may be injected after the page loaded", async () => {
    const sandbox = makeSandbox();
    const ui = await openPage({ sandbox, lang: "zh-cn", injectLate: true });
    try {
      const { page } = ui;
      await tab(page, "project").click();
      const alpha = row(page, "alpha");
      assert.equal(await alpha.locator(".status").textContent(), "未连接");
      await alpha.locator("button[data-action=connect]").click();
      await until(async () => (await alpha.locator("button[data-action=connect]").textContent()) === "连接中...", "连接中...");
      await until(async () => (await alpha.getAttribute("data-status")) === "connected", "alpha connected");
      assert.equal(await alpha.locator(".tool-count").textContent(), "3 个工具");
      await row(page, "broken").locator("button[data-action=connect]").click();
      await until(async () => (await row(page, "broken").locator("button[data-action=connect]").textContent()) === "重连", "重连");
      await shot(page, "12-rows-zh");
      await alpha.locator("button[data-action=edit]").click();
      await until(() => ui.relay.hostLog.length >= 2, "edit steps");
      assert.deepEqual(
        ui.relay.hostLog.map((e) => e.method),
        ["host/openFile", "host/closeSettings"],
      );
      assert.equal(ui.relay.hostLog[1].params.prefill, "帮我编辑 MCP 服务器alpha：把<要改的内容>改成<新内容>");
    } finally {
      const { code } = await ui.close();
      assert.equal(code, 0);
      sandbox.cleanup();
    }
  });
});

describe("sidecar restart", () => {
  test("UI-11 vs restart: a new sidecar's versions start again; the page reloads instead of dropping them", async () => {
    const sandbox = makeSandbox();
    const ui = await openPage({ sandbox });
    let second;
    try {
      const { page, relay } = ui;
      await tab(page, "project").click();
      await row(page, "beta").locator("button[data-action=connect]").click();
      await until(async () => (await row(page, "beta").getAttribute("data-status")) === "connected", "beta connected");
      const oldVersion = await page.evaluate(() => window.wavePage.current.snapshot.version);
      assert.ok(oldVersion > 2);
      // The host restarts the sidecar (a crash, or the restart command) and tells the page.
      second = await startSidecar(sandbox);
      relay.switchTo(second);
      await ui.sidecar.stop();
      await relay.push("host/sidecarRestarted", {});
      await until(async () => (await row(page, "beta").getAttribute("data-status")) === "disconnected", "beta as the new sidecar sees it");
      assert.ok((await page.evaluate(() => window.wavePage.current.snapshot.version)) < oldVersion);
      assert.equal(await tab(page, "project").getAttribute("aria-selected"), "true", "the tab is kept");
      // Live updates of the new sidecar are applied.
      await second.request("wave/mcp/connect", { name: "beta" });
      await until(async () => (await row(page, "beta").getAttribute("data-status")) === "connected", "beta connected by push");
    } finally {
      await ui.close().catch(() => undefined);
      if (second) assert.equal((await second.stop()).code, 0);
      sandbox.cleanup();
    }
  });
});

describe("sign-in to a remote server with a real authorization server (MCP TypeScript SDK example)", () => {
  let oauth;
  let sandbox;

  before(async () => {
    oauth = await startOAuthMcpServer();
  });

  after(async () => {
    const gone = await oauth?.stop();
    assert.equal(gone, true, "the SDK server's process is gone (no orphan)");
  });

  const remoteSandbox = () => {
    const sb = makeSandbox({ empty: true });
    writeProject(sb, { remote: { type: "http", url: oauth.url } });
    return sb;
  };

  test("AUTH-1, AUTH-9, AUTH-3, AUTH-5: needs-auth row → Sign in → Waiting for browser... → connected, signed in → Sign out", async () => {
    sandbox = remoteSandbox();
    const ui = await openPage({ sandbox });
    try {
      const { page, sidecar, relay } = ui;
      // The host opens the URL: answered at once, the "browser" follows it when the test says so.
      sidecar.openUrl = async () => ({ opened: true });
      await tab(page, "project").click();
      const remote = row(page, "remote");
      await remote.locator("button[data-action=connect]").click();
      // AUTH-1: a 401 is needs-auth, not error, and its reason says how to sign in.
      await until(async () => (await remote.getAttribute("data-status")) === "needs-auth", "remote needs-auth");
      assert.equal(await remote.locator(".status").textContent(), "Sign-in required");
      assert.match(await remote.locator(".auth-reason").textContent(), /sign in/i);
      assert.equal(await remote.locator(".server-error").count(), 0, "not shown as an error");
      const signIn = remote.locator("button[data-action=login]");
      assert.equal(await signIn.textContent(), "Sign in");
      assert.equal(await remote.locator("button[data-action=logout]").count(), 0);
      await shot(page, "20-needs-auth");

      // AUTH-9: Sign in → "Waiting for browser..." (disabled) with Cancel, until the browser is done.
      await signIn.click();
      await until(() => sidecar.openUrls.length === 1, "wave/mcp/openUrl");
      const { url } = sidecar.openUrls[0];
      assert.equal(sidecar.openUrls[0].name, "remote");
      assert.match(url, new RegExp(`^http://localhost:${oauth.authPort}/authorize\\?`));
      assert.match(url, /code_challenge_method=S256/);
      assert.match(url, /redirect_uri=http%3A%2F%2F127\.0\.0\.1%3A\d+%2Fcallback/);
      const waiting = remote.locator("button[data-action=login]");
      await until(async () => (await waiting.textContent()) === "Waiting for browser...", "Waiting for browser...");
      assert.equal(await waiting.isDisabled(), true);
      assert.equal(await remote.locator("button[data-action=cancel-login]").isEnabled(), true);
      assert.equal(await remote.locator("button[data-action=edit]").isDisabled(), true);
      await shot(page, "21-waiting-for-browser");

      // The user's browser: the authorization server approves and redirects to our callback.
      const visit = await browse(url);
      assert.equal(visit.status, 200, `the callback page: ${visit.body.slice(0, 200)}`);
      assert.match(visit.url, /^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
      await until(async () => (await remote.getAttribute("data-status")) === "connected", "remote connected after sign-in");
      assert.equal(await remote.locator(".status").textContent(), "Connected");
      assert.equal(await remote.locator(".badge.signed-in").textContent(), "signed in");
      assert.match(await remote.locator(".tool-count").textContent(), /^\d+ tools$/);
      assert.equal(await remote.locator("button[data-action=disconnect]").textContent(), "Disconnect");
      assert.equal(await remote.locator("button[data-action=logout]").textContent(), "Sign out");
      assert.equal(await remote.locator(".auth-reason").count(), 0);
      const login = relay.sidecarLog.find((e) => e.method === "wave/mcp/login");
      assert.equal(login.result.servers.find((s) => s.name === "remote").signedIn, true);
      // AUTH-6: no token in what the page holds.
      const shown = await page.evaluate(() => JSON.stringify(window.wavePage.current));
      assert.doesNotMatch(shown, /access_token|refresh_token|Bearer /i);
      await shot(page, "22-signed-in-connected");

      // UI-12: a sign-out the host could not carry out is a notification and the row's error;
      // the row stays signed in.
      relay.failNext("wave/mcp/logout", {
        code: -32803,
        message: "cannot rewrite /x/.wave/mcp-credentials.json: permission denied",
        data: { kind: "io", path: "/x/.wave/mcp-credentials.json" },
      });
      await remote.locator("button[data-action=logout]").click();
      await remote.locator(".action-error").waitFor();
      assert.equal(
        await remote.locator(".action-error").textContent(),
        'Could not sign out of "remote": cannot rewrite /x/.wave/mcp-credentials.json: permission denied',
      );
      const notices = relay.hostLog.filter((e) => e.method === "host/notify");
      assert.equal(notices.length, 1);
      assert.equal(notices[0].params.level, "error");
      assert.equal(await remote.locator("button[data-action=logout]").textContent(), "Sign out");
      assert.equal(await remote.getAttribute("data-status"), "connected");
      relay.hostLog.length = 0;

      // AUTH-5: Sign out → disconnected, not signed in; the next dial finds it needs-auth.
      await remote.locator("button[data-action=logout]").click();
      await until(async () => (await remote.locator("button[data-action=logout]").count()) === 0, "Sign out gone");
      assert.equal(await remote.getAttribute("data-status"), "disconnected");
      assert.equal(await remote.locator(".badge.signed-in").count(), 0);
      const creds = path.join(sandbox.home, ".wave", "mcp-credentials.json");
      if (fs.existsSync(creds)) assert.doesNotMatch(fs.readFileSync(creds, "utf8"), new RegExp(`localhost:${oauth.port}`));
      await shot(page, "23-signed-out");
      await remote.locator("button[data-action=connect]").click();
      await until(async () => (await remote.getAttribute("data-status")) === "needs-auth", "needs-auth again after sign-out");
      // UI-12: nothing went wrong, so no notification; never a chat message.
      assert.deepEqual(relay.hostLog.filter((e) => e.method === "host/notify"), []);
      assert.ok(!relay.sidecarLog.some((e) => e.method === "wave/session/send"));
      assert.deepEqual(ui.errors, []);
    } finally {
      const { code } = await ui.close();
      assert.equal(code, 0);
      sandbox.cleanup();
    }
  });

  test("AUTH-9, UI-12: Cancel while waiting → back to needs-auth quietly; a sign-in that fails → a host notification", async () => {
    sandbox = remoteSandbox();
    // The host declines to open the URL, so the sidecar runs $BROWSER: one the user never
    // finishes in (it only records the URL). A short callback timeout for the failure case.
    const browser = browserScript(sandbox.root, "record");
    const ui = await openPage({ sandbox, env: { BROWSER: browser, WAVE_LOGIN_TIMEOUT_SECS: "6" } });
    try {
      const { page, relay } = ui;
      const urls = () => {
        try {
          return fs.readFileSync(path.join(sandbox.root, "browser-url.txt"), "utf8").split("\n").filter(Boolean);
        } catch {
          return [];
        }
      };
      await tab(page, "project").click();
      const remote = row(page, "remote");
      await remote.locator("button[data-action=connect]").click();
      await until(async () => (await remote.getAttribute("data-status")) === "needs-auth", "needs-auth");
      await remote.locator("button[data-action=login]").click();
      await until(() => urls().length === 1, "$BROWSER got the authorization URL (after openUrl answered opened:false)");
      assert.equal(ui.sidecar.openUrls.length, 1, "the host was asked first");
      await until(async () => (await remote.locator("button[data-action=login]").textContent()) === "Waiting for browser...", "waiting");
      const callback = new URL(decodeURIComponent(/redirect_uri=([^&]+)/.exec(urls()[0])[1]));
      await shot(page, "24-waiting-cancel");
      await remote.locator("button[data-action=cancel-login]").click();
      // The row is back at once...
      await until(async () => (await remote.locator("button[data-action=login]").textContent()) === "Sign in", "Sign in again");
      assert.equal(await remote.getAttribute("data-status"), "needs-auth");
      assert.equal(await remote.locator("button[data-action=cancel-login]").count(), 0);
      assert.deepEqual(relay.hostLog.filter((e) => e.method === "host/cancelLogin").map((e) => e.params), [
        { name: "remote", sessionId: "default" },
      ]);
      // ...and the sidecar really cancelled it: the login was answered RequestCancelled and its
      // loopback callback stopped listening.
      await until(() => relay.sidecarLog.some((e) => e.method === "wave/mcp/login"), "the login's answer");
      assert.equal(relay.sidecarLog.find((e) => e.method === "wave/mcp/login").error.code, -32800);
      await until(async () => !(await fetch(callback, { signal: AbortSignal.timeout(1000) }).then(() => true, () => false)), "the callback port closed");
      // Quiet: no notification, no row error.
      assert.deepEqual(relay.hostLog.filter((e) => e.method === "host/notify"), []);
      assert.equal(await remote.locator(".action-error").count(), 0);
      await shot(page, "25-cancelled");

      // A sign-in that fails (here: no callback before the timeout, AUTH-8) is a host
      // notification and the row's error, never a chat message (UI-12).
      await remote.locator("button[data-action=login]").click();
      await until(() => urls().length === 2, "the second authorization URL");
      await until(() => relay.hostLog.some((e) => e.method === "host/notify"), "the failure notification", 30_000);
      const [notice] = relay.hostLog.filter((e) => e.method === "host/notify");
      assert.equal(notice.params.level, "error");
      assert.match(notice.params.message, /^Could not sign in to "remote": .*remote/);
      assert.equal(relay.sidecarLog.filter((e) => e.method === "wave/mcp/login").at(-1).error.data.kind, "signInFailed");
      assert.match(await remote.locator(".action-error").textContent(), /Could not sign in to "remote"/);
      assert.equal(await remote.getAttribute("data-status"), "needs-auth");
      assert.equal(await remote.locator("button[data-action=login]").textContent(), "Sign in");
      assert.ok(!relay.sidecarLog.some((e) => e.method === "wave/session/send"));
      await shot(page, "26-sign-in-failed");
      assert.deepEqual(ui.errors, []);
    } finally {
      const { code } = await ui.close();
      assert.equal(code, 0);
      sandbox.cleanup();
    }
  });
});

describe("process hygiene", () => {
  test("no MCP server of a test sandbox outlives its sidecar", async () => {
    await until(() => processesMentioning("wave-webview-").length === 0, "no sandbox process left", 10_000);
  });
});

// DEL-3 through the real sidecar, no faked reply: the project file is read-only for the sidecar
// (started as `nobody` when the test runs as root), so its delete really fails with
// permissionDenied; the page shows that error in the row and as a host notification, the list
// keeps every row and the file keeps every byte.
describe("DEL-3: a config file the sidecar may not write", () => {
  test("DEL-3: the sidecar's permission-denied error is shown; list and file stay as they were", async () => {
    const sandbox = makeSandbox();
    const file = path.join(sandbox.workdir, ".mcp.json");
    for (const dir of [sandbox.root, sandbox.home, path.join(sandbox.home, ".wave"), sandbox.workdir]) {
      fs.chmodSync(dir, 0o755);
    }
    fs.chmodSync(file, 0o444);
    const original = fs.readFileSync(file, "utf8");
    const ui = await openPage({ sandbox, unprivileged: true });
    try {
      const { page, relay } = ui;
      await tab(page, "project").click();
      await row(page, "broken").waitFor();
      const before = await page.locator("li.server-row").count();
      await row(page, "broken").locator("button[data-action=delete]").click();
      await page.locator("#confirm-delete button.confirm").click();
      const error = row(page, "broken").locator(".action-error");
      await error.waitFor();
      const text = await error.textContent();
      assert.ok(text.startsWith('Could not delete "broken": '), text);
      assert.ok(text.includes("permission denied"), text);
      assert.ok(text.includes(".mcp.json"), text);
      assert.equal(await page.locator("li.server-row").count(), before);
      assert.equal(fs.readFileSync(file, "utf8"), original, "the file was changed");
      const notified = relay.hostLog.filter((e) => e.method === "host/notify" && e.params.level === "error");
      assert.ok(notified.some((e) => JSON.stringify(e.params).includes("permission denied")), JSON.stringify(relay.hostLog));
      assert.ok(!relay.hostLog.some((e) => e.method === "wave/session/send"), "UI-12: never a chat message");
      await shot(page, "09-delete-permission-denied");
    } finally {
      await ui.close();
      sandbox.cleanup();
    }
  });
});

// BUD-2 through the real sidecar: a server row expands to its tools, each with a switch; a
// switch edits only that entry's `disabledTools` (byte for byte, and back), the server stays
// connected (same process), and a plugin server's switches are read-only.
describe("BUD-2: per-tool switches", () => {
  test("BUD-2: switch a tool off and on; the file changes only in that entry; plugin switches are read-only", async () => {
    const sandbox = makeSandbox();
    const pluginFile = path.join(sandbox.home, ".wave", "plugins", "toolbox", ".mcp.json");
    fs.writeFileSync(
      pluginFile,
      JSON.stringify({ mcpServers: { "plugin-tools": { command: testServerBin, args: ["--name", "plugin-tools", "--tools", "echo"] } } }, null, 2) + "\n",
    );
    // A user-level server, written by hand so that the byte-for-byte check below is meaningful.
    // (A switch of a project server's tool rewrites its approved entry, which TRUST-4 makes
    // `needs-approval` again in this build of the sidecar: see the trust tests.)
    const file = path.join(sandbox.home, ".wave", "mcp.json");
    const gammaPids = JSON.stringify(path.join(sandbox.root, "gamma.pid"));
    fs.writeFileSync(
      file,
      `{\n  "mcpServers": {\n    "gamma": {\n      "command": ${JSON.stringify(testServerBin)},\n      "args": ["--name", "gamma", "--tools", "echo,add,pid", "--pid-file", ${gammaPids}]\n    }\n  }\n}\n`,
    );
    const original = fs.readFileSync(file, "utf8");
    const ui = await openPage({ sandbox });
    try {
      const { page } = ui;
      await tab(page, "user").click();
      const gamma = row(page, "gamma");
      await gamma.locator("button[data-action=connect]").click();
      await until(async () => (await gamma.getAttribute("data-status")) === "connected", "gamma connected");
      const [pid] = serverPids(sandbox, "gamma");
      await gamma.locator("details.tool-list summary").click();
      const add = gamma.locator('input[data-key="tool-user/gamma-add"]');
      assert.equal(await add.isChecked(), true);
      assert.equal(await add.isDisabled(), false);
      await add.click();
      await until(async () => (await gamma.locator('li.tool[data-tool="add"]').getAttribute("class")) === "tool disabled", "add off");
      // The row re-rendered and stays expanded, the switch reads off.
      assert.equal(await gamma.locator("details.tool-list").getAttribute("open"), "");
      assert.equal(await gamma.locator('input[data-key="tool-user/gamma-add"]').isChecked(), false);
      const gammaArgs = original.slice(original.indexOf('"args": ["--name", "gamma"'));
      const argsLine = gammaArgs.slice(0, gammaArgs.indexOf("\n"));
      const expected = original.replace(argsLine, `${argsLine},\n      "disabledTools": ["add"]`);
      assert.notEqual(expected, original);
      assert.equal(fs.readFileSync(file, "utf8"), expected, "only gamma's entry changed");
      assert.equal(await gamma.getAttribute("data-status"), "connected");
      assert.ok(pidAlive(pid), "gamma was not restarted");
      assert.deepEqual(serverPids(sandbox, "gamma"), [pid]);
      await shot(page, "10-tool-switch-off");

      await gamma.locator('input[data-key="tool-user/gamma-add"]').click();
      await until(async () => (await gamma.locator('li.tool[data-tool="add"]').getAttribute("class")) === "tool enabled", "add on");
      assert.equal(fs.readFileSync(file, "utf8"), original, "on again: the file as it was, byte for byte");
      assert.ok(pidAlive(pid));

      // BUD-2: a plugin server's switches are read-only.
      await tab(page, "plugin").click();
      const plugin = row(page, "plugin-tools");
      await plugin.locator("button[data-action=connect]").click();
      await until(async () => (await plugin.getAttribute("data-status")) === "connected", "plugin connected");
      await plugin.locator("details.tool-list summary").click();
      const echo = plugin.locator('input[data-key="tool-plugin/plugin-tools-echo"]');
      assert.equal(await echo.isChecked(), true);
      assert.equal(await echo.isDisabled(), true);
      await shot(page, "11-tool-switch-read-only");
    } finally {
      await ui.close();
      sandbox.cleanup();
    }
    assert.deepEqual(ui.errors, [], "no script or CSP errors in the page");
  });
});

// BUD-6 through the real sidecar: a connected server changes its tool list at run time (our test
// server replaces it from a file on SIGUSR1 and sends `notifications/tools/list_changed`); the
// open page's expanded tool list follows live, without a reload and without a reconnect.
describe("BUD-6: a server's tool list changes while the page shows it", () => {
  test("BUD-6: tools/list_changed updates the expanded tool list and the count live", async () => {
    const sandbox = makeSandbox({ empty: true });
    const toolsFile = path.join(sandbox.root, "next-tools.txt");
    writeProject(sandbox, {
      shifty: {
        command: testServerBin,
        args: ["--name", "shifty", "--tools", "echo,pid", "--retool-on-sigusr1", toolsFile, "--pid-file", path.join(sandbox.root, "shifty.pid")],
      },
    });
    const ui = await openPage({ sandbox });
    const { page } = ui;
    const shifty = row(page, "shifty");
    const shown = () => shifty.locator("details.tool-list li.tool").evaluateAll((els) => els.map((e) => e.dataset.tool));
    const retool = (list) => {
      fs.writeFileSync(toolsFile, list);
      process.kill(pid, "SIGUSR1");
    };
    let pid;
    try {
      await tab(page, "project").click();
      await shifty.locator("button[data-action=connect]").click();
      await until(async () => (await shifty.getAttribute("data-status")) === "connected", "shifty connected");
      [pid] = serverPids(sandbox, "shifty");
      assert.ok(pid && pidAlive(pid), "the server's pid");
      await shifty.locator("details.tool-list summary").click();
      assert.deepEqual(await shown(), ["echo", "pid"]);
      assert.equal(await shifty.locator(".tool-count").textContent(), "2 tools");
      await page.evaluate(() => (window.__marker = "same page"));

      // A tool added: it appears in the open list (sorted by name, as always), with its switch on.
      retool("add,echo,pid");
      await until(async () => (await shown()).join() === "add,echo,pid", "add appears in the open list");
      assert.equal(await shifty.locator(".tool-count").textContent(), "3 tools");
      assert.equal(await shifty.locator('input[data-key="tool-project/shifty-add"]').isChecked(), true);
      await shot(page, "12-tools-changed-live");
      // A tool removed: it goes.
      retool("add,pid");
      await until(async () => (await shown()).join() === "add,pid", "echo leaves the open list");
      assert.equal(await shifty.locator(".tool-count").textContent(), "2 tools");

      assert.equal(await shifty.locator("details.tool-list").getAttribute("open"), "", "the list stayed expanded");
      assert.equal(await page.evaluate(() => window.__marker), "same page", "no reload");
      assert.equal(await shifty.getAttribute("data-status"), "connected");
      assert.deepEqual(serverPids(sandbox, "shifty"), [pid], "the same process: no reconnect");
      const pushedTools = ui.relay.pushes
        .filter((p) => p.method === "wave/mcp/serversChanged")
        .map((p) => p.params.servers.find((s) => s.name === "shifty")?.tools.map((t) => t.name).join());
      assert.ok(pushedTools.includes("add,echo,pid") && pushedTools.includes("add,pid"), "both changes came as serversChanged pushes");
    } finally {
      await ui.close();
      sandbox.cleanup();
    }
    assert.deepEqual(ui.errors, [], "no script or CSP errors in the page");
  });

  test("SRV-4: a row shows the server's icon; each tool its icon, title and hint badges", async () => {
    const sandbox = makeSandbox({ empty: true });
    writeProject(sandbox, { thermo: { command: testServerBin, args: ["--name", "thermo", "--tools", "echo,temperature"] } });
    const ui = await openPage({ sandbox });
    const { page } = ui;
    const thermo = row(page, "thermo");
    try {
      await tab(page, "project").click();
      await thermo.locator("button[data-action=connect]").click();
      await until(async () => (await thermo.getAttribute("data-status")) === "connected", "thermo connected");
      await thermo.locator("details.tool-list summary").click();
      // The sidecar kept the data: PNG and the https: PNG (first: the data one), not the SVG or http:.
      const serverIcon = thermo.locator(".row-title img.row-icon");
      assert.match(await serverIcon.getAttribute("src"), /^data:image\/png;base64,/);
      assert.equal(await serverIcon.evaluate((img) => img.complete && img.naturalWidth > 0), true, "the icon rendered under the page's CSP");
      const temperature = thermo.locator('li.tool[data-tool="temperature"]');
      assert.match(await temperature.locator("img.row-icon").getAttribute("src"), /^data:image\/png;/);
      assert.equal(await temperature.locator(".tool-title").textContent(), "Temperature");
      assert.deepEqual(await temperature.locator("[data-badge]").evaluateAll((els) => els.map((e) => e.dataset.badge)), ["readOnly", "idempotent"]);
      const echo = thermo.locator('li.tool[data-tool="echo"]');
      assert.equal(await echo.locator("img.row-icon, .tool-title, [data-badge]").count(), 0, "a tool that declares nothing shows nothing");
      await shot(page, "13-tool-titles-badges-icons");
    } finally {
      await ui.close();
      sandbox.cleanup();
    }
    assert.deepEqual(ui.errors, [], "no script or CSP errors in the page");
  });

  test("SRV-2: Logs opens a server's log — stderr lines and messages coloured by level — and follows new entries", async () => {
    const sandbox = makeSandbox({ empty: true });
    writeProject(sandbox, {
      chatty: { command: testServerBin, args: ["--name", "chatty", "--tools", "echo", "--logging", "--stderr-banner", "chatty: listening on stdio"] },
    });
    const ui = await openPage({ sandbox });
    const { page } = ui;
    const chatty = row(page, "chatty");
    try {
      await tab(page, "project").click();
      await chatty.locator("button[data-action=connect]").click();
      await until(async () => (await chatty.getAttribute("data-status")) === "connected", "chatty connected");
      await chatty.locator("button[data-action=logs]").click();
      const log = page.locator('#server-log[data-server="chatty"]');
      await log.waitFor();
      const lines = () => log.locator("li.log-line").evaluateAll((els) => els.map((e) => `${e.dataset.source}:${e.dataset.level}:${e.querySelector(".log-text").textContent}`));
      // The test server logs from info on (the default logLevel) after the connect.
      await until(async () => (await lines()).length >= 4, "the log filled");
      assert.deepEqual(await lines(), [
        "stderr::chatty: listening on stdio",
        "message:info:ready to serve",
        "message:warning:the cache is cold",
        "message:error:one request failed",
      ]);
      assert.equal(await log.locator("li.log-warning .log-level").textContent(), "warning");
      assert.equal(await log.locator("li.log-error .log-logger").textContent(), "[test-server]");
      await shot(page, "14-server-log");
      // Follow: a reconnect's new entries arrive while the log is open.
      await log.locator("button.log-close").click();
      await chatty.locator("button[data-action=disconnect]").click();
      await until(async () => (await chatty.getAttribute("data-status")) === "disconnected", "chatty disconnected");
      await chatty.locator("button[data-action=logs]").click();
      await log.waitFor();
      await chatty.locator("button[data-action=connect]").evaluate((b) => b.click());
      await until(async () => (await lines()).length >= 8, "the reconnect's entries followed");
      assert.equal((await lines())[4], "stderr::chatty: listening on stdio");
    } finally {
      await ui.close();
      sandbox.cleanup();
    }
    assert.deepEqual(ui.errors, [], "no script or CSP errors in the page");
  });
});
