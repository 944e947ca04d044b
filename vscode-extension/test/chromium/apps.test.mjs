// MCP Apps in the chat page (APPS-2, APPS-3) against the REAL sidecar and the official example
// server `@modelcontextprotocol/server-basic-vanillajs` (from $WAVE_PEERS_DIR/apps, filled by
// scripts/install-peers.sh): a turn calls its UI tool `get-time`; the app appears under the
// call, framed from the sidecar's sandbox origin (not the page's), and shows the tool's result
// inside the nested iframe.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";
import { closeAll, makeSandbox, openChatPage, outputDir, startFakeModel, startSidecar, until, useBrowser, writeProject } from "./support.mjs";

const peers = process.env.WAVE_PEERS_DIR ?? path.join(os.homedir(), ".cache", "wave-mcp-peers");
const basicServer = path.join(peers, "apps", "node_modules", ".bin", "mcp-server-basic-vanillajs");

const ui = useBrowser();

describe("MCP Apps in the chat page (official example server)", { skip: !fs.existsSync(basicServer) && `no ${basicServer} (scripts/install-peers.sh)` }, () => {
  test("APPS-2, APPS-3: a turn calling get-time shows the basic app under the call, on the sandbox origin, with the tool's result", async () => {
    const sandbox = makeSandbox({ empty: true });
    writeProject(sandbox, { basic: { command: basicServer, args: ["--stdio"] } });
    fs.writeFileSync(path.join(sandbox.home, ".wave", "settings.json"), JSON.stringify({ permissions: { defaultMode: "allow" } }));
    const model = await startFakeModel((request, n) => {
      if (n > 1) return { say: "the time is shown above" };
      const tool = (request.tools ?? []).map((t) => t.function.name).find((name) => name.endsWith("get-time"));
      return tool ? { call: tool, arguments: {} } : { say: "no get-time tool was offered" };
    });
    const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" }, init: { apps: true } });
    const { context, page, errors, relay } = await openChatPage(ui, sidecar, { width: 900, height: 900 });
    const consoleLines = [];
    page.on("console", (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
    try {
      await page.locator("#chat-input").fill("what time is it?");
      await page.locator("#chat-send").click();
      const view = page.locator(".app-view[data-server=basic]");
      await view.waitFor({ timeout: 60_000 });
      assert.equal(await view.getAttribute("data-resource"), "ui://get-time/mcp-app.html");
      const frame = view.locator("iframe.app-frame");
      await until(async () => ((await frame.getAttribute("src")) ?? "").startsWith("http://127.0.0.1:"), "the proxy page is framed", 60_000);
      const src = new URL(await frame.getAttribute("src"));
      assert.notEqual(src.origin, new URL(page.url()).origin, "the app's origin is not the page's");

      // The app itself runs in the proxy's inner iframe; its #server-time shows the result.
      let shown = "";
      await until(
        async () => {
          for (const f of page.frames()) {
            const text = await f.locator("#server-time").textContent({ timeout: 200 }).catch(() => null);
            if (text) shown = text;
          }
          return shown !== "" && shown !== "Loading...";
        },
        "the app shows the server's time",
        60_000,
      );
      const toolMessage = relay.pushes.find((p) => p.method === "wave/session/message" && p.params.message.role === "tool");
      assert.ok(toolMessage?.params.message.app?.result, "the tool message carries the full result (APPS-5)");
      const appFrame = page.frames().find((f) => f.parentFrame()?.url().startsWith(src.origin));
      assert.ok(appFrame, "the app runs inside the proxy page's iframe");
      await page.screenshot({ path: path.join(outputDir, "40-app-basic-get-time.png"), fullPage: true });
      assert.ok(
        relay.sidecarLog.some((e) => e.method === "wave/app/resource" && e.result?.sandboxUrl),
        "the page asked the sidecar for the app",
      );
      assert.deepEqual(errors, [], "no script errors in the page");
      console.log(`app shows: ${shown}`);
    } catch (e) {
      await page.screenshot({ path: path.join(outputDir, "40-app-basic-get-time-failed.png"), fullPage: true }).catch(() => undefined);
      console.log(`frames: ${page.frames().map((f) => f.url()).join(" | ")}`);
      console.log(`console:\n${consoleLines.join("\n")}`);
      console.log(`app requests: ${JSON.stringify(relay.sidecarLog.filter((e) => e.method.startsWith("wave/app/")).map((e) => [e.method, e.error ?? Object.keys(e.result ?? {})]))}`);
      throw e;
    } finally {
      await closeAll(context, sidecar, sandbox);
      await model.close();
    }
  });
});
