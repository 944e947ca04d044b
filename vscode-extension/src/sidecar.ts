// The sidecar: `wave-mcp lsp` over stdio, through vscode-languageclient. Only the generated
// protocol types are used on the wire.

import * as fs from "node:fs";
import * as vscode from "vscode";
import {
  type CancellationToken,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";
import {
  FORWARDED_REQUESTS,
  type InitializationOptions,
  Methods,
  type ModelOptions,
  NOTIFICATION_METHODS,
  type Notifications,
  type PageAnsweredRequest,
  type Requests,
  type WorkspaceTrustParams,
} from "./protocol.generated";
import { resolveSidecar, type SidecarChoice } from "./sidecarPath";

export type RequestMethod = keyof Requests;
export type NotificationMethod = keyof Notifications;

/** The requests a webview may forward to the sidecar unchanged (declared in protocol/). */
export const FORWARDED: ReadonlySet<string> = new Set<string>(FORWARDED_REQUESTS);

/** Requests the sidecar sends to the client (answered by the extension, or by its chat page). */
export type ClientRequestMethod = typeof Methods.mcpOpenUrl | PageAnsweredRequest;

export const API_KEY_SECRET = "wave.model.apiKey";

export class Sidecar implements vscode.Disposable {
  private client?: LanguageClient;
  private starting?: Promise<void>;
  private readonly listeners = new Map<string, Set<(params: unknown) => void>>();
  private readonly requestHandlers = new Map<string, (params: unknown) => Promise<unknown>>();
  private readonly restarted = new vscode.EventEmitter<void>();
  readonly onRestarted = this.restarted.event;
  choice?: SidecarChoice;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
  ) {}

  /** Starts the sidecar; requests made meanwhile wait for it. */
  start(): Promise<void> {
    this.starting = this.doStart();
    return this.starting;
  }

  private async doStart(): Promise<void> {
    const config = vscode.workspace.getConfiguration("wave");
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
    const choice = resolveSidecar({
      setting: config.get<string>("sidecarPath"),
      extensionPath: this.context.extensionPath,
      workspaceFolders: folders,
      workspaceTrusted: vscode.workspace.isTrusted,
    });
    this.choice = choice;
    if (choice.origin === "bundled") ensureExecutable(choice.path);
    this.output.appendLine(`starting ${choice.path} lsp (${choice.origin})`);

    // The model of the chat: settings through initializationOptions; the API key from VS Code's
    // secret storage through the environment only (never in an LSP message or its trace).
    // NO_COLOR: the sidecar's stderr lands in the output channel, which shows no ANSI colours.
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
    const apiKey = await this.context.secrets.get(API_KEY_SECRET);
    if (apiKey) env.WAVE_API_KEY = apiKey;
    const model: ModelOptions = {};
    const baseUrl = config.get<string>("model.baseUrl")?.trim();
    const modelName = config.get<string>("model.name")?.trim();
    if (baseUrl) model.baseUrl = baseUrl;
    if (modelName) model.model = modelName;

    const serverOptions: ServerOptions = {
      command: choice.path,
      args: ["lsp"],
      // No `transport`: stdio is the default (TransportKind.stdio would only append `--stdio`).
      options: { env, cwd: folders[0] },
    };
    // TRUST-9: in Restricted Mode no project server can be approved and nothing of the project
    // runs, until `wave/workspace/trust` says the user trusted the workspace.
    // APPS-1: the chat webview shows MCP Apps, so the sidecar declares the extension to servers.
    const initializationOptions: InitializationOptions = { workspaceTrusted: vscode.workspace.isTrusted, apps: true };
    if (Object.keys(model).length > 0) initializationOptions.model = model;
    const constructorServers = config.get<Record<string, unknown>>("mcpServers");
    if (constructorServers && Object.keys(constructorServers).length > 0)
      initializationOptions.mcpServers = constructorServers as InitializationOptions["mcpServers"];
    const clientOptions: LanguageClientOptions = {
      // No document features: the sidecar is only the MCP/session backend.
      documentSelector: [],
      initializationOptions,
      outputChannel: this.output,
    };
    const client = new LanguageClient("wave", "Wave", serverOptions, clientOptions);
    this.client = client;
    for (const method of NOTIFICATION_METHODS) client.onNotification(method, (params: unknown) => this.emit(method, params));
    // Requests of the sidecar (wave/mcp/openUrl): registered on every new client.
    for (const [method, handler] of this.requestHandlers) client.onRequest(method, (params: unknown) => handler(params));
    // Every (re)start — ours, or the client's own after a crash — is a new sidecar process whose
    // snapshot versions start again from 1: pages must reload instead of dropping them as stale.
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) this.restarted.fire();
    });
    try {
      await client.start();
    } catch (e) {
      this.client = undefined;
      throw e;
    }
  }

  /** A request to the sidecar; with `token`, cancelling it sends `$/cancelRequest` (sign-in's Cancel). */
  async request<M extends RequestMethod>(
    method: M,
    params: Requests[M]["params"],
    token?: CancellationToken,
  ): Promise<Requests[M]["result"]> {
    await this.starting?.catch(() => undefined);
    if (!this.client) throw new Error("the Wave sidecar is not running (see the Wave output channel)");
    return token ? this.client.sendRequest(method, params, token) : this.client.sendRequest(method, params);
  }

  /**
   * TRUST-9: the user trusted the workspace (`onDidGrantWorkspaceTrust`). A sidecar that is not
   * running yet reads `isTrusted` when it starts, so nothing is lost then.
   */
  async workspaceTrusted(params: WorkspaceTrustParams): Promise<void> {
    await this.starting?.catch(() => undefined);
    if (!this.client) return;
    await this.client.sendNotification(Methods.workspaceTrust, params);
  }

  /** Answers a request of the sidecar (set before `start`; kept across restarts). */
  handle<M extends ClientRequestMethod>(
    method: M,
    handler: (params: Requests[M]["params"]) => Promise<Requests[M]["result"]>,
  ): void {
    this.requestHandlers.set(method, handler as (params: unknown) => Promise<unknown>);
  }

  on<M extends NotificationMethod>(method: M, listener: (params: Notifications[M]) => void): vscode.Disposable {
    let set = this.listeners.get(method);
    if (!set) this.listeners.set(method, (set = new Set()));
    const l = listener as (params: unknown) => void;
    set.add(l);
    return new vscode.Disposable(() => set!.delete(l));
  }

  private emit(method: string, params: unknown): void {
    for (const l of this.listeners.get(method) ?? []) {
      try {
        l(params);
      } catch (e) {
        this.output.appendLine(`listener of ${method} failed: ${String(e)}`);
      }
    }
  }

  /** Ends the sidecar, and with it every MCP server process it runs. */
  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    this.output.appendLine("stopping the sidecar");
    await client.stop(4000).catch((e: unknown) => this.output.appendLine(`stop: ${String(e)}`));
    this.output.appendLine("sidecar stopped");
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  dispose(): void {
    void this.stop();
    this.restarted.dispose();
  }
}


function ensureExecutable(p: string): void {
  try {
    fs.accessSync(p, fs.constants.X_OK);
  } catch {
    try {
      fs.chmodSync(p, 0o755);
    } catch {
      // Reported by the start failure that follows.
    }
  }
}
