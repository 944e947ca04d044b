// A server on the official TypeScript SDK v1 (npm @modelcontextprotocol/sdk 1.32.2) whose tool runs
// as a task of the 2025-11-25 revision (`tasks` capability, `execution.taskSupport: "required"`),
// for SRV-5. Usage:
//   node ts_tasks.mjs --cancel-marker FILE [--http PORT]
// On stdio by default; with `--http PORT`, over Streamable HTTP on 127.0.0.1:PORT/mcp (stateful,
// a session per `initialize`, answers as JSON bodies rather than SSE streams).
// Tool `stuck`: a task that says "waiting" once and then never changes status nor ends. When the
// client cancels it (`tasks/cancel`), the server writes FILE (its status message and task id), so
// tests see that the cancel reached it. Needs WAVE_TS_MODULES=<dir with node_modules> to find the
// SDK.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(path.join(process.env.WAVE_TS_MODULES ?? process.cwd(), 'x.js'));
const load = (name) => import(require.resolve(name));
const { McpServer } = await load('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = await load('@modelcontextprotocol/sdk/server/stdio.js');
const { StreamableHTTPServerTransport } = await load(
  '@modelcontextprotocol/sdk/server/streamableHttp.js'
);
const { InMemoryTaskStore, InMemoryTaskMessageQueue } = await load(
  '@modelcontextprotocol/sdk/experimental/tasks'
);

const argv = process.argv.slice(2);
const markerAt = argv.indexOf('--cancel-marker');
const marker = markerAt >= 0 ? argv[markerAt + 1] : undefined;
const httpAt = argv.indexOf('--http');
const port = httpAt >= 0 ? Number(argv[httpAt + 1]) : undefined;

// The store the SDK's `tasks/cancel` handler moves a task to `cancelled` through.
class MarkingStore extends InMemoryTaskStore {
  async updateTaskStatus(taskId, status, statusMessage, sessionId) {
    await super.updateTaskStatus(taskId, status, statusMessage, sessionId);
    if (status === 'cancelled' && marker) {
      fs.writeFileSync(marker, JSON.stringify({ taskId, statusMessage }) + '\n');
    }
  }
}

/** One server (its own task store): one per stdio process, one per HTTP session. */
function makeServer() {
  const taskStore = new MarkingStore();
  const server = new McpServer(
    { name: 'ts-tasks-peer', version: '1.32.2' },
    {
      capabilities: {
        tools: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      taskStore,
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    }
  );

  server.experimental.tasks.registerToolTask(
    'stuck',
    {
      description: 'Starts a task that says "waiting" and never ends.',
      inputSchema: {},
      execution: { taskSupport: 'required' },
    },
    {
      createTask: async (_args, extra) => {
        const task = await extra.taskStore.createTask({ ttl: 600000, pollInterval: 50 });
        await extra.taskStore.updateTaskStatus(task.taskId, 'working', 'waiting');
        return { task };
      },
      getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
    }
  );
  return server;
}

if (port === undefined) {
  await makeServer().connect(new StdioServerTransport());
} else {
  const http = await import('node:http');
  const { randomUUID } = await import('node:crypto');
  const sessions = new Map();
  http
    .createServer(async (req, res) => {
      if (!req.url.startsWith('/mcp')) {
        res.writeHead(404).end();
        return;
      }
      const id = req.headers['mcp-session-id'];
      let transport = id ? sessions.get(id) : undefined;
      if (id && !transport) {
        res.writeHead(404).end();
        return;
      }
      if (!transport) {
        // A request without a session: `initialize` opens one; anything else (the client's
        // `server/discover` probe) is refused by the transport, which then serves nothing more.
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (sid) => sessions.set(sid, transport),
        });
        transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
        await makeServer().connect(transport);
      }
      await transport.handleRequest(req, res);
    })
    .listen(port, '127.0.0.1');
}
