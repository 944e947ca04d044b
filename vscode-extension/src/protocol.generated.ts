// Generated from protocol/src/lib.rs (wave-mcp-protocol) by `WAVE_UPDATE_GENERATED=1 cargo test -p wave-mcp-protocol`.
// Do not edit: change the Rust declarations and regenerate. See docs/protocol.md.
/* eslint-disable */

export const DEFAULT_SESSION_ID = "default";

/** JSON-RPC error code of a request that could not be carried out; `data` is an `ErrorData`. */
export const REQUEST_FAILED = -32803;

/**
 * Where a server's config came from.
 */
export type McpSource = "user" | "project" | "plugin" | "constructor";

/**
 * A server's connection state.
 */
export type McpStatus = "connected" | "connecting" | "reconnecting" | "error" | "disconnected" | "needs-auth" | "needs-approval";

/**
 * An icon of a server or a tool that a page may show: an `https:` URL, or a `data:` URL of a
 * PNG, JPEG, GIF or WebP image of at most 64 KiB; the sidecar drops every other (SVG
 * included) (SRV-4).
 */
export type IconView = { src: string, mimeType?: string, 
/**
 * `WxH` sizes or `any`, as the server wrote them.
 */
sizes: Array<string>, };

/**
 * A tool's `_meta.ui` (MCP Apps, APPS-1).
 */
export type ToolUiView = { 
/**
 * The tool's app: a `ui://` resource of its server (`_meta.ui.resourceUri`, or the
 * deprecated flat `_meta["ui/resourceUri"]`).
 */
resourceUri?: string, 
/**
 * Who may call the tool: `"model"`, `"app"`; absent means both. A tool without
 * `"model"` is never offered to the model.
 */
visibility?: Array<string>, };

/**
 * One tool of a server, live or from the snapshot cache.
 */
export type McpToolView = { 
/**
 * The server's own name for the tool.
 */
name: string, 
/**
 * `mcp__<server>__<tool>`, the name the model sees.
 */
fullName: string, description?: string, 
/**
 * Switched on by the entry's `enabledTools` / `disabledTools` (BUD-1); a switched-off tool
 * is listed but never offered to the model.
 */
enabled: boolean, 
/**
 * The user allowed this tool (`session` or `always`) for another definition than the one
 * the server presents now: the permission no longer applies and the next call asks again
 * (TRUST-6).
 */
definitionChanged: boolean, 
/**
 * The server's text for this tool (name, title, description) had hidden characters
 * (Unicode tags, bidi controls, zero-width characters) that were removed before anything
 * reached the model (TRUST-7).
 */
hiddenText: boolean, 
/**
 * The server's title (`title`, else the annotations' `title`) and hints for the tool
 * (SRV-4).
 */
annotations?: ToolAnnotationsView, 
/**
 * The tool's icons that a page may show (SRV-4).
 */
icons: Array<IconView>, 
/**
 * The tool's MCP Apps metadata (`_meta.ui`, APPS-1): its app and who may call it.
 */
ui?: ToolUiView, };

/**
 * One configured server as lists show it. Values are as written in the config (`${VAR}` not
 * expanded); env and header values are never included.
 */
export type McpServerView = { name: string, source: McpSource, 
/**
 * `stdio`, `http`, `sse`, or the unknown `type` as written.
 */
transport: string, command?: string, args: Array<string>, url?: string, status: McpStatus, 
/**
 * Why the server is in `error`.
 */
error?: string, toolCount: number, tools: Array<McpToolView>, 
/**
 * The tools come from the snapshot cache of an earlier connection, not a live one.
 */
toolsFromCache: boolean, 
/**
 * RFC 3339 time of the last successful connection, live or cached.
 */
lastConnectedAt?: string, 
/**
 * Absolute path of the file the entry is in; absent for constructor servers.
 */
configPath?: string, 
/**
 * Plugin and constructor servers cannot be edited or deleted.
 */
readOnly: boolean, 
/**
 * A remote server with stored sign-in credentials (AUTH-3): offer "Sign out" (AUTH-9).
 */
signedIn: boolean, 
/**
 * Present when `status` is `needs-approval`: what approving this entry would run, for the
 * settings page to show beside its Approve button (TRUST-1, TRUST-3). `error` then holds
 * the reason and how to approve.
 */
approval?: ServerApproval, 
/**
 * The server's icons that a page may show, from its live connection (SRV-4).
 */
icons: Array<IconView>, 
/**
 * The MCP revision negotiated with the server (`2026-07-28`, `2025-11-25`, ...): the live
 * connection's, or the last one negotiated with the entry as written when not connected
 * now (SPEC-1). Absent if it never connected as written.
 */
protocolVersion?: string, };

/**
 * One project server waiting for the user's approval, exactly as written (TRUST-3).
 */
