// The VS Code extension: starts the sidecar, hosts the chat view and the settings page, and does
// the host side of their requests. The pages themselves (webview/) hold all UI logic.

import { channelLevel, channelName, channelText } from "./serverLogs";
import * as vscode from "vscode";
import {
  DEFAULT_SESSION_ID,
  FORWARDED_NOTIFICATIONS,
  Methods,
  PAGE_ANSWERED_REQUESTS,
  type HostAnswerParams,
  type Requests,
} from "./protocol.generated";
import { API_KEY_SECRET, FORWARDED, Sidecar, type RequestMethod } from "./sidecar";
import { openLink } from "./openLink";
import { answerOpenUrl, PendingLogins } from "./signIn";
import { pageHtml, WebviewHost, webviewOptions } from "./webviewHost";
import { langFromLocale } from "../webview/src/i18n";

const CHAT_VIEW_ID = "wave.chat";
/** How long a server's question waits for the chat view to open before it is declined. */
const CHAT_READY_WAIT_MS = 10_000;
/** APPS-3: how long the host waits for the chat page to tear its apps down (each app: 1 s). */
const TEARDOWN_WAIT_MS = 3_000;

let sidecar: Sidecar | undefined;
/** APPS-3: tears the chat's apps down (bounded); `deactivate` calls it. */
let teardownChatApps: ((reason: string) => Promise<void>) | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("Wave", { log: true });
  const side = new Sidecar(context, output);
  sidecar = side;
  // The conversation lives in the sidecar (CHAT-1): the chat page loads it with
  // `wave/session/history`. The host keeps only a prefill that waits for a chat page.
  let pendingPrefill: string | undefined;
  const zh = langFromLocale(vscode.env.language) === "zh";

  let settings: { panel: vscode.WebviewPanel; host: WebviewHost } | undefined;
  let chatView: { view: vscode.WebviewView; host: WebviewHost; ready: boolean } | undefined;

  // AUTH-9: running sign-ins, so that the page's Cancel can cancel the request ($/cancelRequest).
  const logins = new PendingLogins(() => new vscode.CancellationTokenSource());
  context.subscriptions.push({ dispose: () => logins.cancelAll() });

  // AUTH-2: the sidecar asks us to open the authorization URL: shown in a notification (with
  // Copy URL) and opened with openExternal, which works in remote set-ups too.
  side.handle(Methods.mcpOpenUrl, (params) => {
    output.appendLine(`sign-in of ${params.name}: opening the authorization page`);
    return answerOpenUrl(params, {
      zh,
      // The URL as a string: VS Code's openExternal then opens it verbatim (a Uri would be
      // re-encoded on the way, and the authorization URL carries an encoded redirect_uri).
      openExternal: (url) => Promise.resolve(vscode.env.openExternal(url as unknown as vscode.Uri)),
      showInformation: (message, ...actions) => vscode.window.showInformationMessage(message, ...actions),
      copy: (text) => vscode.env.clipboard.writeText(text),
    });
  });

  // LONG-5, LONG-6: the sidecar requests the chat page answers (a server asks the user) go to
  // the chat page that is showing; without one the sidecar gets an error (and declines).
  for (const method of PAGE_ANSWERED_REQUESTS) {
    side.handle(method, async (params) => {
      // A hidden chat view is shown first; it says `host/chatOpened` once it can take it.
      await focusChat().catch(() => undefined);
      for (let waited = 0; !chatView?.ready && waited < CHAT_READY_WAIT_MS; waited += 100) {
        await new Promise((r) => setTimeout(r, 100));
      }
      if (!chatView?.ready) throw new Error("no Wave chat page is showing");
      return (await chatView.host.ask(method, params)) as Requests[typeof method]["result"];
    });
  }

  const forward = (method: string, params: unknown) => {
    if (!FORWARDED.has(method)) throw new Error(`unknown request ${method}`);
    return side.request(method as RequestMethod, params as Requests[RequestMethod]["params"]);
  };

  const notify = (level: string, message: string) => {
    if (level === "error") void vscode.window.showErrorMessage(message);
    else if (level === "warning") void vscode.window.showWarningMessage(message);
    else void vscode.window.showInformationMessage(message);
  };

  const focusChat = async () => {
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  };

  // APPS-3: before the session or its page goes, every live app view gets
  // `ui/resource-teardown` (the page's `host/teardownApps`). Bounded: a stuck or hidden page
  // (VS Code discards a hidden view's page, apps and all) never holds the caller up.
  const teardownApps = async (reason: string) => {
    const entry = chatView;
    if (!entry?.ready) return;
    const done = await entry.host.teardownApps(reason, TEARDOWN_WAIT_MS);
    if (!done) output.appendLine(`apps teardown (${reason}): the chat page did not answer in time`);
    else if (done.total > 0) output.appendLine(`apps torn down (${reason}): ${done.answered} of ${done.total} answered ui/resource-teardown`);
  };
  teardownChatApps = teardownApps;
  /** "Wave: Restart sidecar" runs: it tore the apps down itself, before the restart. */
  let restarting = false;

  const prefillChat = (text: string) => {
    if (chatView?.ready) chatView.host.push("host/prefill", { text });
    else pendingPrefill = text;
  };

  // ---- settings page (UI-1): one editor tab, "MCP services" selected ----

  const openSettings = () => {
    if (settings) {
      settings.panel.reveal(settings.panel.viewColumn ?? vscode.ViewColumn.Active);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      "wave.settings",
      zh ? "Wave 设置 · MCP 服务" : "Wave Settings · MCP services",
      vscode.ViewColumn.Active,
      { ...webviewOptions(context.extensionUri), retainContextWhenHidden: true },
    );
    panel.iconPath = vscode.Uri.joinPath(context.extensionUri, "media", "wave.svg");
    const host = new WebviewHost(panel.webview, async (method, params) => {
      switch (method) {
        case "host/openFile": {
          // EDIT-1/EDIT-2: an absolute path from the sidecar, opened as an editor tab.
          const { path } = params as { path: string };
          await vscode.window.showTextDocument(vscode.Uri.file(path), { preview: false });
          return null;
        }
        case "host/closeSettings": {
          // UI-7, ADD-1, EDIT-1: close the page, back to the chat, prefill (never send).
          const { prefill } = (params ?? {}) as { prefill?: string };
          panel.dispose();
          await focusChat();
          if (prefill !== undefined) prefillChat(prefill);
          return null;
        }
        case "host/notify": {
          const { level, message } = params as { level: string; message: string };
          notify(level, message);
          return null;
        }
        case "host/openSettings":
          openSettings();
          return null;
        case Methods.mcpLogin: {
          // AUTH-9: the login runs until signed in; the page's Cancel cancels its token.
          const p = params as Requests["wave/mcp/login"]["params"];
          return logins.run(p.sessionId, p.name, (token) => side.request(Methods.mcpLogin, p, token));
        }
        case "host/cancelLogin": {
          const { name, sessionId } = params as { name: string; sessionId?: string };
          logins.cancel(sessionId, name);
          return null;
        }
        default:
          return forward(method, params);
      }
    });
    panel.webview.options = webviewOptions(context.extensionUri);
    panel.webview.html = pageHtml(panel.webview, context.extensionUri, "settings", DEFAULT_SESSION_ID, "MCP services");
    panel.onDidDispose(() => {
      host.dispose();
      if (settings?.panel === panel) settings = undefined;
    });
    settings = { panel, host };
  };

  // ---- chat view ----

  const chatProvider: vscode.WebviewViewProvider = {
    resolveWebviewView(view) {
      view.webview.options = webviewOptions(context.extensionUri);
      const entry = { view, host: undefined as unknown as WebviewHost, ready: false };
      entry.host = new WebviewHost(view.webview, async (method, params) => {
        switch (method) {
          case "host/chatOpened": {
            entry.ready = true;
            // A question the hidden view's page showed is still waiting: the new page shows it.
            entry.host.reshowAsked();
            const prefill = pendingPrefill;
            pendingPrefill = undefined;
            return prefill === undefined ? {} : { prefill };
          }
          case "host/openSettings":
            openSettings();
            return null;
          case "host/notify": {
            const { level, message } = params as { level: string; message: string };
            notify(level, message);
            return null;
          }
          case "host/answer":
            return entry.host.answer(params as HostAnswerParams);
          case "host/openExternal":
            // USE-4: a link of the answer opens only when the user says so (a modal with the URL).
            await openLink(params, {
              zh,
              confirm: (message, detail, open) => vscode.window.showInformationMessage(message, { modal: true, detail }, open),
              // As a string, so VS Code opens it verbatim (see wave/mcp/openUrl above).
              openExternal: (url) => Promise.resolve(vscode.env.openExternal(url as unknown as vscode.Uri)),
            });
            return null;
          default:
            return forward(method, params);
        }
      }, (waiting) => {
        // LONG-5: a question waits for the user; the view's icon says so even while it is hidden.
        const tooltip = zh ? "一个 MCP 服务在 Wave 聊天中等待你的回答" : "An MCP server is waiting for your answer in the Wave chat";
        view.badge = waiting > 0 ? { value: waiting, tooltip } : undefined;
      });
      view.webview.html = pageHtml(view.webview, context.extensionUri, "chat", DEFAULT_SESSION_ID, "Wave chat");
      // A hidden view's page is gone; the next one says `host/chatOpened` again and gets the
      // questions still waiting (a question is declined only when the view itself is disposed,
      // the sidecar restarts, or no answer comes in ASK_TIMEOUT_MS).
      view.onDidChangeVisibility(() => {
        if (!view.visible) entry.ready = false;
      });
      view.onDidDispose(() => {
        entry.host.dispose();
        if (chatView === entry) chatView = undefined;
      });
      chatView = entry;
    },
  };

  // ---- sidecar notifications ----

  const serverChannels = new Map<string, vscode.LogOutputChannel>();
  context.subscriptions.push(
    output,
    side,
    // The notifications declared as forwarded go to every page unchanged; each page takes its own.
    ...FORWARDED_NOTIFICATIONS.map((method) =>
      side.on(method, (params) => {
        settings?.host.push(method, params);
        if (chatView?.ready) chatView.host.push(method, params);
      }),
    ),
    // SRV-2: each server's log also goes to an output channel of its own (the default session's).
    side.on(Methods.mcpLogAppended, (params) => {
      if (params.sessionId !== DEFAULT_SESSION_ID) return;
      let channel = serverChannels.get(params.name);
      if (!channel) {
        channel = vscode.window.createOutputChannel(channelName(params.name), { log: true });
        serverChannels.set(params.name, channel);
        context.subscriptions.push(channel);
      }
      for (const entry of params.entries) channel[channelLevel(entry)](channelText(entry));
    }),
    side.on(Methods.sessionTurnEnded, (params) => {
      // Why a turn stopped is the host's to show (protocol: SessionTurnEndedParams.error).
      if (params.error) void vscode.window.showWarningMessage(`Wave: ${params.error}`);
    }),
    side.onRestarted(() => {
      // APPS-3: a new sidecar process: the apps' server connections went with the old one.
      if (!restarting) void teardownApps("the sidecar restarted");
      settings?.host.push("host/sidecarRestarted", {});
      // The sidecar that asked is gone: its questions are not shown again.
      chatView?.host.failAsked("the sidecar restarted");
    }),
    // No retainContextWhenHidden: a chat view that is shown again reloads the conversation from
    // the sidecar (CHAT-1).
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chatProvider),
    // TRUST-9: Restricted Mode ended; the sidecar may now ask to approve project servers.
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      output.appendLine("the workspace is trusted now");
      void side.workspaceTrusted({ trusted: true }).catch((e: unknown) => output.appendLine(`workspace trust: ${String(e)}`));
    }),
    vscode.commands.registerCommand("wave.mcpServers", openSettings),
    vscode.commands.registerCommand("wave.focusChat", focusChat),
    vscode.commands.registerCommand("wave.restartSidecar", async () => {
      // APPS-3: the session is destroyed and the page reset: the apps are told first, while the
      // sidecar that serves them still runs (their `wave/app/closed` reaches it).
      await teardownApps("Wave: Restart sidecar");
      restarting = true;
      try {
        await side.restart();
      } finally {
        restarting = false;
      }
      if (chatView) chatView.view.webview.html = pageHtml(chatView.view.webview, context.extensionUri, "chat", DEFAULT_SESSION_ID, "Wave chat");
    }),
    vscode.commands.registerCommand("wave.setApiKey", async () => {
      const key = await vscode.window.showInputBox({ prompt: "API key of the model endpoint (stored in VS Code's secret storage)", password: true });
      if (key === undefined) return;
      await context.secrets.store(API_KEY_SECRET, key);
      await vscode.commands.executeCommand("wave.restartSidecar");
    }),
  );

  try {
    await side.start();
    output.appendLine("sidecar started");
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    output.appendLine(`sidecar failed to start: ${message}`);
    void vscode.window.showErrorMessage(`Wave: the sidecar did not start: ${message}`, "Open Settings").then((pick) => {
      if (pick) void vscode.commands.executeCommand("workbench.action.openSettings", "wave.sidecarPath");
    });
  }
}

/** Stops the sidecar; it ends every MCP server process it started. */
export async function deactivate(): Promise<void> {
  // APPS-3, best effort: a chat page still showing tears its apps down first (bounded).
  await teardownChatApps?.("the Wave extension is deactivated").catch(() => undefined);
  teardownChatApps = undefined;
  await sidecar?.stop();
  sidecar = undefined;
}
