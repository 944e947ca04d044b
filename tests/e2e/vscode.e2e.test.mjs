// END TO END in a real VS Code (code-server 4.139.1 = VS Code 1.139) driven by headless
// Chromium: the packaged .vsix is installed into a sandboxed code-server, which opens a workspace
// whose `.mcp.json` uses our test MCP server. Everything runs on 127.0.0.1; HOME and the XDG dirs
// are temp dirs; nothing is downloaded. Screenshots: target/test-output/vscode-e2e/.
//
// Prerequisites (scripts/test-vscode.sh installs them): code-server + Node 24 in
// ~/.cache/wave-mcp-vscode, /usr/bin/chromium, the .vsix (npm run package), and
// target/debug/wave-mcp-test-server.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import {
  addUserServer,
  explainFailure,
  hasWebviewFrame,
  installExtension,
  makeSandbox,
  openWorkbench,
  outputDir,
  pidAlive,
  processesMentioning,
  projectConfigText,
  readPids,
  runCommand,
  startOAuthMcpServer,
  startWorkspaceModel,
  testServerBin,
  until,
  webviewFrame,
  writeUserSettings,
} from "./support.mjs";

// The project's servers approved as a user does (`wave-mcp approve`), and tool calls allowed in
// the user's own settings: these tests are not about consent (tests/e2e/trust.e2e.test.mjs is).
const sb = makeSandbox({ permissions: { defaultMode: "allow" } });
const userFile = path.join(sb.home, ".wave", "mcp.json");
const projectFile = path.join(sb.workspace, ".mcp.json");
let model;
let oauth;
let server;
let browser;
let page;
const pageErrors = [];

const shot = (name) => page.screenshot({ path: path.join(outputDir, `${name}.png`) });
const settingsFrame = () => webviewFrame(page, "settings");
const chatFrame = () => webviewFrame(page, "chat");
const row = (frame, name) => frame.locator(`li.server-row[data-server="${name}"]`);

before(async () => {
  fs.mkdirSync(outputDir, { recursive: true });
  for (const f of fs.readdirSync(outputDir)) if (f.endsWith(".png")) fs.rmSync(path.join(outputDir, f));
  model = await startWorkspaceModel();
  // AUTH-*: a remote server behind a real authorization server (the MCP TypeScript SDK's
  // example), in the user config.
  oauth = await startOAuthMcpServer();
  addUserServer(sb, "remote", { type: "http", url: oauth.url });
  writeUserSettings(sb, {
    "wave.model.baseUrl": model.baseUrl,
    "wave.model.name": "fake-model",
    // Constructor-level servers passed by VS Code (initializationOptions.mcpServers).
    "wave.mcpServers": { "host-tools": { type: "http", url: "http://127.0.0.1:9/mcp" } },
  });
  installExtension(sb);
  assert.ok(fs.existsSync(path.join(sb.extensions, "wave.wave-mcp-0.1.0", "bin", "wave-mcp")), "the .vsix carries the sidecar");
  ({ server, browser, page } = await openWorkbench(sb, { pageErrors }));
});

afterEach((t) => explainFailure(t, sb, page));
after(async () => {
  await browser?.close();
  const stopped = await server?.stop();
  await model?.close();
  const oauthGone = await oauth?.stop();
  // Stopping VS Code ends the extension host, the sidecar and every MCP server it started.
  await until(() => processesMentioning(sb.root).length === 0, "no process of the sandbox left", 30_000).catch((e) => {
    console.error(e.message, processesMentioning(sb.root));
    throw e;
  });
  if (process.env.WAVE_KEEP_SANDBOX !== "1") fs.rmSync(sb.root, { recursive: true, force: true });
  void stopped;
  assert.equal(oauthGone, true, "the OAuth server's process is gone (no orphan)");
});

