//! Wire types shared by the sidecar, the CLI's `--json` output and the IDE clients.
//!
//! Every field is camelCase on the wire. These declarations are the single source: every custom
//! LSP message is an empty enum implementing the `ls_types` `Request` / `Notification` trait
//! (the same lsp-types fork tower-lsp-server uses), listed once in [`MESSAGES`]. The TypeScript
//! copy (`vscode-extension/src/protocol.generated.ts`) and the JSON Schema for the Kotlin/Java
//! client (`jetbrains-plugin/protocol.schema.json`) are generated from them by this crate's
//! tests: `WAVE_UPDATE_GENERATED=1 cargo test -p wave-mcp-protocol`. `docs/protocol.md`
//! documents every method.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[cfg(test)]
mod generated;

/// The session the `wave/mcp/*` methods act on when no `sessionId` is given: the workspace's
/// agent, created at `initialize`.
pub const DEFAULT_SESSION_ID: &str = "default";

/// JSON-RPC error code of a well-formed request that could not be carried out (LSP's
/// `RequestFailed`). The error's `data` is an [`ErrorData`].
pub const REQUEST_FAILED: i64 = -32803;

/// Where a server's config came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum McpSource {
    User,
    Project,
    Plugin,
    Constructor,
}

/// A server's connection state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum McpStatus {
    Connected,
    Connecting,
    Reconnecting,
    Error,
    Disconnected,
    /// A remote server answered with HTTP 401: it needs `wave/mcp/login` (AUTH-1).
    #[serde(rename = "needs-auth")]
    NeedsAuth,
    /// A project server (`<workdir>/.mcp.json`) the user has not approved as written: nothing
    /// of it runs until `wave/mcp/approve` (TRUST-1, TRUST-4).
    #[serde(rename = "needs-approval")]
    NeedsApproval,
}

/// One tool of a server, live or from the snapshot cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpToolView {
    /// The server's own name for the tool.
    pub name: String,
    /// `mcp__<server>__<tool>`, the name the model sees.
    pub full_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub description: Option<String>,
    /// Switched on by the entry's `enabledTools` / `disabledTools` (BUD-1); a switched-off tool
    /// is listed but never offered to the model.
    pub enabled: bool,
    /// The user allowed this tool (`session` or `always`) for another definition than the one
    /// the server presents now: the permission no longer applies and the next call asks again
    /// (TRUST-6).
    #[serde(default)]
    pub definition_changed: bool,
    /// The server's text for this tool (name, title, description) had hidden characters
    /// (Unicode tags, bidi controls, zero-width characters) that were removed before anything
    /// reached the model (TRUST-7).
    #[serde(default)]
    pub hidden_text: bool,
    /// The server's title (`title`, else the annotations' `title`) and hints for the tool
    /// (SRV-4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub annotations: Option<ToolAnnotationsView>,
    /// The tool's icons that a page may show (SRV-4).
    #[serde(default)]
    pub icons: Vec<IconView>,
    /// The tool's MCP Apps metadata (`_meta.ui`, APPS-1): its app and who may call it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub ui: Option<ToolUiView>,
}

/// A tool's `_meta.ui` (MCP Apps, APPS-1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolUiView {
    /// The tool's app: a `ui://` resource of its server (`_meta.ui.resourceUri`, or the
    /// deprecated flat `_meta["ui/resourceUri"]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub resource_uri: Option<String>,
    /// Who may call the tool: `"model"`, `"app"`; absent means both. A tool without
    /// `"model"` is never offered to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub visibility: Option<Vec<String>>,
}

/// An icon of a server or a tool that a page may show: an `https:` URL, or a `data:` URL of a
/// PNG, JPEG, GIF or WebP image of at most 64 KiB; the sidecar drops every other (SVG
/// included) (SRV-4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct IconView {
    pub src: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub mime_type: Option<String>,
    /// `WxH` sizes or `any`, as the server wrote them.
    #[serde(default)]
    pub sizes: Vec<String>,
}

/// One configured server as lists show it. Values are as written in the config (`${VAR}` not
/// expanded); env and header values are never included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpServerView {
    pub name: String,
    pub source: McpSource,
    /// `stdio`, `http`, `sse`, or the unknown `type` as written.
    pub transport: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub url: Option<String>,
    pub status: McpStatus,
    /// Why the server is in `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub error: Option<String>,
    pub tool_count: usize,
    pub tools: Vec<McpToolView>,
    /// The tools come from the snapshot cache of an earlier connection, not a live one.
    pub tools_from_cache: bool,
    /// RFC 3339 time of the last successful connection, live or cached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub last_connected_at: Option<String>,
    /// Absolute path of the file the entry is in; absent for constructor servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub config_path: Option<String>,
    /// Plugin and constructor servers cannot be edited or deleted.
    pub read_only: bool,
    /// A remote server with stored sign-in credentials (AUTH-3): offer "Sign out" (AUTH-9).
    #[serde(default)]
    pub signed_in: bool,
    /// Present when `status` is `needs-approval`: what approving this entry would run, for the
    /// settings page to show beside its Approve button (TRUST-1, TRUST-3). `error` then holds
    /// the reason and how to approve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub approval: Option<ServerApproval>,
    /// The server's icons that a page may show, from its live connection (SRV-4).
    #[serde(default)]
    pub icons: Vec<IconView>,
    /// The MCP revision negotiated with the server (`2026-07-28`, `2025-11-25`, ...): the live
    /// connection's, or the last one negotiated with the entry as written when not connected
    /// now (SPEC-1). Absent if it never connected as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub protocol_version: Option<String>,
}

/// One project server waiting for the user's approval, exactly as written (TRUST-3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ServerApproval {
    pub name: String,
    /// Absolute path of the project's `.mcp.json`.
    pub config_path: String,
    /// `stdio`, `http`, `sse`, or the unknown `type` as written.
    pub transport: String,
    /// The stdio command as written (`${VAR}` not expanded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// The remote URL as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub url: Option<String>,
    /// Names of the environment variables the entry sets for its process (`env`), never their
    /// values.
    #[serde(default)]
    pub env_keys: Vec<String>,
    /// The `${VAR}` names the entry reads from the user's environment (in any field): approving
    /// sends their values where the entry says.
    #[serde(default)]
    pub variables: Vec<String>,
    /// The user approved this server before in another form: it changed since (TRUST-4).
    #[serde(default)]
    pub changed: bool,
    /// The source (`user`, `plugin`) of a same-named server that approving replaces for this
    /// project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub shadows: Option<McpSource>,
    /// The IDE does not trust the workspace (TRUST-9): the entry cannot be approved until it
    /// does, so the page offers no Approve.
    #[serde(default)]
    pub workspace_untrusted: bool,
}

