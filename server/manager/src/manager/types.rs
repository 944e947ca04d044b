//! The manager's public value types: options and timeouts, server status, tools and snapshots,
//! and the handle of a turn's pending dials.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::future::{BoxFuture, Shared};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Catalog;
use crate::config::Source;
use crate::trust::ServerApproval;

/// Default time for spawn/dial + `initialize` + the first tool list.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time for one tool call without progress (`toolTimeoutSec`, LONG-4).
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(600);
/// Default time a stdio server gets between SIGTERM and SIGKILL.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Timeouts used when a server's config does not set its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub connect: Duration,
    pub tool_call: Duration,
    pub shutdown_grace: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: DEFAULT_CONNECT_TIMEOUT,
            tool_call: DEFAULT_TOOL_TIMEOUT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
        }
    }
}

/// How a dropped sse stream is re-dialed (LIFE-4): `initial_delay` doubling up to `max_delay`,
/// at most `attempts` tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconnectPolicy {
    pub initial_delay: Duration,
    pub max_delay: Duration,
    pub attempts: u32,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            initial_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            attempts: 5,
        }
    }
}

impl ReconnectPolicy {
    /// The wait before attempt `n` (0-based).
    pub fn delay(&self, n: u32) -> Duration {
        let factor = 2u32.saturating_pow(n);
        self.initial_delay
            .saturating_mul(factor)
            .min(self.max_delay)
    }
}

/// What a manager is created from.
#[derive(Debug, Clone, Default)]
pub struct ManagerOptions {
    /// The agent's working directory: project config, stdio servers' cwd, cache scope.
    pub workdir: PathBuf,
    /// Replaces the home directory (`~/.wave/...`); `None` = the user's home.
    pub home: Option<PathBuf>,
    /// Constructor-level `mcpServers` (highest precedence, CFG-2).
    pub servers: Map<String, Value>,
    pub timeouts: Timeouts,
    pub reconnect: ReconnectPolicy,
    /// The IDE does not trust the project (VS Code's Restricted Mode): no project server runs
    /// or can be approved until [`McpManager::set_project_trusted`](super::McpManager::set_project_trusted) (TRUST-9).
    pub project_untrusted: bool,
    /// The directories servers may work in (SRV-1: the IDE's workspace folders); `None`: the
    /// working directory alone.
    pub roots: Option<Vec<PathBuf>>,
}

/// A server's connection state (LIFE-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Connected,
    Connecting,
    Reconnecting,
    Error,
    Disconnected,
    /// A remote server answered HTTP 401: it needs a sign-in (AUTH-1).
    #[serde(rename = "needs-auth")]
    NeedsAuth,
    /// A project entry the user has not approved as written: nothing of it runs (TRUST-1).
    #[serde(rename = "needs-approval")]
    NeedsApproval,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Connected => "connected",
            Status::Connecting => "connecting",
            Status::Reconnecting => "reconnecting",
            Status::Error => "error",
            Status::Disconnected => "disconnected",
            Status::NeedsAuth => "needs-auth",
            Status::NeedsApproval => "needs-approval",
        }
    }
}

/// A tool as shown in lists (live or from the cache).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSummary {
    pub name: String,
    pub full_name: String,
    pub description: Option<String>,
    /// Switched on by the entry's `enabledTools` / `disabledTools` (BUD-1).
    pub enabled: bool,
    /// The user allowed this tool `always` for another definition than the live one (TRUST-6).
    pub definition_changed: bool,
    /// The server's text for this tool had hidden characters, now removed (TRUST-7).
    pub hidden_text: bool,
    /// The server's `title` and annotations (SRV-4).
    pub title: Option<String>,
    pub annotations: Option<rmcp::model::ToolAnnotations>,
    /// The tool's icons a page may show (SRV-4).
    pub icons: Vec<crate::icons::Icon>,
    /// The tool's `_meta.ui`: its app and who may call it (APPS-1).
    pub ui: Option<crate::apps::ToolUi>,
}

