// END TO END in a real VS Code (code-server) with workspace trust on (TRUST-9): the workspace
// opens in Restricted Mode. The extension runs there (it declares limited support for untrusted
// workspaces), tells the sidecar `workspaceTrusted: false`, and nothing of the project runs: its
// server (a command that leaves a marker file) is listed as waiting, its row says the workspace
// is not trusted, Approve is disabled, a chat turn asks nothing and starts nothing. Trusting the
// workspace (VS Code's Manage Workspace Trust) sends `wave/workspace/trust`: the row then says how
// to approve it, and Approve runs it.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import {
  closeWorkbench,
  explainFailure,
  installExtension,
  makeSandbox,
  openProjectRowNeedingApproval,
  openWorkbench,
  outputDir,
  runCommand,
  startFakeModel,
  testServerBin,
  until,
  webviewFrame,
  writeUserSettings,
} from "./support.mjs";

const sb = makeSandbox({ approved: false });
const marker = path.join(sb.root, "restricted-ran.marker");
let model;
let server;
let browser;
let page;

const shot = (name) => page.screenshot({ path: path.join(outputDir, `${name}.png`) });

before(async () => {
  fs.mkdirSync(outputDir, { recursive: true });
  const script = `touch ${marker}; exec ${testServerBin} --name guarded --tools echo`;
  fs.writeFileSync(path.join(sb.workspace, ".mcp.json"), JSON.stringify({ mcpServers: { guarded: { command: "sh", args: ["-c", script] } } }, null, 2) + "\n");
  model = await startFakeModel(() => ({ say: "Hello from Restricted Mode." }));
  writeUserSettings(sb, {
    "wave.model.baseUrl": model.baseUrl,
    "wave.model.name": "fake-model",
    "security.workspace.trust.enabled": true,
    // No start-up dialog: the folder opens in Restricted Mode.
    "security.workspace.trust.startupPrompt": "never",
    "security.workspace.trust.banner": "never",
  });
  installExtension(sb);
  ({ server, browser, page } = await openWorkbench(sb, { workspaceTrust: true }));
});

afterEach((t) => explainFailure(t, sb, page));
after(() => closeWorkbench(sb, { browser, server, model }));

describe("Restricted Mode in a real VS Code (code-server)", () => {
  test("TRUST-9: in Restricted Mode nothing of the project runs, its row says the workspace is not trusted and offers no Approve; trusting it lets the user approve", async () => {
    await page.locator(".statusbar-item", { hasText: "Restricted Mode" }).waitFor({ timeout: 60_000 });
    const { settings, row } = await openProjectRowNeedingApproval(page, "guarded");
    assert.match(await row.locator(".approval-reason").textContent(), /the workspace is not trusted/);
    assert.equal(await row.locator("button[data-action=approve]").isDisabled(), true, "no Approve in Restricted Mode");
    await shot("trust-06-restricted-mode-row");

    // A chat turn asks nothing about the project and starts nothing of it.
    // Back closes the settings tab and shows the chat (UI-7).
    await settings.locator("button.back").click();
    const chat = await webviewFrame(page, "chat", 60_000);
    await chat.locator("#chat-input").fill("hello");
    await chat.locator("#chat-input").press("Enter");
    await chat.locator(".msg-assistant", { hasText: "Hello from Restricted Mode." }).waitFor({ timeout: 60_000 });
    assert.equal(await chat.locator(".consent").count(), 0, "no approval asked in Restricted Mode");
    assert.equal(fs.existsSync(marker), false, "nothing of the project ran");

    // The user trusts the workspace: VS Code's Manage Workspace Trust → Trust.
    await runCommand(page, "Workspaces: Manage Workspace Trust");
    const trust = page.locator(".workspace-trust-editor .monaco-button", { hasText: /^Trust$/ }).first();
    await trust.waitFor({ timeout: 30_000 });
    await trust.click();
    await page.locator(".statusbar-item", { hasText: "Restricted Mode" }).waitFor({ state: "detached", timeout: 30_000 });
    await runCommand(page, "Wave: MCP Servers");
    const again = await webviewFrame(page, "settings", 60_000);
    await again.locator('button.source-tab[data-tab="project"]').click();
    const trusted = again.locator('li.server-row[data-server="guarded"][data-source="project"]');
    await until(async () => /approve it with/.test((await trusted.locator(".approval-reason").textContent()) ?? ""), "the row says how to approve it", 30_000);
    assert.equal(fs.existsSync(marker), false, "trusting the workspace approves nothing by itself");
    await trusted.locator("button[data-action=approve]").click();
    await until(async () => (await trusted.getAttribute("data-status")) === "connected", "approved and connected", 60_000);
    assert.equal(fs.existsSync(marker), true);
    await shot("trust-07-trusted-and-approved");
  });
});
