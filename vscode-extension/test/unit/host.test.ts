import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { createJcefBridge, createVsCodeBridge, selectBridge, type BridgeWindow } from "../../webview/src/bridge";
import { HostError } from "../../webview/src/hostApi";
import { langFromLocale, t } from "../../webview/src/i18n";
import { resolveSidecar, sidecarCandidates } from "../../src/sidecarPath";
import { contentSecurityPolicy, webviewHtml } from "../../src/webviewHtml";
import { snap } from "./fixtures";

/** A page window in a VS Code webview: `fire` delivers a message from its host frame (the parent). */
function fakeWindow(): BridgeWindow & {
  fire(data: unknown): void;
  fireFrom(data: unknown, source: unknown, origin: string | undefined): void;
  host: { length: number; [i: number]: unknown };
  parent: unknown;
} {
  const listeners: ((e: { data: unknown; source?: unknown; origin?: string }) => void)[] = [];
  const win = {
    // VS Code sets a webview page's `parent` to the page itself.
    parent: undefined as unknown,
    origin: "vscode-webview://abc",
    addEventListener: (_type: "message", l: (e: { data: unknown; source?: unknown; origin?: string }) => void) => listeners.push(l),
    fire: (data: unknown) => listeners.forEach((l) => l({ data, source: host, origin: "vscode-webview://abc" })),
    fireFrom: (data: unknown, source: unknown, origin: string | undefined) => listeners.forEach((l) => l({ data, source, origin })),
  };
  win.parent = win;
  // The host frame: the page is one of its frames (the next page may load beside it).
  const host: { length: number; [i: number]: unknown } = { length: 2, 0: { name: "the next page" }, 1: win };
  return Object.assign(win, { host });
}

