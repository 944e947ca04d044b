// The VS Code side of the page's bridge: request/answer over postMessage, plus pushes.

import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";
import type { HostErrorPayload, HostToPage, PageToHost } from "../webview/src/hostApi";
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

  push(method: string, params: unknown): void {
    if (this.disposed) return;
    const message: HostToPage = { kind: "push", method, params };
    void Promise.resolve(this.webview.postMessage(message)).catch(() => undefined);
  }

  dispose(): void {
    this.disposed = true;
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
