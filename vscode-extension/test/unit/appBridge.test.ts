// The host side of an MCP App view (APPS-3, APPS-4): every message the bridge sends is checked
// against the ext-apps spec's own JSON Schema (npm @modelcontextprotocol/ext-apps, schema.json,
// used here only as data), and the order the spec asks for is held.

import { createRequire } from "node:module";
import Ajv2020 from "ajv/dist/2020";
import { describe, expect, it } from "vitest";
import { AppBridge, type AppHostCalls, type RpcMessage } from "../../webview/src/appBridge";

const require = createRequire(import.meta.url);
const schema = require("@modelcontextprotocol/ext-apps/schema.json") as { $id?: string; $defs: Record<string, unknown> };

// The package's schema refers to `#/$defs/__schema0` (the MCP `Tool` of `toolInfo`, left out by
// its generator) without defining it: stand in the MCP `Tool`'s required fields, which the apps'
// SDK checks too (a tool without `inputSchema` made it refuse `ui/initialize`).
const ajv = new Ajv2020({ strict: false, allErrors: true });
const mcpTool = { type: "object", required: ["name", "inputSchema"], properties: { name: { type: "string" }, inputSchema: { type: "object" } } };
ajv.addSchema({ ...schema, $defs: { __schema0: mcpTool, ...schema.$defs } }, "apps");
const check = (def: string, value: unknown) => {
  const validate = ajv.getSchema(`apps#/$defs/${def}`);
  if (!validate) throw new Error(`no ${def} in the spec's schema`);
  const ok = validate(value);
  expect(ok, `${def}: ${JSON.stringify(validate.errors)} in ${JSON.stringify(value)}`).toBe(true);
};

/** A bridge whose host calls are recorded and answer at once. */
function setup(over: Partial<AppHostCalls> = {}) {
  const sent: RpcMessage[] = [];
  const calls: string[] = [];
  const host: AppHostCalls = {
    callTool: async (name, args) => {
      calls.push(`callTool ${name} ${JSON.stringify(args)}`);
      return { content: [{ type: "text", text: "ok" }] };
    },
    readResource: async (uri) => {
      calls.push(`readResource ${uri}`);
      return { contents: [] };
    },
    openLink: async (url) => void calls.push(`openLink ${url}`),
    message: async (text) => void calls.push(`message ${text}`),
    updateModelContext: async (p) => void calls.push(`context ${JSON.stringify(p)}`),
    log: () => calls.push("log"),
    resize: (w, h) => calls.push(`resize ${w} ${h}`),
    requestTeardown: () => calls.push("requestTeardown"),
    ...over,
  };
  const bridge = new AppBridge({
    post: (m) => sent.push(m),
    resource: { html: "<!doctype html><p>app</p>", csp: { connectDomains: ["https://api.example.com"] } },
    hostInfo: { name: "wave-mcp", version: "0.1.0" },
    context: {
      theme: "dark",
      displayMode: "inline",
      availableDisplayModes: ["inline"],
      platform: "desktop",
      // As the chat page builds it (appViews.ts).
      toolInfo: { id: "call-1", tool: { name: "get-time", inputSchema: { type: "object" } } },
    },
    calls: host,
    teardownMs: 50,
  });
  return { bridge, sent, calls };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

/** Proxy ready, `ui/initialize` asked and answered, `initialized` said. */
async function initialize(bridge: AppBridge, sent: RpcMessage[]) {
  bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} });
  const init = { jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { appInfo: { name: "app", version: "1" }, appCapabilities: {}, protocolVersion: "2026-01-26" } };
  check("McpUiInitializeRequest", { method: init.method, params: init.params });
  bridge.handle(init);
  await settle();
  const answer = sent.find((m) => m.id === 1);
  bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
  return answer;
}