describe("bridges", () => {
  it("VS Code: requests carry ids, answers resolve or reject, pushes arrive (early ones replayed)", async () => {
    const win = fakeWindow();
    const posted: any[] = [];
    const bridge = createVsCodeBridge(win, { postMessage: (m) => posted.push(m) });
    win.fire({ kind: "push", method: "wave/mcp/serversChanged", params: snap(1, []) });
    const pushes: unknown[] = [];
    bridge.onPush((method, params) => pushes.push([method, params]));
    expect(pushes).toEqual([["wave/mcp/serversChanged", snap(1, [])]]);

    const a = bridge.request("wave/mcp/servers", {});
    const b = bridge.request("wave/mcp/delete", { name: "x", source: "plugin" });
    expect(posted.map((p) => [p.kind, p.id, p.method])).toEqual([
      ["request", 1, "wave/mcp/servers"],
      ["request", 2, "wave/mcp/delete"],
    ]);
    win.fire({ kind: "response", id: 2, error: { message: "read-only", code: -32803, data: { kind: "readOnly" } } });
    win.fire({ kind: "response", id: 1, result: snap(4, []) });
    await expect(a).resolves.toEqual(snap(4, []));
    const err = await b.catch((e) => e);
    expect(err).toBeInstanceOf(HostError);
    expect(err.message).toBe("read-only");
    expect(err.data).toEqual({ kind: "readOnly" });
  });

  it("JCEF: waveHostQuery carries {method, params}; waveReceive delivers pushes", async () => {
    const win = fakeWindow();
    const queries: string[] = [];
    win.waveHostQuery = async (json) => {
      queries.push(json);
      const q = JSON.parse(json);
      if (q.method === "wave/mcp/delete") return JSON.stringify({ error: { message: "file missing" } });
      return JSON.stringify({ result: snap(2, []) });
    };
    const bridge = createJcefBridge(win);
    await expect(bridge.request("wave/mcp/servers", { sessionId: "default" })).resolves.toEqual(snap(2, []));
    expect(JSON.parse(queries[0])).toEqual({ method: "wave/mcp/servers", params: { sessionId: "default" } });
    await expect(bridge.request("wave/mcp/delete", { name: "a", source: "user" })).rejects.toThrow("file missing");
    const pushes: unknown[] = [];
    bridge.onPush((m, p) => pushes.push([m, p]));
    win.waveReceive!(JSON.stringify({ method: "host/prefill", params: { text: "x" } }));
    expect(pushes).toEqual([["host/prefill", { text: "x" }]]);
  });

  it("LONG-5: page requests (a push with an id) are answered with host/answer, early ones after the handler is set", async () => {
    const win = fakeWindow();
    const posted: any[] = [];
    const bridge = createVsCodeBridge(win, { postMessage: (m) => posted.push(m) });
    const params = { sessionId: "default", server: "s", mode: "form" as const, message: "m" };
    win.fire({ kind: "push", method: "wave/session/elicit", params, id: 7 });
    expect(posted).toEqual([]);
    const pushes: unknown[] = [];
    bridge.onPush((m) => pushes.push(m));
    let calls = 0;
    bridge.onRequest(async (method, p) => {
      calls += 1;
      if (calls === 2) throw new Error("page gone");
      return { action: "accept", content: { echo: `${method} ${(p as { server: string }).server}` } };
    });
    await new Promise((r) => setTimeout(r, 0));
    expect(posted.map((p) => [p.method, p.params])).toEqual([
      ["host/answer", { id: 7, result: { action: "accept", content: { echo: "wave/session/elicit s" } } }],
    ]);
    win.fire({ kind: "push", method: "wave/session/elicit", params, id: 8 });
    await new Promise((r) => setTimeout(r, 0));
    expect(posted[1].params).toEqual({ id: 8, error: "page gone" });
    expect(pushes).toEqual([]);

    const jwin = fakeWindow();
    const queries: any[] = [];
    jwin.waveHostQuery = async (json) => {
      queries.push(JSON.parse(json));
      return JSON.stringify({ result: null });
    };
    const jcef = createJcefBridge(jwin);
    jcef.onRequest(async () => ({ action: "decline" }));
    jwin.waveReceive!(JSON.stringify({ method: "wave/session/elicit", params, id: 3 }));
    await new Promise((r) => setTimeout(r, 0));
    expect(queries).toEqual([{ method: "host/answer", params: { id: 3, result: { action: "decline" } } }]);
  });

  it("TRUST-8: the VS Code bridge takes messages only from its host frame and its own origin", async () => {
    const win = fakeWindow();
    const posted: { method?: string }[] = [];
    const bridge = createVsCodeBridge(win, { postMessage: (m) => posted.push(m as { method?: string }) });
    const pushes: unknown[] = [];
    bridge.onPush((m) => pushes.push(m));
    const answered: unknown[] = [];
    bridge.onRequest(async (method) => {
      answered.push(method);
      return { approved: [] } as never;
    });
    const pending = bridge.request("wave/mcp/servers", {});
    const iframe = { name: "an iframe of the page", length: 0 };
    const sibling = { name: "a sibling frame", length: 0 };
    const elsewhere = { name: "a window holding other frames", length: 1, 0: { name: "another page" } };
    const forgedAnswer = { kind: "response", id: 1, result: snap(99, []) };
    const forgedAsk = { kind: "push", method: "wave/session/approveServers", params: { sessionId: "default", servers: [] }, id: 5 };
    const forgedPush = { kind: "push", method: "wave/mcp/serversChanged", params: snap(98, []) };
    for (const data of [forgedAnswer, forgedAsk, forgedPush]) {
      win.fireFrom(data, iframe, "vscode-webview://abc"); // a frame of the page, same origin
      win.fireFrom(data, sibling, "vscode-webview://abc"); // a sibling frame, same origin
      win.fireFrom(data, elsewhere, "vscode-webview://abc"); // a window that does not hold the page
      win.fireFrom(data, win.host, "https://evil.example"); // the right window, another origin
      win.fireFrom(data, win, "vscode-webview://abc"); // the page's own window
      win.fireFrom(data, undefined, undefined);
    }
    win.fireFrom({ kind: "push", method: 42, params: {} }, win.host, "vscode-webview://abc"); // malformed
    await new Promise((r) => setTimeout(r, 0));
    expect(pushes).toEqual([]);
    expect(answered).toEqual([]);
    expect(posted.map((p) => p.method)).toEqual(["wave/mcp/servers"]);
    // The host's own answer still arrives.
    win.fire({ kind: "response", id: 1, result: snap(3, []) });
    await expect(pending).resolves.toEqual(snap(3, []));
    // A page whose origin is opaque ("null") trusts no message.
    const opaque = fakeWindow();
    Object.defineProperty(opaque, "origin", { value: "null" });
    const lonely = createVsCodeBridge(opaque, { postMessage: () => undefined });
    const seen: unknown[] = [];
    lonely.onPush((m) => seen.push(m));
    opaque.fireFrom(forgedPush, opaque.host, "null");
    expect(seen).toEqual([]);
  });

  it("TRUST-8: JCEF pushes that are not a JSON object with a method are dropped", () => {
    const win = fakeWindow();
    win.waveHostQuery = async () => "{}";
    const bridge = createJcefBridge(win);
    const pushes: unknown[] = [];
    bridge.onPush((m) => pushes.push(m));
    win.waveReceive!("not json");
    win.waveReceive!("null");
    win.waveReceive!(JSON.stringify({ params: {} }));
    win.waveReceive!(JSON.stringify({ method: "host/prefill", params: { text: "ok" } }));
    expect(pushes).toEqual(["host/prefill"]);
  });

  it("JCEF: a rejected query becomes a HostError", async () => {
    const win = fakeWindow();
    win.waveHostQuery = () => Promise.reject("boom");
    await expect(createJcefBridge(win).request("host/openSettings", {})).rejects.toThrow("boom");
  });

  it("selects VS Code when acquireVsCodeApi exists, else waits for the JCEF query function", async () => {
    const vs = fakeWindow();
    vs.acquireVsCodeApi = () => ({ postMessage: () => undefined });
    expect((await selectBridge(vs)).kind).toBe("vscode");
    const jb = fakeWindow();
    setTimeout(() => (jb.waveHostQuery = async () => "{}"), 60);
    const bridge = await selectBridge(jb, 2000);
    expect(bridge.kind).toBe("jcef");
    expect(typeof jb.waveReceive).toBe("function");
    await expect(selectBridge(fakeWindow(), 50)).rejects.toThrow("no host bridge");
  });
});