export type ServerApproval = { name: string, 
/**
 * Absolute path of the project's `.mcp.json`.
 */
configPath: string, 
/**
 * `stdio`, `http`, `sse`, or the unknown `type` as written.
 */
transport: string, 
/**
 * The stdio command as written (`${VAR}` not expanded).
 */
command?: string, args: Array<string>, 
/**
 * The remote URL as written.
 */
url?: string, 
/**
 * Names of the environment variables the entry sets for its process (`env`), never their
 * values.
 */
envKeys: Array<string>, 
/**
 * The `${VAR}` names the entry reads from the user's environment (in any field): approving
 * sends their values where the entry says.
 */
variables: Array<string>, 
/**
 * The user approved this server before in another form: it changed since (TRUST-4).
 */
changed: boolean, 
/**
 * The source (`user`, `plugin`) of a same-named server that approving replaces for this
 * project.
 */
shadows?: McpSource, 
/**
 * The IDE does not trust the workspace (TRUST-9): the entry cannot be approved until it
 * does, so the page offers no Approve.
 */
workspaceUntrusted: boolean, };

/**
 * Params of the sidecar-to-client request `wave/session/approveServers` (TRUST-3).
 */
export type SessionApproveServersParams = { sessionId: string, servers: Array<ServerApproval>, };

/**
 * Result of `wave/session/approveServers`: the names the user approved (the others stay
 * `needs-approval` and are not asked about again in this session).
 */
export type SessionApproveServersResult = { approved: Array<string>, };

/**
 * A tool's MCP annotations as the server declared them: hints, never guarantees (TRUST-5).
 */
export type ToolAnnotationsView = { title?: string, readOnlyHint?: boolean, destructiveHint?: boolean, idempotentHint?: boolean, openWorldHint?: boolean, };

/**
 * Params of the sidecar-to-client request `wave/session/confirmTool`: the model wants to call
 * a tool that no allow rule covers (TRUST-5).
 */
export type SessionConfirmToolParams = { sessionId: string, turn: number, 
/**
 * The model's tool call (an `Exec` script's nested calls carry the `Exec` call's id).
 */
toolCallId: string, server: string, 
/**
 * The server's own name for the tool.
 */
tool: string, 
/**
 * `mcp__<server>__<tool>`.
 */
fullName: string, arguments: { [key in string]: JsonValue }, annotations?: ToolAnnotationsView, 
/**
 * The user allowed this tool before, for another definition: it changed since (TRUST-6).
 */
definitionChanged: boolean, };

/**
 * The user's answer to `wave/session/confirmTool`.
 */
export type ToolDecision = "once" | "session" | "always" | "deny";

/**
 * Result of `wave/session/confirmTool`.
 */
export type SessionConfirmToolResult = { decision: ToolDecision, };

/**
 * Payload of `wave/workspace/trust`: the IDE's trust in the opened project (TRUST-9).
 */
export type WorkspaceTrustParams = { trusted: boolean, };

/**
 * The model a session's agent talks to (an OpenAI-compatible Chat Completions endpoint). Unset
 * fields fall back to the sidecar's `WAVE_BASE_URL`, `WAVE_API_KEY` and `WAVE_MODEL`; without a
 * model, sessions still manage MCP servers but cannot chat.
 */
export type ModelOptions = { 
/**
 * E.g. `https://api.openai.com/v1`; requests go to `{baseUrl}/chat/completions`.
 */
baseUrl?: string, apiKey?: string, model?: string, };

/**
 * `initializationOptions` of the LSP `initialize` request. Every field is optional.
 */
export type InitializationOptions = { 
/**
 * Constructor-level servers of the default session (highest precedence), an object keyed by
 * server name in the `.mcp.json` format.
 */
mcpServers?: { [key in string]: JsonValue }, 
/**
 * Replaces the home directory (`~/.wave/...`); relative paths are taken from the sidecar's
 * working directory. Meant for tests.
 */
home?: string, 
/**
 * The project directory, when the host has no workspace folder to offer; wins over
 * `workspaceFolders` and `rootUri`. Relative paths are taken from the sidecar's working
 * directory.
 */
workdir?: string, 
/**
 * The model of every session's agent (sessions may override it).
 */
model?: ModelOptions, 
/**
 * `false` when the IDE does not trust the opened project (VS Code's Restricted Mode, an
 * untrusted JetBrains project): its servers cannot be approved and nothing of it runs until
 * `wave/workspace/trust` says otherwise (TRUST-9). Default: trusted.
 */
workspaceTrusted?: boolean, 
/**
 * The client can show MCP Apps (both IDE clients say `true`): its sessions declare the
 * `io.modelcontextprotocol/ui` extension to servers and `wave/app/*` works (APPS-1).
 * Default: no apps.
 */
apps?: boolean, };

/**
 * Params of a request about one session's servers as a whole.
 */
export type SessionParams = { 
/**
 * Default: `"default"`, the workspace's agent.
 */
sessionId?: string, };

/**
 * Params of `wave/mcp/connect` and `wave/mcp/disconnect`.
 */
export type ServerParams = { 
/**
 * The server's name as listed.
 */
name: string, 
/**
 * Default: `"default"`, the workspace's agent.
 */
sessionId?: string, };

/**
 * Params of `wave/mcp/delete`.
 */
export type DeleteParams = { name: string, 
/**
 * Which file to remove the entry from: `user` (`~/.wave/mcp.json`) or `project`
 * (`<workdir>/.mcp.json`). `plugin` and `constructor` are refused (read-only).
 */
source: McpSource, 
/**
 * Default: `"default"`, the workspace's agent.
 */
sessionId?: string, };

/**
 * Params of `wave/mcp/setToolEnabled` (BUD-2).
 */