/// A callable tool of a live connection.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McpTool {
    pub server: String,
    /// The server's own name for the tool.
    pub name: String,
    /// `mcp__<server>__<tool>`: the name declared to the model and used to route calls.
    pub full_name: String,
    /// Without hidden characters (TRUST-7).
    pub description: Option<String>,
    /// The input schema, cleaned for LLM APIs (TOOL-5), its descriptions and titles without
    /// hidden characters (TRUST-7).
    pub input_schema: Arc<Map<String, Value>>,
    /// The tool's `outputSchema`: its successful results must fit it (SRV-4).
    pub output_schema: Option<Arc<crate::output::OutputSchema>>,
    /// The server's `title` and `annotations` (hints shown when the user is asked, TRUST-5).
    pub title: Option<String>,
    pub annotations: Option<rmcp::model::ToolAnnotations>,
    /// SHA-256 of the definition as the server presented it: what a permission pins (TRUST-6).
    pub definition: Arc<str>,
    /// The source of the server's entry: a project's `allow` rules cover only its own servers
    /// (TRUST-2).
    pub source: Source,
    /// The server's name, description or schema text for this tool had hidden characters,
    /// removed from what the model sees (TRUST-7).
    pub hidden_text: bool,
    /// The tool's icons a page may show (SRV-4).
    pub icons: Vec<crate::icons::Icon>,
    /// The tool's `_meta.ui`: its app (`ui://` resource) and who may call it, the model or
    /// its app (APPS-1).
    pub ui: Option<crate::apps::ToolUi>,
}

/// One server as lists show it. Config values are as written, never expanded (SEC-1).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSnapshot {
    pub name: String,
    pub source: Source,
    pub config_path: Option<PathBuf>,
    pub transport: String,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub url: Option<String>,
    pub status: Status,
    pub error: Option<String>,
    pub tools: Vec<ToolSummary>,
    /// The tools come from the snapshot cache, not from a live connection (CACHE-2).
    pub tools_from_cache: bool,
    pub last_connected_at: Option<DateTime<Utc>>,
    /// The `instructions` of the live connection, kept while reconnecting (INS-1, INS-2).
    pub instructions: Option<String>,
    /// The server's icons a page may show, from its live connection (SRV-4).
    pub icons: Vec<crate::icons::Icon>,
    /// Identifies the live connection: a new connection (reconnect included) gets a new id.
    pub connection_id: Option<u64>,
    /// Sign-in credentials are stored for this remote server (AUTH-3).
    pub signed_in: bool,
    /// Prompts, resources and resource templates, live or cached (PRM-1, PRM-3); shared with
    /// the connection, so a snapshot does not copy them.
    pub catalog: Arc<Catalog>,
    /// For `needs-approval`: what approving would run (TRUST-1, TRUST-3).
    pub approval: Option<ServerApproval>,
    /// The MCP revision negotiated with the live connection, or the last one negotiated with
    /// the entry as written when not connected now (SPEC-1); `None` if never connected.
    pub protocol_version: Option<String>,
}

/// Every server of a manager at one moment. `version` grows with every change.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    pub version: u64,
    pub servers: Vec<ServerSnapshot>,
}

impl Snapshot {
    /// The server named `name`, if it is configured.
    pub fn server(&self, name: &str) -> Option<&ServerSnapshot> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// The server a full name (`mcp__<server>__<name>`, a tool's or a prompt's) belongs to: the
    /// one that lists it, else the one whose sanitised `mcp__<server>__` prefix it has (the
    /// longest). Listing comes first because a name over 64 characters ends in a hash, and
    /// two server names can sanitise alike.
    pub fn owner_of(&self, full_name: &str) -> Option<&ServerSnapshot> {
        let listed = self.servers.iter().find(|s| {
            s.tools.iter().any(|t| t.full_name == full_name)
                || s.catalog.prompts.iter().any(|p| p.full_name == full_name)
        });
        listed.or_else(|| {
            self.servers
                .iter()
                .filter(|s| {
                    full_name.starts_with(&format!("mcp__{}__", crate::names::sanitize(&s.name)))
                })
                .max_by_key(|s| s.name.len())
        })
    }
}

/// Dials started by [`McpManager::start_turn_dials`](super::McpManager::start_turn_dials); they run whether or not this is awaited.
#[must_use = "await `settled` before building the turn's tool list"]
pub struct PendingDials(pub(super) Vec<DialDone>);

impl PendingDials {
    /// How many servers are being dialed.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Resolves when every one of them is connected or failed.
    pub async fn settled(self) {
        futures::future::join_all(self.0).await;
    }
}

pub(super) type DialDone = Shared<BoxFuture<'static, ()>>;
