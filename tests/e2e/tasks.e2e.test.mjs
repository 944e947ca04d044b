// END TO END in a real VS Code (code-server): a tool the server runs as a task (SRV-5, issue 26).
// The packaged .vsix runs its bundled sidecar; the workspace's `.mcp.json` has our test MCP
// server as `work` with its `task` tool (a task of the 2026-07-28 `io.modelcontextprotocol/tasks`
// extension) and an event log. The fake model calls `mcp__work__task` with `{ hold: true }`: the
// task stays working with the status message "holding", which shows on the running call in the
// chat view; Stop ends the turn ("Stopped.") and the server gets `tasks/cancel` (its event log
// records `task-cancel`). Screenshot: target/test-output/vscode-e2e/srv-5-task-status.png.

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

const sb = makeSandbox({ approved: false });
const events = path.join(sb.root, "task-events.log");
let model;
let server;
let browser;
let page;
const pageErrors = [];

before(async () => {
  fs.mkdirSync(outputDir, { recursive: true });
  fs.writeFileSync(
    path.join(sb.workspace, ".mcp.json"),
    configText({ work: { command: testServerBin, args: ["--name", "work", "--tools", "task", "--event-log", events] } }),
  );
  // Approved and allowed as a user does: this test is about the task, not consent (TRUST-1, TRUST-5).
  approveProject(sb.home, sb.workspace);
  userPermissions(sb.home, { allow: ["mcp__work__*"] });
  // The work server's task tool, held, when it is offered; after a tool result, text.
  model = await startFakeModel((request) => {
    if (lastMessage(request)?.role === "tool") return { say: "The task is done." };
    const offered = (request.tools ?? []).some((t) => t.function?.name === "mcp__work__task");
    return offered ? { call: "mcp__work__task", arguments: { hold: true }, content: "Let me run the task." } : { say: "no task tool was offered" };
  });
  writeUserSettings(sb, { "wave.model.baseUrl": model.baseUrl, "wave.model.name": "fake-model" });
  installExtension(sb);
  ({ server, browser, page } = await openWorkbench(sb, { pageErrors }));
});

afterEach((t) => explainFailure(t, sb, page));
after(() => closeWorkbench(sb, { browser, server, model }));

describe("a tool the server runs as a task, in a real VS Code (code-server)", () => {
  test("SRV-5: a task tool's status message shows on the running call; Stop ends the turn and sends tasks/cancel", async () => {
    await runCommand(page, "Wave: Open Chat");
    const chat = await webviewFrame(page, "chat", 60_000);
    await chat.locator("#chat-input").fill("run the task");
    await chat.locator("#chat-send").click();

    // The running call shows the task's status message (no bar: a task's status has no total).
    const running = chat.locator(".tool-running");
    const status = running.locator(".tool-progress-text");
    await until(async () => ((await status.textContent({ timeout: 500 }).catch(() => "")) ?? "") === "holding", "the task's status message", 90_000);
    assert.equal(await running.locator("progress").count(), 0, "no progress bar for a task's status");
    assert.ok(await chat.locator("#chat-stop").isVisible(), "Stop shows while the task runs");
    assert.ok(fs.readFileSync(events, "utf8").includes("task-create"), "the server ran the call as a task");
    await running.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(outputDir, "srv-5-task-status.png") });

    // Stop: the turn ends, and the server is told to cancel the task.
    await chat.locator("#chat-stop").click();
    await chat.locator(".chat-error", { hasText: "Stopped." }).waitFor({ timeout: 30_000 });
    await until(() => fs.existsSync(events) && fs.readFileSync(events, "utf8").includes("task-cancel"), "the server got tasks/cancel", 30_000);
    assert.equal(await chat.locator(".tool-running").count(), 0, "no call runs after Stop");
    await until(async () => !(await chat.locator("#chat-stop").isVisible()), "Stop hides: nothing runs");
    assert.equal(
      model.requests.filter((r) => lastMessage(r)?.role === "tool").length,
      0,
      "the model was not asked again after the stop",
    );
    await page.screenshot({ path: path.join(outputDir, "srv-5-task-stopped.png") });
    assert.deepEqual(pageErrors, [], "no script errors in the workbench");
  });
});