export type SetToolEnabledParams = { 
/**
 * The server's name as listed.
 */
name: string, 
/**
 * Which file holds the entry: `user` or `project`; `plugin` and `constructor` are refused
 * (read-only).
 */
source: McpSource, 
/**
 * The server's own name of the tool.
 */
tool: string, enabled: boolean, 
/**
 * Default: `"default"`, the workspace's agent.
 */
sessionId?: string, };

/**
 * Params of the sidecar-to-client request `wave/mcp/openUrl`: sign-in wants this
 * authorization URL opened in the user's browser (AUTH-2).
 */
export type OpenUrlParams = { sessionId: string, 
/**
 * The server being signed in to (or, for an elicitation, the server that asked).
 */
name: string, url: string, 
/**
 * Why the URL is opened; absent: `signIn`.
 */
purpose?: OpenUrlPurpose, };

/**
 * Why the sidecar asks the client to open a URL.
 */
export type OpenUrlPurpose = "signIn" | "elicitation";

/**
 * Result of `wave/mcp/openUrl`.
 */
export type OpenUrlResult = { 
/**
 * `false`: the client could not open it; the sidecar then uses `$BROWSER` or the
 * platform's opener.
 */
opened: boolean, };

/**
 * Every server of one session at one moment: the result of the `wave/mcp/*` requests and the
 * payload of `wave/mcp/serversChanged`.
 */
export type ServersSnapshot = { 
/**
 * From one counter per sidecar process, shared by replies and notifications: a snapshot
 * with a higher version is never older. Clients drop anything older than what they show.
 */
version: number, sessionId: string, servers: Array<McpServerView>, };

/**
 * Result of `wave/mcp/configPaths` (the host's `mcpConfigPathsResponse`): absolute OS paths,
 * whether or not the files exist.
 */
export type ConfigPaths = { 
/**
 * `~/.wave/mcp.json`.
 */
userConfigPath: string, 
/**
 * `<workdir>/.mcp.json`.
 */
projectConfigPath: string, 
/**
 * The workdir's last path component.
 */
projectName: string, 
/**
 * The session's working directory.
 */
workdir: string, };

/**
 * One argument of a prompt, in the order the prompt declares them.
 */
export type McpPromptArgument = { name: string, description?: string, required: boolean, };

/**
 * A server's prompt, offered in the chat as the slash command `/<fullName>` (PRM-1).
 */
export type McpPromptView = { server: string, 
/**
 * The server's own name for the prompt.
 */
name: string, 
/**
 * `mcp__<server>__<prompt>`.
 */
fullName: string, description?: string, arguments: Array<McpPromptArgument>, 
/**
 * From the snapshot cache of an earlier connection (the server is not connected now).
 */
fromCache: boolean, };

/**
 * Where an entry of a server's log came from (SRV-2).
 */
export type LogSourceView = "message" | "stderr";

/**
 * One entry of a server's log (SRV-2). `text` is the server's own (hidden characters removed):
 * show it as text, never as markup.
 */
export type LogEntryView = { 
/**
 * RFC 3339, milliseconds.
 */
time: string, source: LogSourceView, 
/**
 * The MCP level of a message: `debug`, `info`, `notice`, `warning`, `error`, `critical`,
 * `alert`, `emergency`.
 */
level?: string, logger?: string, text: string, };

/**
 * Result of `wave/mcp/logs`: a server's log, oldest first (SRV-2).
 */
export type McpLogsResult = { entries: Array<LogEntryView>, 
/**
 * Older entries dropped to keep the newest 2,000.
 */
dropped: number, };

/**
 * Params of `wave/mcp/logAppended`: entries appended to one server's log (SRV-2).
 */
export type McpLogAppendedParams = { sessionId: string, name: string, entries: Array<LogEntryView>, };

/**
 * Result of `wave/mcp/prompts`: the prompts of every server the permission rules allow, in
 * config order.
 */
export type McpPromptsResult = { sessionId: string, prompts: Array<McpPromptView>, };

/**
 * A server's resource, mentioned in a chat message as `@<server>:<uri>` (PRM-3).
 */
export type McpResourceView = { server: string, uri: string, name: string, mimeType?: string, description?: string, fromCache: boolean, };

/**
 * A server's resource template (RFC 6570 `uriTemplate`, e.g. `file:///{path}`).
 */
export type McpResourceTemplateView = { server: string, uriTemplate: string, name: string, mimeType?: string, description?: string, fromCache: boolean, };

/**
 * Result of `wave/mcp/resources`: resources and templates of every server the permission
 * rules allow, in config order.
 */
export type McpResourcesResult = { sessionId: string, resources: Array<McpResourceView>, templates: Array<McpResourceTemplateView>, };

/**
 * What a completion is for: a prompt's argument or a resource template's variable (SRV-3).
 */
export type CompletionRefKind = "ref/prompt" | "ref/resource";

/**
 * `{ type: "ref/prompt", name }` or `{ type: "ref/resource", uri }`, as MCP's
 * `completion/complete` has it (SRV-3).
 */
export type CompletionRef = { type: CompletionRefKind, 
/**
 * The prompt's name (with `ref/prompt`).
 */
name?: string, 
/**
 * The resource template, e.g. `file:///{path}` (with `ref/resource`).
 */
uri?: string, };

/**
 * The argument being completed and what the user has typed of it so far.
 */
