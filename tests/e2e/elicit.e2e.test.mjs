// END TO END in a real VS Code (code-server): an MCP server asks the user during a tool call
// (elicitation, LONG-5). The packaged .vsix runs its bundled sidecar; the workspace's `.mcp.json`
// has the official Python SDK server `tests/peers/py_elicit.py`; a fake model calls its
// `ask_form` tool. The form appears in the chat view, is filled and accepted, and the tool's
// result carries the answer. A question also outlives the chat view being hidden (VS Code drops
// the view's page then): the reopened view shows it again. Screenshots:
// target/test-output/vscode-e2e/elicit-*.png.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import {
  closeWorkbench,
  explainFailure,
  approveProject,
  hasWebviewFrame,
  installExtension,
  lastMessage,
  makeSandbox,
  openWorkbench,
  outputDir,
  peersDir,
  repoDir,
  runCommand,
  startFakeModel,
  until,
  userPermissions,
  webviewFrame,
  writeUserSettings,
} from "./support.mjs";

const python = path.join(peersDir, "venv", "bin", "python");
const sb = makeSandbox();
let model;
let server;
let browser;
let page;

before(async () => {
  if (!fs.existsSync(python)) {
    if (process.env.CI) throw new Error(`${python} is missing: run bash scripts/install-peers.sh`);
    return;
  }
  fs.mkdirSync(outputDir, { recursive: true });
  fs.writeFileSync(
    path.join(sb.workspace, ".mcp.json"),
    JSON.stringify({ mcpServers: { py: { command: python, args: [path.join(repoDir, "tests", "peers", "py_elicit.py")] } } }, null, 2) + "\n",
  );
  // Approved as a user does, and its tools allowed in the user's own settings: this test is about
  // the server's question, not about consent (TRUST-1, TRUST-5).
  approveProject(sb.home, sb.workspace);
  userPermissions(sb.home, { allow: ["mcp__py__*"] });
  // Calls `mcp__py__ask_form` once per turn, then reports the tool's answer.
  model = await startFakeModel((request) => {
    const last = lastMessage(request);
    if (last?.role === "tool") return { say: `The server got: ${last.content}` };
    return { call: "mcp__py__ask_form", arguments: {}, content: "Let me ask the shop server." };
  });
  writeUserSettings(sb, { "wave.model.baseUrl": model.baseUrl, "wave.model.name": "fake-model" });
  installExtension(sb);
  ({ server, browser, page } = await openWorkbench(sb));
});

afterEach((t) => explainFailure(t, sb, page));
after(() => closeWorkbench(sb, { browser, server, model }));

describe("elicitation in a real VS Code (code-server)", () => {
  test("LONG-5: a server's form shows in the chat view, is filled and accepted, and the tool gets the answer", async (t) => {
    if (!page) return t.skip("PyPI mcp not installed (run scripts/install-peers.sh)");
    await runCommand(page, "Wave: Open Chat");
    const chat = await webviewFrame(page, "chat", 60_000);
    await chat.locator("#chat-input").fill("Sign me up at the shop");
    await chat.locator("#chat-input").press("Enter");
    await chat.locator("#elicit[data-mode=form]").waitFor({ timeout: 90_000 });
    assert.equal(await chat.locator("#elicit-server").textContent(), "py asks");
    assert.equal(await chat.locator("#elicit-message").textContent(), "Tell me about you");
    await chat.locator("#elicit-field-name").fill("Ada");
    await chat.locator("#elicit-field-age").fill("36");
    await chat.locator("#elicit-field-subscribe").check();
    await chat.locator("#elicit-field-colour").selectOption({ label: "red" });
    await page.screenshot({ path: path.join(outputDir, "elicit-form-in-vscode.png") });
    await chat.locator("#elicit-accept").click();
    const answer = 'accept: {"age": 36, "colour": "red", "name": "Ada", "subscribe": true}';
    await chat.locator(".msg-assistant", { hasText: `The server got: ${answer}` }).waitFor({ timeout: 60_000 });
    assert.equal(await chat.locator("#elicit").count(), 0, "the dialog is closed");
    await page.screenshot({ path: path.join(outputDir, "elicit-accepted-in-vscode.png") });
  });

  test("LONG-5: a question outlives the hidden chat view: the Wave icon shows it waits, the reopened view shows it again, and the answer reaches the tool", async (t) => {
    if (!page) return t.skip("PyPI mcp not installed (run scripts/install-peers.sh)");
    await runCommand(page, "Wave: Open Chat");
    let chat = await webviewFrame(page, "chat", 60_000);
    const answered = await chat.locator(".msg-assistant", { hasText: "The server got:" }).count();
    await chat.locator("#chat-input").fill("Sign me up once more");
    // Sent with the button: right after "Wave: Open Chat" VS Code may still be moving the focus
    // into the view, and a key pressed meanwhile lands elsewhere (Enter is tested above).
    await chat.locator("#chat-send").click();
    await chat.locator(".msg-user", { hasText: "Sign me up once more" }).waitFor({ timeout: 30_000 });
    await chat.locator("#elicit[data-mode=form]").waitFor({ timeout: 90_000 });
    // The sidebar shows the Explorer: the chat view is hidden and VS Code drops its page.
    await runCommand(page, "View: Show Explorer");
    await until(async () => !(await hasWebviewFrame(page, "chat")), "the hidden chat view's page is gone", 30_000);
    const badge = page.locator(".activitybar .badge-content", { hasText: /^1$/ });
    await badge.waitFor({ timeout: 30_000 });
    await page.screenshot({ path: path.join(outputDir, "elicit-waiting-while-hidden.png") });
    await runCommand(page, "Wave: Open Chat");
    chat = await webviewFrame(page, "chat", 60_000);
    await chat.locator("#elicit[data-mode=form]").waitFor({ timeout: 30_000 });
    assert.equal(await chat.locator("#elicit-server").textContent(), "py asks");
    assert.equal(await chat.locator("#elicit-message").textContent(), "Tell me about you");
    await chat.locator("#elicit-field-name").fill("Grace");
    await chat.locator("#elicit-field-age").fill("45");
    await chat.locator("#elicit-accept").click();
    const answer = 'accept: {"age": 45, "colour": "green", "name": "Grace", "subscribe": false}';
    await chat.locator(".msg-assistant", { hasText: `The server got: ${answer}` }).waitFor({ timeout: 60_000 });
    assert.equal(await chat.locator(".msg-assistant", { hasText: "The server got:" }).count(), answered + 1, "one answer per turn");
    await badge.waitFor({ state: "detached", timeout: 30_000 });
    assert.equal(await chat.locator("#elicit").count(), 0, "the dialog is closed");
  });
});
