// The host tears MCP Apps down before it destroys the session or the page (APPS-3), against the
// REAL sidecar and the official example server `@modelcontextprotocol/server-system-monitor`
// (from $WAVE_PEERS_DIR/apps, filled by scripts/install-peers.sh). A turn calls
// `get-system-info` twice: two live monitors. The host's `host/teardownApps` (a push with an
// id, as the VS Code extension and the JetBrains plugin send it before a sidecar restart or
// before the chat goes) reaches the page: every live app answers `ui/resource-teardown`, the
// frames go, the sidecar gets `wave/app/closed` for each, and the page's `host/answer` says
// `{total: 2, answered: 2}` only after all that. And an app's own
// `ui/notifications/request-teardown` (posted from inside the app's frame, as the app SDK does)
// tears down that app only: the other keeps polling its server.
// Screenshots 47-app-teardown-*.png.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";
import { closeAll, makeSandbox, openChatPage, outputDir, startFakeModel, startSidecar, until, useBrowser, writeProject } from "./support.mjs";

const peers = process.env.WAVE_PEERS_DIR ?? path.join(os.homedir(), ".cache", "wave-mcp-peers");
const sysmonBin = path.join(peers, "apps", "node_modules", ".bin", "mcp-system-monitor-server");

/** The texts of the first element matching `selector` in each frame of the page that has one. */
async function textInFrames(page, selector) {
  const texts = [];
  for (const f of page.frames()) {
    if (f.isDetached()) continue;
    const text = await f.locator(selector).first().textContent({ timeout: 200 }).catch(() => null);
    if (text) texts.push(text.trim());
  }
  return texts;
}

const ui = useBrowser();