export type CompletionArgument = { name: string, value: string, };

/**
 * The arguments already chosen, which the server may use to narrow its suggestions.
 */
export type CompletionContext = { arguments: { [key in string]: string }, };

/**
 * Params of `wave/mcp/complete` (SRV-3).
 */
export type McpCompleteParams = { 
/**
 * Default: `"default"`, the workspace's agent.
 */
sessionId?: string, 
/**
 * The server's name as listed.
 */
server: string, ref: CompletionRef, argument: CompletionArgument, context?: CompletionContext, };

/**
 * Result of `wave/mcp/complete`: suggested values, best first, at most 100 (SRV-3).
 */
export type McpCompleteResult = { values: Array<string>, 
/**
 * How many values the server has in all.
 */
total?: number, 
/**
 * The server has more values than these.
 */
hasMore?: boolean, };

/**
 * Params of `wave/session/create`.
 */
export type SessionCreateParams = { 
/**
 * Default: the workdir of the default session. Relative paths are taken from the
 * sidecar's working directory.
 */
workdir?: string, 
/**
 * Constructor-level servers of this session. Default: those of `initializationOptions`.
 */
mcpServers?: { [key in string]: JsonValue }, 
/**
 * Default: the model of `initializationOptions`.
 */
model?: ModelOptions, };

/**
 * Result of `wave/session/create`.
 */
export type SessionCreated = { sessionId: string, };

/**
 * Params of `wave/session/send`.
 */
export type SessionSendParams = { sessionId: string, 
/**
 * Sent verbatim as an ordinary user message (`/settings ...` included, ADD-4).
 */
text: string, };

/**
 * Result of `wave/session/send`: the message was accepted and its turn queued (a session runs
 * one turn at a time). What the turn produces arrives as `wave/session/message` notifications,
 * then `wave/session/turnEnded`.
 */
export type SessionSendAccepted = { sessionId: string, 
/**
 * Numbers the session's turns from 1; `turnEnded` carries the same number.
 */
turn: number, };

/**
 * Who a chat message comes from.
 */
export type ChatRole = "user" | "assistant" | "tool";

/**
 * The app of a tool call (MCP Apps).
 */
export type ChatAppRef = { server: string, 
/**
 * The server's own name for the tool.
 */
tool: string, 
/**
 * The app's `ui://` resource.
 */
resourceUri: string, };

/**
 * The result of a tool call that has an app, in full, so a reopened chat shows the app again
 * without calling the tool (APPS-5).
 */
export type ChatAppResult = { server: string, tool: string, resourceUri: string, 
/**
 * The MCP `CallToolResult` as the server sent it (`content`, `structuredContent`, `_meta`,
 * `isError`).
 */
result: JsonValue, };

/**
 * A tool call made by the model, as the chat view shows it.
 */
export type ChatToolCall = { id: string, 
/**
 * The tool's full name (`mcp__<server>__<tool>` for MCP tools).
 */
name: string, 
/**
 * The arguments as the model wrote them (a JSON text).
 */
arguments: string, 
/**
 * The called tool has an app (`_meta.ui.resourceUri`): the chat shows it under the call
 * from the call's start (APPS-2).
 */
app?: ChatAppRef, };

/**
 * One message of a session's conversation.
 */
export type ChatMessage = { role: ChatRole, content: string, 
/**
 * For `assistant`: the tool calls it made.
 */
toolCalls: Array<ChatToolCall>, 
/**
 * For `tool`: the tool's full name.
 */
toolName?: string, 
/**
 * For `tool`: the result is an error.
 */
isError: boolean, 
/**
 * Written by the runtime for the model (e.g. MCP instructions), hidden in the chat view.
 */
isMeta: boolean, 
/**
 * For `tool`: the call this message answers.
 */
toolCallId?: string, 
/**
 * For `tool`, when the called tool has an app: its full result (APPS-5).
 */
app?: ChatAppResult, };

/**
 * Payload of `wave/session/message`: one message added to the session's conversation, the
 * user's own message first in each turn (CHAT-1).
 */
export type SessionMessageParams = { sessionId: string, turn: number, 
/**
 * The message's position in the conversation, from 0: the same as in
 * `wave/session/history`, so a view that loaded the history skips what it already has.
 */
index: number, message: ChatMessage, };

/**
 * Params of `wave/session/history`.
 */
export type SessionHistoryParams = { sessionId: string, };

/**
 * One message of a session's conversation with its turn.
 */
export type SessionHistoryEntry = { turn: number, 
/**
 * Position in the conversation, from 0 (`SessionMessageParams.index`).
 */
index: number, message: ChatMessage, };

/**
 * Result of `wave/session/history`: the whole conversation so far (CHAT-1), in the order the
 * messages were added — a turn's user message when its `send` was accepted, its other messages
 * when it ran — so grouped by turn (a stable sort) they read as the conversation.
 */
export type SessionHistoryResult = { sessionId: string, messages: Array<SessionHistoryEntry>, 
/**
 * Turns accepted and not ended yet, in order (the first one is running, CHAT-2).
 */
runningTurns: Array<number>, };

/**
 * Payload of `wave/session/turnEnded`.
 */