describe("i18n", () => {
  it("follows VS Code's display language", () => {
    expect(langFromLocale("zh-cn")).toBe("zh");
    expect(langFromLocale("zh-TW")).toBe("zh");
    expect(langFromLocale("en")).toBe("en");
    expect(langFromLocale("de")).toBe("en");
    expect(langFromLocale(undefined)).toBe("en");
  });
  it("fills placeholders", () => {
    expect(t("en", "tools", { n: 4 })).toBe("4 tools");
    expect(t("zh", "connectingEllipsis")).toBe("连接中...");
    expect(t("zh", "disconnectingEllipsis")).toBe("断开中...");
    expect(t("en", "reconnect")).toBe("Reconnect");
    expect(t("zh", "reconnect")).toBe("重连");
  });
});

describe("webview HTML (strict CSP)", () => {
  it("allows only our nonce'd script and the extension's own styles", () => {
    const csp = contentSecurityPolicy("vscode-resource:", "abc");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'nonce-abc'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    // Remote: only images over https (servers' icons, SRV-4); http only to frame the sidecar's
    // loopback sandbox origin of MCP apps (APPS-2); nothing else remote.
    expect(csp.split("; ").filter((d) => d.includes("http:"))).toEqual(["frame-src http://127.0.0.1:*"]);
    expect(csp.split("; ").filter((d) => d.includes("https:"))).toEqual(["img-src vscode-resource: data: https:"]);
    const html = webviewHtml({
      cspSource: "vscode-resource:",
      scriptUri: "vscode-resource:/dist/webview/webview.js",
      styleUri: "vscode-resource:/dist/webview/webview.css",
      page: "settings",
      language: "zh-cn",
      sessionId: "default",
      title: "x",
      nonce: "abc",
    });
    expect(html).toContain('<script nonce="abc" src="vscode-resource:/dist/webview/webview.js"></script>');
    expect(html).toContain('data-page="settings" data-lang="zh-cn"');
    expect(html.match(/<script/g)).toHaveLength(1);
  });
});

describe("sidecar binary", () => {
  it("prefers the setting, then the bundled binary, then workspace builds", () => {
    const c = sidecarCandidates({ setting: " /opt/wave-mcp ", extensionPath: "/ext", workspaceFolders: ["/ws"], workspaceTrusted: true, platform: "linux" });
    expect(c.map((x) => [x.origin, x.path])).toEqual([
      ["setting", "/opt/wave-mcp"],
      ["bundled", "/ext/bin/wave-mcp"],
      ["workspace", "/ws/target/release/wave-mcp"],
      ["workspace", "/ws/target/debug/wave-mcp"],
    ]);
  });

  it("falls back to the workspace build; a setting pointing nowhere is an error", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wave-sidecar-"));
    fs.mkdirSync(path.join(dir, "target", "debug"), { recursive: true });
    fs.writeFileSync(path.join(dir, "target", "debug", "wave-mcp"), "");
    expect(resolveSidecar({ extensionPath: "/nowhere", workspaceFolders: [dir], workspaceTrusted: true })).toEqual({
      path: path.join(dir, "target", "debug", "wave-mcp"),
      origin: "workspace",
    });
    expect(() => resolveSidecar({ setting: "/no/such/file", extensionPath: "/nowhere", workspaceFolders: [dir], workspaceTrusted: true })).toThrow(
      "wave.sidecarPath",
    );
    expect(() => resolveSidecar({ extensionPath: "/nowhere", workspaceFolders: [], workspaceTrusted: true })).toThrow("no wave-mcp binary");
    fs.rmSync(dir, { recursive: true });
  });

  // TRUST-9: a cloned repository's `target/debug/wave-mcp` is its own code: in Restricted Mode
  // it is never chosen, so opening the folder runs nothing of it.
  it("TRUST-9: never runs a binary of an untrusted workspace", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wave-sidecar-"));
    fs.mkdirSync(path.join(dir, "target", "debug"), { recursive: true });
    fs.writeFileSync(path.join(dir, "target", "debug", "wave-mcp"), "#!/bin/sh\ntouch PWNED\n");
    expect(() => resolveSidecar({ extensionPath: "/nowhere", workspaceFolders: [dir], workspaceTrusted: false })).toThrow(
      "in a trusted workspace",
    );
    expect(sidecarCandidates({ extensionPath: "/ext", workspaceFolders: [dir], workspaceTrusted: false }).map((c) => c.origin)).toEqual([
      "bundled",
    ]);
    fs.rmSync(dir, { recursive: true });
  });
});