describe("Wave MCP in a real VS Code (code-server)", () => {
  test("UI-1: the command 'Wave: MCP Servers' opens the settings editor tab on MCP services", async () => {
    await runCommand(page, "Wave: MCP Servers");
    const frame = await settingsFrame();
    await frame.locator("li.server-row").first().waitFor({ timeout: 60_000 });
    assert.equal(await frame.locator("#nav-mcp.selected").textContent(), "MCP services");
    const tab = page.locator(".tabs-container .tab", { hasText: "Wave Settings" });
    assert.equal(await tab.count(), 1, "an editor tab, not a dialog");
    // Back returns to the chat and sends nothing (UI-7).
    await frame.locator("button.back").click();
    await until(async () => (await tab.count()) === 0, "settings tab closed");
    const chat = await chatFrame();
    assert.equal(await chat.locator(".msg").count(), 0);
  });

  test("UI-1: '/mcp' typed in the chat opens the settings tab instead of being sent; rows listed", async () => {
    const chat = await chatFrame();
    await chat.locator("#chat-input").fill("/mcp");
    await chat.locator("#chat-input").press("Enter");
    const frame = await settingsFrame();
    await frame.locator("li.server-row").first().waitFor();
    assert.equal(await chat.locator(".msg").count(), 0, "/mcp was not sent as a message");
    assert.equal(await chat.locator("#chat-input").inputValue(), "");
    assert.equal(model.requests.length, 0, "no model request");
    // User tab first (gamma, and the OAuth server), then the project tab with alpha, beta, broken.
    assert.deepEqual(await frame.locator("li.server-row").evaluateAll((els) => els.map((e) => e.dataset.server)), ["gamma", "remote"]);
    await frame.locator('button.source-tab[data-tab="project"]').click();
    assert.deepEqual(await frame.locator("li.server-row").evaluateAll((els) => els.map((e) => e.dataset.server)), [
      "alpha",
      "beta",
      "broken",
    ]);
    for (const name of ["alpha", "beta", "broken"])
      assert.equal(await row(frame, name).locator(".status").textContent(), "Disconnected");
    // The setting's servers are the agent's constructor servers: a read-only fourth tab.
    assert.deepEqual(await frame.locator("button.source-tab").evaluateAll((els) => els.map((e) => e.dataset.tab)), [
      "user",
      "project",
      "plugin",
      "host",
    ]);
    await frame.locator('button.source-tab[data-tab="host"]').click();
    assert.equal(await row(frame, "host-tools").locator("button[data-action=delete]").count(), 0);
    assert.equal(await row(frame, "host-tools").locator("button[data-action=edit]").count(), 0);
    await frame.locator('button.source-tab[data-tab="project"]').click();
    assert.match(await row(frame, "alpha").locator(".endpoint").textContent(), /wave-mcp-test-server --name alpha/);
    await shot("01-settings-rows");
  });

  test("UI-4: Connect → Connecting... (disabled) → Connected with the tool count", async () => {
    const frame = await settingsFrame();
    const alpha = row(frame, "alpha");
    await alpha.locator("button[data-action=connect]").click();
    await until(async () => (await alpha.locator("button[data-action=connect]").textContent()) === "Connecting...", "Connecting...");
    assert.equal(await alpha.locator("button[data-action=connect]").isDisabled(), true);
    await shot("02-connecting");
    await until(async () => (await alpha.getAttribute("data-status")) === "connected", "alpha connected");
    assert.equal(await alpha.locator(".status").textContent(), "Connected");
    assert.equal(await alpha.locator(".tool-count").textContent(), "3 tools");
    const [pid] = readPids(sb, "alpha");
    assert.ok(pid && pidAlive(pid), "alpha's process runs");
    await shot("03-connected");
  });

  // On the user-level gamma: a switch of a project server's tool rewrites its approved entry,
  // which TRUST-4 makes `needs-approval` again in this build of the sidecar.
  test("BUD-2: a tool's switch edits only gamma's entry in ~/.wave/mcp.json, back byte for byte; gamma stays connected", async () => {
    const frame = await settingsFrame();
    await frame.locator('button.source-tab[data-tab="user"]').click();
    const gamma = row(frame, "gamma");
    await gamma.locator("button[data-action=connect]").click();
    await until(async () => (await gamma.getAttribute("data-status")) === "connected", "gamma connected");
    const original = fs.readFileSync(userFile, "utf8");
    const [pid] = readPids(sb, "gamma");
    await gamma.locator("details.tool-list summary").click();
    await gamma.locator('input[data-key="tool-user/gamma-add"]').click();
    await until(async () => (await gamma.locator('li.tool[data-tool="add"]').getAttribute("class")) === "tool disabled", "add off");
    const argsLine = original.split("\n").find((l) => l.includes('"args": ["--name", "gamma"'));
    assert.equal(fs.readFileSync(userFile, "utf8"), original.replace(argsLine, `${argsLine},\n      "disabledTools": ["add"]`));
    assert.equal(await gamma.getAttribute("data-status"), "connected");
    assert.ok(pidAlive(pid), "gamma kept its process");
    await shot("03b-tool-switch-off");
    await gamma.locator('input[data-key="tool-user/gamma-add"]').click();
    await until(async () => (await gamma.locator('li.tool[data-tool="add"]').getAttribute("class")) === "tool enabled", "add on");
    assert.equal(fs.readFileSync(userFile, "utf8"), original, "switched on again: the file as it was");
    assert.ok(pidAlive(pid));
    await frame.locator('button.source-tab[data-tab="project"]').click();
  });

  test("UI-4: Disconnect → Disconnected, the process ends, tools stay visible as cached", async () => {
    const frame = await settingsFrame();
    const alpha = row(frame, "alpha");
    const [pid] = readPids(sb, "alpha");
    await alpha.locator("button[data-action=disconnect]").click();
    await until(async () => (await alpha.getAttribute("data-status")) === "disconnected", "alpha disconnected");
    await until(() => !pidAlive(pid), "alpha's process gone");
    assert.equal(await alpha.locator("button[data-action=connect]").textContent(), "Connect");
    assert.match(await alpha.locator(".tools-detail").textContent(), /^cached, last connected /);
    await shot("04-disconnected");
  });

  test("UI-3, UI-12: a failing server shows its reason in red and Reconnect; no chat message", async () => {
    const frame = await settingsFrame();
    const broken = row(frame, "broken");
    await broken.locator("button[data-action=connect]").click();
    await until(async () => (await broken.getAttribute("data-status")) === "error", "broken in error");
    assert.ok((await broken.locator(".server-error").textContent()).length > 0);
    assert.equal(await broken.locator("button[data-action=connect]").textContent(), "Reconnect");
    const chat = await chatFrame();
    assert.equal(await chat.locator(".msg").count(), 0);
    await shot("05-error");
  });

  test("AUTH-1, AUTH-9, AUTH-5, UI-12: a needs-auth row, Sign in through openExternal, the row turns connected, Sign out", async () => {
    await runCommand(page, "Wave: MCP Servers");
    const frame = await settingsFrame();
    await frame.locator('button.source-tab[data-tab="user"]').click();
    const remote = row(frame, "remote");
    await remote.locator("button[data-action=connect]").click();
    // AUTH-1: the 401 makes it needs-auth (not error) with a reason that says how to sign in.
    await until(async () => (await remote.getAttribute("data-status")) === "needs-auth", "remote needs-auth");
    assert.equal(await remote.locator(".status").textContent(), "Sign-in required");
    assert.match(await remote.locator(".auth-reason").textContent(), /sign in/i);
    assert.equal(await remote.locator("button[data-action=login]").textContent(), "Sign in");
    await shot("11-auth-needs-auth");

    // Sign in: the sidecar asks the extension to open the authorization URL; openExternal opens
    // it in a new browser window, which follows the redirects to the sidecar's callback.
    // The browser window's request to /authorize is held until the waiting state was seen (the
    // authorization server approves at once, so the wait would otherwise be too short to see).
    let release;
    const gate = new Promise((r) => (release = r));
    // (code-server may hand a localhost URL to the browser through its own port proxy,
    // /proxy/<port>/..., so match by path.)
    const isAuthorize = (url) => url.pathname.endsWith("/authorize") && url.searchParams.has("code_challenge");
    const authorizeRequests = [];
    await page.context().route(isAuthorize, async (route) => {
      authorizeRequests.push(route.request().url());
      await gate;
      await route.continue();
    });
    const popup = page.waitForEvent("popup", { timeout: 60_000 });
    await remote.locator("button[data-action=login]").click();
    await until(async () => (await remote.locator("button[data-action=login]").textContent()) === "Waiting for browser...", "Waiting for browser...");
    assert.equal(await remote.locator("button[data-action=cancel-login]").count(), 1);
    // The URL is shown too, with Copy URL (AUTH-2).
    const notice = page.locator(".notifications-toasts .notification-toast", { hasText: 'sign in to the MCP server "remote"' });
    await notice.first().waitFor({ timeout: 30_000 });
    assert.match(await notice.first().textContent(), new RegExp(`localhost:${oauth.authPort}/authorize`));
    assert.equal(await notice.first().locator(".monaco-button", { hasText: "Copy URL" }).count(), 1);
    await shot("12-auth-waiting-for-browser");
    assert.equal(await remote.getAttribute("data-status"), "needs-auth", "nothing signed in before the browser");
    // VS Code may ask before it opens an external website, and in a browser (code-server) the
    // page's popup blocker may have stopped window.open (the click's user activation is over by
    // the time the sidecar asks): VS Code then asks to open it anyway. Either way: click Open.
    const ask = page.locator(".monaco-dialog-box", { hasText: /open the external website|interrupted the opening/ });
    // (Playwright's popup event fires only once the window's first response arrives, which the
    // gate holds: watch the held request instead.)
    const opened = await Promise.race([
      until(() => authorizeRequests.length > 0, "the browser window's authorization request", 60_000).then(() => "window"),
      ask.waitFor({ timeout: 60_000 }).then(() => "dialog"),
    ]).catch(async (e) => {
      await shot("12-auth-FAILED-no-browser-window");
      throw e;
    });
    if (opened === "dialog") {
      await shot("12b-auth-open-in-browser-dialog");
      await ask.locator(".monaco-button", { hasText: /^Open$/ }).click();
    }
    await until(() => authorizeRequests.length > 0, "the browser window's authorization request");
    // Still waiting while the browser has not been let through.
    assert.equal(await remote.locator("button[data-action=login]").textContent(), "Waiting for browser...");
    release();
    const win = await popup;
    await win.waitForLoadState("load").catch(() => undefined);
    await until(async () => (await remote.getAttribute("data-status")) === "connected", "remote connected after sign-in", 60_000);
    assert.match(win.url(), /^http:\/\/127\.0\.0\.1:\d+\/callback\?/, "the browser window reached the loopback callback");
    await win.close().catch(() => undefined);
    await page.context().unroute(isAuthorize);
    assert.equal(await remote.locator(".status").textContent(), "Connected");
    assert.equal(await remote.locator(".badge.signed-in").count(), 1);
    assert.equal(await remote.locator("button[data-action=logout]").textContent(), "Sign out");
    assert.ok(!fs.existsSync(path.join(sb.root, "browser-url.txt")), "opened by VS Code's openExternal, not the sidecar's fallback");
    await shot("13-auth-signed-in-connected");

    // AUTH-5: Sign out → disconnected, not signed in; the next dial finds it needs-auth.
    await remote.locator("button[data-action=logout]").click();
    await until(async () => (await remote.locator("button[data-action=logout]").count()) === 0, "Sign out done");
    assert.equal(await remote.getAttribute("data-status"), "disconnected");
    assert.equal(await remote.locator(".badge.signed-in").count(), 0);
    await shot("14-auth-signed-out");
    await remote.locator("button[data-action=connect]").click();
    await until(async () => (await remote.getAttribute("data-status")) === "needs-auth", "needs-auth after sign-out");
    // UI-12: no error notification; no chat message.
    assert.equal(await page.locator(".notifications-toasts .notification-toast", { hasText: "Could not sign" }).count(), 0);
    const chat = await chatFrame();
    assert.equal(await chat.locator(".msg").count(), 0);
    await frame.locator('button.source-tab[data-tab="project"]').click();
  });

  test("DEL-1, DEL-2: Delete asks with server and path; Cancel keeps it; Confirm removes only that entry", async () => {
    const frame = await settingsFrame();
    const original = fs.readFileSync(projectFile, "utf8");
    assert.equal(original, projectConfigText(sb.root));
    await row(frame, "beta").locator("button[data-action=delete]").click();
    const dialog = frame.locator("#confirm-delete");
    await dialog.waitFor();
    assert.equal(await dialog.locator(".confirm-body").textContent(), `"beta" will be removed from ${projectFile}. This cannot be undone.`);
    await shot("06-delete-confirm");
    await dialog.locator("button.cancel").click();
    assert.equal(fs.readFileSync(projectFile, "utf8"), original);
    assert.equal(await row(frame, "beta").count(), 1);

    await row(frame, "beta").locator("button[data-action=delete]").click();
    await dialog.locator("button.confirm").click();
    await until(async () => (await row(frame, "beta").count()) === 0, "beta gone");
    const now = fs.readFileSync(projectFile, "utf8");
    assert.deepEqual(Object.keys(JSON.parse(now).mcpServers), ["alpha", "broken"]);
    const alphaEntry = original.slice(original.indexOf('    "alpha"'), original.indexOf('    "beta"')).trimEnd().replace(/,$/, "");
    assert.ok(now.includes(alphaEntry), "alpha's entry is byte-identical");
    assert.ok(now.includes(original.slice(original.indexOf('    "broken"'))), "broken's entry and the file's end are byte-identical");
    await shot("07-after-delete");
  });

  test("EDIT-1..3: Edit opens the config file in an editor tab, closes settings, prefills the chat", async () => {
    const frame = await settingsFrame();
    await row(frame, "alpha").locator("button[data-action=edit]").click();
    const fileTab = page.locator(".tabs-container .tab", { hasText: ".mcp.json" });
    await fileTab.waitFor({ timeout: 30_000 });
    await until(async () => (await page.locator(".tabs-container .tab", { hasText: "Wave Settings" }).count()) === 0, "settings closed");
    assert.equal(await hasWebviewFrame(page, "settings"), false);
    // The editor shows the real file.
    await page.locator(".monaco-editor .view-lines", { hasText: "alpha" }).first().waitFor();
    assert.equal(await fileTab.getAttribute("aria-selected"), "true");
    const chat = await chatFrame();
    await until(
      async () => (await chat.locator("#chat-input").inputValue()) === "Help me edit the MCP server alpha: change <what to change> to <new value>",
      "the edit prompt in the chat input",
    );
    assert.equal(await chat.locator(".msg").count(), 0, "prefilled, not sent");
    await shot("08-edit-file-and-prompt");
  });

  test("ADD-1, ADD-4: Add (user) prefills the prompt, opens no file; sent verbatim as a normal message", async () => {
    await runCommand(page, "Wave: MCP Servers");
    const frame = await settingsFrame();
    await frame.locator('button.source-tab[data-tab="user"]').click();
    const tabsBefore = await page.locator(".tabs-container .tab").count();
    await frame.locator("button[data-add=user]").click();
    const chat = await chatFrame();
    const prompt = "/settings Help me add a user-level MCP server <name>: connect to <command/url>, args <args>";
    await until(async () => (await chat.locator("#chat-input").inputValue()) === prompt, "the add prompt");
    assert.equal(await hasWebviewFrame(page, "settings"), false, "settings closed");
    assert.equal(await page.locator(".tabs-container .tab").count(), tabsBefore - 1, "no file opened (only settings closed)");
    await shot("09-add-prompt");

    // The user sends it: an ordinary user message, verbatim (ADD-4), through the sidecar's session.
    await chat.locator("#chat-send").click();
    await until(() => model.requests.length >= 1, "a model request");
    const userTexts = model.requests[0].messages.filter((m) => m.role === "user").map((m) => String(m.content));
    assert.ok(userTexts.some((t) => t.includes(prompt)), "the prompt reached the model verbatim");
    // The fake model calls alpha's echo tool (the first turn dials the servers), then answers.
    await chat
      .locator(".msg-assistant", { hasText: "The echo tool answered" })
      .waitFor({ timeout: 60_000 })
      .catch(async (e) => {
        await shot("10-chat-turn-FAILED");
        console.error("model requests:", JSON.stringify(model.requests, null, 1).slice(0, 4000));
        throw e;
      });
    assert.equal(await chat.locator(".msg-user").count(), 1);
    assert.equal(await chat.locator(".msg-user .msg-text").textContent(), prompt);
    assert.ok((await chat.locator(".msg-tool").count()) >= 1, "the tool result is shown");
    await shot("10-chat-turn");

    // CHAT-1: close the chat view and open it again: a new page, which shows the earlier
    // conversation from the sidecar (no host or page keeps a transcript).
    await chat.evaluate(() => (window.__waveMarker = "the first page"));
    await runCommand(page, "View: Close Primary Side Bar");
    await until(async () => !(await hasWebviewFrame(page, "chat")), "the chat view closed");
    await runCommand(page, "Wave: Open Chat");
    const reopened = await chatFrame();
    assert.equal(await reopened.evaluate(() => window.__waveMarker), undefined, "a new page, not the old one shown again");
    await reopened.locator(".msg-assistant", { hasText: "The echo tool answered" }).waitFor({ timeout: 30_000 });
    assert.equal(await reopened.locator(".msg-user").count(), 1);
    assert.equal(await reopened.locator(".msg-user .msg-text").textContent(), prompt);
    assert.ok((await reopened.locator(".msg-tool").count()) >= 1, "the tool result is shown again");
    await shot("11-chat-reopened");
  });

  test("PRM-1, PRM-2, PRM-3: in the chat, `/` picks a server's prompt with arguments and `@` attaches a resource", async () => {
    // A server with prompts and resources joins the user config; the sidecar's watcher adds it.
    addUserServer(sb, "notes", {
      command: testServerBin,
      args: ["--name", "notes", "--prompts", "--tools", "none", "--pid-file", path.join(sb.root, "notes.pid")],
    });
    await runCommand(page, "Wave: MCP Servers");
    const frame = await settingsFrame();
    await frame.locator('button.source-tab[data-tab="user"]').click();
    await until(async () => (await row(frame, "notes").count()) === 1, "notes listed after the config edit");
    await row(frame, "notes").locator("button[data-action=connect]").click();
    await until(async () => (await row(frame, "notes").getAttribute("data-status")) === "connected", "notes connected");
    await runCommand(page, "Wave: Open Chat");
    const chat = await chatFrame();
    const input = chat.locator("#chat-input");
    const userText = (request) =>
      request.messages
        .filter((m) => m.role === "user")
        .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
        .join("\n");
    const idle = () => until(async () => (await chat.locator("#chat-status").textContent()) === "", "the turn ended");

    // PRM-1, PRM-2: `/` offers the prompt with its argument hint; Enter inserts it.
    const beforePrompt = model.requests.length;
    await input.click();
    await input.pressSequentially("/mcp__notes");
    const review = chat.locator("#completion-menu .completion-item", { hasText: "/mcp__notes__review" });
    await review.waitFor({ timeout: 30_000 });
    assert.equal(await review.locator(".completion-hint").textContent(), "<file> [focus]");
    await shot("20-chat-prompt-menu");
    await input.press("Enter");
    assert.equal(await input.inputValue(), "/mcp__notes__review ");
    await input.pressSequentially('src/a.rs "error handling"');
    await input.press("Enter");
    const expanded = "Review src/a.rs with a focus on error handling.";
    await until(() => model.requests.slice(beforePrompt).some((r) => userText(r).includes(expanded)), "the prompt's message reached the model");
    await chat.locator(".msg-user", { hasText: expanded }).waitFor({ timeout: 30_000 });
    await idle();
    await shot("21-chat-prompt-sent");

    // PRM-3: `@` offers the resources; typing narrows to one; Enter inserts, Enter sends.
    const beforeMention = model.requests.length;
    await input.pressSequentially("summarize @doc/7");
    const doc = chat.locator("#completion-menu .completion-item", { hasText: "@notes:test://doc/7" });
    await doc.waitFor({ timeout: 30_000 });
    assert.equal(await chat.locator("#completion-menu .completion-item").count(), 1);
    await shot("22-chat-resource-menu");
    await input.press("Enter");
    assert.equal(await input.inputValue(), "summarize @notes:test://doc/7 ");
    await input.press("Enter");
    await until(
      () => model.requests.slice(beforeMention).some((r) => userText(r).includes('<resource uri=\\"test://doc/7\\"') || userText(r).includes("document 7")),
      "the resource's contents reached the model",
    );
    await idle();
    await shot("23-chat-mention-sent");
  });

  test("LONG-1, LONG-2, LONG-3: a streamed answer, a running call's progress bar, Stop (the server is told)", async () => {
    const chat = await chatFrame();
    await chat.locator("#chat-input").fill("[long-stream] tell me something");
    await chat.locator("#chat-send").click();
    const streaming = chat.locator("[data-role=assistant-streaming] .msg-text");
    await streaming.waitFor({ timeout: 60_000 });
    await until(async () => ((await streaming.textContent()) ?? "").split(" ").length >= 4, "a few words streamed");
    await shot("12-chat-streaming");
    await chat.locator(".msg-assistant:not(.streaming)", { hasText: "while the model writes it." }).waitFor({ timeout: 60_000 });

    // A server with a long tool, added to the user config (the sidecar reloads it).
    const events = path.join(sb.root, "worker-events.log");
    addUserServer(sb, "worker", { command: testServerBin, args: ["--name", "worker", "--tools", "progress", "--event-log", events] });
    // The config watcher picks the entry up within moments; until then a turn does not see the
    // tool (the model then just answers), so send again until a request declares it.
    const declares = (r) => (r.tools ?? []).some((t) => t.function?.name === "mcp__worker__progress");
    for (let attempt = 0; ; attempt++) {
      const before = model.requests.length;
      await chat.locator("#chat-input").fill("[long-progress] do the long job");
      await chat.locator("#chat-send").click();
      await until(() => model.requests.length > before, "a model request");
      if (declares(model.requests[before])) break;
      assert.ok(attempt < 10, "the worker server never reached the turn's tools");
      await until(async () => !(await chat.locator("#chat-stop").isVisible()), "the turn ends");
      await new Promise((r) => setTimeout(r, 1000));
    }
    const bar = chat.locator(".tool-running progress.tool-progress");
    await bar.waitFor({ timeout: 90_000 });
    await until(async () => Number(await bar.getAttribute("value")) > 0, "the bar moves");
    await shot("13-chat-progress");
    await chat.locator("#chat-stop").click();
    await chat.locator(".chat-error", { hasText: "Stopped." }).waitFor({ timeout: 30_000 });
    await until(() => fs.existsSync(events) && fs.readFileSync(events, "utf8").includes("progress-cancelled"), "the server got notifications/cancelled");
    assert.equal(await chat.locator(".tool-running").count(), 0);
    await shot("14-chat-stopped");
  });

  test("the sidecar's stop (restart command, and deactivate on reload) ends every MCP server it started", async () => {
    // The chat turn above dialed gamma (LAZY-2): it runs now.
    const [gamma] = readPids(sb, "gamma");
    assert.ok(gamma && pidAlive(gamma), "gamma runs after the turn");
    const sidecarBin = path.join(sb.extensions, "wave.wave-mcp-0.1.0", "bin", "wave-mcp");
    const [first] = processesMentioning(sidecarBin);
    assert.ok(first, "a sidecar runs");
    const waveLog = () =>
      fs
        .readdirSync(path.join(sb.data, "logs"), { recursive: true })
        .filter((f) => String(f).endsWith("Wave.log"))
        .map((f) => fs.readFileSync(path.join(sb.data, "logs", String(f)), "utf8"))
        .join("\n");

    // Sidecar.stop, the path deactivate takes: LanguageClient.stop → shutdown + exit.
    await runCommand(page, "Wave: Restart Sidecar");
    await until(() => waveLog().includes("sidecar stopped"), "'sidecar stopped' in the Wave log");
    await until(() => !pidAlive(first), "the first sidecar exited");
    await until(() => !pidAlive(gamma), "gamma's process ended with it");
    const [second] = await until(() => processesMentioning(sidecarBin).filter((p) => p !== first), "a new sidecar");

    // Connect alpha in the new sidecar, then reload the window: the extension host goes away and
    // takes the sidecar and alpha with it.
    await runCommand(page, "Wave: MCP Servers");
    const frame = await settingsFrame();
    await frame.locator('button.source-tab[data-tab="project"]').click();
    await row(frame, "alpha").locator("button[data-action=connect]").click();
    await until(async () => (await row(frame, "alpha").getAttribute("data-status")) === "connected", "alpha connected");
    const [alpha] = readPids(sb, "alpha");
    assert.ok(alpha && pidAlive(alpha));
    await runCommand(page, "Developer: Reload Window");
    await until(() => !pidAlive(second), "the second sidecar exited", 60_000);
    await until(() => !pidAlive(alpha), "alpha's process ended", 60_000);
    await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
    await until(() => processesMentioning(sidecarBin).length === 1, "the reloaded window's sidecar", 90_000);
  });
});
