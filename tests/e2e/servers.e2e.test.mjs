// END TO END in a real VS Code (code-server): what servers expect of a client (issue 26). The
// packaged .vsix runs its bundled sidecar; the workspace's `.mcp.json` has three instances of our
// test MCP server: `logger` (declares `logging`, writes a stderr banner, logs one message per
// level from the one asked for at connect), `docs` (prompts with `completion/complete`) and
// `thermo` (the `temperature` tool: title, annotations, icons and an `outputSchema`).
//   SRV-4  the settings page shows the server's icon and the tool's icon, title and hint badges;
//          the model's call of a tool whose structured result breaks its outputSchema is an error
//          result naming the tool in the chat (and the model is told so).
//   SRV-2  a row's "Logs" opens the server's log (stderr and messages, levels coloured), which
//          follows new entries (a reconnect's, while the log stays open); VS Code's output
//          channel "Wave MCP: logger" has the same lines.
//   SRV-3  `/` then the prompt `review`: its arguments get the server's values as they are typed.
// Screenshots: target/test-output/vscode-e2e/srv-*.png.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import {
  approveProject,
  closeWorkbench,
  configText,
  explainFailure,
  installExtension,
  lastMessage,
  makeSandbox,
  openWorkbench,
  outputDir,
  runCommand,
  startFakeModel,
  testServerBin,
  until,
  userPermissions,
  webviewFrame,
  writeUserSettings,
} from "./support.mjs";
import { lastUserText } from "../../vscode-extension/test/fakeModel.mjs";

const sb = makeSandbox({ approved: false });
const events = path.join(sb.root, "docs-events.log");
const BANNER = "logger: listening on stdio";
let model;
let server;
let browser;
let page;
const pageErrors = [];

const shot = (name) => page.screenshot({ path: path.join(outputDir, `${name}.png`) });

/** The settings page, on its Project tab. */
async function projectSettings() {
  await runCommand(page, "Wave: MCP Servers");
  const settings = await webviewFrame(page, "settings", 60_000);
  await settings.locator('button.source-tab[data-tab="project"]').click();
  return settings;
}

/** The project row of `name`, connected (Connect clicked if it is not yet). */
async function connectedRow(settings, name) {
  const row = settings.locator(`li.server-row[data-server="${name}"][data-source="project"]`);
  await row.waitFor({ timeout: 30_000 });
  if ((await row.getAttribute("data-status")) !== "connected") {
    await row.locator("button[data-action=connect]").click();
    await until(async () => (await row.getAttribute("data-status")) === "connected", `${name} connected`, 60_000);
  }
  return row;
}

before(async () => {
  fs.mkdirSync(outputDir, { recursive: true });
  fs.writeFileSync(
    path.join(sb.workspace, ".mcp.json"),
    configText({
      logger: { command: testServerBin, args: ["--name", "logger", "--tools", "echo", "--logging", "--stderr-banner", BANNER] },
      docs: { command: testServerBin, args: ["--name", "docs", "--tools", "echo", "--prompts", "--completions", "--event-log", events] },
      thermo: { command: testServerBin, args: ["--name", "thermo", "--tools", "echo,temperature"] },
    }),
  );
  // Approved and allowed as a user does: these tests are about the servers, not consent.
  approveProject(sb.home, sb.workspace);
  userPermissions(sb.home, { allow: ["mcp__thermo__*"] });
  // [temperature] → the thermo server's temperature tool with a result that breaks its schema;
  // a tool result → said back; else the user's message echoed.
  model = await startFakeModel((request) => {
    const last = lastMessage(request);
    const text = String(lastUserText(request));
    if (last?.role === "tool") return { say: `The tool answered: ${last.content}` };
    if (text.includes("[temperature]")) return { call: "mcp__thermo__temperature", arguments: { mode: "wrong" }, content: "Let me measure." };
    return { say: `reply to ${text}` };
  });
  writeUserSettings(sb, { "wave.model.baseUrl": model.baseUrl, "wave.model.name": "fake-model" });
  installExtension(sb);
  ({ server, browser, page } = await openWorkbench(sb, { pageErrors }));
});

afterEach((t) => explainFailure(t, sb, page));
after(() => closeWorkbench(sb, { browser, server, model }));

