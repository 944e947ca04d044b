// Test support shared by the Chromium layer: a sandbox (HOME + workspace with MCP configs using our
// test MCP server), the real sidecar over LSP stdio, a static server for the webview bundle, and a
// relay that plays the JetBrains plugin's part (window.waveHostQuery / window.waveReceive).

import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { after, before } from "node:test";
import { chromium } from "playwright-core";
import { startEchoModel } from "../fakeModel.mjs";
import { approveProject, CHROMIUM, CHROMIUM_ARGS, projectConfigText, repoDir, targetDir, testServerBin } from "../processes.mjs";
import { CancellationTokenSource, createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";

export const extensionDir = path.join(repoDir, "vscode-extension");

/**
 * The sidecar requests a host hands to its chat page (`PAGE_ANSWERED_REQUESTS`), as protocol/
 * declares them (the generated JSON Schema's `answeredByPage`).
 */
export const PAGE_ANSWERED_REQUESTS = JSON.parse(fs.readFileSync(path.join(repoDir, "jetbrains-plugin", "protocol.schema.json"), "utf8"))[
  "x-wave-methods"
]
  .filter((m) => m.answeredByPage)
  .map((m) => m.method);
export const sidecarBin = process.env.WAVE_SIDECAR ?? path.join(targetDir, "debug", "wave-mcp");
export const outputDir = process.env.WAVE_TEST_OUTPUT
  ? path.resolve(process.env.WAVE_TEST_OUTPUT, "webview-chromium")
  : path.join(targetDir, "test-output", "webview-chromium");

export {
  approveProject,
  browse,
  browserScript,
  CHROMIUM,
  CHROMIUM_ARGS,
  pidAlive,
  processesMentioning,
  projectConfigText,
  repoDir,
  serverPids,
  startOAuthMcpServer,
  startRegistry,
  targetDir,
  testServerBin,
  userPermissions,
} from "../processes.mjs";
export { lastMessage, scripted, startFakeModel } from "../fakeModel.mjs";

/**
 * Creates HOME (user + plugin servers) and a workspace folder named `demo-project`. Its project
 * servers are approved as a user does (the CLI, TRUST-1) unless `approved` is false.
 */
export function makeSandbox({ empty = false, approved = true } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "wave-webview-"));
  const home = path.join(root, "home");
  const workdir = path.join(root, "demo-project");
  fs.mkdirSync(path.join(home, ".wave"), { recursive: true });
  fs.mkdirSync(workdir, { recursive: true });
  if (!empty) {
    fs.writeFileSync(
      path.join(home, ".wave", "mcp.json"),
      JSON.stringify(
        { mcpServers: { gamma: { command: testServerBin, args: ["--name", "gamma", "--pid-file", path.join(root, "gamma.pid")] } } },
        null,
        2,
      ) + "\n",
    );
    const plugin = path.join(home, ".wave", "plugins", "toolbox");
    fs.mkdirSync(plugin, { recursive: true });
    fs.writeFileSync(
      path.join(plugin, ".mcp.json"),
      JSON.stringify({ mcpServers: { "plugin-tools": { type: "http", url: "http://127.0.0.1:9/mcp" } } }, null, 2) + "\n",
    );
    fs.writeFileSync(path.join(workdir, ".mcp.json"), projectConfigText(root));
    if (approved) approveProject(home, workdir);
  }
  return { root, home, workdir, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/**
 * Writes the sandbox's project `.mcp.json` (`{ mcpServers: servers }`) and approves its servers
 * as a user does (`wave-mcp approve`), unless `approved` is false (a cloned repository's file).
 */
export function writeProject(sandbox, servers, { approved = true } = {}) {
  fs.writeFileSync(path.join(sandbox.workdir, ".mcp.json"), JSON.stringify({ mcpServers: servers }, null, 2) + "\n");
  if (approved) approveProject(sandbox.home, sandbox.workdir);
}

/**
 * `wave-mcp lsp` over stdio with LSP framing; collects every notification. The sidecar's
 * `wave/mcp/openUrl` requests go to `sidecar.openUrl(params)` (default: `{opened: false}`, so
 * the sidecar uses `$BROWSER`), each recorded in `sidecar.openUrls`. With `unprivileged`, a test
 * running as root starts it as `nobody` (65534), so file permissions apply to it (DEL-3).
 */
export async function startSidecar(sandbox, { env = {}, unprivileged = false, init = {} } = {}) {
  const asNobody = unprivileged && process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  const child = spawn(sidecarBin, ["lsp"], {
    cwd: sandbox.workdir,
    env: { ...process.env, HOME: sandbox.home, WAVE_LOG: process.env.WAVE_LOG ?? "warn", ...env },
    stdio: ["pipe", "pipe", "pipe"],
    ...asNobody,
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const notifications = [];
  const listeners = new Set();
  connection.onNotification((method, params) => {
    notifications.push({ method, params });
    for (const l of listeners) l(method, params);
  });
  const openUrls = [];
  const sc = {};
  connection.onRequest("wave/mcp/openUrl", async (params) => {
    openUrls.push(params);
    return sc.openUrl ? sc.openUrl(params) : { opened: false };
  });
  connection.listen();
  await connection.sendRequest("initialize", {
    processId: process.pid,
    rootUri: "file://" + sandbox.workdir,
    workspaceFolders: [{ uri: "file://" + sandbox.workdir, name: path.basename(sandbox.workdir) }],
    capabilities: {},
    initializationOptions: { home: sandbox.home, ...init },
  });
  connection.sendNotification("initialized", {});
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  return Object.assign(sc, {
    openUrl: undefined,
    openUrls,
    child,
    connection,
    notifications,
    onNotification: (l) => listeners.add(l),
    stderr: () => stderr,
    request: (method, params, token) =>
      token ? connection.sendRequest(method, params, token) : connection.sendRequest(method, params),
    async stop() {
      try {
        await Promise.race([connection.sendRequest("shutdown"), new Promise((r) => setTimeout(r, 10_000))]);
        connection.sendNotification("exit");
      } catch {
        // already gone
      }
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const result = await exited;
      clearTimeout(timer);
      connection.dispose();
      return result;
    },
  });
}

/** Serves dist/webview on 127.0.0.1 (the page JetBrains would load from its plugin resources). */
export async function serveWebview() {
  const dir = path.join(extensionDir, "dist", "webview");
  const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css" };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname === "/favicon.ico") {
      res.writeHead(204).end();
      return;
    }
    const file = path.join(dir, path.normalize(url.pathname === "/" ? "/index.html" : url.pathname));
    if (!file.startsWith(dir) || !fs.existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": types[path.extname(file)] ?? "application/octet-stream" });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/index.html`, close: () => new Promise((r) => server.close(r)) };
}

/**
 * Plays the JetBrains plugin: answers `waveHostQuery` by forwarding `wave/*` to the sidecar and
 * recording `host/*` steps; forwards the sidecar's notifications with `waveReceive`.
 */
export async function attachRelay(page, firstSidecar, { injectLate = false } = {}) {
  let sidecar = firstSidecar;
  const hostLog = [];
  /** Replies and errors of the requests forwarded to the sidecar. */
  const sidecarLog = [];
  /**
   * The requests forwarded to the sidecar, as they arrive from the page (before any answer): one
   * the page sent before a change of its DOM is here when the test sees that change.
   */
  const sidecarRequests = [];
  const logins = new Map();
  const failNext = new Map();
  /** Requests to the sidecar held back until released (`holdNext`). */
  const holdNext = new Map();
  // Sidecar requests the page answers (PAGE_ANSWERED_REQUESTS): pushed with an id, answered
  // by the page's `host/answer`, as the plugin does.
  const asked = new Map();
  let nextAsk = 1;
  const ask = (method, params) => {
    const id = nextAsk++;
    return new Promise((resolve, reject) => {
      asked.set(id, { resolve, reject });
      void page.evaluate((msg) => window.waveReceive?.(msg), JSON.stringify({ method, params, id })).catch(reject);
    });
  };
  await page.exposeFunction("__waveRelay", async (json) => {
    const { method, params } = JSON.parse(json);
    if (method === "host/answer") {
      hostLog.push({ method, params });
      const waiting = asked.get(params.id);
      asked.delete(params.id);
      if (params.error !== undefined) waiting?.reject(new Error(params.error));
      else waiting?.resolve(params.result ?? null);
      return JSON.stringify({ result: null });
    }
    const held = holdNext.get(method);
    if (held) {
      holdNext.delete(method);
      held.reached(params);
      await held.released;
    }
    if (failNext.has(method)) {
      const error = failNext.get(method);
      failNext.delete(method);
      hostLog.push({ method, params, failed: true });
      return JSON.stringify({ error });
    }
    if (method === "host/cancelLogin") {
      // AUTH-9: as the plugin does: `$/cancelRequest` for the running login of that server.
      hostLog.push({ method, params });
      logins.get(params.name)?.cancel();
      return JSON.stringify({ result: null });
    }
    if (method.startsWith("host/")) {
      hostLog.push({ method, params });
      return JSON.stringify({ result: null });
    }
    sidecarRequests.push({ method, params });
    let source;
    if (method === "wave/mcp/login") {
      source = new CancellationTokenSource();
      logins.set(params.name, source);
    }
    try {
      const result = await sidecar.request(method, params, source?.token);
      sidecarLog.push({ method, params, result });
      return JSON.stringify({ result });
    } catch (e) {
      sidecarLog.push({ method, params, error: { message: e.message, code: e.code, data: e.data } });
      return JSON.stringify({ error: { message: e.message, code: e.code, data: e.data } });
    } finally {
      if (source && logins.get(params.name) === source) logins.delete(params.name);
      source?.dispose();
    }
  });
  const inject = () => {
    window.waveHostQuery = (json) => window.__waveRelay(json);
    window.dispatchEvent(new Event("wave-host-ready"));
  };
  if (!injectLate) await page.addInitScript(inject);
  const pushes = [];
  /** The sidecar's requests handed to the page, in arrival order. */
  const asks = [];
  const listen = (sc) => {
    sc.onNotification((method, params) => {
      if (sc !== sidecar || !method.startsWith("wave/")) return;
      pushes.push({ method, params });
      void page.evaluate((msg) => window.waveReceive?.(msg), JSON.stringify({ method, params })).catch(() => undefined);
    });
    for (const method of PAGE_ANSWERED_REQUESTS) {
      sc.connection.onRequest(method, (params) => {
        asks.push({ method, params });
        return ask(method, params);
      });
    }
  };
  listen(sidecar);
  return {
    /** Relays to another sidecar from now on (a restarted one). */
    switchTo(next) {
      sidecar = next;
      listen(next);
    },
    hostLog,
    sidecarLog,
    sidecarRequests,
    pushes,
    asks,
    /** The next request of `method` fails with this JSON-RPC-like error (a host failure). */
    failNext: (method, error) => failNext.set(method, error),
    /**
     * The next request of `method` waits before it goes to the sidecar: `reached` resolves with
     * its params when it arrives, `release()` lets it go on.
     */
    holdNext(method, timeoutMs = 20_000) {
      let release;
      const released = new Promise((r) => (release = r));
      let reached;
      let timer;
      const arrived = new Promise((resolve, reject) => {
        reached = (params) => {
          clearTimeout(timer);
          resolve(params);
        };
        // A request that never comes fails the test instead of hanging it.
        timer = setTimeout(() => reject(new Error(`timed out waiting for ${method} to reach the relay`)), timeoutMs);
      });
      holdNext.set(method, { released, reached });
      return { reached: arrived, release };
    },
    injectNow: () => page.evaluate(inject),
    push: (method, params) => page.evaluate((msg) => window.waveReceive(msg), JSON.stringify({ method, params })),
    /** Hands a sidecar request to the page as the host does; resolves with the page's answer. */
    ask,
  };
}

/** Polls `fn` until it returns a truthy value (bounded). */
/**
 * Ends what a test started, in the order given, each whatever the others did: a browser context
 * or a fake model (`close`), a sidecar (`stop`), a sandbox (`cleanup`). `undefined` is skipped.
 */
export async function closeAll(...things) {
  const failures = [];
  for (const thing of things) {
    if (!thing) continue;
    try {
      if (typeof thing.stop === "function") await thing.stop();
      else if (typeof thing.cleanup === "function") thing.cleanup();
      else await thing.close();
    } catch (e) {
      failures.push(e);
    }
  }
  if (failures.length > 0) throw failures[0];
}

export async function until(fn, what, timeoutMs = 20_000) {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * One headless Chromium and the webview's page server for a test file, started in `before` and
 * closed in `after` (node:test hooks of the calling file): use `ui.browser` and `ui.web` in tests.
 */
export function useBrowser() {
  const ui = { browser: undefined, web: undefined };
  before(async () => {
    fs.mkdirSync(outputDir, { recursive: true });
    ui.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    ui.web = await serveWebview();
  });
  after(async () => {
    await ui.browser?.close();
    await ui.web?.close();
  });
  return ui;
}

/**
 * A fake model answering every request with `reply to <the last user message>` for a test file,
 * started in `before` and closed in `after`: use `echo.model` (its `baseUrl`) in tests.
 */
export function useEchoModel() {
  const echo = { model: undefined };
  before(async () => {
    echo.model = await startEchoModel();
  });
  after(async () => {
    await echo.model?.close();
  });
  return echo;
}

/**
 * The chat page in a new browser context of `ui` (see `useBrowser`), relayed to `sidecar` as the
 * JetBrains plugin does (`attachRelay`), loaded and ready. `errors` collects the page's script
 * errors; the caller closes `context`.
 */
export async function openChatPage(ui, sidecar, { width = 700, height = 760 } = {}) {
  const context = await ui.browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  const relay = await attachRelay(page, sidecar);
  await page.goto(`${ui.web.url}?page=chat&lang=en`);
  await page.waitForSelector("body[data-ready=true]");
  return { context, page, errors, relay };
}
