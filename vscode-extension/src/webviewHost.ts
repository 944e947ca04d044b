// The VS Code side of the page's bridge: request/answer over postMessage, plus pushes.

import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";
import type { HostErrorPayload, HostToPage, PageToHost } from "../webview/src/hostApi";
import { PendingAsks, type PageAsk } from "./pageAsks";
import { checkPageRequest } from "./pageMessages";
import type { HostAnswerParams, HostAppsTornDown } from "./protocol.generated";
import { webviewHtml } from "./webviewHtml";

export type RequestHandler = (method: string, params: unknown) => Promise<unknown>;

/** How long a request the page answers waits for its answer (the JetBrains plugin's too). */
export const ASK_TIMEOUT_MS = 30 * 60_000;

export function errorPayload(e: unknown): HostErrorPayload {
  if (e instanceof ResponseError) return { message: e.message, code: e.code, data: e.data };
  if (e instanceof Error) return { message: e.message };
  return { message: String(e) };
}

export class WebviewHost implements vscode.Disposable {
  private readonly subscriptions: vscode.Disposable[] = [];
  private disposed = false;
  /** Sidecar requests handed to the page (`PAGE_ANSWERED_REQUESTS`), by id, until `host/answer`. */
  private readonly asked: PendingAsks;

  /** `asksChanged` is told how many of those wait, after each change. */
  constructor(
    private readonly webview: vscode.Webview,
    handler: RequestHandler,
    asksChanged?: (waiting: number) => void,
  ) {
    this.asked = new PendingAsks(ASK_TIMEOUT_MS, asksChanged);
    this.subscriptions.push(
      webview.onDidReceiveMessage(async (raw: PageToHost) => {
        // TRUST-8: only well-formed requests of known methods, with object params, within a size
        // limit, reach the handler (and through it the sidecar).
        const request = checkPageRequest(raw);
        if (!request.ok) {
          if (request.id !== undefined) this.post({ kind: "response", id: request.id, error: { message: request.error } });
          return;
        }
        let answer: HostToPage;
        try {
          const result = await handler(request.method, request.params);
          answer = { kind: "response", id: request.id, result: result ?? null };
        } catch (e) {
          answer = { kind: "response", id: request.id, error: errorPayload(e) };
        }
        // The page may be gone by now (closeSettings disposes it); nothing to answer then.
        if (!this.disposed) void Promise.resolve(this.webview.postMessage(answer)).catch(() => undefined);
      }),
    );
  }

  /**
   * Hands a sidecar request to the page (a push with an `id`) and resolves with the page's
   * `host/answer`; rejects when the webview is disposed or the sidecar restarts first
   * (`failAsked`), or after `ASK_TIMEOUT_MS`. A page that loses its state while the webview
   * stays (a hidden view) gets it again through `reshowAsked`.
   */
  ask(method: string, params: unknown): Promise<unknown> {
    if (this.disposed) return Promise.reject(new Error("the chat page is closed"));
    return this.asked.ask(method, params, (ask) => this.post({ kind: "push", method: ask.method, params: ask.params, id: ask.id }));
  }

  /**
   * APPS-3, `host/teardownApps`: asks the page to tear its app views down (each app gets
   * `ui/resource-teardown` first) and resolves with its answer, or with `undefined` when the page
   * is gone or did not answer within `waitMs` (a stuck page never blocks the caller). Never
   * delivered again to a later page.
   */
  async teardownApps(reason: string, waitMs: number): Promise<HostAppsTornDown | undefined> {
    if (this.disposed) return undefined;
    try {
      const post = (ask: PageAsk) => this.post({ kind: "push", method: ask.method, params: ask.params, id: ask.id });
      return (await this.asked.ask("host/teardownApps", { reason }, post, { timeoutMs: waitMs, once: true })) as HostAppsTornDown;
    } catch {
      return undefined;
    }
  }

  /** `host/answer` of the page: settles the request it answers (unknown ids are ignored). */
  answer(params: HostAnswerParams): null {
    this.asked.answer(params);
    return null;
  }

  /** A new page opened in this webview: the requests still waiting go to it, with their ids. */
  reshowAsked(): void {
    for (const ask of this.asked.pending()) this.post({ kind: "push", method: ask.method, params: ask.params, id: ask.id });
  }

  /** Fails every request still waiting: the sidecar answers its server `decline`. */
  failAsked(reason: string): void {
    this.asked.failAll(reason);
  }

  push(method: string, params: unknown): void {
    this.post({ kind: "push", method, params });
  }

  private post(message: HostToPage): void {
    if (this.disposed) return;
    void Promise.resolve(this.webview.postMessage(message)).catch(() => undefined);
  }

  dispose(): void {
    this.disposed = true;
    this.asked.failAll("the chat page closed");
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