export type SessionTurnEndedParams = { sessionId: string, turn: number, 
/**
 * Why the turn stopped early (model unreachable, ...), for the host to show as a
 * notification; absent when it completed.
 */
error?: string, 
/**
 * The turn was stopped by `wave/session/cancel` (LONG-3); what it produced until then was
 * recorded.
 */
cancelled: boolean, };

/**
 * Payload of `wave/session/delta`: more text of the assistant message being generated
 * (LONG-1). The complete message still arrives once as `wave/session/message`; the history
 * holds complete messages only.
 */
export type SessionDeltaParams = { sessionId: string, turn: number, 
/**
 * The index the message will have in the conversation when complete (it moves up by one
 * if another turn's user message is recorded meanwhile; the complete message's `index` is
 * the final one).
 */
messageIndex: number, 
/**
 * The new text, to append to what earlier deltas of the message carried.
 */
text: string, };

/**
 * Payload of `wave/session/progress`: an MCP server's `notifications/progress` for a tool
 * call that is running (LONG-2), for the model's tool call `toolCallId` (an Exec call's
 * progress is reported for the Exec tool call).
 */
export type SessionProgressParams = { sessionId: string, turn: number, toolCallId: string, progress: number, 
/**
 * Known total: show a bar (`progress / total`).
 */
total?: number, message?: string, };

/**
 * Params of `wave/session/cancel`.
 */
export type SessionCancelParams = { sessionId: string, };

/**
 * Result of `wave/session/cancel`.
 */
export type SessionCancelResult = { sessionId: string, 
/**
 * `true`: a running turn was told to stop (its `turnEnded` carries `cancelled: true`);
 * `false`: no turn was running.
 */
cancelled: boolean, };

/**
 * Params of `wave/session/destroy`.
 */
export type SessionDestroyParams = { sessionId: string, };

/**
 * What happened to a destroyed session.
 */
export type DestroyState = "destroyed" | "queued";

/**
 * Result of `wave/session/destroy`.
 */
export type SessionDestroyed = { sessionId: string, state: DestroyState, };

/**
 * How a server asks the user (MCP elicitation).
 */
export type ElicitMode = "form" | "url";

/**
 * Params of the sidecar-to-client request `wave/session/elicit`: an MCP server asks the user
 * during a tool call (`elicitation/create`).
 */
export type SessionElicitParams = { sessionId: string, 
/**
 * The server that asks, as configured.
 */
server: string, mode: ElicitMode, 
/**
 * The server's text for the user.
 */
message: string, 
/**
 * `form`: a JSON Schema object whose properties are primitives (string with optional
 * `format` email/uri/date/date-time and `minLength`/`maxLength`, number/integer with
 * `minimum`/`maximum`, boolean, enum with `enumNames` or `oneOf` titles, arrays of enum
 * values), `required`, `default`s; property order as the server wrote it.
 */
requestedSchema?: { [key in string]: JsonValue }, 
/**
 * `url`: the page to open once the user accepts (show its host first).
 */
url?: string, 
/**
 * `url`: names it in `wave/session/elicitationComplete`.
 */
elicitationId?: string, };

/**
 * The user's decision on an elicitation.
 */
export type ElicitAction = "accept" | "decline" | "cancel";

/**
 * Result of `wave/session/elicit`.
 */
export type SessionElicitResult = { action: ElicitAction, 
/**
 * `accept` of a form: the values by property name, valid for the schema.
 */
content?: { [key in string]: JsonValue }, };

/**
 * Payload of `wave/session/elicitationComplete`: a URL-mode elicitation finished (the server
 * sent `notifications/elicitation/complete`).
 */
export type SessionElicitationCompleteParams = { sessionId: string, server: string, elicitationId: string, };

/**
 * Params of `wave/registry/search`.
 */
export type RegistrySearchParams = { 
/**
 * Matched against server names (a substring); empty lists every server.
 */
query: string, 
/**
 * `nextCursor` of the previous page, for the next one.
 */
cursor?: string, };

/**
 * One server of a registry search: the latest version.
 */
export type RegistryServerView = { 
/**
 * The registry name, e.g. `io.github.user/weather`.
 */
name: string, title?: string, description: string, version?: string, 
/**
 * How it would run, e.g. "npm package airtable-mcp-server@1.7.3"; absent when wave-mcp
 * cannot install it.
 */
install?: string, };

/**
 * Result of `wave/registry/search`.
 */
export type RegistrySearchResult = { 
/**
 * The registry asked (`WAVE_REGISTRY_URL`, default the official one).
 */
registryUrl: string, servers: Array<RegistryServerView>, 
/**
 * More servers match: pass this as `cursor` for the next page.
 */
nextCursor?: string, };

/**
 * Params of `wave/registry/get`.
 */
export type RegistryGetParams = { 
/**
 * The registry name.
 */
name: string, 
/**
 * Default: the latest version.
 */
version?: string, };

/**
 * Where a value the user gives goes.
 */
export type RegistryInputKind = "environmentVariable" | "argument" | "header" | "urlVariable";

/**
 * A value a registry server needs from the user.
 */
export type RegistryInputView = { 
/**
 * Its name in the `server.json` (variable, header, flag or value hint).
 */
name: string, kind: RegistryInputKind, 
/**
 * The `${VAR}` the entry has for it (set that environment variable); absent for an
 * optional input left out of the entry.
 */
placeholder?: string, required: boolean, secret: boolean, 
/**
 * An argument the server takes more than once (`isRepeated`): the entry has one value,
 * more may be added after it.
 */
repeated: boolean, description?: string, default?: string, };

