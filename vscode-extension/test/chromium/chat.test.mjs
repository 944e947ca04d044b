// The shared chat page in headless Chromium against the REAL sidecar (`wave-mcp lsp`) and a
// fake OpenAI-compatible model, through the JCEF adapter as the JetBrains plugin drives it. The
// page keeps no transcript: a reloaded page shows the whole conversation from the sidecar.

import assert from "node:assert/strict";
import * as path from "node:path";
import { describe, test } from "node:test";
import {
  makeSandbox,
  openChatPage,
  outputDir,
  startSidecar,
  closeAll,
  until,
  useBrowser,
  useEchoModel,
} from "./support.mjs";

const ui = useBrowser();
const echo = useEchoModel();

describe("chat page against the real sidecar (JCEF bridge)", () => {
  test("CHAT-1: messages come from the sidecar (the user's own first); a reloaded page shows the whole conversation", async () => {
    const sandbox = makeSandbox({ empty: true });
    const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: echo.model.baseUrl, WAVE_MODEL: "fake" } });
    const { context, page, errors, relay } = await openChatPage(ui, sidecar);
    try {
      for (const text of ["first question", "second question"]) {
        await page.locator("#chat-input").fill(text);
        await page.locator("#chat-send").click();
        await page.locator(".msg-assistant", { hasText: `reply to ${text}` }).waitFor({ timeout: 30_000 });
      }
      const shown = () => page.locator(".msg").evaluateAll((els) => els.map((e) => [e.dataset.role, e.querySelector(".msg-text")?.textContent]));
      const expected = [
        ["user", "first question"],
        ["assistant", "reply to first question"],
        ["user", "second question"],
        ["assistant", "reply to second question"],
      ];
      assert.deepEqual(await shown(), expected);
      // Every user message on the page is the sidecar's (CHAT-1): it was pushed, not echoed.
      const pushedUsers = relay.pushes.filter((p) => p.method === "wave/session/message" && p.params.message.role === "user");
      assert.deepEqual(
        pushedUsers.map((p) => [p.params.turn, p.params.message.content]),
        [
          [1, "first question"],
          [2, "second question"],
        ],
      );

      // The page is reloaded (as a hidden and shown view is): it asks the sidecar for the history.
      await page.evaluate(() => (window.__marker = "old page"));
      await page.reload();
      await page.waitForSelector("body[data-ready=true]");
      assert.equal(await page.evaluate(() => window.__marker), undefined, "a new page");
      await until(async () => (await page.locator(".msg").count()) === 4, "the conversation after the reload");
      assert.deepEqual(await shown(), expected);
      assert.ok(relay.sidecarLog.filter((e) => e.method === "wave/session/history").length >= 2, "each page load asked for the history");
      assert.ok(relay.hostLog.some((e) => e.method === "host/chatOpened"));
      await page.screenshot({ path: path.join(outputDir, "20-chat-reloaded.png"), fullPage: true });
      assert.deepEqual(errors, [], "no script or CSP errors in the page");
    } finally {
      await closeAll(context, sidecar, sandbox);
    }
  });

  test("CHAT-1: a message the sidecar refuses (no model: chatUnavailable) is not shown as sent; its text goes back to the input", async () => {
    const sandbox = makeSandbox({ empty: true });
    const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: "", WAVE_MODEL: "" } });
    const { context, page, relay } = await openChatPage(ui, sidecar);
    try {
      await page.locator("#chat-input").fill("hello?");
      await page.locator("#chat-send").click();
      await page.locator(".chat-error").waitFor({ timeout: 20_000 });
      assert.equal(await page.locator(".msg").count(), 0, "nothing was added to the conversation");
      assert.equal(await page.locator("#chat-input").inputValue(), "hello?");
      const refused = relay.sidecarLog.find((e) => e.method === "wave/session/send");
      assert.equal(refused?.error?.data?.kind, "chatUnavailable");
      assert.ok(relay.hostLog.some((e) => e.method === "host/notify" && e.params.level === "error"), "the host is told (UI-12)");
    } finally {
      await closeAll(context, sidecar, sandbox);
    }
  });
});
