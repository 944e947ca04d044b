// END TO END in a real VS Code (code-server), issue 28's "done when": the workspace's `.mcp.json`
// has the official example server `@modelcontextprotocol/server-system-monitor` (from
// $WAVE_PEERS_DIR/apps, filled by scripts/install-peers.sh); the user asks for the system's
// load, the fake model calls its UI tool `get-system-info`, and the live monitor appears under
// the call in the chat webview, framed from the sidecar's sandbox origin (APPS-2), polling its
// server on its own after the turn. Stop tears it down (APPS-3): the app answers
// `ui/resource-teardown`, its frames go, the card stays saying it was stopped; Start again brings
// it back from the stored call. Screenshots in target/test-output/vscode-e2e:
// apps-system-monitor.png, apps-system-monitor-stopped.png.
// (That the stopped app's polling ends at the sidecar is proven in the Chromium layer,
// test/chromium/appStop.test.mjs, which counts its `wave/app/callTool`s.)

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import {
  approveProject,
  closeWorkbench,
  configText,
  explainFailure,
  installExtension,
  makeSandbox,
  openWorkbench,
  outputDir,
  peersDir,
  runCommand,
  startFakeModel,
  until,
  webviewFrame,
  writeUserSettings,
} from "./support.mjs";

const sysmonServer = path.join(peersDir, "apps", "node_modules", ".bin", "mcp-system-monitor-server");
const skip = !fs.existsSync(sysmonServer) && `no ${sysmonServer} (scripts/install-peers.sh)`;

// The calls are not about consent here (TRUST-5 has its own tests): the user allows every tool,
// the model's and the app's polling alike.
const sb = makeSandbox({ approved: false, permissions: { defaultMode: "allow" } });
let model;
let server;
let browser;
let page;
const pageErrors = [];

before(async () => {
  if (skip) return;
  fs.mkdirSync(outputDir, { recursive: true });
  fs.writeFileSync(path.join(sb.workspace, ".mcp.json"), configText({ "system-monitor": { command: sysmonServer, args: ["--stdio"] } }));
  approveProject(sb.home, sb.workspace);
  // The first request: the monitor's get-system-info when it is offered; after its result, text.
  model = await startFakeModel((request, n) => {
    if (n > 1) return { say: "The system's load is shown above, live." };
    const tool = (request.tools ?? []).map((t) => t.function?.name).find((name) => name === "mcp__system-monitor__get-system-info");
    return tool ? { call: tool, arguments: {}, content: "Let me look at the system monitor." } : { say: "no get-system-info tool was offered" };
  });
  writeUserSettings(sb, { "wave.model.baseUrl": model.baseUrl, "wave.model.name": "fake-model" });
  installExtension(sb);
  ({ server, browser, page } = await openWorkbench(sb, { pageErrors }));
});

afterEach((t) => explainFailure(t, sb, page));
after(() => (skip ? fs.rmSync(sb.root, { recursive: true, force: true }) : closeWorkbench(sb, { browser, server, model })));

/** The texts of `selector` in every live frame of the workbench (the app runs two frames deep). */
async function textsInFrames(selector) {
  const texts = [];
  for (const f of page.frames()) {
    if (f.isDetached()) continue;
    const text = await f.locator(selector).first().textContent({ timeout: 200 }).catch(() => null);
    if (text) texts.push(text.trim());
  }
  return texts;
}

describe("The live system monitor in the chat of a real VS Code (code-server), and Stop", { skip }, () => {
  test("APPS-2, APPS-3: asked for the system's load, the live monitor appears inline under the call; after the turn Stop tears it down and Start again brings it back", async () => {
    await runCommand(page, "Wave: Open Chat");
    const chat = await webviewFrame(page, "chat", 60_000);
    await chat.locator("#chat-input").fill("What is the system's load?");
    await chat.locator("#chat-send").click();
    const view = chat.locator(".app-view[data-server=system-monitor]");
    await view.waitFor({ timeout: 90_000 });
    assert.equal(await view.getAttribute("data-resource"), "ui://system-monitor/mcp-app.html");
    const frame = view.locator("iframe.app-frame");
    await until(async () => ((await frame.getAttribute("src")) ?? "").startsWith("http://127.0.0.1:"), "the proxy page is framed", 60_000);
    const proxyOrigin = new URL(await frame.getAttribute("src")).origin;
    assert.notEqual(proxyOrigin, new URL(page.url()).origin, "the app's origin is not code-server's");
    const appFrames = () => page.frames().filter((f) => !f.isDetached() && f.parentFrame()?.url().startsWith(proxyOrigin));

    // The monitor shows this machine (the tool's result) and its memory (its own polling).
    await until(async () => (await textsInFrames("#info-hostname")).includes(os.hostname()), "the monitor shows this machine's hostname", 90_000);
    await until(async () => (await textsInFrames("#memory-percent")).some((t) => /^\d+%$/.test(t)), "the monitor shows the memory it polled", 90_000);
    assert.equal(appFrames().length, 1, "the app runs inside the proxy page's iframe");
    // The turn is over; the app lives on, so the chat's Stop shows.
    await chat.locator(".msg-assistant", { hasText: "shown above, live" }).waitFor({ timeout: 60_000 });
    const stop = chat.locator("#chat-stop");
    assert.equal(await stop.isVisible(), true, "Stop shows while the app is live");
    // Live: the monitor polls its server on its own after the turn; each poll stamps its time.
    const polled = new Set();
    await until(
      async () => {
        for (const text of await textsInFrames("#status-text")) if (/\d+:\d+:\d+/.test(text)) polled.add(text);
        return polled.size >= 3;
      },
      "three polls of the live monitor after the turn",
      90_000,
    );
    await view.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(outputDir, "apps-system-monitor.png") });

    // Stop: the app hears ui/resource-teardown and goes; the card stays, stopped.
    await stop.click();
    await until(async () => (await view.getAttribute("data-state")) === "stopped", "the monitor is stopped", 30_000);
    assert.equal(await view.getAttribute("data-teardown"), "answered", "the app answered ui/resource-teardown");
    assert.equal(await chat.locator(".app-view iframe").count(), 0, "no app frame is left in the chat");
    await until(() => appFrames().length === 0, "the app's frames are gone");
    assert.equal((await view.locator(".app-stopped").textContent()).includes("The app was stopped."), true);
    await until(async () => !(await stop.isVisible()), "Stop hides: nothing runs");
    await view.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(outputDir, "apps-system-monitor-stopped.png") });

    // Start again: the same resource and result, no new call of the model.
    const requests = model.requests.length;
    await view.locator(".app-start").click();
    await until(async () => (await view.getAttribute("data-state")) === "live", "the monitor runs again", 30_000);
    await until(async () => (await textsInFrames("#info-hostname")).includes(os.hostname()), "the restarted monitor shows this machine", 90_000);
    assert.equal(model.requests.length, requests, "starting again asked the model nothing");
    assert.equal(await stop.isVisible(), true, "Stop shows again");
    assert.deepEqual(pageErrors, [], "no script errors in the workbench");
  });
});