/**
 * What adding a registry server writes.
 */
export type RegistryInstallView = { 
/**
 * How it runs, e.g. "npm package airtable-mcp-server@1.7.3".
 */
how: string, 
/**
 * The config entry written (`${VAR}` placeholders unexpanded).
 */
entry: JsonValue, 
/**
 * Required inputs (placeholders) first, then optional ones left out.
 */
inputs: Array<RegistryInputView>, };

/**
 * Result of `wave/registry/get`: one version's details.
 */
export type RegistryServerDetails = { name: string, title?: string, description: string, version?: string, websiteUrl?: string, repositoryUrl?: string, 
/**
 * What adding it writes; absent when wave-mcp cannot install it (see `unsupported`).
 */
install?: RegistryInstallView, 
/**
 * Why it cannot be installed (the package types it offers).
 */
unsupported?: string, };

/**
 * Params of `wave/registry/add`.
 */
export type RegistryAddParams = { 
/**
 * The name of the new entry in the config file.
 */
name: string, 
/**
 * The registry name of the server.
 */
server: string, 
/**
 * Default: the latest version.
 */
version?: string, 
/**
 * `user` (`~/.wave/mcp.json`) or `project` (`<workdir>/.mcp.json`; the user's own add
 * counts as approval, TRUST-1). `plugin` and `constructor` are refused.
 */
scope: McpSource, 
/**
 * Default: `"default"`, the workspace's agent.
 */
sessionId?: string, };

/**
 * Result of `wave/registry/add`.
 */
export type RegistryAdded = { 
/**
 * The config file written, absolute.
 */
path: string, 
/**
 * What was written and the `${VAR}`s to set.
 */
install: RegistryInstallView, 
/**
 * The session's servers after the add.
 */
servers: ServersSnapshot, };

/**
 * Params of `wave/app/resource` and `wave/app/readResource`.
 */
export type AppResourceParams = { sessionId: string, server: string, uri: string, };

/**
 * The domains an app's resource declares (`_meta.ui.csp`): each list widens one group of CSP
 * directives of its sandbox page; an absent list keeps the restrictive default.
 */
export type UiCspView = { connectDomains?: Array<string>, resourceDomains?: Array<string>, frameDomains?: Array<string>, baseUriDomains?: Array<string>, };

/**
 * Result of `wave/app/resource`: an app's HTML (`text/html;profile=mcp-app`) with its
 * `_meta.ui`, and the sandbox proxy URL to frame it in (APPS-1, APPS-2).
 */
export type AppResourceResult = { uri: string, html: string, mimeType: string, 
/**
 * `_meta.ui.csp` as the server declared it.
 */
csp?: UiCspView, 
/**
 * `_meta.ui.permissions` (camera, microphone, geolocation, clipboardWrite).
 */
permissions?: { [key in string]: JsonValue }, domain?: string, prefersBorder?: boolean, 
/**
 * The one-time proxy page on the sidecar's sandbox origin, served under the CSP built
 * from `csp` alone; `wave/app/closed` forgets it.
 */
sandboxUrl: string, };

/**
 * Params of `wave/app/closed`.
 */
export type AppClosedParams = { 
/**
 * A `sandboxUrl` of `wave/app/resource`.
 */
url: string, };

/**
 * Result of `wave/app/closed`.
 */
export type AppClosedResult = { 
/**
 * The URL was registered and serves nothing from now on.
 */
forgotten: boolean, };

/**
 * Params of `wave/app/callTool`: an app's `tools/call` (APPS-4).
 */
export type AppCallToolParams = { sessionId: string, 
/**
 * The app's own server: the only one it may call.
 */
server: string, 
/**
 * The server's own name for the tool.
 */
name: string, arguments?: { [key in string]: JsonValue }, 
/**
 * The model's tool call whose app asks (named in the consent question).
 */
toolCallId?: string, };

/**
 * Result of `wave/app/callTool`: the MCP `CallToolResult` as the server sent it.
 */
export type AppCallToolResult = { [key in string]: JsonValue };

/**
 * Result of `wave/app/readResource`: the MCP `ReadResourceResult` as the server sent it.
 */
export type AppReadResourceResult = { [key in string]: JsonValue };

/**
 * Machine-readable cause of a [`REQUEST_FAILED`] error.
 */
export type ErrorKind = "unknownSession" | "unknownServer" | "readOnly" | "fileMissing" | "entryMissing" | "permissionDenied" | "invalidFile" | "io" | "chatUnavailable" | "shuttingDown" | "signInFailed" | "signInCancelled" | "needsApproval" | "untrusted" | "registry" | "noApp" | "appRefused";

/**
 * `data` of a [`REQUEST_FAILED`] error.
 */
export type ErrorData = { kind: ErrorKind, 
/**
 * The config file concerned, absolute.
 */
path?: string, };

/**
 * Params of a host message that has none (`{}`).
 */
export type HostNoParams = Record<symbol, never>;

/**
 * The answer of a host request that returns nothing (`null`).
 */
export type HostDone = null;

/**
 * Params of `host/openFile`.
 */