/// Params of the sidecar-to-client request `wave/session/approveServers` (TRUST-3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionApproveServersParams {
    pub session_id: String,
    pub servers: Vec<ServerApproval>,
}

/// Result of `wave/session/approveServers`: the names the user approved (the others stay
/// `needs-approval` and are not asked about again in this session).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionApproveServersResult {
    #[serde(default)]
    pub approved: Vec<String>,
}

/// A tool's MCP annotations as the server declared them: hints, never guarantees (TRUST-5).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotationsView {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub open_world_hint: Option<bool>,
}

/// Params of the sidecar-to-client request `wave/session/confirmTool`: the model wants to call
/// a tool that no allow rule covers (TRUST-5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionConfirmToolParams {
    pub session_id: String,
    pub turn: u64,
    /// The model's tool call (an `Exec` script's nested calls carry the `Exec` call's id).
    pub tool_call_id: String,
    pub server: String,
    /// The server's own name for the tool.
    pub tool: String,
    /// `mcp__<server>__<tool>`.
    pub full_name: String,
    pub arguments: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub annotations: Option<ToolAnnotationsView>,
    /// The user allowed this tool before, for another definition: it changed since (TRUST-6).
    #[serde(default)]
    pub definition_changed: bool,
}

/// The user's answer to `wave/session/confirmTool`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ToolDecision {
    /// Run this call only.
    Once,
    /// Run it, and the tool's later calls while the session lives.
    Session,
    /// Run it, and remember the permission in the user's trust store, pinned to the tool's
    /// definition (TRUST-6).
    Always,
    /// Do not run it: the model is told the user declined.
    Deny,
}

/// Result of `wave/session/confirmTool`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionConfirmToolResult {
    pub decision: ToolDecision,
}

/// Payload of `wave/workspace/trust`: the IDE's trust in the opened project (TRUST-9).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceTrustParams {
    pub trusted: bool,
}

/// The model a session's agent talks to (an OpenAI-compatible Chat Completions endpoint). Unset
/// fields fall back to the sidecar's `WAVE_BASE_URL`, `WAVE_API_KEY` and `WAVE_MODEL`; without a
/// model, sessions still manage MCP servers but cannot chat.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ModelOptions {
    /// E.g. `https://api.openai.com/v1`; requests go to `{baseUrl}/chat/completions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub api_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub model: Option<String>,
}

/// `initializationOptions` of the LSP `initialize` request. Every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct InitializationOptions {
    /// Constructor-level servers of the default session (highest precedence), an object keyed by
    /// server name in the `.mcp.json` format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub mcp_servers: Option<Map<String, Value>>,
    /// Replaces the home directory (`~/.wave/...`); relative paths are taken from the sidecar's
    /// working directory. Meant for tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub home: Option<String>,
    /// The project directory, when the host has no workspace folder to offer; wins over
    /// `workspaceFolders` and `rootUri`. Relative paths are taken from the sidecar's working
    /// directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub workdir: Option<String>,
    /// The model of every session's agent (sessions may override it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub model: Option<ModelOptions>,
    /// `false` when the IDE does not trust the opened project (VS Code's Restricted Mode, an
    /// untrusted JetBrains project): its servers cannot be approved and nothing of it runs until
    /// `wave/workspace/trust` says otherwise (TRUST-9). Default: trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub workspace_trusted: Option<bool>,
    /// The client can show MCP Apps (both IDE clients say `true`): its sessions declare the
    /// `io.modelcontextprotocol/ui` extension to servers and `wave/app/*` works (APPS-1).
    /// Default: no apps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub apps: Option<bool>,
}

/// Params of a request about one session's servers as a whole.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionParams {
    /// Default: `"default"`, the workspace's agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub session_id: Option<String>,
}

/// Params of `wave/mcp/connect` and `wave/mcp/disconnect`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ServerParams {
    /// The server's name as listed.
    pub name: String,
    /// Default: `"default"`, the workspace's agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub session_id: Option<String>,
}

/// Params of `wave/mcp/delete`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct DeleteParams {
    pub name: String,
    /// Which file to remove the entry from: `user` (`~/.wave/mcp.json`) or `project`
    /// (`<workdir>/.mcp.json`). `plugin` and `constructor` are refused (read-only).
    pub source: McpSource,
    /// Default: `"default"`, the workspace's agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub session_id: Option<String>,
}

/// Params of `wave/mcp/setToolEnabled` (BUD-2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SetToolEnabledParams {
    /// The server's name as listed.
    pub name: String,
    /// Which file holds the entry: `user` or `project`; `plugin` and `constructor` are refused
    /// (read-only).
    pub source: McpSource,
    /// The server's own name of the tool.
    pub tool: String,
    pub enabled: bool,
    /// Default: `"default"`, the workspace's agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub session_id: Option<String>,
}

/// Params of the sidecar-to-client request `wave/mcp/openUrl`: sign-in wants this
/// authorization URL opened in the user's browser (AUTH-2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct OpenUrlParams {
    pub session_id: String,
    /// The server being signed in to (or, for an elicitation, the server that asked).
    pub name: String,
    pub url: String,
    /// Why the URL is opened; absent: `signIn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub purpose: Option<OpenUrlPurpose>,
}

/// Why the sidecar asks the client to open a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum OpenUrlPurpose {
    /// Sign-in's authorization page (AUTH-2).
    SignIn,
    /// A page a server asked the user to open, which the user accepted (LONG-6).
    Elicitation,
}

/// Result of `wave/mcp/openUrl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct OpenUrlResult {
    /// `false`: the client could not open it; the sidecar then uses `$BROWSER` or the
    /// platform's opener.
    pub opened: bool,
}

