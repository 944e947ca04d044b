// A server on the official TypeScript SDK v2 (npm @modelcontextprotocol/server 2.4.0) for the
// era tests (SPEC-1, SPEC-3). Usage:
//   node ts2_server.mjs stdio [--legacy reject|serve] [--versions V1,V2]
//   node ts2_server.mjs http PORT [--legacy reject|stateless] [--versions V1,V2]
// `--versions V` makes a server written for the 2025 revisions only: the factory's server with
// `supportedProtocolVersions: [V]`, hand-wired to the SDK's `StdioServerTransport` or a stateful
// `WebStandardStreamableHTTPServerTransport` (one per `Mcp-Session-Id`) instead of the era-aware
// `serveStdio`/`createMcpHandler`; it answers `server/discover` "method not found", e.g.
// `--versions 2025-06-18` for a server that knows only that revision.
// Tools: `echo` (returns its text), `confirm` (asks the user a yes/no form with
// `input_required`, then answers with what the user said), `nag` (always asks again),
// `add_tool` (registers `added` and publishes tools/list_changed). Prompt `greet` asks for a
// name with `input_required`; resource `wave://secret` asks for a password the same way.
// Every `initialize` request it sees is appended to $WAVE_TS2_LOG (one JSON line) so tests can
// assert the wire. Needs NODE_PATH=<dir with node_modules> to find the SDK.
import { createRequire } from 'node:module';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(path.join(process.env.WAVE_TS2_MODULES ?? process.cwd(), 'x.js'));
const sdk = await import(require.resolve('@modelcontextprotocol/server'));
const { McpServer, createMcpHandler, inputRequired, acceptedContent, inputResponse, fromJsonSchema } = sdk;

const argv = process.argv.slice(2);
const mode = argv[0];
const legacyAt = argv.indexOf('--legacy');
const legacy = legacyAt >= 0 ? argv[legacyAt + 1] : undefined;
const versionsAt = argv.indexOf('--versions');
const versions = versionsAt >= 0 ? argv[versionsAt + 1].split(',') : undefined;
const log = process.env.WAVE_TS2_LOG;

function note(entry) {
  if (log) fs.appendFileSync(log, JSON.stringify(entry) + '\n');
}

let notifyTools = () => {};
const extraTools = [];

function factory() {
  const server = new McpServer(
    { name: 'ts2-peer', version: '2.4.0' },
    {
      capabilities: { tools: { listChanged: true }, prompts: {}, resources: {} },
      instructions: 'TS SDK v2 peer for wave-mcp.',
      ...(versions ? { supportedProtocolVersions: versions } : {}),
    }
  );
  const text = (t) => ({ content: [{ type: 'text', text: t }] });
  server.registerTool(
    'echo',
    { description: 'Returns its text', inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }) },
    async ({ text: t }) => text(`echo: ${t}`)
  );
  const confirmSchema = { type: 'object', properties: { ok: { type: 'boolean', description: 'Go ahead?' } }, required: ['ok'] };
  server.registerTool('confirm', { description: 'Asks the user to confirm' }, async (ctx) => {
    const view = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
    if (view && view.kind === 'elicitation' && view.action && view.action !== 'accept') {
      return text(`the user said ${view.action}`);
    }
    const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm');
    if (answer === undefined) {
      return inputRequired({ inputRequests: { confirm: inputRequired.elicit({ message: 'Proceed with the deploy?', requestedSchema: confirmSchema }) } });
    }
    return text(`confirmed: ${answer.ok}`);
  });
  server.registerTool('nag', { description: 'Always asks again' }, async (ctx) => {
    const round = Object.keys(ctx.mcpReq.inputResponses ?? {}).length;
    return inputRequired({ inputRequests: { [`again${round}`]: inputRequired.elicit({ message: 'Once more?', requestedSchema: confirmSchema }) } });
  });
  server.registerTool('add_tool', { description: 'Adds a tool named added' }, async () => {
    extraTools.push('added');
    notifyTools();
    return text('added');
  });
  for (const name of extraTools) {
    server.registerTool(name, { description: 'An added tool' }, async () => text('hi from added'));
  }
  server.registerPrompt('greet', { description: 'Greets the user by name' }, async (ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, 'name');
    if (answer === undefined) {
      return inputRequired({ inputRequests: { name: inputRequired.elicit({ message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }) } });
    }
    return { messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${answer.name}!` } }] };
  });
  server.registerResource('secret', 'wave://secret', { mimeType: 'text/plain' }, async (uri, ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, 'password');
    if (answer === undefined) {
      return inputRequired({ inputRequests: { password: inputRequired.elicit({ message: 'Password?', requestedSchema: { type: 'object', properties: { password: { type: 'string' } }, required: ['password'] } }) } });
    }
    return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `the secret for ${answer.password}` }] };
  });
  return server;
}

if (mode === 'stdio') {
  const { serveStdio } = await import(require.resolve('@modelcontextprotocol/server/stdio'));
  // Tap stdin for `initialize` requests (the wire assertion of SPEC-1).
  process.stdin.on('data', (chunk) => {
    for (const line of chunk.toString().split('\n')) {
      if (line.includes('"initialize"')) {
        try {
          const msg = JSON.parse(line);
          if (msg.method === 'initialize') note({ initialize: msg.params.protocolVersion });
        } catch {}
      }
      if (line.includes('"server/discover"')) note({ discover: true });
    }
  });
  if (versions) {
    const { StdioServerTransport } = await import(require.resolve('@modelcontextprotocol/server/stdio'));
    await factory().connect(new StdioServerTransport());
  } else {
    serveStdio(factory, legacy ? { legacy } : {});
  }
} else if (mode === 'http') {
  const port = Number(argv[1]);
  const handler = versions ? statefulHandler() : createMcpHandler(factory, legacy ? { legacy } : {});
  notifyTools = () => handler.notify.toolsChanged();
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    try {
      const msg = JSON.parse(body.toString());
      if (msg.method === 'initialize') note({ initialize: msg.params.protocolVersion });
      if (msg.method) note({ method: msg.method, header: req.headers['mcp-protocol-version'] ?? null, session: req.headers['mcp-session-id'] ?? null });
    } catch {}
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const request = new Request(`http://127.0.0.1:${port}${req.url}`, {
      method: req.method,
      headers,
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
    if (response.body) {
      const reader = response.body.getReader();
      req.on('close', () => reader.cancel().catch(() => {}));
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          res.write(value);
        }
      } catch {}
    }
    res.end();
  });
  server.listen(port, '127.0.0.1', () => note({ listening: port }));
} else {
  console.error('usage: ts2_server.mjs stdio|http PORT [--legacy MODE]');
  process.exit(2);
}

/** A 2025-era stateful Streamable HTTP endpoint: a transport and a server per session. */
function statefulHandler() {
  const { WebStandardStreamableHTTPServerTransport } = sdk;
  const sessions = new Map();
  return {
    notify: { toolsChanged: () => {} },
    async fetch(request) {
      const id = request.headers.get('mcp-session-id');
      let transport = id ? sessions.get(id) : undefined;
      if (!transport) {
        if (id) return new Response('unknown session', { status: 404 });
        transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => crypto.randomUUID(),
          onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
        });
        await factory().connect(transport);
      }
      return transport.handleRequest(request);
    },
  };
}
