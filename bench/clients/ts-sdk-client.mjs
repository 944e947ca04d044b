// Row 7 of the bench (docs/performance.md): the official TypeScript MCP SDK client
// (`@modelcontextprotocol/sdk` `Client` + `StdioClientTransport`, what Claude Code and VS Code
// run their MCP connections on), driven by `wave-mcp-bench` beside wave-mcp on the same servers.
//
//   node ts-sdk-client.mjs roundtrip --calls N --warmup W -- SERVER [ARGS...]
//       connects one stdio server, lists its tools, makes W `echo` calls (not timed), then N
//       timed ones; prints {"samples":[seconds, ...]} (each call timed in-process with
//       process.hrtime, every result checked)
//   node ts-sdk-client.mjs ready --servers K -- SERVER [ARGS...]
//       connects K such servers concurrently (Promise.all of connect + tools/list) and prints
//       {"seconds": s, "tools": n}: from before the first spawn until every list has arrived
//   node ts-sdk-client.mjs rss -- SERVER [ARGS...]
//       loads the SDK and builds a Client, prints {"state":"loaded"}, waits for a line on stdin,
//       connects the server (tools/list and one `echo` call), prints {"state":"connected"} and
//       stays until stdin closes; the bench reads this process's VmRSS in both states
//
// The SDK is taken from $WAVE_PEERS_DIR/sdk (default ~/.cache/wave-mcp-peers/sdk), where
// scripts/install-peers.sh installs it. Logs go to stderr; stdout carries the JSON lines only.

import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const peers = process.env.WAVE_PEERS_DIR || join(homedir(), ".cache", "wave-mcp-peers");
const sdk = join(peers, "sdk", "node_modules", "@modelcontextprotocol", "sdk");
if (!existsSync(join(sdk, "package.json"))) {
  console.error(
    `ts-sdk-client: error: @modelcontextprotocol/sdk is not installed in ${sdk} ` +
      "(run scripts/install-peers.sh, or set WAVE_PEERS_DIR)",
  );
  process.exit(2);
}
// The package maps `./*` to `./dist/esm/*` for imports.
const load = (path) => import(pathToFileURL(join(sdk, "dist", "esm", path)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");

const args = process.argv.slice(2);
const mode = args[0];
const dashes = args.indexOf("--");
if (!mode || dashes < 0 || dashes + 1 >= args.length) {
  console.error("usage: ts-sdk-client.mjs roundtrip|ready|rss [OPTIONS] -- SERVER [ARGS...]");
  process.exit(2);
}
const [command, ...serverArgs] = args.slice(dashes + 1);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && at < dashes ? Number(args[at + 1]) : fallback;
};

const newClient = () => new Client({ name: "wave-mcp-bench-ts-sdk", version: "1.0.0" });
const transport = () => new StdioClientTransport({ command, args: serverArgs, stderr: "inherit" });

async function echo(client, i) {
  const text = `call ${i}`;
  const result = await client.callTool({ name: "echo", arguments: { text } });
  const answer = result.content?.[0]?.text;
  if (result.isError || answer !== text) {
    throw new Error(`echo call ${i} answered ${JSON.stringify(result)}`);
  }
}

async function connected() {
  const client = newClient();
  await client.connect(transport());
  const { tools } = await client.listTools();
  return { client, tools };
}

async function roundtrip() {
  const calls = option("--calls", 1000);
  const warmup = option("--warmup", 100);
  const { client } = await connected();
  for (let i = 0; i < warmup; i++) await echo(client, i);
  const samples = [];
  for (let i = 0; i < calls; i++) {
    const start = process.hrtime.bigint();
    await echo(client, i);
    samples.push(Number(process.hrtime.bigint() - start) / 1e9);
  }
  await client.close();
  console.log(JSON.stringify({ samples }));
}

async function ready() {
  const servers = option("--servers", 5);
  const start = process.hrtime.bigint();
  const all = await Promise.all(Array.from({ length: servers }, connected));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const tools = all.reduce((n, c) => n + c.tools.length, 0);
  await Promise.all(all.map((c) => c.client.close()));
  console.log(JSON.stringify({ seconds, tools }));
}

async function rss() {
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const client = newClient();
  console.log(JSON.stringify({ state: "loaded" }));
  await lines.next();
  await client.connect(transport());
  await client.listTools();
  await echo(client, 0);
  console.log(JSON.stringify({ state: "connected" }));
  while (!(await lines.next()).done) {
    // Stay connected until stdin closes.
  }
  await client.close();
}

const modes = { roundtrip, ready, rss };
if (!modes[mode]) {
  console.error(`ts-sdk-client: error: unknown mode ${mode} (known: roundtrip, ready, rss)`);
  process.exit(2);
}
try {
  await modes[mode]();
  process.exit(0);
} catch (error) {
  console.error(`ts-sdk-client: error: ${error?.stack ?? error}`);
  process.exit(1);
}
