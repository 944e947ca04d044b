// END TO END in a real VS Code (code-server), APPS-2: an MCP App inline in the chat view. The
// workspace's `.mcp.json` has the official example server `@modelcontextprotocol/server-basic-vanillajs`
// (from $WAVE_PEERS_DIR/apps, filled by scripts/install-peers.sh); a turn of the fake model calls
// its UI tool `get-time`, and the app appears under the call in the chat webview: VS Code's
// webview frames the sidecar's sandbox proxy (its own loopback origin), whose inner iframe runs
// the app, which shows the tool's time. Screenshot: target/test-output/vscode-e2e/apps-inline.png.

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

const basicServer = path.join(peersDir, "apps", "node_modules", ".bin", "mcp-server-basic-vanillajs");
const skip = !fs.existsSync(basicServer) && `no ${basicServer} (scripts/install-peers.sh)`;

// The calls are not about consent here (TRUST-5 has its own tests): the user allows every tool.
const sb = makeSandbox({ approved: false, permissions: { defaultMode: "allow" } });
let model;
let server;
let browser;
let page;
const pageErrors = [];

before(async () => {
  if (skip) return;
  fs.mkdirSync(outputDir, { recursive: true });
  fs.writeFileSync(path.join(sb.workspace, ".mcp.json"), configText({ basic: { command: basicServer, args: ["--stdio"] } }));
  approveProject(sb.home, sb.workspace);
  // The first request: the basic server's get-time when it is offered; after its result, text.
  model = await startFakeModel((request, n) => {
    if (n > 1) return { say: "The time is shown above." };
    const tool = (request.tools ?? []).map((t) => t.function?.name).find((name) => name === "mcp__basic__get-time");
    return tool ? { call: tool, arguments: {}, content: "Let me look at the clock." } : { say: "no get-time tool was offered" };
  });
  writeUserSettings(sb, { "wave.model.baseUrl": model.baseUrl, "wave.model.name": "fake-model" });
  installExtension(sb);
  ({ server, browser, page } = await openWorkbench(sb, { pageErrors }));
});

afterEach((t) => explainFailure(t, sb, page));
after(() => (skip ? fs.rmSync(sb.root, { recursive: true, force: true }) : closeWorkbench(sb, { browser, server, model })));

describe("MCP Apps inline in the chat of a real VS Code (code-server)", { skip }, () => {
  test("APPS-2: a turn calling get-time shows the basic app inline under the call, on the sidecar's sandbox origin, with the server's time", async () => {
    await runCommand(page, "Wave: Open Chat");
    const chat = await webviewFrame(page, "chat", 60_000);
    await chat.locator("#chat-input").fill("what time is it?");
    await chat.locator("#chat-send").click();
    const view = chat.locator(".app-view[data-server=basic]");
    await view.waitFor({ timeout: 90_000 });
    assert.equal(await view.getAttribute("data-resource"), "ui://get-time/mcp-app.html");
    const frame = view.locator("iframe.app-frame");
    await until(async () => ((await frame.getAttribute("src")) ?? "").startsWith("http://127.0.0.1:"), "the proxy page is framed", 60_000);
    const proxyOrigin = new URL(await frame.getAttribute("src")).origin;
    assert.notEqual(proxyOrigin, new URL(page.url()).origin, "the app's origin is not code-server's");

    // The app runs in the proxy's inner iframe; its #server-time shows the tool's result.
    let shown = "";
    await until(
      async () => {
        for (const f of page.frames()) {
          if (f.isDetached()) continue;
          const text = await f.locator("#server-time").textContent({ timeout: 200 }).catch(() => null);
          if (text && text !== "Loading...") shown = text;
        }
        return /^\d{4}-\d{2}-\d{2}T/.test(shown);
      },
      "the app shows the server's time",
      90_000,
    );
    const appFrame = page.frames().find((f) => f.parentFrame()?.url().startsWith(proxyOrigin));
    assert.ok(appFrame, "the app runs inside the proxy page's iframe");
    await view.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(outputDir, "apps-inline.png") });
    assert.deepEqual(pageErrors, [], "no script errors in the workbench");
    console.log(`app shows: ${shown}`);
  });
});