/// Every server of one session at one moment: the result of the `wave/mcp/*` requests and the
/// payload of `wave/mcp/serversChanged`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ServersSnapshot {
    /// From one counter per sidecar process, shared by replies and notifications: a snapshot
    /// with a higher version is never older. Clients drop anything older than what they show.
    pub version: u64,
    pub session_id: String,
    pub servers: Vec<McpServerView>,
}

/// Result of `wave/mcp/configPaths` (the host's `mcpConfigPathsResponse`): absolute OS paths,
/// whether or not the files exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ConfigPaths {
    /// `~/.wave/mcp.json`.
    pub user_config_path: String,
    /// `<workdir>/.mcp.json`.
    pub project_config_path: String,
    /// The workdir's last path component.
    pub project_name: String,
    /// The session's working directory.
    pub workdir: String,
}

/// One argument of a prompt, in the order the prompt declares them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpPromptArgument {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub description: Option<String>,
    pub required: bool,
}

/// A server's prompt, offered in the chat as the slash command `/<fullName>` (PRM-1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpPromptView {
    pub server: String,
    /// The server's own name for the prompt.
    pub name: String,
    /// `mcp__<server>__<prompt>`.
    pub full_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub description: Option<String>,
    pub arguments: Vec<McpPromptArgument>,
    /// From the snapshot cache of an earlier connection (the server is not connected now).
    #[serde(default)]
    pub from_cache: bool,
}

/// Where an entry of a server's log came from (SRV-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum LogSourceView {
    /// The server's `notifications/message`.
    Message,
    /// A line its process wrote to stderr.
    Stderr,
}

/// One entry of a server's log (SRV-2). `text` is the server's own (hidden characters removed):
/// show it as text, never as markup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct LogEntryView {
    /// RFC 3339, milliseconds.
    pub time: String,
    pub source: LogSourceView,
    /// The MCP level of a message: `debug`, `info`, `notice`, `warning`, `error`, `critical`,
    /// `alert`, `emergency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub level: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub logger: Option<String>,
    pub text: String,
}

/// Result of `wave/mcp/logs`: a server's log, oldest first (SRV-2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpLogsResult {
    pub entries: Vec<LogEntryView>,
    /// Older entries dropped to keep the newest 2,000.
    pub dropped: u64,
}

/// Params of `wave/mcp/logAppended`: entries appended to one server's log (SRV-2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpLogAppendedParams {
    pub session_id: String,
    pub name: String,
    pub entries: Vec<LogEntryView>,
}

/// Result of `wave/mcp/prompts`: the prompts of every server the permission rules allow, in
/// config order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpPromptsResult {
    pub session_id: String,
    pub prompts: Vec<McpPromptView>,
}

/// A server's resource, mentioned in a chat message as `@<server>:<uri>` (PRM-3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpResourceView {
    pub server: String,
    pub uri: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub description: Option<String>,
    #[serde(default)]
    pub from_cache: bool,
}

/// A server's resource template (RFC 6570 `uriTemplate`, e.g. `file:///{path}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpResourceTemplateView {
    pub server: String,
    pub uri_template: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub description: Option<String>,
    #[serde(default)]
    pub from_cache: bool,
}

/// Result of `wave/mcp/resources`: resources and templates of every server the permission
/// rules allow, in config order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpResourcesResult {
    pub session_id: String,
    pub resources: Vec<McpResourceView>,
    pub templates: Vec<McpResourceTemplateView>,
}

/// What a completion is for: a prompt's argument or a resource template's variable (SRV-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
pub enum CompletionRefKind {
    /// An argument of the prompt `name`.
    #[serde(rename = "ref/prompt")]
    Prompt,
    /// A variable of the resource template `uri`.
    #[serde(rename = "ref/resource")]
    Resource,
}

/// `{ type: "ref/prompt", name }` or `{ type: "ref/resource", uri }`, as MCP's
/// `completion/complete` has it (SRV-3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct CompletionRef {
    #[serde(rename = "type")]
    pub kind: CompletionRefKind,
    /// The prompt's name (with `ref/prompt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub name: Option<String>,
    /// The resource template, e.g. `file:///{path}` (with `ref/resource`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub uri: Option<String>,
}

/// The argument being completed and what the user has typed of it so far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct CompletionArgument {
    pub name: String,
    pub value: String,
}

/// The arguments already chosen, which the server may use to narrow its suggestions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct CompletionContext {
    #[serde(default)]
    pub arguments: std::collections::BTreeMap<String, String>,
}

/// Params of `wave/mcp/complete` (SRV-3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpCompleteParams {
    /// Default: `"default"`, the workspace's agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub session_id: Option<String>,
    /// The server's name as listed.
    pub server: String,
    #[serde(rename = "ref")]
    pub reference: CompletionRef,
    pub argument: CompletionArgument,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub context: Option<CompletionContext>,
}

/// Result of `wave/mcp/complete`: suggested values, best first, at most 100 (SRV-3).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpCompleteResult {
    pub values: Vec<String>,
    /// How many values the server has in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub total: Option<u32>,
    /// The server has more values than these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub has_more: Option<bool>,
}

/// Params of `wave/session/create`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionCreateParams {
    /// Default: the workdir of the default session. Relative paths are taken from the
    /// sidecar's working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub workdir: Option<String>,
    /// Constructor-level servers of this session. Default: those of `initializationOptions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub mcp_servers: Option<Map<String, Value>>,
    /// Default: the model of `initializationOptions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub model: Option<ModelOptions>,
}

/// Result of `wave/session/create`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionCreated {
    pub session_id: String,
}

/// Params of `wave/session/send`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionSendParams {
    pub session_id: String,
    /// Sent verbatim as an ordinary user message (`/settings ...` included, ADD-4).
    pub text: String,
}

/// Result of `wave/session/send`: the message was accepted and its turn queued (a session runs
/// one turn at a time). What the turn produces arrives as `wave/session/message` notifications,
/// then `wave/session/turnEnded`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionSendAccepted {
    pub session_id: String,
    /// Numbers the session's turns from 1; `turnEnded` carries the same number.
    pub turn: u64,
}

/// Who a chat message comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ChatRole {
    User,
    Assistant,
    Tool,
}

