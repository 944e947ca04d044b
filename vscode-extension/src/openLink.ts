// USE-4: `host/openExternal` of the chat page: a link of the assistant's answer opens in the
// browser only after the user confirms it. Pure (no `vscode` import), so the unit tests drive it.

import type { HostOpenExternalParams } from "./protocol.generated";

/** What opening a chat link needs from VS Code. */
export interface OpenLinkDeps {
  /** A modal question showing the URL; resolves with the picked action (undefined: cancelled). */
  confirm(message: string, detail: string, open: string): Thenable<string | undefined> | Promise<string | undefined>;
  /** `vscode.env.openExternal`. */
  openExternal(url: string): Thenable<boolean> | Promise<boolean>;
  zh: boolean;
}

/** The URL of a page's `host/openExternal` when it is an http, https or mailto URL; else why not. */
export function checkLink(params: unknown): { url: string } | { error: string } {
  const url = (params as Partial<HostOpenExternalParams> | undefined)?.url;
  if (typeof url !== "string" || url === "") return { error: "host/openExternal needs a url" };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { error: `host/openExternal: not a URL: ${url.slice(0, 200)}` };
  }
  if (!["http:", "https:", "mailto:"].includes(parsed.protocol))
    return { error: `host/openExternal opens only http, https and mailto links, not ${parsed.protocol}` };
  return { url };
}

/**
 * Answers `host/openExternal`: asks the user (the URL in full) and opens it only on "Open".
 * Resolves with whether it was opened; rejects with a clear error for a URL it never opens.
 */
export async function openLink(params: unknown, deps: OpenLinkDeps): Promise<boolean> {
  const checked = checkLink(params);
  if ("error" in checked) throw new Error(checked.error);
  const open = deps.zh ? "打开" : "Open";
  const message = deps.zh ? "在浏览器中打开 Wave 聊天中的链接？" : "Open the link from the Wave chat in your browser?";
  const pick = await deps.confirm(message, checked.url, open);
  if (pick !== open) return false;
  return await deps.openExternal(checked.url);
}
