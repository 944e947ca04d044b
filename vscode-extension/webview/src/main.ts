// Entry of the shared webview bundle (VS Code webviews and the JetBrains JCEF editor).
//
// The host says which page to show and in which language through attributes of <body>
// (`data-page="settings|chat"`, `data-lang="zh-cn"`, `data-session="default"`) or, when it
// loads the page by URL, the query string (`?page=settings&lang=zh`).

import "./styles.css";
import { selectBridge, type BridgeWindow } from "./bridge";
import { ChatPage } from "./chatPage";
import { langFromLocale, t } from "./i18n";
import { SettingsPage } from "./settingsPage";

declare global {
  interface Window {
    /** For tests: the page object. */
    wavePage?: SettingsPage | ChatPage;
  }
}

async function main(): Promise<void> {
  const query = new URLSearchParams(location.search);
  const body = document.body;
  const page = body.dataset.page || query.get("page") || "settings";
  const lang = langFromLocale(body.dataset.lang || query.get("lang") || navigator.language);
  const sessionId = body.dataset.session || query.get("session") || "default";
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  const root = document.getElementById("app") ?? body;
  let bridge;
  try {
    bridge = await selectBridge(window as unknown as BridgeWindow);
  } catch {
    root.textContent = t(lang, "hostUnavailable");
    return;
  }
  body.dataset.bridge = bridge.kind;
  if (page === "chat") {
    const chat = new ChatPage(root, bridge, lang, sessionId);
    window.wavePage = chat;
    await chat.load();
  } else {
    const settings = new SettingsPage(root, bridge, lang, sessionId);
    window.wavePage = settings;
    settings.render();
    await settings.load();
  }
  body.dataset.ready = "true";
}

void main();