/// A tool call made by the model, as the chat view shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ChatToolCall {
    pub id: String,
    /// The tool's full name (`mcp__<server>__<tool>` for MCP tools).
    pub name: String,
    /// The arguments as the model wrote them (a JSON text).
    pub arguments: String,
    /// The called tool has an app (`_meta.ui.resourceUri`): the chat shows it under the call
    /// from the call's start (APPS-2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub app: Option<ChatAppRef>,
}

/// The app of a tool call (MCP Apps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ChatAppRef {
    pub server: String,
    /// The server's own name for the tool.
    pub tool: String,
    /// The app's `ui://` resource.
    pub resource_uri: String,
}

/// The result of a tool call that has an app, in full, so a reopened chat shows the app again
/// without calling the tool (APPS-5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ChatAppResult {
    pub server: String,
    pub tool: String,
    pub resource_uri: String,
    /// The MCP `CallToolResult` as the server sent it (`content`, `structuredContent`, `_meta`,
    /// `isError`).
    pub result: Value,
}

/// One message of a session's conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ChatMessage {
    pub role: ChatRole,
    pub content: String,
    /// For `assistant`: the tool calls it made.
    #[serde(default)]
    pub tool_calls: Vec<ChatToolCall>,
    /// For `tool`: the tool's full name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub tool_name: Option<String>,
    /// For `tool`: the result is an error.
    #[serde(default)]
    pub is_error: bool,
    /// Written by the runtime for the model (e.g. MCP instructions), hidden in the chat view.
    #[serde(default)]
    pub is_meta: bool,
    /// For `tool`: the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub tool_call_id: Option<String>,
    /// For `tool`, when the called tool has an app: its full result (APPS-5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub app: Option<ChatAppResult>,
}

/// Params of `wave/app/resource` and `wave/app/readResource`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppResourceParams {
    pub session_id: String,
    pub server: String,
    pub uri: String,
}

/// Result of `wave/app/resource`: an app's HTML (`text/html;profile=mcp-app`) with its
/// `_meta.ui`, and the sandbox proxy URL to frame it in (APPS-1, APPS-2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppResourceResult {
    pub uri: String,
    pub html: String,
    pub mime_type: String,
    /// `_meta.ui.csp` as the server declared it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub csp: Option<UiCspView>,
    /// `_meta.ui.permissions` (camera, microphone, geolocation, clipboardWrite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub permissions: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub domain: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub prefers_border: Option<bool>,
    /// The one-time proxy page on the sidecar's sandbox origin, served under the CSP built
    /// from `csp` alone; `wave/app/closed` forgets it.
    pub sandbox_url: String,
}

/// The domains an app's resource declares (`_meta.ui.csp`): each list widens one group of CSP
/// directives of its sandbox page; an absent list keeps the restrictive default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct UiCspView {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub connect_domains: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub resource_domains: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub frame_domains: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub base_uri_domains: Option<Vec<String>>,
}

/// Params of `wave/app/closed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppClosedParams {
    /// A `sandboxUrl` of `wave/app/resource`.
    pub url: String,
}

/// Result of `wave/app/closed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppClosedResult {
    /// The URL was registered and serves nothing from now on.
    pub forgotten: bool,
}

/// Params of `wave/app/callTool`: an app's `tools/call` (APPS-4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppCallToolParams {
    pub session_id: String,
    /// The app's own server: the only one it may call.
    pub server: String,
    /// The server's own name for the tool.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub arguments: Option<Map<String, Value>>,
    /// The model's tool call whose app asks (named in the consent question).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub tool_call_id: Option<String>,
}

/// Result of `wave/app/callTool`: the MCP `CallToolResult` as the server sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
pub struct AppCallToolResult(pub Map<String, Value>);

/// Result of `wave/app/readResource`: the MCP `ReadResourceResult` as the server sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
pub struct AppReadResourceResult(pub Map<String, Value>);

/// Payload of `wave/session/message`: one message added to the session's conversation, the
/// user's own message first in each turn (CHAT-1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionMessageParams {
    pub session_id: String,
    pub turn: u64,
    /// The message's position in the conversation, from 0: the same as in
    /// `wave/session/history`, so a view that loaded the history skips what it already has.
    pub index: u64,
    pub message: ChatMessage,
}

/// Params of `wave/session/history`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionHistoryParams {
    pub session_id: String,
}

/// One message of a session's conversation with its turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionHistoryEntry {
    pub turn: u64,
    /// Position in the conversation, from 0 (`SessionMessageParams.index`).
    pub index: u64,
    pub message: ChatMessage,
}

/// Result of `wave/session/history`: the whole conversation so far (CHAT-1), in the order the
/// messages were added — a turn's user message when its `send` was accepted, its other messages
/// when it ran — so grouped by turn (a stable sort) they read as the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionHistoryResult {
    pub session_id: String,
    pub messages: Vec<SessionHistoryEntry>,
    /// Turns accepted and not ended yet, in order (the first one is running, CHAT-2).
    pub running_turns: Vec<u64>,
}

/// Payload of `wave/session/turnEnded`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionTurnEndedParams {
    pub session_id: String,
    pub turn: u64,
    /// Why the turn stopped early (model unreachable, ...), for the host to show as a
    /// notification; absent when it completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub error: Option<String>,
    /// The turn was stopped by `wave/session/cancel` (LONG-3); what it produced until then was
    /// recorded.
    #[serde(default)]
    pub cancelled: bool,
}

/// Payload of `wave/session/delta`: more text of the assistant message being generated
/// (LONG-1). The complete message still arrives once as `wave/session/message`; the history
/// holds complete messages only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionDeltaParams {
    pub session_id: String,
    pub turn: u64,
    /// The index the message will have in the conversation when complete (it moves up by one
    /// if another turn's user message is recorded meanwhile; the complete message's `index` is
    /// the final one).
    pub message_index: u64,
    /// The new text, to append to what earlier deltas of the message carried.
    pub text: String,
}

/// Payload of `wave/session/progress`: an MCP server's `notifications/progress` for a tool
/// call that is running (LONG-2), for the model's tool call `toolCallId` (an Exec call's
/// progress is reported for the Exec tool call).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionProgressParams {
    pub session_id: String,
    pub turn: u64,
    pub tool_call_id: String,
    pub progress: f64,
    /// Known total: show a bar (`progress / total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub total: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub message: Option<String>,
}