export type HostOpenFileParams = { 
/**
 * An absolute OS path from the sidecar (EDIT-2).
 */
path: string, };

/**
 * Params of `host/openExternal`.
 */
export type HostOpenExternalParams = { 
/**
 * An `http:`, `https:` or `mailto:` URL of a link in the assistant's answer (USE-4).
 */
url: string, };

/**
 * Params of `host/closeSettings`.
 */
export type HostCloseSettingsParams = { 
/**
 * Put this text in the chat input, focused, not sent (ADD-1, ADD-2, EDIT-1).
 */
prefill?: string, };

/**
 * How loud a host notification is.
 */
export type HostNotifyLevel = "info" | "warning" | "error";

/**
 * Params of `host/notify`.
 */
export type HostNotifyParams = { level: HostNotifyLevel, message: string, };

/**
 * Params of `host/cancelLogin`.
 */
export type HostCancelLoginParams = { name: string, sessionId?: string, };

/**
 * Result of `host/chatOpened`.
 */
export type HostChatOpened = { 
/**
 * A prefill that waited for a chat page (ADD-1, EDIT-1).
 */
prefill?: string, };

/**
 * Params of the `host/prefill` push.
 */
export type HostPrefillParams = { text: string, };

/**
 * Params of `host/answer`: the page's answer to a sidecar request the host delivered to it
 * with this `id` (`Relay::PageAnswers`, e.g. `wave/session/elicit`).
 */
export type HostAnswerParams = { id: number, 
/**
 * The result, for the host to send to the sidecar.
 */
result?: JsonValue, 
/**
 * Instead of a result: why the page did not answer.
 */
error?: string, };

/**
 * Params of `host/teardownApps`.
 */
export type HostTeardownAppsParams = { 
/**
 * Why the apps go (for the host's log and the stopped cards), e.g. "the sidecar restarted".
 */
reason: string, };

/**
 * Result of `host/teardownApps` (through `host/answer`): how many app views were live and how
 * many of them answered `ui/resource-teardown` (APPS-3).
 */
export type HostAppsTornDown = { 
/**
 * Live app views torn down.
 */
total: number, 
/**
 * Of those, the apps that answered `ui/resource-teardown` before their frame went.
 */
answered: number, };

/** Any JSON value. */
export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

/** Every custom method name. */
export const Methods = {
  mcpServers: "wave/mcp/servers",
  mcpConnect: "wave/mcp/connect",
  mcpDisconnect: "wave/mcp/disconnect",
  mcpDelete: "wave/mcp/delete",
  mcpSetToolEnabled: "wave/mcp/setToolEnabled",
  mcpLogin: "wave/mcp/login",
  mcpLogout: "wave/mcp/logout",
  mcpOpenUrl: "wave/mcp/openUrl",
  mcpConfigPaths: "wave/mcp/configPaths",
  mcpPrompts: "wave/mcp/prompts",
  mcpResources: "wave/mcp/resources",
  mcpComplete: "wave/mcp/complete",
  mcpLogs: "wave/mcp/logs",
  mcpLogAppended: "wave/mcp/logAppended",
  mcpServersChanged: "wave/mcp/serversChanged",
  sessionCreate: "wave/session/create",
  sessionSend: "wave/session/send",
  sessionHistory: "wave/session/history",
  sessionMessage: "wave/session/message",
  sessionTurnEnded: "wave/session/turnEnded",
  sessionDelta: "wave/session/delta",
  sessionProgress: "wave/session/progress",
  sessionCancel: "wave/session/cancel",
  sessionDestroy: "wave/session/destroy",
  sessionElicit: "wave/session/elicit",
  sessionElicitationComplete: "wave/session/elicitationComplete",
  mcpApprove: "wave/mcp/approve",
  mcpRevoke: "wave/mcp/revoke",
  sessionApproveServers: "wave/session/approveServers",
  sessionConfirmTool: "wave/session/confirmTool",
  workspaceTrust: "wave/workspace/trust",
  registrySearch: "wave/registry/search",
  registryGet: "wave/registry/get",
  registryAdd: "wave/registry/add",
  appResource: "wave/app/resource",
  appClosed: "wave/app/closed",
  appCallTool: "wave/app/callTool",
  appReadResource: "wave/app/readResource",
} as const;