describe("what servers expect of a client, in a real VS Code (code-server)", () => {
  test("SRV-4: the settings row shows the server's icon; the tool its icon, title and hint badges; a tool that declares none shows none", async () => {
    const settings = await projectSettings();
    const thermo = await connectedRow(settings, "thermo");
    // The server's icons: a data: PNG, an https: PNG, an SVG and an http: PNG; the data: one shows.
    const serverIcon = thermo.locator(".row-title img.row-icon");
    assert.match(await serverIcon.getAttribute("src"), /^data:image\/png;base64,/);
    assert.equal(await serverIcon.evaluate((img) => img.complete && img.naturalWidth > 0), true, "the icon rendered under the webview's CSP");
    await thermo.locator("details.tool-list summary").click();
    const temperature = thermo.locator('li.tool[data-tool="temperature"]');
    await temperature.waitFor();
    assert.match(await temperature.locator("img.row-icon").getAttribute("src"), /^data:image\/png;/);
    assert.equal(await temperature.locator(".tool-title").textContent(), "Temperature");
    assert.deepEqual(await temperature.locator("[data-badge]").evaluateAll((els) => els.map((e) => e.dataset.badge)), ["readOnly", "idempotent"]);
    assert.deepEqual(
      await temperature.locator("[data-badge]").evaluateAll((els) => els.map((e) => e.textContent.trim().length > 0 && e.getBoundingClientRect().width > 0)),
      [true, true],
      "each badge is visible with its label",
    );
    const echo = thermo.locator('li.tool[data-tool="echo"]');
    assert.equal(await echo.locator("img.row-icon, .tool-title, [data-badge]").count(), 0, "a tool that declares nothing shows nothing");
    await shot("srv-4-settings-title-badges-icon");
    await thermo.screenshot({ path: path.join(outputDir, "srv-4-settings-row-detail.png") });
  });

  test("SRV-2: a row's Logs opens the server's log (stderr and messages by level) that follows new entries", async () => {
    const settings = await projectSettings();
    const logger = await connectedRow(settings, "logger");
    await logger.locator("button[data-action=logs]").click();
    const log = settings.locator('#server-log[data-server="logger"]');
    await log.waitFor({ timeout: 30_000 });
    const lines = () =>
      log.locator("li.log-line").evaluateAll((els) => els.map((e) => `${e.dataset.source}:${e.dataset.level}:${e.querySelector(".log-text").textContent}`));
    // The server logs from the level asked for at connect (the default `info`) on: no debug.
    const connectLines = [`stderr::${BANNER}`, "message:info:ready to serve", "message:warning:the cache is cold", "message:error:one request failed"];
    await until(async () => (await lines()).length >= 4, "the log filled", 30_000);
    assert.deepEqual(await lines(), connectLines);
    assert.match(await log.locator("#log-title").textContent(), /logger/);
    assert.deepEqual(await log.locator("li.log-line .log-level").allTextContents(), ["stderr", "info", "warning", "error"]);
    assert.equal(await log.locator("li.log-error .log-logger").textContent(), "[test-server]");
    // Levels are coloured: a warning and an error do not look like an info line.
    const colour = (cls) => log.locator(`li.${cls} .log-level`).evaluate((e) => getComputedStyle(e).color);
    const [info, warning, error] = [await colour("log-info"), await colour("log-warning"), await colour("log-error")];
    assert.notEqual(warning, info, "a warning's colour differs from info's");
    assert.notEqual(error, info, "an error's colour differs from info's");
    assert.equal(await log.locator(".log-follow input[type=checkbox]").isChecked(), true, "follow is on");
    await shot("srv-2-logs");

    // Follow: the log stays open while the server restarts; the new run's entries come in.
    await log.locator("button.log-close").click();
    await logger.locator("button[data-action=disconnect]").click();
    await until(async () => (await logger.getAttribute("data-status")) === "disconnected", "logger disconnected", 30_000);
    await logger.locator("button[data-action=logs]").click();
    await log.waitFor();
    await until(async () => (await lines()).length === 4, "the log reopened with its entries");
    // The row's Connect is under the open log: clicked through the page, as a script would.
    await logger.locator("button[data-action=connect]").evaluate((b) => b.click());
    await until(async () => (await lines()).length >= 8, "the reconnect's entries followed", 60_000);
    assert.deepEqual((await lines()).slice(4, 8), connectLines);
    await until(
      () => log.locator("ol.log-lines").evaluate((ol) => ol.scrollHeight - ol.scrollTop - ol.clientHeight < 2),
      "the newest entry in sight",
    );
    await shot("srv-2-logs-followed");
    await log.locator("button.log-close").click();
  });

  test("SRV-2: VS Code's output channel of the server has its log lines", async () => {
    // The channel comes with the server's first entries: logger connected (by the test above,
    // or here when this test runs alone).
    const settings = await projectSettings();
    await connectedRow(settings, "logger");
    await settings.locator("button.back").click();
    await runCommand(page, "Output: Show Output Channels");
    const channel = page.locator(".quick-input-list .monaco-list-row", { hasText: "Wave MCP: logger" }).first();
    await channel.waitFor({ timeout: 30_000 });
    await channel.click();
    // The Output panel's editor (Monaco renders spaces as no-break spaces).
    const text = async () =>
      (await page.locator(".part.panel .monaco-editor .view-lines").allInnerTexts()).join("\n").replace(/\u00a0/g, " ");
    await until(async () => /\[test-server\] one request failed/.test(await text()), "the channel's lines in the Output panel", 30_000);
    const shown = await text();
    assert.match(shown, new RegExp(`\\[stderr\\] ${BANNER}`));
    assert.match(shown, /\[info\] \[test-server\] ready to serve/);
    assert.match(shown, /\[warning\] \[test-server\] the cache is cold/);
    assert.match(shown, /\[error\] \[test-server\] one request failed/);
    await shot("srv-2-output-channel");
    await runCommand(page, "View: Toggle Panel Visibility");
    await page.locator(".part.panel").waitFor({ state: "hidden", timeout: 30_000 });
  });

  test("SRV-3: in the chat, `/` then the prompt review: typing part of an argument shows the server's values", async () => {
    const settings = await projectSettings();
    await connectedRow(settings, "docs");
    await settings.locator("button.back").click();
    const chat = await webviewFrame(page, "chat", 60_000);
    const input = chat.locator("#chat-input");
    const menu = chat.locator("#completion-menu");
    const values = () => chat.locator("#completion-menu .completion-item .completion-insert").allTextContents();
    const menuShows = (expected, what) =>
      until(async () => (await menu.isVisible()) && JSON.stringify(await values()) === JSON.stringify(expected), what, 30_000);
    await input.click();
    await input.pressSequentially("/rev");
    await until(async () => (await values()).includes("/mcp__docs__review"), "the prompt review in the / menu", 30_000);
    await input.press("Enter");
    assert.equal(await input.inputValue(), "/mcp__docs__review ");
    await menuShows(["src/main.rs", "src/lib.rs", "docs/guide.md", "README.md"], "the values of file");
    await input.pressSequentially("src/");
    await menuShows(["src/main.rs", "src/lib.rs"], "the values of file starting with src/");
    assert.match(await menu.innerText(), /file/, "the menu names the argument");
    await shot("srv-3-completions");
    await input.press("ArrowDown");
    await input.press("Enter");
    assert.equal(await input.inputValue(), "/mcp__docs__review src/lib.rs ");
    // The second argument, asked with the first as context: a Rust file's focus.
    await menuShows(["ownership", "lifetimes"], "the values of focus for src/lib.rs");
    await shot("srv-3-completions-with-context");
    await chat.locator("#completion-menu .completion-item", { hasText: "lifetimes" }).click();
    assert.equal(await input.inputValue(), "/mcp__docs__review src/lib.rs lifetimes ");
    const asked = fs.readFileSync(events, "utf8").split("\n").filter((l) => l.startsWith("complete "));
    assert.ok(asked.some((l) => l.endsWith(" file src/")), `the server was asked for file src/: ${asked.join(" | ")}`);
    assert.ok(asked.some((l) => l.endsWith(" focus  file=src/lib.rs")), `the server was asked for focus with the context: ${asked.join(" | ")}`);
    await input.press("Enter");
    await chat.locator(".msg-assistant", { hasText: "reply to Review src/lib.rs with a focus on lifetimes." }).waitFor({ timeout: 60_000 });
  });

  test("SRV-4: the model's call of a tool whose structured result breaks its outputSchema is an error result naming the tool", async () => {
    await runCommand(page, "Wave: Open Chat");
    const chat = await webviewFrame(page, "chat", 60_000);
    const results = chat.locator(".msg-tool");
    const before = await results.count();
    await chat.locator("#chat-input").fill("[temperature] how warm is it?");
    await chat.locator("#chat-send").click();
    await chat.locator(".msg-assistant", { hasText: "The tool answered:" }).waitFor({ timeout: 90_000 });
    await until(async () => (await results.count()) === before + 1, "one tool result");
    const result = results.last();
    assert.equal(await result.getAttribute("class"), "msg msg-tool tool-error");
    assert.match(await result.locator("summary").textContent(), /temperature failed$/);
    await result.locator("summary").click();
    assert.equal(
      await result.locator("pre").textContent(),
      'error: tool "temperature" of MCP server "thermo" returned an error:\nits result does not fit its output schema: at /celsius, "warm" is not of type "number"',
    );
    // The model got the same error, not the structured content that broke the schema.
    const told = model.requests.at(-1).messages.at(-1);
    assert.equal(told.role, "tool");
    assert.match(String(told.content), /tool "temperature" of MCP server "thermo".*does not fit its output schema/s);
    assert.doesNotMatch(String(told.content), /21\.5/);
    await shot("srv-4-structured-output-error");
    await result.screenshot({ path: path.join(outputDir, "srv-4-structured-output-error-detail.png") });
    assert.deepEqual(pageErrors, []);
  });
});
