// Live turns in the shared chat page, headless Chromium against the REAL sidecar (`wave-mcp lsp`)
// and our test server, through the JCEF adapter: streamed text (LONG-1), a running tool call
// with its progress bar, or its message and a spinner without a total (LONG-2), and Stop (LONG-3),
// with the server's record of the cancel; a tool the server runs as a task shows its status
// message on the running call and Stop cancels the task (SRV-5).

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import {
  makeSandbox,
  openChatPage,
  outputDir,
  scripted,
  startFakeModel,
  startSidecar,
  testServerBin,
  until,
  useBrowser,
  userPermissions,
  writeProject,
} from "./support.mjs";

/** A model that streams (SSE) its steps, one a request: `{ say, gapMs }` or `{ call, arguments }`. */
const startStreamingModel = (steps) => startFakeModel(scripted(steps.map((step) => ({ ...step, stream: true }))));

const ui = useBrowser();

/**
 * The chat page on the real sidecar, with a streaming model that runs `steps` and, in the
 * project's `.mcp.json`, the servers `servers(sandbox)` returns; `close()` ends the page, the
 * sidecar and the model, and removes the sandbox.
 */
async function openChat(steps, servers) {
  const sandbox = makeSandbox({ empty: true });
  // Approved, and their tools allowed in the user's own settings: these tests are about live turns.
  if (servers) {
    writeProject(sandbox, servers(sandbox));
    userPermissions(sandbox.home, { defaultMode: "allow" });
  }
  const model = await startStreamingModel(steps);
  const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" } });
  const chat = await openChatPage(ui, sidecar);
  return {
    ...chat,
    sandbox,
    model,
    async close() {
      await chat.context.close();
      await sidecar.stop();
      await model.close();
      sandbox.cleanup();
    },
  };
}

/** Our test server as `work`, with its `progress` tool (LONG-2, LONG-3). */
const workServer = (...args) => ({ work: { command: testServerBin, args: ["--tools", "progress", ...args] } });

