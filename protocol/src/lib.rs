//! Wire types shared by the sidecar, the CLI's `--json` output and the IDE clients.
//!
//! Every field is camelCase on the wire. These structs are the single declaration; the
//! TypeScript and JSON Schema copies are generated from them.

use serde::{Deserialize, Serialize};

/// Where a server's config came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpSource {
    User,
    Project,
    Plugin,
    Constructor,
}

/// A server's connection state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpStatus {
    Connected,
    Connecting,
    Reconnecting,
    Error,
    Disconnected,
}

/// One tool of a server, live or from the snapshot cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpToolView {
    /// The server's own name for the tool.
    pub name: String,
    /// `mcp__<server>__<tool>`, the name the model sees.
    pub full_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One configured server as lists show it. Values are as written in the config (`${VAR}` not
/// expanded); env and header values are never included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerView {
    pub name: String,
    pub source: McpSource,
    /// `stdio`, `http`, `sse`, or the unknown `type` as written.
    pub transport: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub status: McpStatus,
    /// Why the server is in `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub tool_count: usize,
    pub tools: Vec<McpToolView>,
    /// The tools come from the snapshot cache of an earlier connection, not a live one.
    pub tools_from_cache: bool,
    /// RFC 3339 time of the last successful connection, live or cached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_connected_at: Option<String>,
    /// Absolute path of the file the entry is in; absent for constructor servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_path: Option<String>,
    /// Plugin and constructor servers cannot be edited or deleted.
    pub read_only: bool,
}
