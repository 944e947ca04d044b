// Stop and "Start again" of an app view (APPS-3, APPS-5): the pure rules of appState.ts, and the
// bridge's side of a teardown (the app's tools/call reaches the host no more), with real
// `AppBridge`s: a view started again gets the same tool input and result as the first time.

import { describe, expect, it } from "vitest";
import { AppBridge, type AppHostCalls, type RpcMessage } from "../../webview/src/appBridge";
import { isLive, parseArguments, replay, stopShown, storeEnding, teardownEvery, type AppEnding, type AppPhase } from "../../webview/src/appState";

const settle = () => new Promise((r) => setTimeout(r, 0));

/** A bridge whose posts and host calls are recorded. */
function setup(over: Partial<AppHostCalls> = {}) {
  const sent: RpcMessage[] = [];
  const calls: string[] = [];
  const host: AppHostCalls = {
    callTool: async (name) => {
      calls.push(`callTool ${name}`);
      return { content: [], structuredContent: { load: 1 } };
    },
    readResource: async () => ({ contents: [] }),
    openLink: async () => undefined,
    message: async () => undefined,
    log: () => undefined,
    resize: () => undefined,
    requestTeardown: () => undefined,
    ...over,
  };
  const bridge = new AppBridge({
    post: (m) => sent.push(m),
    resource: { html: "<p>app</p>" },
    hostInfo: { name: "wave-mcp", version: "0.1.0" },
    context: { theme: "dark", displayMode: "inline", availableDisplayModes: ["inline"], platform: "desktop" },
    calls: host,
    teardownMs: 50,
  });
  return { bridge, sent, calls };
}

/** The proxy is ready, the app initialized. */
async function initialize(bridge: AppBridge) {
  bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} });
  bridge.handle({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { appInfo: { name: "a", version: "1" }, appCapabilities: {}, protocolVersion: "2026-01-26" } });
  await settle();
  bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
}

const toolNotes = (sent: RpcMessage[]) => sent.filter((m) => m.method?.startsWith("ui/notifications/tool")).map((m) => ({ method: m.method, params: m.params }));

describe("APPS-3: Stop and Start again of an app view", () => {
  it("APPS-3: the chat's Stop shows while a turn runs or an app view is live (loading or running), not for stopped, stopping or failed views", () => {
    expect(stopShown(1, [])).toBe(true);
    expect(stopShown(0, [])).toBe(false);
    expect(stopShown(0, ["stopped", "live"])).toBe(true);
    expect(stopShown(0, ["loading"])).toBe(true);
    expect(stopShown(0, ["stopped", "stopping", "failed"])).toBe(false);
    expect(["loading", "live", "stopping", "stopped", "failed"].filter((p) => isLive(p as never))).toEqual(["loading", "live"]);
  });

  it("APPS-3: the ending kept for a start again: the first result stays, a result replaces a cancellation, a cancellation replaces nothing", () => {
    const cancelled: AppEnding = { kind: "cancelled", reason: "Stopped." };
    const result: AppEnding = { kind: "result", result: { content: [], structuredContent: { a: 1 } }, isError: false };
    const later: AppEnding = { kind: "result", result: { content: [] }, isError: true };
    expect(storeEnding(undefined, cancelled)).toBe(cancelled);
    expect(storeEnding(cancelled, result)).toBe(result);
    expect(storeEnding(result, later)).toBe(result);
    expect(storeEnding(result, cancelled)).toBe(result);
  });

  it("APPS-3: a Stop during the call: tool-cancelled reaches the app before ui/resource-teardown; the teardown's answer (even an error: the app heard it) resolves true", async () => {
    const { bridge, sent } = setup();
    await initialize(bridge);
    replay(bridge, '{"a":1}', undefined);
    bridge.toolCancelled("Stopped.");
    const done = bridge.teardown("Stopped.");
    const order = sent.map((m) => m.method).filter((m) => m?.startsWith("ui/notifications/tool") || m === "ui/resource-teardown");
    expect(order).toEqual(["ui/notifications/tool-input", "ui/notifications/tool-cancelled", "ui/resource-teardown"]);
    const teardown = sent.at(-1)!;
    // An app without a teardown handler answers "method not found": it heard it.
    bridge.handle({ jsonrpc: "2.0", id: teardown.id, error: { code: -32601, message: "Method not found" } });
    expect(await done).toBe(true);
  });

  it("APPS-3: an app that does not answer its teardown is closed after the bounded wait (false); a never-initialized one at once", async () => {
    const { bridge } = setup();
    await initialize(bridge);
    expect(await bridge.teardown("Stopped.")).toBe(false);
    expect(bridge.state).toBe("closed");
    const fresh = setup();
    expect(await fresh.bridge.teardown("Stopped.")).toBe(false);
    expect(fresh.sent).toEqual([]);
  });

  it("APPS-3, APPS-4: a stopped app's polling reaches the host no more: its tools/call after the teardown is not relayed nor answered", async () => {
    const { bridge, sent, calls } = setup();
    await initialize(bridge);
    bridge.handle({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "poll-system-stats", arguments: {} } });
    await settle();
    expect(calls).toEqual(["callTool poll-system-stats"]);
    const done = bridge.teardown("Stopped.");
    bridge.handle({ jsonrpc: "2.0", id: sent.at(-1)!.id, result: {} });
    await done;
    bridge.handle({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "poll-system-stats", arguments: {} } });
    await settle();
    expect(calls).toEqual(["callTool poll-system-stats"]);
    expect(sent.some((m) => m.id === 3)).toBe(false);
  });

  it("APPS-3, APPS-5: started again, a new bridge gets the same tool input and result as the first (the stored call replayed, nothing called)", async () => {
    const args = '{"city":"Paris"}';
    const ending: AppEnding = { kind: "result", result: { content: [{ type: "text", text: "ok" }], structuredContent: { t: 20 }, _meta: { x: 1 } }, isError: false };
    const first = setup();
    await initialize(first.bridge);
    replay(first.bridge, args, ending);
    const again = setup();
    // The result is known before the new frame is up: nothing goes before `initialized`.
    replay(again.bridge, args, ending);
    expect(toolNotes(again.sent)).toEqual([]);
    await initialize(again.bridge);
    expect(toolNotes(again.sent)).toEqual(toolNotes(first.sent));
    expect(toolNotes(again.sent).map((m) => m.method)).toEqual(["ui/notifications/tool-input", "ui/notifications/tool-result"]);
    expect(toolNotes(again.sent)[1].params).toMatchObject({ structuredContent: { t: 20 }, _meta: { x: 1 } });
    expect(again.calls).toEqual([]);
  });

  it("APPS-3: an error result is marked isError for the app; a cancelled call replays as tool-cancelled; arguments that are not an object are {}", async () => {
    const errored = setup();
    await initialize(errored.bridge);
    replay(errored.bridge, "{}", { kind: "result", result: { content: [] }, isError: true });
    expect(toolNotes(errored.sent)[1].params).toEqual({ content: [], isError: true });
    const stopped = setup();
    await initialize(stopped.bridge);
    replay(stopped.bridge, "{}", { kind: "cancelled", reason: "Stopped." });
    expect(toolNotes(stopped.sent).map((m) => m.method)).toEqual(["ui/notifications/tool-input", "ui/notifications/tool-cancelled"]);
    expect(parseArguments("[1]")).toEqual({});
    expect(parseArguments("not json")).toEqual({});
  });
});

