// Shared by the Chromium layer (test/chromium) and the code-server end-to-end tests (tests/e2e):
// where the binaries are, the workspace's `.mcp.json`, how Chromium is started on these
// machines, free ports, and process checks through /proc by pid. (The fake model: fakeModel.mjs.)

import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

export const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const targetDir = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(repoDir, "target");
export const testServerBin = process.env.WAVE_TEST_SERVER ?? path.join(targetDir, "debug", "wave-mcp-test-server");

/**
 * The project `.mcp.json` of both layers' sandboxes, written by hand: the delete tests check
 * that every other byte survives. alpha initializes slowly (so Connecting... shows), broken
 * cannot start, its `${SECRET_TOKEN}` shown as written (SEC-1); pids go to `<root>/<name>.pid`.
 */
export function projectConfigText(root) {
  const ts = JSON.stringify(testServerBin);
  const pidFile = (name) => JSON.stringify(path.join(root, `${name}.pid`));
  return `{
  "mcpServers": {
    "alpha": {
      "command": ${ts},
      "args": ["--name", "alpha", "--tools", "echo,add,pid", "--slow-initialize-ms", "800", "--pid-file", ${pidFile("alpha")}]
    },
    "beta": {
      "command": ${ts},
      "args": ["--name", "beta", "--tools", "echo", "--pid-file", ${pidFile("beta")}]
    },
    "broken": {
      "command": "/nonexistent/wave-missing-server",
      "args": ["--token", "\${SECRET_TOKEN}"]
    }
  }
}
`;
}

export const sidecarBinary = process.env.WAVE_SIDECAR ?? path.join(targetDir, "debug", "wave-mcp");

/**
 * Approves project servers as a user does (TRUST-1): `wave-mcp approve NAME --workdir DIR` with
 * the test's HOME, one per name; default: every server of `<workdir>/.mcp.json`. Throws with the
 * CLI's stderr when it fails.
 */
export function approveProject(home, workdir, names) {
  const list = names ?? Object.keys(JSON.parse(fs.readFileSync(path.join(workdir, ".mcp.json"), "utf8")).mcpServers ?? {});
  for (const name of list) {
    const r = spawnSync(sidecarBinary, ["approve", name, "--workdir", workdir], {
      env: { ...process.env, HOME: home, NO_COLOR: "1", WAVE_LOG: "warn" },
      encoding: "utf8",
      timeout: 30_000,
    });
    if (r.status !== 0) throw new Error(`wave-mcp approve ${name} failed (${r.status ?? r.signal}): ${r.stderr}`);
  }
  return list;
}

/**
 * The user's own permission rules (TRUST-5): merges `permissions` into `<home>/.wave/settings.json`,
 * e.g. `{ allow: ["mcp__alpha__*"] }` or `{ defaultMode: "allow" }`, so that tool calls of tests
 * not about consent do not ask.
 */