describe("live turns in the chat page (JCEF bridge, real sidecar)", () => {
  test("LONG-1: the answer streams into the page, then the complete message replaces it", async () => {
    const answer = "this answer arrives one word at a time so you can watch it grow";
    const chat = await openChat([{ say: answer, gapMs: 150 }]);
    const { page, errors, relay } = chat;
    try {
      await page.locator("#chat-input").fill("stream please");
      await page.locator("#chat-send").click();
      const streaming = page.locator("[data-role=assistant-streaming] .msg-text");
      await streaming.waitFor({ timeout: 30_000 });
      await until(async () => ((await streaming.textContent()) ?? "").split(" ").length >= 4, "a few words streamed");
      const partial = await streaming.textContent();
      assert.ok(answer.startsWith(partial) && partial.length < answer.length, `partial: ${partial}`);
      // A delta updates the streaming message's text only: the log's other elements, and the
      // streaming message's own, are the same nodes a few deltas later.
      const marked = await page.evaluate(() => {
        const nodes = [...document.querySelectorAll("#chat-log > *")];
        nodes.forEach((n) => (n.dataset.marked = "before-deltas"));
        return nodes.length;
      });
      const words = partial.split(" ").length;
      await until(async () => ((await streaming.textContent()) ?? "").split(" ").length >= words + 3, "more words streamed");
      assert.equal(await page.locator("#chat-log > [data-marked=before-deltas]").count(), marked, "no element of the log was rebuilt");
      assert.ok(await page.locator("#chat-stop").isVisible(), "Stop shows while the turn runs");
      await page.screenshot({ path: path.join(outputDir, "40-chat-streaming.png"), fullPage: true });
      await page.locator(".msg-assistant:not(.streaming)", { hasText: answer }).waitFor({ timeout: 30_000 });
      await until(async () => (await page.locator("[data-role=assistant-streaming]").count()) === 0, "the streaming text is replaced");
      await until(async () => !(await page.locator("#chat-stop").isVisible()), "Stop hides when the turn ends");
      assert.ok(relay.pushes.filter((p) => p.method === "wave/session/delta").length >= 10, "the deltas were forwarded");
      assert.deepEqual(errors, []);
    } finally {
      await chat.close();
    }
  });

  test("LONG-2, LONG-3: a running call shows its progress bar; Stop cancels it on the server and the turn ends stopped", async () => {
    const chat = await openChat(
      [{ call: "mcp__work__progress", arguments: { steps: 200, ms: 300 } }, { say: "after the stop" }],
      (sandbox) => workServer("--event-log", path.join(sandbox.root, "events.log")),
    );
    const { page, errors, model } = chat;
    const events = path.join(chat.sandbox.root, "events.log");
    try {
      await page.locator("#chat-input").fill("do the long job");
      await page.locator("#chat-send").click();
      const bar = page.locator(".tool-running progress.tool-progress");
      await bar.waitFor({ timeout: 60_000 });
      await until(async () => Number(await bar.getAttribute("value")) > 0, "the bar moves");
      assert.match(await page.locator(".tool-running .tool-progress-text").textContent(), /^step \d+ of 200$/);
      await page.screenshot({ path: path.join(outputDir, "41-chat-progress.png"), fullPage: true });
      await page.locator("#chat-stop").click();
      await page.locator(".chat-error", { hasText: "Stopped." }).waitFor({ timeout: 30_000 });
      await until(async () => !(await page.locator("#chat-stop").isVisible()), "Stop hides");
      await until(() => fs.readFileSync(events, "utf8").includes("progress-cancelled"), "the server got notifications/cancelled");
      const lines = fs.readFileSync(events, "utf8").split("\n");
      const started = lines.find((l) => l.startsWith("progress-started")).split(" ")[2];
      const cancelled = lines.find((l) => l.startsWith("progress-cancelled")).split(" ")[2];
      assert.equal(cancelled, started, "the cancel named the call's request id");
      assert.equal(await page.locator(".tool-running").count(), 0, "no call runs any more");
      assert.equal(model.requests.length, 1, "no model request after Stop");
      await page.screenshot({ path: path.join(outputDir, "42-chat-stopped.png"), fullPage: true });
      assert.deepEqual(errors, []);
    } finally {
      await chat.close();
    }
  });

  test("LONG-2: progress without a total shows the server's message beside a spinner, no bar", async () => {
    const chat = await openChat(
      [{ call: "mcp__work__progress", arguments: { steps: 200, ms: 300, withTotal: false } }, { say: "after the stop" }],
      () => workServer(),
    );
    const { page, errors, relay } = chat;
    try {
      await page.locator("#chat-input").fill("do the job without a total");
      await page.locator("#chat-send").click();
      const text = page.locator(".tool-running .tool-progress-text");
      await until(async () => /^step \d+ of 200$/.test((await text.textContent().catch(() => "")) ?? ""), "the server's message", 60_000);
      assert.equal(await page.locator(".tool-running .spinner").count(), 1, "a spinner");
      assert.equal(await page.locator(".tool-running progress").count(), 0, "no bar without a total");
      const progress = relay.pushes.filter((p) => p.method === "wave/session/progress");
      assert.ok(progress.length > 0 && progress.every((p) => p.params.total === undefined), "the pushes carried no total");
      await page.screenshot({ path: path.join(outputDir, "43-chat-progress-spinner.png"), fullPage: true });
      await page.locator("#chat-stop").click();
      await page.locator(".chat-error", { hasText: "Stopped." }).waitFor({ timeout: 30_000 });
      assert.equal(await page.locator(".tool-running").count(), 0, "no call runs any more");
      assert.deepEqual(errors, []);
    } finally {
      await chat.close();
    }
  });
  test("SRV-5: a task tool's status message shows on the running call; Stop sends tasks/cancel", async () => {
    const chat = await openChat([{ call: "mcp__work__task", arguments: { hold: true } }, { say: "after the stop" }], (sandbox) => ({
      work: { command: testServerBin, args: ["--tools", "task", "--event-log", path.join(sandbox.root, "task-events.log")] },
    }));
    const { page, errors, relay, sandbox } = chat;
    const events = path.join(sandbox.root, "task-events.log");
    try {
      await page.locator("#chat-input").fill("run the task");
      await page.locator("#chat-send").click();
      const text = page.locator(".tool-running .tool-progress-text");
      await until(async () => ((await text.textContent().catch(() => "")) ?? "") === "holding", "the task's status message", 60_000);
      assert.equal(await page.locator(".tool-running progress").count(), 0, "no bar: a task's status has no total");
      const progress = relay.pushes.filter((p) => p.method === "wave/session/progress");
      assert.ok(progress.some((p) => p.params.message === "holding" && p.params.total === undefined), "the status as progress");
      await page.screenshot({ path: path.join(outputDir, "44-chat-task-status.png"), fullPage: true });
      await page.locator("#chat-stop").click();
      await page.locator(".chat-error", { hasText: "Stopped." }).waitFor({ timeout: 30_000 });
      await until(() => fs.existsSync(events) && fs.readFileSync(events, "utf8").includes("task-cancel"), "the server got tasks/cancel");
      assert.deepEqual(errors, []);
    } finally {
      await chat.close();
    }
  });
});
