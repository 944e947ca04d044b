// END TO END in a real VS Code (code-server): "Wave: Restart Sidecar" destroys the session and
// resets the chat page, so the host first asks the page to tear its apps down (APPS-3,
// `host/teardownApps`): the live official system monitor (`@modelcontextprotocol/server-system-monitor`,
// from $WAVE_PEERS_DIR/apps, filled by scripts/install-peers.sh) gets `ui/resource-teardown` and
// answers it before the page is reset. What survives the reset is the extension's "Wave" output
// channel (a log file under the user-data dir): the host writes how many apps answered, and that
// line comes before the sidecar's "stopping the sidecar". Screenshot in
// target/test-output/vscode-e2e: apps-teardown-restart.png (the chat after the restart).

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
  model = await startFakeModel((request, n) => {
    if (n > 1) return { say: "The system's load is shown above, live." };
    const tool = (request.tools ?? []).map((t) => t.function?.name).find((name) => name === "mcp__system-monitor__get-system-info");
    return tool ? { call: tool, arguments: {} } : { say: "no get-system-info tool was offered" };
  });
  writeUserSettings(sb, { "wave.model.baseUrl": model.baseUrl, "wave.model.name": "fake-model" });
  installExtension(sb);
  ({ server, browser, page } = await openWorkbench(sb, { pageErrors }));
});

afterEach((t) => explainFailure(t, sb, page));
after(() => (skip ? fs.rmSync(sb.root, { recursive: true, force: true }) : closeWorkbench(sb, { browser, server, model })));

/** The extension's "Wave" output channel, as VS Code writes it to the user-data dir's logs. */
function waveLog() {
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/(^|-)Wave\.log$/.test(entry.name)) found.push(full);
    }
  };
  try {
    walk(path.join(sb.data, "logs"));
  } catch {
    return "";
  }
  return found.map((f) => fs.readFileSync(f, "utf8")).join("\n");
}

describe("Restart Sidecar tears the chat's apps down first (real VS Code, code-server)", { skip }, () => {
  test("APPS-3: with a live system monitor, Wave: Restart Sidecar sends ui/resource-teardown and the app answers it before the page is reset", async () => {
    await runCommand(page, "Wave: Open Chat");
    const chat = await webviewFrame(page, "chat", 60_000);
    await chat.locator("#chat-input").fill("What is the system's load?");
    await chat.locator("#chat-send").click();
    const view = chat.locator(".app-view[data-server=system-monitor]");
    await view.waitFor({ timeout: 90_000 });
    await until(async () => (await view.getAttribute("data-state")) === "live", "the monitor is live", 60_000);
    await chat.locator(".msg-assistant", { hasText: "shown above, live" }).waitFor({ timeout: 60_000 });
    // The app is up (initialized): it shows this machine.
    await until(
      async () => {
        for (const f of page.frames()) {
          if (f.isDetached()) continue;
          const text = await f.locator("#info-hostname").first().textContent({ timeout: 200 }).catch(() => null);
          if (text?.trim() === os.hostname()) return true;
        }
        return false;
      },
      "the monitor shows this machine's hostname",
      90_000,
    );
    assert.doesNotMatch(waveLog(), /apps torn down/, "nothing torn down yet");

    await chat.evaluate(() => {
      window.__waveOldPage = true;
    });
    await runCommand(page, "Wave: Restart Sidecar");
    // The line the host writes once the page answered host/teardownApps, and before the restart.
    const log = await until(async () => {
      const text = waveLog();
      return /starting .* lsp/.test(text.split(/apps torn down/)[1] ?? "") ? text : undefined;
    }, "the teardown line, then the sidecar starting again, in the Wave output channel", 60_000);
    assert.match(log, /apps torn down \(Wave: Restart sidecar\): 1 of 1 answered ui\/resource-teardown/);
    const teardownAt = log.indexOf("apps torn down");
    const stoppingAt = log.indexOf("stopping the sidecar");
    assert.ok(stoppingAt > teardownAt, "the app answered before the sidecar was stopped and the page reset");

    // The page was reset: a new chat page (the old one's document, marked, is gone).
    await until(async () => {
      for (const f of page.frames()) {
        if (f.isDetached()) continue;
        const fresh = await f
          .evaluate(() => document.body?.dataset?.page === "chat" && document.body.dataset.ready === "true" && !window.__waveOldPage)
          .catch(() => false);
        if (fresh) return true;
      }
      return false;
    }, "a new chat page after the restart", 60_000);
    await page.screenshot({ path: path.join(outputDir, "apps-teardown-restart.png") });
    assert.deepEqual(pageErrors, [], "no script errors in the workbench");
  });
});
