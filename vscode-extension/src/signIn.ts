// Sign-in on the VS Code side (AUTH-2, AUTH-9), free of `vscode` imports so vitest can load it:
// the pending `wave/mcp/login` requests the page's Cancel can cancel, and the answer to the
// sidecar's `wave/mcp/openUrl` request.

import type { OpenUrlParams, OpenUrlResult } from "./protocol.generated";

/** What a cancellation token source must offer (vscode.CancellationTokenSource has it). */
export interface Cancellable<T> {
  readonly token: T;
  cancel(): void;
  dispose(): void;
}

/**
 * The running sign-ins, one per (session, server). A new sign-in of the same server replaces the
 * old entry (the sidecar cancels the old request itself and answers it with `signInCancelled`);
 * Cancel sends `$/cancelRequest` through the request's token.
 */
export class PendingLogins<T> {
  private readonly running = new Map<string, Cancellable<T>>();

  constructor(private readonly makeSource: () => Cancellable<T>) {}

  private static key(sessionId: string | undefined, name: string): string {
    return `${sessionId ?? "default"}\u0000${name}`;
  }

  /** Runs `send` with a fresh token registered under (session, name); forgets it when done. */
  async run<R>(sessionId: string | undefined, name: string, send: (token: T) => Promise<R>): Promise<R> {
    const key = PendingLogins.key(sessionId, name);
    const source = this.makeSource();
    this.running.set(key, source);
    try {
      return await send(source.token);
    } finally {
      if (this.running.get(key) === source) this.running.delete(key);
      source.dispose();
    }
  }

  /** Cancels the running sign-in of (session, name); false when none runs. */
  cancel(sessionId: string | undefined, name: string): boolean {
    const key = PendingLogins.key(sessionId, name);
    const source = this.running.get(key);
    if (!source) return false;
    this.running.delete(key);
    source.cancel();
    return true;
  }

  /** Cancels every running sign-in (the sidecar stops, the extension deactivates). */
  cancelAll(): void {
    const all = [...this.running.values()];
    this.running.clear();
    for (const s of all) s.cancel();
  }

  get size(): number {
    return this.running.size;
  }
}

/** What answering `wave/mcp/openUrl` needs from VS Code. */
export interface OpenUrlDeps {
  /** `vscode.env.openExternal`: true when the URL was handed to a browser. */
  openExternal(url: string): Promise<boolean>;
  /** A notification with actions; resolves with the picked action (or undefined when dismissed). */
  showInformation(message: string, ...actions: string[]): Thenable<string | undefined> | Promise<string | undefined>;
  /** `vscode.env.clipboard.writeText`. */
  copy(text: string): Thenable<void> | Promise<void>;
  /** The texts in the display language. */
  zh: boolean;
}

export function openUrlTexts(
  zh: boolean,
  name: string,
  url: string,
  purpose: OpenUrlParams["purpose"] = "signIn",
): { message: string; copy: string; open: string } {
  // LONG-6: a page a server asked to open, which the user accepted in the chat.
  if (purpose === "elicitation")
    return zh
      ? { message: `Wave：MCP 服务“${name}”请求的页面已在浏览器中打开：${url}`, copy: "复制链接", open: "打开链接" }
      : { message: `Wave: the page the MCP server "${name}" asked for opens in your browser: ${url}`, copy: "Copy URL", open: "Open URL" };
  return zh
    ? { message: `Wave：登录 MCP 服务“${name}”：请在浏览器中完成登录。${url}`, copy: "复制链接", open: "打开链接" }
    : { message: `Wave: sign in to the MCP server "${name}" in your browser: ${url}`, copy: "Copy URL", open: "Open URL" };
}

/**
 * Answers `wave/mcp/openUrl`: the URL is always shown (a notification with "Copy URL" and
 * "Open URL", AUTH-2) and opened with `openExternal` (also in remote set-ups). The answer does
 * not wait for the notification: `{opened}` is what `openExternal` said, so `false` lets the
 * sidecar open it itself. Never throws.
 */
export async function answerOpenUrl(params: OpenUrlParams, deps: OpenUrlDeps): Promise<OpenUrlResult> {
  const texts = openUrlTexts(deps.zh, params.name, params.url, params.purpose);
  void Promise.resolve(deps.showInformation(texts.message, texts.copy, texts.open))
    .then(async (pick) => {
      if (pick === texts.copy) await deps.copy(params.url);
      else if (pick === texts.open) await deps.openExternal(params.url);
    })
    .catch(() => undefined);
  let opened = false;
  // Only a web page: anything else the sidecar may open with its own opener, if at all.
  if (!/^https?:\/\//i.test(params.url)) return { opened };
  try {
    opened = await deps.openExternal(params.url);
  } catch {
    opened = false;
  }
  return { opened };
}