/// Params of `wave/session/cancel`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionCancelParams {
    pub session_id: String,
}

/// Result of `wave/session/cancel`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionCancelResult {
    pub session_id: String,
    /// `true`: a running turn was told to stop (its `turnEnded` carries `cancelled: true`);
    /// `false`: no turn was running.
    pub cancelled: bool,
}

/// Params of `wave/session/destroy`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionDestroyParams {
    pub session_id: String,
}

/// What happened to a destroyed session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum DestroyState {
    /// Torn down: every process it had is gone.
    Destroyed,
    /// It is being reconfigured; it is in the reclaim queue and is torn down the moment the
    /// reconfiguration ends (LIFE-9). It already accepts no request.
    Queued,
}

/// Result of `wave/session/destroy`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionDestroyed {
    pub session_id: String,
    pub state: DestroyState,
}

/// How a server asks the user (MCP elicitation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ElicitMode {
    /// Fill in a form built from `requestedSchema` (LONG-5).
    Form,
    /// Open `url` after the user agreed (LONG-6).
    Url,
}

/// Params of the sidecar-to-client request `wave/session/elicit`: an MCP server asks the user
/// during a tool call (`elicitation/create`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionElicitParams {
    pub session_id: String,
    /// The server that asks, as configured.
    pub server: String,
    pub mode: ElicitMode,
    /// The server's text for the user.
    pub message: String,
    /// `form`: a JSON Schema object whose properties are primitives (string with optional
    /// `format` email/uri/date/date-time and `minLength`/`maxLength`, number/integer with
    /// `minimum`/`maximum`, boolean, enum with `enumNames` or `oneOf` titles, arrays of enum
    /// values), `required`, `default`s; property order as the server wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub requested_schema: Option<Map<String, Value>>,
    /// `url`: the page to open once the user accepts (show its host first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub url: Option<String>,
    /// `url`: names it in `wave/session/elicitationComplete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub elicitation_id: Option<String>,
}

/// The user's decision on an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    Accept,
    Decline,
    Cancel,
}

/// Result of `wave/session/elicit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionElicitResult {
    pub action: ElicitAction,
    /// `accept` of a form: the values by property name, valid for the schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub content: Option<Map<String, Value>>,
}

/// Payload of `wave/session/elicitationComplete`: a URL-mode elicitation finished (the server
/// sent `notifications/elicitation/complete`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionElicitationCompleteParams {
    pub session_id: String,
    pub server: String,
    pub elicitation_id: String,
}

// ---- The MCP Registry (USE-3) ----

/// Params of `wave/registry/search`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RegistrySearchParams {
    /// Matched against server names (a substring); empty lists every server.
    pub query: String,
    /// `nextCursor` of the previous page, for the next one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub cursor: Option<String>,
}

/// One server of a registry search: the latest version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RegistryServerView {
    /// The registry name, e.g. `io.github.user/weather`.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub title: Option<String>,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub version: Option<String>,
    /// How it would run, e.g. "npm package airtable-mcp-server@1.7.3"; absent when wave-mcp
    /// cannot install it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub install: Option<String>,
}

/// Result of `wave/registry/search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RegistrySearchResult {
    /// The registry asked (`WAVE_REGISTRY_URL`, default the official one).
    pub registry_url: String,
    pub servers: Vec<RegistryServerView>,
    /// More servers match: pass this as `cursor` for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub next_cursor: Option<String>,
}

/// Params of `wave/registry/get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RegistryGetParams {
    /// The registry name.
    pub name: String,
    /// Default: the latest version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub version: Option<String>,
}

/// Where a value the user gives goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum RegistryInputKind {
    EnvironmentVariable,
    Argument,
    Header,
    UrlVariable,
}

/// A value a registry server needs from the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RegistryInputView {
    /// Its name in the `server.json` (variable, header, flag or value hint).
    pub name: String,
    pub kind: RegistryInputKind,
    /// The `${VAR}` the entry has for it (set that environment variable); absent for an
    /// optional input left out of the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub placeholder: Option<String>,
    pub required: bool,
    pub secret: bool,
    /// An argument the server takes more than once (`isRepeated`): the entry has one value,
    /// more may be added after it.
    #[serde(default)]
    pub repeated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub default: Option<String>,
}

/// What adding a registry server writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RegistryInstallView {
    /// How it runs, e.g. "npm package airtable-mcp-server@1.7.3".
    pub how: String,
    /// The config entry written (`${VAR}` placeholders unexpanded).
    pub entry: Value,
    /// Required inputs (placeholders) first, then optional ones left out.
    pub inputs: Vec<RegistryInputView>,
}

/// Result of `wave/registry/get`: one version's details.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RegistryServerDetails {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub title: Option<String>,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub website_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub repository_url: Option<String>,
    /// What adding it writes; absent when wave-mcp cannot install it (see `unsupported`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub install: Option<RegistryInstallView>,
    /// Why it cannot be installed (the package types it offers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub unsupported: Option<String>,
}

/// Params of `wave/registry/add`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RegistryAddParams {
    /// The name of the new entry in the config file.
    pub name: String,
    /// The registry name of the server.
    pub server: String,
    /// Default: the latest version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub version: Option<String>,
    /// `user` (`~/.wave/mcp.json`) or `project` (`<workdir>/.mcp.json`; the user's own add
    /// counts as approval, TRUST-1). `plugin` and `constructor` are refused.
    pub scope: McpSource,
    /// Default: `"default"`, the workspace's agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub session_id: Option<String>,
}

/// Result of `wave/registry/add`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RegistryAdded {
    /// The config file written, absolute.
    pub path: String,
    /// What was written and the `${VAR}`s to set.
    pub install: RegistryInstallView,
    /// The session's servers after the add.
    pub servers: ServersSnapshot,
}

