// The MCP Apps sandbox proxy (ext-apps 2026-01-26, "Sandbox proxy"), served by the sidecar on
// its sandbox origin. It tells the chat page it is ready, puts the app's HTML into an inner
// iframe (sandboxed without same-origin: the app gets an opaque origin and inherits this page's
// Content-Security-Policy), and relays JSON-RPC messages between the page (its parent) and the
// app, except the `ui/notifications/sandbox-*` ones, which are between the page and this proxy.
(() => {
  "use strict";
  const host = window.parent;
  if (host === window) return;
  const allow = document.currentScript ? document.currentScript.dataset.allow || "" : "";
  const reserved = (message) =>
    typeof message.method === "string" && message.method.startsWith("ui/notifications/sandbox-");
  let inner = null;
  window.addEventListener("message", (event) => {
    const message = event.data;
    if (!message || typeof message !== "object" || message.jsonrpc !== "2.0") return;
    if (event.source === host) {
      if (message.method === "ui/notifications/sandbox-resource-ready") {
        const html = message.params && message.params.html;
        if (inner || typeof html !== "string") return;
        inner = document.createElement("iframe");
        inner.setAttribute("sandbox", "allow-scripts allow-forms");
        if (allow) inner.setAttribute("allow", allow);
        inner.setAttribute("title", "MCP app");
        inner.srcdoc = html;
        document.body.appendChild(inner);
        return;
      }
      if (reserved(message) || !inner || !inner.contentWindow) return;
      inner.contentWindow.postMessage(message, "*");
      return;
    }
    if (inner && event.source === inner.contentWindow && !reserved(message)) {
      host.postMessage(message, "*");
    }
  });
  host.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, "*");
})();
