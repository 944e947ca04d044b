// Stop tears an MCP App down (APPS-3), against the REAL sidecar and the official example server
// `@modelcontextprotocol/server-system-monitor` (from $WAVE_PEERS_DIR/apps, filled by
// scripts/install-peers.sh), whose app keeps polling its server's `poll-system-stats` through
// `wave/app/callTool` long after the model's call finished. A turn calls `get-system-info`
// twice: two live monitors under the calls. After the turn, the chat's Stop still shows (apps
// are live); a card's own Stop tears down just that app: `ui/resource-teardown` answered by the
// app, its iframe gone, `wave/app/closed`, the card saying it was stopped; and its calls stop
// while the other monitor's keep coming (the other app's polling is the clock: no wall-clock
// threshold). The chat's Stop tears down the rest. "Start again" brings one back from the stored
// call (the same result shown, nothing asked of the model); the reopened chat shows both
// monitors again from the history (APPS-5). And Stop while the turn runs (the call waits for
// its consent card) cancels the turn and tears down the app shown from the call's start.
// Screenshots 46-app-stop-*.png.

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

describe("Stop tears MCP Apps down (official system monitor)", { skip: !fs.existsSync(sysmonBin) && `no ${sysmonBin} (scripts/install-peers.sh)` }, () => {
  test("APPS-3, APPS-4, APPS-5: after the turn, a card's Stop tears down its monitor and its polling ends while the other polls on; the chat's Stop tears down the rest; Start again replays the stored call; the reopened chat shows both again", async () => {
    const sandbox = makeSandbox({ empty: true });
    writeProject(sandbox, { sysmon: { command: sysmonBin, args: ["--stdio"] } });
    fs.writeFileSync(path.join(sandbox.home, ".wave", "settings.json"), JSON.stringify({ permissions: { defaultMode: "allow" } }));
    // Two calls of the monitor's UI tool in one turn, then text.
    const model = await startFakeModel((request, n) => {
      if (n > 2) return { say: "The system's load is shown above." };
      const tool = (request.tools ?? []).map((t) => t.function.name).find((name) => name === "mcp__sysmon__get-system-info");
      return tool ? { call: tool, arguments: {} } : { say: "no get-system-info tool was offered" };
    });
    const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" }, init: { apps: true } });
    const { context, page, errors, relay } = await openChatPage(ui, sidecar, { width: 900, height: 1400 });
    const consoleLines = [];
    page.on("console", (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
    /** The app's `tools/call`s of the call `id` the page sent to the sidecar (counted on arrival). */
    const polls = (id) => relay.sidecarRequests.filter((e) => e.method === "wave/app/callTool" && e.params.toolCallId === id).length;
    const views = page.locator(".app-view[data-server=sysmon]");
    const stopButton = page.locator("#chat-stop");
    /**
     * The stopped app `stopped` calls nothing more: its count, read once its card says stopped
     * (the sync point: the page sent its last call before that), stays while the live app
     * `clock` polls `ticks` more times (bounded by the clock's polling, not by a duration).
     */
    const staysStopped = async (stopped, clock, ticks = 3) => {
      const frozen = polls(stopped);
      const start = polls(clock);
      await until(
        async () => {
          assert.equal(polls(stopped), frozen, `the stopped app ${stopped} called its server again`);
          return polls(clock) >= start + ticks;
        },
        `${ticks} more polls of the live monitor ${clock}`,
        60_000,
      );
      assert.equal(polls(stopped), frozen, `the stopped app ${stopped} called its server again`);
    };
    const frameSrc = (view) => view.locator("iframe.app-frame").getAttribute("src");
    try {
      await page.locator("#chat-input").fill("what is the system's load?");
      await page.locator("#chat-send").click();
      await until(async () => (await views.count()) === 2, "two system monitors under the two calls", 90_000);
      const [a, b] = [await views.nth(0).getAttribute("data-call"), await views.nth(1).getAttribute("data-call")];
      assert.notEqual(a, b);
      const viewA = page.locator(`.app-view[data-call="${a}"]`);
      const viewB = page.locator(`.app-view[data-call="${b}"]`);
      await until(async () => relay.pushes.some((p) => p.method === "wave/session/turnEnded"), "the turn is over", 90_000);
      await until(async () => polls(a) >= 2 && polls(b) >= 2, "both monitors poll their server after the turn", 90_000);
      await until(async () => (await textInFrames(page, "#info-hostname")).filter((h) => h === os.hostname()).length === 2, "both monitors show this machine", 60_000);
      // No turn runs, yet the chat's Stop shows: two apps are live.
      assert.equal(await stopButton.isVisible(), true, "Stop shows while an app is live");
      assert.equal(await stopButton.isDisabled(), false);
      await page.screenshot({ path: path.join(outputDir, "46-app-stop-live.png"), fullPage: true });
      const modelRequests = model.requests.length;

      // The card's own Stop: just that app goes.
      const urlA = await frameSrc(viewA);
      await viewA.locator(".app-stop").click();
      await until(async () => (await viewA.getAttribute("data-state")) === "stopped", "the first monitor is stopped", 30_000);
      assert.equal(await viewA.locator("iframe").count(), 0, "its iframe is removed");
      assert.equal(await viewA.getAttribute("data-teardown"), "answered", "the app answered ui/resource-teardown");
      assert.ok(
        relay.sidecarLog.some((e) => e.method === "wave/app/closed" && e.params.url === urlA),
        "the sidecar forgot the stopped app's sandbox URL",
      );
      assert.equal((await viewA.locator(".app-stopped").textContent()).includes("The app was stopped."), true);
      assert.equal(await viewA.locator(".app-start").isVisible(), true, "the stopped card offers Start again");
      assert.equal(await viewA.locator(".app-stop").isVisible(), false);
      assert.equal(await viewB.getAttribute("data-state"), "live", "the other monitor runs on");
      assert.equal(await stopButton.isVisible(), true, "Stop still shows: one app is live");
      await staysStopped(a, b);
      await page.screenshot({ path: path.join(outputDir, "46-app-stop-one.png"), fullPage: true });

      // The chat's Stop: every live app goes; the cards stay, stopped.
      const urlB = await frameSrc(viewB);
      await stopButton.click();
      await until(async () => (await viewB.getAttribute("data-state")) === "stopped", "the second monitor is stopped", 30_000);
      assert.equal(await page.locator(".app-view iframe").count(), 0, "no app frame is left in the chat");
      assert.equal(await viewB.getAttribute("data-teardown"), "answered", "the app answered ui/resource-teardown");
      assert.ok(relay.sidecarLog.some((e) => e.method === "wave/app/closed" && e.params.url === urlB));
      assert.equal(await views.count(), 2, "both cards stay in the log");
      await until(async () => !(await stopButton.isVisible()), "Stop hides: nothing runs");
      assert.equal(page.frames().filter((f) => f.url() === "about:srcdoc").length, 0, "no app frame runs");
      await page.screenshot({ path: path.join(outputDir, "46-app-stop-all.png"), fullPage: true });

      // Start again: the first monitor comes back from the stored call, polls again, and the
      // stopped second one still calls nothing (the restarted one is the clock now).
      const sendsBefore = relay.sidecarRequests.filter((e) => e.method === "wave/session/send").length;
      await viewA.locator(".app-start").click();
      await until(async () => (await viewA.getAttribute("data-state")) === "live", "the first monitor runs again", 30_000);
      assert.ok(((await frameSrc(viewA)) ?? "").startsWith("http://127.0.0.1:"), "framed from the sandbox origin again");
      await until(async () => (await textInFrames(page, "#info-hostname")).includes(os.hostname()), "the restarted monitor shows the stored result", 60_000);
      assert.equal(await stopButton.isVisible(), true, "Stop shows again: an app is live");
      await staysStopped(b, a);
      assert.equal(model.requests.length, modelRequests, "starting again asked the model nothing");
      assert.equal(relay.sidecarRequests.filter((e) => e.method === "wave/session/send").length, sendsBefore, "nothing was sent");
      await page.screenshot({ path: path.join(outputDir, "46-app-stop-started-again.png"), fullPage: true });

      // APPS-5: the reopened chat shows both monitors again, live, from the history.
      await page.reload();
      await page.waitForSelector("body[data-ready=true]");
      await until(async () => (await views.count()) === 2, "the reopened chat shows both monitors", 60_000);
      await until(
        async () => (await viewA.getAttribute("data-state")) === "live" && (await viewB.getAttribute("data-state")) === "live",
        "both monitors live again",
        60_000,
      );
      await until(async () => (await textInFrames(page, "#info-hostname")).filter((h) => h === os.hostname()).length === 2, "both reopened monitors show this machine", 60_000);
      assert.equal(model.requests.length, modelRequests, "reopening asked the model nothing");
      assert.deepEqual(errors, [], "no script errors in the page");
    } catch (e) {
      await page.screenshot({ path: path.join(outputDir, "46-app-stop-failed.png"), fullPage: true }).catch(() => undefined);
      console.log(`frames: ${page.frames().map((f) => f.url().slice(0, 120)).join(" | ")}`);
      console.log(`console:\n${consoleLines.join("\n")}`);
      console.log(`app requests: ${JSON.stringify(relay.sidecarLog.filter((e) => e.method.startsWith("wave/app/")).map((e) => [e.method, e.params.toolCallId, e.error ?? Object.keys(e.result ?? {})]))}`);
      throw e;
    } finally {
      await closeAll(context, sidecar, sandbox);
      await model.close();
    }
  });

  test("APPS-3, LONG-3: Stop while the turn runs (the monitor's call waits for its consent card) cancels the turn and tears down the app shown from the call's start", async () => {
    const sandbox = makeSandbox({ empty: true });
    writeProject(sandbox, { sysmon: { command: sysmonBin, args: ["--stdio"] } });
    // No settings: `defaultMode` is `ask`, so the call waits for the user, and the turn runs.
    const model = await startFakeModel((request, n) => {
      if (n > 1) return { say: "stopped" };
      const tool = (request.tools ?? []).map((t) => t.function.name).find((name) => name === "mcp__sysmon__get-system-info");
      return tool ? { call: tool, arguments: {} } : { say: "no get-system-info tool was offered" };
    });
    const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" }, init: { apps: true } });
    const { context, page, errors, relay } = await openChatPage(ui, sidecar, { width: 900, height: 1000 });
    try {
      await page.locator("#chat-input").fill("what is the system's load?");
      await page.locator("#chat-send").click();
      await page.locator('.consent-confirm[data-tool="mcp__sysmon__get-system-info"]').waitFor({ timeout: 60_000 });
      const view = page.locator(".app-view[data-server=sysmon]");
      await until(async () => (await view.getAttribute("data-state")) === "live", "the app is shown from the call's start", 60_000);
      const url = await view.locator("iframe.app-frame").getAttribute("src");
      await page.locator("#chat-stop").click();
      await until(
        async () => relay.pushes.some((p) => p.method === "wave/session/turnEnded" && p.params.cancelled),
        "the turn ends cancelled",
        30_000,
      );
      await until(async () => (await view.getAttribute("data-state")) === "stopped", "the app is stopped", 30_000);
      assert.equal(await page.locator(".app-view iframe").count(), 0, "no app frame is left");
      assert.ok(relay.sidecarLog.some((e) => e.method === "wave/app/closed" && e.params.url === url), "the sidecar forgot its sandbox URL");
      assert.equal(await page.locator(".consent-confirm").count(), 0, "the call's consent card closed with the turn");
      await until(async () => !(await page.locator("#chat-stop").isVisible()), "Stop hides: nothing runs");
      await page.screenshot({ path: path.join(outputDir, "46-app-stop-running-turn.png"), fullPage: true });
      assert.deepEqual(errors, [], "no script errors in the page");
    } finally {
      await closeAll(context, sidecar, sandbox);
      await model.close();
    }
  });
});
