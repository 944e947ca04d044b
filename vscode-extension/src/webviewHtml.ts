// The HTML of a webview that loads the shared bundle. Pure (no `vscode` import).

import { randomBytes } from "node:crypto";

export interface WebviewHtmlOptions {
  /** `webview.cspSource`. */
  cspSource: string;
  scriptUri: string;
  styleUri: string;
  page: "settings" | "chat";
  /** `vscode.env.language`. */
  language: string;
  sessionId: string;
  title: string;
  nonce?: string;
}

export function makeNonce(): string {
  return randomBytes(18).toString("base64").replace(/[^A-Za-z0-9]/g, "");
}

const escapeAttr = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * Strict CSP: nothing by default; our one script only by nonce; styles only from the extension
 * (no inline styles, no eval). Images from the extension, `data:`, and `https:` for the icons
 * servers declare (SRV-4: the sidecar passes no other scheme); nothing else remote.
 */
export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource}`,
    `img-src ${cspSource} data: https:`,
    `font-src ${cspSource}`,
    "connect-src 'none'",
    // APPS-2: MCP apps run in the sidecar's sandbox proxy on a loopback origin of its own.
    "frame-src http://127.0.0.1:*",
    "form-action 'none'",
    "base-uri 'none'",
  ].join("; ");
}

export function webviewHtml(o: WebviewHtmlOptions): string {
  const nonce = o.nonce ?? makeNonce();
  return `<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(contentSecurityPolicy(o.cspSource, nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeAttr(o.title)}</title>
<link rel="stylesheet" href="${escapeAttr(o.styleUri)}">
</head>
<body data-page="${o.page}" data-lang="${escapeAttr(o.language)}" data-session="${escapeAttr(o.sessionId)}">
<div id="app"></div>
<script nonce="${nonce}" src="${escapeAttr(o.scriptUri)}"></script>
</body>
</html>`;
}