describe("APPS-3: the bridge follows the spec's order, in the spec's shapes", () => {
  it("APPS-3: the HTML goes only after the proxy is ready; nothing reaches the app before initialized", async () => {
    const { bridge, sent } = setup();
    bridge.toolInput({ city: "Paris" });
    bridge.toolResult({ content: [{ type: "text", text: "sunny" }], structuredContent: { t: 20 } });
    expect(sent).toEqual([]);
    bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} });
    expect(sent.map((m) => m.method)).toEqual(["ui/notifications/sandbox-resource-ready"]);
    check("McpUiSandboxResourceReadyNotification", { method: sent[0].method, params: sent[0].params });
    // A request other than the handshake before `initialized` is refused.
    bridge.handle({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "x", arguments: {} } });
    await settle();
    expect(sent.at(-1)).toMatchObject({ id: 7, error: { code: -32600 } });
    bridge.handle({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { appInfo: { name: "a", version: "1" }, appCapabilities: {}, protocolVersion: "2026-01-26" } });
    await settle();
    const init = sent.find((m) => m.id === 1);
    check("McpUiInitializeResult", init?.result);
    expect(sent.filter((m) => m.method?.startsWith("ui/notifications/tool"))).toEqual([]);
    bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
    const tool = sent.filter((m) => m.method?.startsWith("ui/notifications/tool"));
    expect(tool.map((m) => m.method)).toEqual(["ui/notifications/tool-input", "ui/notifications/tool-result"]);
    check("McpUiToolInputNotification", { method: tool[0].method, params: tool[0].params });
    check("McpUiToolResultNotification", { method: tool[1].method, params: tool[1].params });
    expect(tool[1].params).toMatchObject({ structuredContent: { t: 20 } });
  });

  it("APPS-3: ui/initialize carries host info, capabilities and the context (theme, inline display mode)", async () => {
    const { bridge, sent } = setup();
    const answer = await initialize(bridge, sent);
    check("McpUiInitializeResult", answer?.result);
    expect(answer?.result).toMatchObject({
      protocolVersion: "2026-01-26",
      hostInfo: { name: "wave-mcp" },
      hostContext: { theme: "dark", displayMode: "inline" },
      hostCapabilities: { serverTools: {}, serverResources: {}, openLinks: {} },
    });
  });

  it("APPS-3: tool-input goes once; a result after the input; Stop sends tool-cancelled instead", async () => {
    const { bridge, sent } = setup();
    await initialize(bridge, sent);
    bridge.toolInput({ a: 1 });
    bridge.toolInput({ a: 2 });
    bridge.toolCancelled("stopped by the user");
    bridge.toolResult({ content: [] });
    const tool = sent.filter((m) => m.method?.startsWith("ui/notifications/tool"));
    expect(tool.map((m) => m.method)).toEqual(["ui/notifications/tool-input", "ui/notifications/tool-cancelled"]);
    expect(tool[0].params).toEqual({ arguments: { a: 1 } });
    check("McpUiToolCancelledNotification", { method: tool[1].method, params: tool[1].params });
  });

  it("APPS-3: size-changed resizes; teardown is sent and its answer awaited; then the app is not heard", async () => {
    const { bridge, sent, calls } = setup();
    await initialize(bridge, sent);
    bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { width: 300, height: 240 } });
    expect(calls).toContain("resize 300 240");
    const done = bridge.teardown("the chat was closed");
    const teardown = sent.at(-1)!;
    check("McpUiResourceTeardownRequest", { method: teardown.method, params: teardown.params });
    bridge.handle({ jsonrpc: "2.0", id: teardown.id, result: {} });
    await done;
    expect(bridge.state).toBe("closed");
    bridge.handle({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "x" } });
    await settle();
    expect(sent.some((m) => m.id === 9)).toBe(false);
  });
});

describe("APPS-4: what the app asks goes through the host's calls", () => {
  it("APPS-4: tools/call, resources/read, ui/open-link, ui/message and ui/update-model-context reach the host; a failure is an error answer", async () => {
    const { bridge, sent, calls } = setup({
      callTool: async (name) => {
        if (name === "hidden") throw new Error('the tool "hidden" is not callable by this app');
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    await initialize(bridge, sent);
    bridge.handle({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "ui://x/y" } });
    bridge.handle({ jsonrpc: "2.0", id: 3, method: "ui/open-link", params: { url: "https://example.com/a" } });
    bridge.handle({ jsonrpc: "2.0", id: 4, method: "ui/open-link", params: { url: "javascript:alert(1)" } });
    bridge.handle({ jsonrpc: "2.0", id: 5, method: "ui/message", params: { role: "user", content: { type: "text", text: "show March" } } });
    bridge.handle({ jsonrpc: "2.0", id: 6, method: "ui/update-model-context", params: { structuredContent: { month: 3 } } });
    bridge.handle({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "hidden", arguments: {} } });
    bridge.handle({ jsonrpc: "2.0", id: 10, method: "sampling/createMessage", params: {} });
    await settle();
    await settle();
    expect(calls).toEqual(["readResource ui://x/y", "openLink https://example.com/a", "message show March", 'context {"structuredContent":{"month":3}}']);
    expect(sent.find((m) => m.id === 4)).toMatchObject({ error: { code: -32602 } });
    expect(sent.find((m) => m.id === 8)).toMatchObject({ error: { message: 'the tool "hidden" is not callable by this app' } });
    expect(sent.find((m) => m.id === 10)).toMatchObject({ error: { code: -32601 } });
    check("McpUiOpenLinkResult", sent.find((m) => m.id === 3)?.result);
    check("McpUiMessageResult", sent.find((m) => m.id === 5)?.result);
  });

  it("APPS-4: a host that does not add an app's context to the model does not declare updateModelContext and answers it as unknown", async () => {
    const { bridge, sent, calls } = setup({ updateModelContext: undefined });
    const init = await initialize(bridge, sent);
    expect((init?.result as { hostCapabilities: Record<string, unknown> }).hostCapabilities).not.toHaveProperty("updateModelContext");
    bridge.handle({ jsonrpc: "2.0", id: 6, method: "ui/update-model-context", params: { structuredContent: { month: 3 } } });
    await settle();
    expect(sent.find((m) => m.id === 6)).toMatchObject({ error: { code: -32601 } });
    expect(calls).toEqual([]);
  });

  it("APPS-3: the page's own sandbox messages are never taken from the app side twice", async () => {
    const { bridge, sent } = setup();
    await initialize(bridge, sent);
    const before = sent.length;
    bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} });
    expect(sent.length).toBe(before);
  });
});