/** A chat with two live system monitors after one turn; `run(ctx)` does the rest. */
async function withTwoMonitors(name, run) {
  const sandbox = makeSandbox({ empty: true });
  writeProject(sandbox, { sysmon: { command: sysmonBin, args: ["--stdio"] } });
  fs.writeFileSync(path.join(sandbox.home, ".wave", "settings.json"), JSON.stringify({ permissions: { defaultMode: "allow" } }));
  const model = await startFakeModel((request, n) => {
    if (n > 2) return { say: "The system's load is shown above." };
    const tool = (request.tools ?? []).map((t) => t.function.name).find((t) => t === "mcp__sysmon__get-system-info");
    return tool ? { call: tool, arguments: {} } : { say: "no get-system-info tool was offered" };
  });
  const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" }, init: { apps: true } });
  const { context, page, errors, relay } = await openChatPage(ui, sidecar, { width: 900, height: 1400 });
  const consoleLines = [];
  page.on("console", (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  const polls = (id) => relay.sidecarRequests.filter((e) => e.method === "wave/app/callTool" && e.params.toolCallId === id).length;
  const views = page.locator(".app-view[data-server=sysmon]");
  try {
    await page.locator("#chat-input").fill("what is the system's load?");
    await page.locator("#chat-send").click();
    await until(async () => (await views.count()) === 2, "two system monitors under the two calls", 90_000);
    const ids = [await views.nth(0).getAttribute("data-call"), await views.nth(1).getAttribute("data-call")];
    await until(async () => relay.pushes.some((p) => p.method === "wave/session/turnEnded"), "the turn is over", 90_000);
    await until(async () => polls(ids[0]) >= 2 && polls(ids[1]) >= 2, "both monitors poll their server", 90_000);
    await until(async () => (await textInFrames(page, "#info-hostname")).filter((h) => h === os.hostname()).length === 2, "both monitors show this machine", 60_000);
    await run({ page, relay, ids, polls, view: (id) => page.locator(`.app-view[data-call="${id}"]`) });
    assert.deepEqual(errors, [], "no script errors in the page");
  } catch (e) {
    await page.screenshot({ path: path.join(outputDir, `47-app-teardown-${name}-failed.png`), fullPage: true }).catch(() => undefined);
    console.log(`frames: ${page.frames().map((f) => f.url().slice(0, 120)).join(" | ")}`);
    console.log(`console:\n${consoleLines.join("\n")}`);
    throw e;
  } finally {
    await closeAll(context, sidecar, sandbox);
    await model.close();
  }
}

describe("the host tears MCP Apps down (official system monitor)", { skip: !fs.existsSync(sysmonBin) && `no ${sysmonBin} (scripts/install-peers.sh)` }, () => {
  test("APPS-3: the host's host/teardownApps: every live app answers ui/resource-teardown, its frame goes, wave/app/closed reaches the sidecar, then the page answers with the counts", async () => {
    await withTwoMonitors("host", async ({ page, relay, ids, view }) => {
      const urls = [];
      for (const id of ids) urls.push(await view(id).locator("iframe.app-frame").getAttribute("src"));
      // As the hosts send it (a push with an id); resolves with the page's host/answer.
      const answer = await relay.ask("host/teardownApps", { reason: "the sidecar restarted" });
      assert.deepEqual(answer, { total: 2, answered: 2 }, "both apps answered their teardown");
      // Everything was done before the page answered (no wait here).
      for (const id of ids) {
        assert.equal(await view(id).getAttribute("data-state"), "stopped");
        assert.equal(await view(id).getAttribute("data-teardown"), "answered", "the app answered ui/resource-teardown");
      }
      assert.equal(await page.locator(".app-view iframe").count(), 0, "no app frame is left in the chat");
      assert.equal(page.frames().filter((f) => f.url() === "about:srcdoc").length, 0, "no app frame runs");
      for (const url of urls) assert.ok(relay.sidecarLog.some((e) => e.method === "wave/app/closed" && e.params.url === url), `wave/app/closed for ${url}`);
      assert.equal(await page.locator(".app-view").count(), 2, "both cards stay in the log, stopped");
      await page.screenshot({ path: path.join(outputDir, "47-app-teardown-host.png"), fullPage: true });
      // Nothing live any more: a second request is answered at once with nothing torn down.
      assert.deepEqual(await relay.ask("host/teardownApps", { reason: "again" }), { total: 0, answered: 0 });
    });
  });

  test("APPS-3: an app's ui/notifications/request-teardown tears that app down (after ui/resource-teardown); the other keeps polling", async () => {
    await withTwoMonitors("request", async ({ page, relay, ids, polls, view }) => {
      const [a, b] = ids;
      const urlA = await view(a).locator("iframe.app-frame").getAttribute("src");
      // The app's own frame (inside the sandbox proxy) asks, as the app SDK's requestTeardown does.
      const outer = await (await view(a).locator("iframe.app-frame").elementHandle()).contentFrame();
      const app = outer.childFrames()[0];
      assert.ok(app, "the app's frame inside the proxy");
      await app.evaluate(() => window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/request-teardown", params: {} }, "*"));
      await until(async () => (await view(a).getAttribute("data-state")) === "stopped", "the app that asked is torn down", 30_000);
      assert.equal(await view(a).getAttribute("data-teardown"), "answered", "it answered ui/resource-teardown first");
      assert.equal(await view(a).locator("iframe").count(), 0, "its frame is gone");
      assert.ok(relay.sidecarLog.some((e) => e.method === "wave/app/closed" && e.params.url === urlA));
      assert.equal(await view(b).getAttribute("data-state"), "live", "the other app runs on");
      // The other app's polling is the clock: the stopped one calls nothing more meanwhile.
      const frozen = polls(a);
      const start = polls(b);
      await until(
        async () => {
          assert.equal(polls(a), frozen, "the app that asked to close called its server again");
          return polls(b) >= start + 3;
        },
        "3 more polls of the live monitor",
        60_000,
      );
      assert.equal(await page.locator("#chat-stop").isVisible(), true, "the chat's Stop shows: one app is live");
      await page.screenshot({ path: path.join(outputDir, "47-app-teardown-request.png"), fullPage: true });
    });
  });
});