describe("APPS-3: the host's host/teardownApps and the app's request-teardown", () => {
  /** A view as `AppViews` keeps it: a phase, a real bridge, a teardown while one runs. */
  type View = { phase: AppPhase; stopping?: Promise<boolean>; bridge: AppBridge; sent: RpcMessage[] };
  const stop = (v: View) => {
    v.phase = "stopping";
    v.stopping = v.bridge.teardown("the sidecar restarted").then((heard) => {
      v.phase = "stopped";
      return heard;
    });
    return v.stopping;
  };
  const answerTeardown = (v: View) => {
    const asked = v.sent.find((m) => m.method === "ui/resource-teardown");
    if (asked) v.bridge.handle({ jsonrpc: "2.0", id: asked.id, result: {} });
  };

  it("APPS-3: host/teardownApps tears every live view down, each after ui/resource-teardown, and settles with how many apps answered", async () => {
    const views: View[] = [];
    for (let i = 0; i < 3; i++) {
      const { bridge, sent } = setup();
      await initialize(bridge);
      views.push({ phase: "live", bridge, sent });
    }
    // A stopped view has no app left: it is neither told nor counted.
    const stopped = setup();
    views.push({ phase: "stopped", bridge: stopped.bridge, sent: stopped.sent });
    const done = teardownEvery(views, stop);
    expect(views.slice(0, 3).map((v) => v.sent.filter((m) => m.method === "ui/resource-teardown").length)).toEqual([1, 1, 1]);
    expect(stopped.sent).toEqual([]);
    // Two apps answer; the third never does and is closed after the bounded wait.
    answerTeardown(views[0]);
    answerTeardown(views[1]);
    expect(await done).toEqual({ total: 3, answered: 2 });
    expect(views.map((v) => v.phase)).toEqual(["stopped", "stopped", "stopped", "stopped"]);
    expect(views.map((v) => v.bridge.state)).toEqual(["closed", "closed", "closed", "loading"]);
  });

  it("APPS-3: host/teardownApps waits for a view already stopping (its card's Stop) and counts it once; no view: answered at once with 0", async () => {
    const { bridge, sent } = setup();
    await initialize(bridge);
    const view: View = { phase: "live", bridge, sent };
    const ownStop = stop(view);
    let settled = false;
    // Stopping already: the same teardown is awaited, no second ui/resource-teardown is sent.
    const done = teardownEvery([view], (v) => v.stopping ?? stop(v)).then((r) => {
      settled = true;
      return r;
    });
    await settle();
    expect(settled).toBe(false);
    answerTeardown(view);
    expect(await done).toEqual({ total: 1, answered: 1 });
    expect(await ownStop).toBe(true);
    expect(sent.filter((m) => m.method === "ui/resource-teardown")).toHaveLength(1);
    expect(await teardownEvery([], stop)).toEqual({ total: 0, answered: 0 });
  });

  it("APPS-3: an app's ui/notifications/request-teardown asks the host to tear it down, once it is initialized and only while it runs", async () => {
    let asked = 0;
    const { bridge, sent } = setup({ requestTeardown: () => void asked++ });
    bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} });
    // Before initialized: not heard (the spec's order).
    bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/request-teardown", params: {} });
    expect(asked).toBe(0);
    bridge.handle({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { appInfo: { name: "a", version: "1" }, appCapabilities: {}, protocolVersion: "2026-01-26" } });
    await settle();
    bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
    bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/request-teardown", params: {} });
    expect(asked).toBe(1);
    // The host decides, and tears it down with ui/resource-teardown (as AppViews does).
    const done = bridge.teardown("the app asked to close");
    expect(sent.at(-1)?.method).toBe("ui/resource-teardown");
    bridge.handle({ jsonrpc: "2.0", id: sent.at(-1)!.id, result: {} });
    expect(await done).toBe(true);
    // Closed: asking again does nothing.
    bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/request-teardown", params: {} });
    expect(asked).toBe(1);
  });
});
