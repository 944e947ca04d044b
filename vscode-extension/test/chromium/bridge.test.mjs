// TRUST-8: the page believes only its own host. The chat page runs as a VS Code webview does: in
// an iframe whose parent frame is its host (the test page plays VS Code's webview host frame,
// relaying with `postMessage(message, window.origin)` as VS Code's pre/index.html does, and the
// page gets `acquireVsCodeApi`), against the REAL sidecar. Other frames (a sibling iframe of the
// same origin, one of another origin) and the page's own window post forged pushes, a forged
// `wave/session/approveServers` question, a forged answer and a forged `turnEnded` to it: none of
// them has any effect, while the host's own messages do.

import assert from "node:assert/strict";
import * as path from "node:path";
import { describe, test } from "node:test";
import {
  attachRelay,
  makeSandbox,
  outputDir,
  serverPids,
  startFakeModel,
  startSidecar,
  testServerBin,
  closeAll,
  until,
  useBrowser,
  writeProject,
} from "./support.mjs";
import { pidAlive } from "../processes.mjs";

const ui = useBrowser();

/**
 * The webview host frame: the page in `<iframe name="webview">`; requests the page posts to its
 * parent go to the JCEF-style relay (`waveHostQuery`, attachRelay), answers and pushes go back
 * into the frame with `postMessage(message, origin)`.
 */
const HOST_HTML = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>VS Code webview host</title></head>
<body style="margin:0">
<iframe name="webview" src="/index.html?page=chat&lang=en" style="width:760px;height:720px;border:0"></iframe>
<iframe name="intruder" src="/intruder.html" style="width:10px;height:10px;border:0"></iframe>
<iframe name="stranger" src="http://stranger.test/intruder.html" style="width:10px;height:10px;border:0"></iframe>
<script>
  const frame = document.querySelector('iframe[name=webview]');
  const toFrame = (message) => frame.contentWindow.postMessage(message, location.origin);
  window.addEventListener('message', async (event) => {
    if (event.source !== frame.contentWindow || !event.data || !event.data.fromWebview) return;
    const msg = event.data.fromWebview;
    if (msg.kind !== 'request') return;
    const answer = JSON.parse(await window.waveHostQuery(JSON.stringify({ method: msg.method, params: msg.params })));
    toFrame({ kind: 'response', id: msg.id, result: answer.result, error: answer.error });
  });
  // The relay's pushes (JCEF shape) become VS Code pushes into the frame.
  window.waveReceive = (json) => {
    const p = JSON.parse(json);
    toFrame(p.id === undefined ? { kind: 'push', method: p.method, params: p.params } : { kind: 'push', method: p.method, params: p.params, id: p.id });
  };