export function userPermissions(home, permissions) {
  const file = path.join(home, ".wave", "settings.json");
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let settings = {};
  try {
    settings = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    // none yet
  }
  settings.permissions = { ...(settings.permissions ?? {}), ...permissions };
  fs.writeFileSync(file, JSON.stringify(settings, null, 2) + "\n");
  return file;
}

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
// Without the background-networking flags Chromium keeps dialing Google's hosts, which a closed
// network refuses.
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids a test server wrote to `<sandbox>/<name>.pid` (server first, then descendants). */
export function serverPids(sandbox, name) {
  try {
    return fs.readFileSync(path.join(sandbox.root, `${name}.pid`), "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Processes other than this one whose command line mentions `needle` (via /proc). */
export function processesMentioning(needle) {
  return fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid)
    .filter((d) => {
      try {
        return fs.readFileSync(`/proc/${d}/cmdline`, "utf8").includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);
}

// ---- a real OAuth authorization server (AUTH-*): the MCP TypeScript SDK's example ----------------


export const peersDir = process.env.WAVE_PEERS_DIR ?? path.join(os.homedir(), ".cache", "wave-mcp-peers");
export const sdkExample = path.join(
  peersDir,
  "sdk",
  "node_modules",
  "@modelcontextprotocol",
  "sdk",
  "dist",
  "esm",
  "examples",
  "server",
  "simpleStreamableHttp.js",
);

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function httpOk(url) {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await r.arrayBuffer();
    return r.ok;
  } catch {
    return false;
  }
}

/**
 * The SDK's `simpleStreamableHttp.js --oauth`: an MCP server at `url` (http://localhost:P/mcp)
 * behind an in-memory authorization server on port Q (RFC 9728 + 8414 metadata, registration,
 * PKCE; /authorize approves at once and redirects to the redirect_uri). Its own process group;
 * `stop()` ends it and reports whether it is gone.
 */
export async function startOAuthMcpServer({ strict = false } = {}) {
  if (!fs.existsSync(sdkExample)) throw new Error(`${sdkExample} is missing: run bash scripts/install-peers.sh`);
  const port = await freePort();
  let authPort = await freePort();
  while (authPort === port) authPort = await freePort();
  const args = [sdkExample, "--oauth", ...(strict ? ["--oauth-strict"] : [])];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, MCP_PORT: String(port), MCP_AUTH_PORT: String(authPort) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const url = `http://localhost:${port}/mcp`;
  const start = Date.now();
  while (
    !(await httpOk(`http://localhost:${port}/.well-known/oauth-protected-resource/mcp`)) ||
    !(await httpOk(`http://localhost:${authPort}/.well-known/oauth-authorization-server`))
  ) {
    if (child.exitCode !== null || Date.now() - start > 30_000) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // gone
      }
      throw new Error(`the OAuth MCP server did not come up:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    authPort,
    pid: child.pid,
    log: () => log,
    /** Ends the process group (SIGTERM, then SIGKILL); true when no process of it is left. */
    async stop() {
      const kill = (sig) => {
        try {
          process.kill(-child.pid, sig);
        } catch {
          // gone
        }
      };
      if (child.exitCode === null && child.signalCode === null) {
        kill("SIGTERM");
        const timer = setTimeout(() => kill("SIGKILL"), 3000);
        await exited;
        clearTimeout(timer);
      }
      kill("SIGKILL"); // anything left in its group
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline) {
        // The example is one node process (no children): its pid, reaped, is the whole tree.
        if (!pidAlive(child.pid)) return true;
        await new Promise((r) => setTimeout(r, 50));
      }
      return false;
    },
  };
}

/**
 * Plays the user's browser: opens the authorization URL and follows its redirects to the
 * sidecar's loopback callback, as a browser would (the SDK's authorization server approves at
 * once). Resolves with the final response's status and URL.
 */
export async function browse(url) {
  const r = await fetch(url, { redirect: "follow", signal: AbortSignal.timeout(30_000) });
  const body = await r.text();
  return { status: r.status, url: r.url, body };
}

/**
 * `$BROWSER` scripts for the sidecar's own opener: "follow" fetches the URL with curl, as a
 * browser would; "record" only writes the URL to `<dir>/browser-url.txt` (a browser the user
 * never finishes in). Returns the script's path.
 */
export function browserScript(dir, kind) {
  const file = path.join(dir, `browser-${kind}.sh`);
  const record = `printf '%s\\n' "$1" >> ${JSON.stringify(path.join(dir, "browser-url.txt"))}`;
  const body = kind === "follow" ? `${record}\nexec curl -sL -o /dev/null "$1"\n` : `${record}\n`;
  fs.writeFileSync(file, `#!/bin/sh\n${body}`, { mode: 0o755 });
  return file;
}

/**
 * A local MCP Registry on 127.0.0.1 (our test server's `--registry` mode: the official API's
 * shape, serving the recorded `server.json` documents of tests/test-server/registry, USE-3).
 * `base` is its base URL (`WAVE_REGISTRY_URL`); `searches()` the search terms it was asked.
 */
export async function startRegistry() {
  const dir = path.join(repoDir, "tests", "test-server", "registry");
  const child = spawn(testServerBin, ["--registry", dir, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const base = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.startsWith("listening on "));
      if (line) resolve(line.slice("listening on ".length).trim().replace(/\/v0\.1$/, ""));
    });
    child.on("exit", (code) => reject(new Error(`the local registry exited (${code}) before listening: ${out}`)));
  });
  return {
    base,
    async searches() {
      const response = await globalThis.fetch(`${base}/control/requests`);
      return (await response.json()).searches;
    },
    async close() {
      child.kill("SIGKILL");
      await exited;
    },
  };
}