/** Client → sidecar requests: params and result of each. */
export interface Requests {
  "wave/mcp/servers": { params: SessionParams; result: ServersSnapshot };
  "wave/mcp/connect": { params: ServerParams; result: ServersSnapshot };
  "wave/mcp/disconnect": { params: ServerParams; result: ServersSnapshot };
  "wave/mcp/delete": { params: DeleteParams; result: ServersSnapshot };
  "wave/mcp/setToolEnabled": { params: SetToolEnabledParams; result: ServersSnapshot };
  "wave/mcp/login": { params: ServerParams; result: ServersSnapshot };
  "wave/mcp/logout": { params: ServerParams; result: ServersSnapshot };
  "wave/mcp/openUrl": { params: OpenUrlParams; result: OpenUrlResult };
  "wave/mcp/configPaths": { params: SessionParams; result: ConfigPaths };
  "wave/mcp/prompts": { params: SessionParams; result: McpPromptsResult };
  "wave/mcp/resources": { params: SessionParams; result: McpResourcesResult };
  "wave/mcp/complete": { params: McpCompleteParams; result: McpCompleteResult };
  "wave/mcp/logs": { params: ServerParams; result: McpLogsResult };
  "wave/session/create": { params: SessionCreateParams; result: SessionCreated };
  "wave/session/send": { params: SessionSendParams; result: SessionSendAccepted };
  "wave/session/history": { params: SessionHistoryParams; result: SessionHistoryResult };
  "wave/session/cancel": { params: SessionCancelParams; result: SessionCancelResult };
  "wave/session/destroy": { params: SessionDestroyParams; result: SessionDestroyed };
  "wave/session/elicit": { params: SessionElicitParams; result: SessionElicitResult };
  "wave/mcp/approve": { params: ServerParams; result: ServersSnapshot };
  "wave/mcp/revoke": { params: ServerParams; result: ServersSnapshot };
  "wave/session/approveServers": { params: SessionApproveServersParams; result: SessionApproveServersResult };
  "wave/session/confirmTool": { params: SessionConfirmToolParams; result: SessionConfirmToolResult };
  "wave/registry/search": { params: RegistrySearchParams; result: RegistrySearchResult };
  "wave/registry/get": { params: RegistryGetParams; result: RegistryServerDetails };
  "wave/registry/add": { params: RegistryAddParams; result: RegistryAdded };
  "wave/app/resource": { params: AppResourceParams; result: AppResourceResult };
  "wave/app/closed": { params: AppClosedParams; result: AppClosedResult };
  "wave/app/callTool": { params: AppCallToolParams; result: AppCallToolResult };
  "wave/app/readResource": { params: AppResourceParams; result: AppReadResourceResult };
}

/** Sidecar → client notifications: params of each. */
export interface Notifications {
  "wave/mcp/logAppended": McpLogAppendedParams;
  "wave/mcp/serversChanged": ServersSnapshot;
  "wave/session/message": SessionMessageParams;
  "wave/session/turnEnded": SessionTurnEndedParams;
  "wave/session/delta": SessionDeltaParams;
  "wave/session/progress": SessionProgressParams;
  "wave/session/elicitationComplete": SessionElicitationCompleteParams;
  "wave/workspace/trust": WorkspaceTrustParams;
}

/** Every sidecar → client notification. */
export const NOTIFICATION_METHODS = ["wave/mcp/logAppended", "wave/mcp/serversChanged", "wave/session/message", "wave/session/turnEnded", "wave/session/delta", "wave/session/progress", "wave/session/elicitationComplete", "wave/workspace/trust"] as const;

/** Page requests the hosts forward to the sidecar unchanged. */
export const FORWARDED_REQUESTS = ["wave/mcp/servers", "wave/mcp/connect", "wave/mcp/disconnect", "wave/mcp/delete", "wave/mcp/setToolEnabled", "wave/mcp/login", "wave/mcp/logout", "wave/mcp/configPaths", "wave/mcp/prompts", "wave/mcp/resources", "wave/mcp/complete", "wave/mcp/logs", "wave/session/send", "wave/session/history", "wave/session/cancel", "wave/mcp/approve", "wave/mcp/revoke", "wave/registry/search", "wave/registry/get", "wave/registry/add", "wave/app/resource", "wave/app/closed", "wave/app/callTool", "wave/app/readResource"] as const;
export type ForwardedRequest = (typeof FORWARDED_REQUESTS)[number];

/** Sidecar notifications the hosts push to their pages unchanged. */
export const FORWARDED_NOTIFICATIONS = ["wave/mcp/logAppended", "wave/mcp/serversChanged", "wave/session/message", "wave/session/turnEnded", "wave/session/delta", "wave/session/progress", "wave/session/elicitationComplete"] as const;
export type ForwardedNotification = (typeof FORWARDED_NOTIFICATIONS)[number];

/** Sidecar requests the hosts pass to their chat page, with the page's answer back. */
export const PAGE_ANSWERED_REQUESTS = ["wave/session/elicit", "wave/session/approveServers", "wave/session/confirmTool"] as const;
export type PageAnsweredRequest = (typeof PAGE_ANSWERED_REQUESTS)[number];

/** Page → host requests (`host/*`): params and result of each. */
export interface HostOwnRequests {
  "host/openFile": { params: HostOpenFileParams; result: HostDone };
  "host/closeSettings": { params: HostCloseSettingsParams; result: HostDone };
  "host/openSettings": { params: HostNoParams; result: HostDone };
  "host/notify": { params: HostNotifyParams; result: HostDone };
  "host/cancelLogin": { params: HostCancelLoginParams; result: HostDone };
  "host/chatOpened": { params: HostNoParams; result: HostChatOpened };
  "host/answer": { params: HostAnswerParams; result: HostDone };
  "host/openExternal": { params: HostOpenExternalParams; result: HostDone };
}

/** Host → page pushes of the host's own (`host/*`): params of each. */
export interface HostOwnPushes {
  "host/prefill": HostPrefillParams;
  "host/sidecarRestarted": HostNoParams;
}

/** Host → chat page requests of the host's own (`host/*`, a push with an `id`, answered with `host/answer`). */
export interface HostOwnPageRequests {
  "host/teardownApps": { params: HostTeardownAppsParams; result: HostAppsTornDown };
}