/// Machine-readable cause of a [`REQUEST_FAILED`] error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum ErrorKind {
    /// No session with that id (never created, or destroyed).
    UnknownSession,
    /// No server with that name is configured in the session.
    UnknownServer,
    /// Plugin and constructor servers cannot be deleted (DEL-4).
    ReadOnly,
    /// The config file does not exist.
    FileMissing,
    /// The config file has no entry of that name.
    EntryMissing,
    /// The config file may not be read or written.
    PermissionDenied,
    /// The config file is not valid JSON(C), or `mcpServers` is not an object.
    InvalidFile,
    /// Another I/O failure.
    Io,
    /// The session cannot chat (no agent behind it).
    ChatUnavailable,
    /// The sidecar is shutting down.
    ShuttingDown,
    /// Sign-in failed; the message names the server and the cause (AUTH-8).
    SignInFailed,
    /// Sign-in was cancelled by a newer `wave/mcp/login` for the server (`$/cancelRequest` ends
    /// it with LSP's `RequestCancelled`, -32800).
    SignInCancelled,
    /// The server is a project server the user has not approved (TRUST-1).
    NeedsApproval,
    /// The IDE does not trust the project: its servers cannot be approved (TRUST-9).
    Untrusted,
    /// The MCP Registry could not be reached or answered with an error, or the server offers
    /// nothing wave-mcp can install (USE-3).
    Registry,
    /// The server has no such app, or the client cannot show apps (APPS-1); the message names
    /// the server and the URI.
    NoApp,
    /// An app asked for what it may not have: another server's tool or resource, a tool not
    /// visible to apps, or a call the user declined (APPS-4).
    AppRefused,
}

/// `data` of a [`REQUEST_FAILED`] error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ErrorData {
    pub kind: ErrorKind,
    /// The config file concerned, absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub path: Option<String>,
}

/// Which way a message goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    ClientToServer,
    ServerToClient,
}

/// Request (answered) or notification (not answered).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    Request,
    Notification,
}

/// Whether the hosts relay a message between the sidecar and the shared webview unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relay {
    /// A page request the host forwards to the sidecar, or a sidecar notification the host
    /// pushes to its pages, unchanged.
    Webview,
    /// Between host and sidecar only: the webview never sees it.
    HostOnly,
    /// A sidecar request the host passes to its chat page, and the page's answer back; without
    /// a chat page the host answers with an error.
    PageAnswers,
}

/// One custom message of the protocol, for docs, code generation and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageInfo {
    pub method: &'static str,
    pub kind: MessageKind,
    pub direction: Direction,
    pub relay: Relay,
    /// Rust (and TypeScript) name of the params type.
    pub params: &'static str,
    /// Name of the result type; `None` for notifications.
    pub result: Option<&'static str>,
}