</script>
</body></html>`;

const INTRUDER_HTML = `<!DOCTYPE html><html><body>intruder</body></html>`;

/**
 * In the page's frame, as VS Code's webview script does: `acquireVsCodeApi` posts to the host
 * frame, and `window.parent` / `window.top` become the page itself (frameElement null).
 */
function webviewApi() {
  if (window.name === "webview") {
    const host = window.parent;
    window.acquireVsCodeApi = () => ({ postMessage: (m) => host.postMessage({ fromWebview: m }, window.origin) });
    window.parent = window;
    window.top = window;
    window.frameElement = null;
  }
}

describe("TRUST-8: the VS Code bridge takes messages only from its host frame", () => {
  test("TRUST-8: forged pushes, questions, answers and turn ends from other frames and the page itself are ignored; the host's own arrive", async () => {
    const sandbox = makeSandbox({ empty: true });
    const pids = path.join(sandbox.root, "db.pid");
    writeProject(sandbox, { db: { command: testServerBin, args: ["--name", "db", "--pid-file", pids] } }, { approved: false });
    const model = await startFakeModel(() => ({ say: "hello through the real host" }));
    const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" } });
    const context = await ui.browser.newContext({ viewport: { width: 800, height: 760 } });
    const origin = new URL(ui.web.url).origin;
    await context.route(`${origin}/vscode-host.html`, (r) => r.fulfill({ contentType: "text/html", body: HOST_HTML }));
    await context.route(`${origin}/intruder.html`, (r) => r.fulfill({ contentType: "text/html", body: INTRUDER_HTML }));
    await context.route("http://stranger.test/intruder.html", (r) => r.fulfill({ contentType: "text/html", body: INTRUDER_HTML }));
    await context.addInitScript(webviewApi);
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    const relay = await attachRelay(page, sidecar);
    try {
      await page.goto(`${origin}/vscode-host.html`);
      const webview = page.frame({ name: "webview" });
      await webview.waitForSelector("body[data-ready=true]");
      assert.equal(await webview.locator("body").getAttribute("data-bridge"), "vscode");
      const intruder = page.frame({ name: "intruder" });
      const stranger = page.frame({ name: "stranger" });
      assert.equal(new URL(stranger.url()).origin, "http://stranger.test");

      const forged = [
        { kind: "push", method: "host/prefill", params: { text: "forged prefill" } },
        {
          kind: "push",
          method: "wave/session/message",
          params: { sessionId: "default", turn: 9, index: 0, message: { role: "assistant", content: "forged message", toolCalls: [] } },
        },
        {
          kind: "push",
          method: "wave/session/approveServers",
          id: 4242,
          params: {
            sessionId: "default",
            servers: [{ name: "evil", configPath: "/x/.mcp.json", transport: "stdio", command: "evil", args: [], envKeys: [], variables: [], changed: false }],
          },
        },
      ];
      const postFrom = async (frame, message, target) =>
        frame.evaluate(
          ([m, t]) => {
            const w = t === "self" ? window : window.parent.frames["webview"];
            if (!w || w === window && t !== "self") throw new Error("no webview frame to post to");
            w.postMessage(m, "*");
          },
          [message, target],
        );
      for (const message of forged) {
        await postFrom(intruder, message, "webview"); // a sibling frame of the same origin
        await postFrom(stranger, message, "webview"); // a frame of another origin
        await postFrom(webview, message, "self"); // the page's own window
      }
      await page.waitForTimeout(300);
      assert.equal(await webview.locator("#chat-input").inputValue(), "", "no forged prefill");
      assert.equal(await webview.locator("#chat-log").textContent().then((t) => t.includes("forged")), false, "no forged message");
      assert.equal(await webview.locator(".consent").count(), 0, "no forged question");
      assert.deepEqual(relay.hostLog.filter((e) => e.method === "host/answer"), [], "nothing answered a forged question");

      // The real question, through the host frame.
      await webview.locator("#chat-input").fill("hi");
      await webview.locator("#chat-send").click();
      const card = webview.locator(".consent-approve");
      await card.waitFor();
      assert.deepEqual(await card.locator(".approve-server").evaluateAll((els) => els.map((e) => e.dataset.server)), ["db"]);
      // Forged: the turn ended (would close the card), and answers to the page's requests.
      const turnEnded = { kind: "push", method: "wave/session/turnEnded", params: { sessionId: "default", turn: 1, cancelled: true } };
      const answer = { kind: "response", id: 1, result: { prefill: "forged answer" } };
      for (const message of [turnEnded, answer]) {
        await postFrom(intruder, message, "webview");
        await postFrom(stranger, message, "webview");
        await postFrom(webview, message, "self");
      }
      await page.waitForTimeout(300);
      assert.equal(await card.count(), 1, "the card is still open");
      assert.equal(await webview.locator(".chat-error").count(), 0, "no forged Stopped.");
      assert.equal(await webview.locator("#chat-input").inputValue(), "");
      await page.screenshot({ path: path.join(outputDir, "trust-09-vscode-bridge-frames.png") });

      await card.locator("button[data-answer=approve]").click();
      await webview.locator('[data-role="assistant"]', { hasText: "hello through the real host" }).waitFor();
      assert.deepEqual(
        relay.hostLog.filter((e) => e.method === "host/answer").map((e) => e.params.result),
        [{ approved: ["db"] }],
      );
      const [pid] = serverPids(sandbox, "db");
      assert.ok(pid && pidAlive(pid), "the approved server runs");

      // The host's own push is taken (the same prefill the intruders sent).
      await page.evaluate(() => window.waveReceive(JSON.stringify({ method: "host/prefill", params: { text: "from the host" } })));
      await until(async () => (await webview.locator("#chat-input").inputValue()) === "from the host", "the host's prefill");
      assert.deepEqual(errors, []);
    } finally {
      await closeAll(context, sidecar, model, sandbox);
    }
  });
});
