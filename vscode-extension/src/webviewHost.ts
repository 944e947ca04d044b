// The VS Code side of the page's bridge: request/answer over postMessage, plus pushes.

import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";
import type { HostErrorPayload, HostToPage, PageToHost } from "../webview/src/hostApi";
import type { HostAnswerParams } from "./protocol.generated";
import { webviewHtml } from "./webviewHtml";

export type RequestHandler = (method: string, params: unknown) => Promise<unknown>;

export function errorPayload(e: unknown): HostErrorPayload {
  if (e instanceof ResponseError) return { message: e.message, code: e.code, data: e.data };
  if (e instanceof Error) return { message: e.message };
  return { message: String(e) };
}

export class WebviewHost implements vscode.Disposable {
  private readonly subscriptions: vscode.Disposable[] = [];
  private disposed = false;
  /** Sidecar requests handed to the page (`PAGE_ANSWERED_REQUESTS`), by id, until `host/answer`. */
  private readonly asked = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private nextAsk = 1;

  constructor(
    private readonly webview: vscode.Webview,
    handler: RequestHandler,
  ) {
    this.subscriptions.push(
      webview.onDidReceiveMessage(async (raw: PageToHost) => {
        if (!raw || raw.kind !== "request") return;
        let answer: HostToPage;
        try {
          const result = await handler(raw.method, raw.params);
          answer = { kind: "response", id: raw.id, result: result ?? null };
        } catch (e) {
          answer = { kind: "response", id: raw.id, error: errorPayload(e) };
        }
        // The page may be gone by now (closeSettings disposes it); nothing to answer then.
        if (!this.disposed) void Promise.resolve(this.webview.postMessage(answer)).catch(() => undefined);
      }),
    );
  }

  /**
   * Hands a sidecar request to the page (a push with an `id`) and resolves with the page's
   * `host/answer`; rejects when the page goes away first.
   */
  ask(method: string, params: unknown): Promise<unknown> {
    if (this.disposed) return Promise.reject(new Error("the chat page is closed"));
    const id = this.nextAsk++;
    return new Promise((resolve, reject) => {
      this.asked.set(id, { resolve, reject });
      const message: HostToPage = { kind: "push", method, params, id };
      void Promise.resolve(this.webview.postMessage(message)).catch(() => undefined);
    });
  }

  /** `host/answer` of the page: settles the request it answers (unknown ids are ignored). */
  answer(params: HostAnswerParams): null {
    const waiting = this.asked.get(params.id);
    if (!waiting) return null;
    this.asked.delete(params.id);
    if (params.error !== undefined) waiting.reject(new Error(params.error));
    else waiting.resolve(params.result ?? null);
    return null;
  }

  push(method: string, params: unknown): void {
    if (this.disposed) return;
    const message: HostToPage = { kind: "push", method, params };
    void Promise.resolve(this.webview.postMessage(message)).catch(() => undefined);
  }

  dispose(): void {
    this.disposed = true;
    for (const waiting of this.asked.values()) waiting.reject(new Error("the chat page closed"));
    this.asked.clear();
    for (const s of this.subscriptions) s.dispose();
  }
}

export function pageHtml(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  page: "settings" | "chat",
  sessionId: string,
  title: string,
): string {
  const asset = (name: string) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, "dist", "webview", name)).toString();
  return webviewHtml({
    cspSource: webview.cspSource,
    scriptUri: asset("webview.js"),
    styleUri: asset("webview.css"),
    page,
    language: vscode.env.language,
    sessionId,
    title,
  });
}

export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return {
    enableScripts: true,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, "dist", "webview")],
  };
}