/// Declares each message once: the empty enum, its `ls_types` trait impl and its [`MESSAGES`]
/// entry.
macro_rules! messages {
    ($(
        $(#[doc = $doc:literal])*
        $kind:ident $name:ident = $method:literal, $direction:ident, $relay:ident, $params:ident $(-> $result:ident)?;
    )*) => {
        $(
            $(#[doc = $doc])*
            #[derive(Debug)]
            pub enum $name {}
            messages!(@impl $kind $name $method $params $($result)?);
        )*

        /// Every custom message, in documentation order.
        pub const MESSAGES: &[MessageInfo] = &[$(
            MessageInfo {
                method: $method,
                kind: MessageKind::$kind,
                direction: Direction::$direction,
                relay: Relay::$relay,
                params: stringify!($params),
                result: messages!(@result $($result)?),
            },
        )*];

        /// Every custom method name.
        pub const METHODS: &[&str] = &[$($method),*];
    };
    (@impl Request $name:ident $method:literal $params:ident $result:ident) => {
        impl ls_types::request::Request for $name {
            type Params = $params;
            type Result = $result;
            const METHOD: &'static str = $method;
        }
    };
    (@impl Notification $name:ident $method:literal $params:ident) => {
        impl ls_types::notification::Notification for $name {
            type Params = $params;
            const METHOD: &'static str = $method;
        }
    };
    (@result $result:ident) => { Some(stringify!($result)) };
    (@result) => { None };
}

messages! {
    /// The servers of a session (default: the workspace's agent) with their status.
    Request McpServers = "wave/mcp/servers", ClientToServer, Webview, SessionParams -> ServersSnapshot;
    /// Connects one server now (LAZY-5, LIFE-2) and answers when it is connected or failed; a
    /// failure is the row's `error`, not a JSON-RPC error (UI-12).
    Request McpConnect = "wave/mcp/connect", ClientToServer, Webview, ServerParams -> ServersSnapshot;
    /// Disconnects one server (its whole process tree ends) and always answers with a
    /// snapshot, even when the entry is gone or teardown misbehaves (UI-4).
    Request McpDisconnect = "wave/mcp/disconnect", ClientToServer, Webview, ServerParams -> ServersSnapshot;
    /// Removes one entry from the user or project config file, keeping every other byte
    /// (DEL-2); refuses plugin and constructor servers (DEL-4).
    Request McpDelete = "wave/mcp/delete", ClientToServer, Webview, DeleteParams -> ServersSnapshot;
    /// Switches one tool of a user or project entry on or off: edits the entry's
    /// `disabledTools` (or `enabledTools`, when the entry uses it) keeping every other byte, with
    /// the errors of delete; the server keeps its connection (BUD-2).
    Request McpSetToolEnabled = "wave/mcp/setToolEnabled", ClientToServer, Webview, SetToolEnabledParams -> ServersSnapshot;
    /// Signs in to a remote server (OAuth 2.1 authorization code + PKCE, AUTH-2) and connects
    /// it; answers when it is connected, or with a `signInFailed` error. A newer login for the
    /// same server cancels it (`signInCancelled`); so does `$/cancelRequest` (-32800).
    Request McpLogin = "wave/mcp/login", ClientToServer, Webview, ServerParams -> ServersSnapshot;
    /// Disconnects a server and deletes (and, where offered, revokes) its stored credentials
    /// (AUTH-5).
    Request McpLogout = "wave/mcp/logout", ClientToServer, Webview, ServerParams -> ServersSnapshot;
    /// Asks the client to open a sign-in URL in the user's browser and to show it (AUTH-2).
    Request McpOpenUrl = "wave/mcp/openUrl", ServerToClient, HostOnly, OpenUrlParams -> OpenUrlResult;
    /// Absolute paths of the user and project config files, and the project name (EDIT-2).
    Request McpConfigPaths = "wave/mcp/configPaths", ClientToServer, Webview, SessionParams -> ConfigPaths;
    /// The prompts of a session's servers, live or cached, as slash commands (PRM-1). A change
    /// (a connect, `prompts/list_changed`, PRM-4) comes as `wave/mcp/serversChanged`.
    Request McpPrompts = "wave/mcp/prompts", ClientToServer, Webview, SessionParams -> McpPromptsResult;
    /// The resources and resource templates of a session's servers, live or cached (PRM-3);
    /// changes come as `wave/mcp/serversChanged` (PRM-4).
    Request McpResources = "wave/mcp/resources", ClientToServer, Webview, SessionParams -> McpResourcesResult;
    /// Suggested values for a prompt's argument or a resource template's variable, from the
    /// server's `completion/complete`; empty for a server that does not declare `completions`
    /// (it is never asked) or that is not connected (SRV-3).
    Request McpComplete = "wave/mcp/complete", ClientToServer, Webview, McpCompleteParams -> McpCompleteResult;
    /// One server's log: its log messages and stderr lines, the newest 2,000 (SRV-2). An
    /// unknown server has an empty log.
    Request McpLogs = "wave/mcp/logs", ClientToServer, Webview, ServerParams -> McpLogsResult;
    /// Entries appended to a server's log, in order (SRV-2).
    Notification McpLogAppended = "wave/mcp/logAppended", ServerToClient, Webview, McpLogAppendedParams;
    /// A session's servers changed (status, tools, config): the full new list (UI-5).
    Notification McpServersChanged = "wave/mcp/serversChanged", ServerToClient, Webview, ServersSnapshot;
    /// Creates a session (an agent with its own MCP servers) in this sidecar.
    Request SessionCreate = "wave/session/create", ClientToServer, HostOnly, SessionCreateParams -> SessionCreated;
    /// Sends a user message to a session and queues its turn (ADD-3, ADD-4, CHAT-2).
    Request SessionSend = "wave/session/send", ClientToServer, Webview, SessionSendParams -> SessionSendAccepted;
    /// The whole conversation of a session so far, with turn numbers (CHAT-1).
    Request SessionHistory = "wave/session/history", ClientToServer, Webview, SessionHistoryParams -> SessionHistoryResult;
    /// A message added to the conversation: the user's own first, then meta, assistant and
    /// tool messages (CHAT-1).
    Notification SessionMessage = "wave/session/message", ServerToClient, Webview, SessionMessageParams;
    /// A turn ended, completed or not.
    Notification SessionTurnEnded = "wave/session/turnEnded", ServerToClient, Webview, SessionTurnEndedParams;
    /// Assistant text as the model generates it (LONG-1).
    Notification SessionDelta = "wave/session/delta", ServerToClient, Webview, SessionDeltaParams;
    /// Progress of a running MCP tool call (LONG-2).
    Notification SessionProgress = "wave/session/progress", ServerToClient, Webview, SessionProgressParams;
    /// Stops the running turn: the model request is aborted, each MCP call in flight is sent
    /// `notifications/cancelled`, and the turn ends with `cancelled: true` (LONG-3).
    Request SessionCancel = "wave/session/cancel", ClientToServer, Webview, SessionCancelParams -> SessionCancelResult;
    /// Destroys a session and every process it has; queued while it is being reconfigured
    /// (LIFE-9).
    Request SessionDestroy = "wave/session/destroy", ClientToServer, HostOnly, SessionDestroyParams -> SessionDestroyed;
    /// An MCP server asks the user during a call (elicitation, LONG-5, LONG-6): the chat page
    /// shows the form (or the URL's host) and answers; an error answer counts as `decline`.
    Request SessionElicit = "wave/session/elicit", ServerToClient, PageAnswers, SessionElicitParams -> SessionElicitResult;
    /// A URL-mode elicitation finished out of band: the page closes its waiting state (LONG-6).
    Notification SessionElicitationComplete = "wave/session/elicitationComplete", ServerToClient, Webview, SessionElicitationCompleteParams;
    /// Approves one project server as written now (pinned to its fingerprint, kept in the user's
    /// home) and connects it; refused in an untrusted workspace (TRUST-1, TRUST-3, TRUST-9).
    Request McpApprove = "wave/mcp/approve", ClientToServer, Webview, ServerParams -> ServersSnapshot;
    /// Disconnects a project server and forgets its approval: it is `needs-approval` again
    /// (TRUST-3).
    Request McpRevoke = "wave/mcp/revoke", ClientToServer, Webview, ServerParams -> ServersSnapshot;
    /// A turn would dial project servers the user has not approved: the chat page asks (each
    /// with its exact command line or URL, the variables it reads, whether it changed, what it
    /// replaces). An error answer, or none before the turn is stopped, approves nothing
    /// (TRUST-3).
    Request SessionApproveServers = "wave/session/approveServers", ServerToClient, PageAnswers, SessionApproveServersParams -> SessionApproveServersResult;
    /// The model calls a tool that no allow rule covers: the chat page asks Allow once / for
    /// this session / always, or Deny. An error answer counts as `deny`; Stop ends the turn
    /// (TRUST-5, TRUST-6).
    Request SessionConfirmTool = "wave/session/confirmTool", ServerToClient, PageAnswers, SessionConfirmToolParams -> SessionConfirmToolResult;
    /// The IDE's trust in the project changed (VS Code granted workspace trust): untrusted, no
    /// project server can be approved or run (TRUST-9).
    Notification WorkspaceTrust = "wave/workspace/trust", ClientToServer, HostOnly, WorkspaceTrustParams;
    /// Searches the MCP Registry (`WAVE_REGISTRY_URL`, default the official one) by server
    /// name: the latest version of each match, a page at a time (USE-3).
    Request RegistrySearch = "wave/registry/search", ClientToServer, Webview, RegistrySearchParams -> RegistrySearchResult;
    /// One registry server's details: what adding it writes (its package or remote) and the
    /// values it needs from the user (USE-3).
    Request RegistryGet = "wave/registry/get", ClientToServer, Webview, RegistryGetParams -> RegistryServerDetails;
    /// Adds a registry server to the user or project config file (one new entry, every other
    /// byte kept; a project add counts as approval), then reloads (USE-3).
    Request RegistryAdd = "wave/registry/add", ClientToServer, Webview, RegistryAddParams -> RegistryAdded;
    /// An app's UI resource (`resources/read`, `text/html;profile=mcp-app` only) with its
    /// `_meta.ui`, registered with the sandbox origin (APPS-1, APPS-2).
    Request AppResource = "wave/app/resource", ClientToServer, Webview, AppResourceParams -> AppResourceResult;
    /// An app view was removed: its sandbox URL serves nothing from now on.
    Request AppClosed = "wave/app/closed", ClientToServer, Webview, AppClosedParams -> AppClosedResult;
    /// An app's `tools/call`: its own server's tools visible to apps only, through the same
    /// permission rules and consent as the model's calls (APPS-4).
    Request AppCallTool = "wave/app/callTool", ClientToServer, Webview, AppCallToolParams -> AppCallToolResult;
    /// An app's `resources/read`, of its own server only (APPS-4).
    Request AppReadResource = "wave/app/readResource", ClientToServer, Webview, AppResourceParams -> AppReadResourceResult;
}

// ---- host/*: between the shared webview and its host (never on the sidecar's wire) ----

/// Params of a host message that has none (`{}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
pub struct HostNoParams {}

/// The answer of a host request that returns nothing (`null`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
pub struct HostDone;

/// Params of `host/openFile`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HostOpenFileParams {
    /// An absolute OS path from the sidecar (EDIT-2).
    pub path: String,
}

/// Params of `host/openExternal`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HostOpenExternalParams {
    /// An `http:`, `https:` or `mailto:` URL of a link in the assistant's answer (USE-4).
    pub url: String,
}

/// Params of `host/closeSettings`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HostCloseSettingsParams {
    /// Put this text in the chat input, focused, not sent (ADD-1, ADD-2, EDIT-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub prefill: Option<String>,
}

/// How loud a host notification is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum HostNotifyLevel {
    Info,
    Warning,
    Error,
}

/// Params of `host/notify`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HostNotifyParams {
    pub level: HostNotifyLevel,
    pub message: String,
}

/// Params of `host/cancelLogin`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HostCancelLoginParams {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub session_id: Option<String>,
}

/// Result of `host/chatOpened`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HostChatOpened {
    /// A prefill that waited for a chat page (ADD-1, EDIT-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub prefill: Option<String>,
}

/// Params of the `host/prefill` push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HostPrefillParams {
    pub text: String,
}

/// Params of `host/answer`: the page's answer to a sidecar request the host delivered to it
/// with this `id` (`Relay::PageAnswers`, e.g. `wave/session/elicit`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HostAnswerParams {
    pub id: u64,
    /// The result, for the host to send to the sidecar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub result: Option<Value>,
    /// Instead of a result: why the page did not answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub error: Option<String>,
}

/// Params of `host/teardownApps`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HostTeardownAppsParams {
    /// Why the apps go (for the host's log and the stopped cards), e.g. "the sidecar restarted".
    pub reason: String,
}

/// Result of `host/teardownApps` (through `host/answer`): how many app views were live and how
/// many of them answered `ui/resource-teardown` (APPS-3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HostAppsTornDown {
    /// Live app views torn down.
    pub total: u32,
    /// Of those, the apps that answered `ui/resource-teardown` before their frame went.
    pub answered: u32,
}

/// Which way a host message goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostDirection {
    /// A request of the page, answered by the host.
    PageToHost,
    /// A push of the host to the page (not answered).
    HostToPage,
    /// A request of the host to the chat page: a push with an `id`, answered with `host/answer`.
    HostAsksPage,
}

/// One `host/*` message, for docs, code generation and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostMessageInfo {
    pub method: &'static str,
    pub direction: HostDirection,
    pub params: &'static str,
    /// Name of the result type; `None` for pushes.
    pub result: Option<&'static str>,
}

macro_rules! host_messages {
    ($(
        $(#[doc = $doc:literal])*
        $method:literal, $direction:ident, $params:ident $(-> $result:ident)?;
    )*) => {
        /// Every `host/*` message between the shared webview and its host, in documentation
        /// order.
        pub const HOST_MESSAGES: &[HostMessageInfo] = &[$(
            HostMessageInfo {
                method: $method,
                direction: HostDirection::$direction,
                params: stringify!($params),
                result: messages!(@result $($result)?),
            },
        )*];
    };
}

host_messages! {
    /// Open this absolute path in an editor tab (EDIT-1); sent before `host/closeSettings`.
    "host/openFile", PageToHost, HostOpenFileParams -> HostDone;
    /// Close the settings page, back to the chat, with an optional prefill (UI-7, ADD-1).
    "host/closeSettings", PageToHost, HostCloseSettingsParams -> HostDone;
    /// Open the settings page on "MCP services" (UI-1; the chat's `/mcp`).
    "host/openSettings", PageToHost, HostNoParams -> HostDone;
    /// A host notification, never a chat message (UI-12).
    "host/notify", PageToHost, HostNotifyParams -> HostDone;
    /// Cancel the running `wave/mcp/login` of a server (AUTH-9).
    "host/cancelLogin", PageToHost, HostCancelLoginParams -> HostDone;
    /// A chat page (re)opened: it takes pushes from now on, and any prefill that waited.
    "host/chatOpened", PageToHost, HostNoParams -> HostChatOpened;
    /// Put this text in the chat input (the settings page's Add/Edit).
    "host/prefill", HostToPage, HostPrefillParams;
    /// The sidecar (re)started: reload what the page shows.
    "host/sidecarRestarted", HostToPage, HostNoParams;
    /// The page's answer to a sidecar request delivered to it (`Relay::PageAnswers`).
    "host/answer", PageToHost, HostAnswerParams -> HostDone;
    /// Open a link of the assistant's answer in the browser, once the user confirms (USE-4).
    "host/openExternal", PageToHost, HostOpenExternalParams -> HostDone;
    /// Tear every live app view of the chat down now, each after `ui/resource-teardown`
    /// (APPS-3: the session is destroyed, the sidecar restarted, the chat closes).
    "host/teardownApps", HostAsksPage, HostTeardownAppsParams -> HostAppsTornDown;
}
