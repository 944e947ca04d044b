//! What an agent is created from.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};
use wave_mcp_manager::{ReconnectPolicy, Timeouts};

use crate::permissions::PermissionRules;

/// Default cap on model requests in one turn.
pub const DEFAULT_MAX_ROUNDS: usize = 32;
/// Default time limit of one `Exec` script.
pub const DEFAULT_EXEC_TIME_LIMIT: Duration = Duration::from_secs(30);
/// Default time limit of one model request.
pub const DEFAULT_MODEL_TIMEOUT: Duration = Duration::from_secs(300);
/// Used when neither the options nor `WAVE_BASE_URL` give a base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// How MCP tools are declared to the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolPoolMode {
    /// Every tool as its own `mcp__<server>__<tool>` function (TOOL-1).
    #[default]
    Flat,
    /// One `Exec` tool with a catalog, whenever at least one tool is permitted (TOOL-2).
    Exec,
}

/// The model endpoint. Unset fields fall back to `WAVE_BASE_URL`, `WAVE_API_KEY` and `WAVE_MODEL`.
#[derive(Debug, Clone, Default)]
pub struct ModelSettings {
    /// An OpenAI-compatible base URL, e.g. `https://api.openai.com/v1` or
    /// `http://127.0.0.1:11434/v1`; requests go to `{base_url}/chat/completions`.
    pub base_url: Option<String>,
    /// Sent as `Authorization: Bearer <key>` when set.
    pub api_key: Option<String>,
    pub model: Option<String>,
    /// The model accepts images: images returned by tools are also sent as `image_url` parts
    /// (in a `user` message after the tool results, since `tool` messages carry text only).
    pub vision: bool,
    /// Time limit of one request; default [`DEFAULT_MODEL_TIMEOUT`].
    pub timeout: Option<Duration>,
}

/// Everything [`crate::Agent::create`] needs.
#[derive(Debug, Clone, Default)]
pub struct AgentOptions {
    /// The project directory; empty = the current directory.
    pub workdir: PathBuf,
    /// Constructor-level `mcpServers` (highest precedence, CFG-2).
    pub mcp_servers: Map<String, Value>,
    pub model: ModelSettings,
    /// The host's rules, merged with the user's `<home>/.wave/settings.json` (these win on
    /// `defaultMode`) and the project's `<workdir>/.wave/settings.json` (which can only narrow).
    pub permissions: PermissionRules,
    pub tool_pool: ToolPoolMode,
    /// Replaces the home directory: config, tool cache, settings and transcripts under
    /// `<home>/.wave/`. `None` = the user's home.
    pub home: Option<PathBuf>,
    /// Names the transcript file; an existing transcript of that id is resumed. `None` = a new
    /// id from the current time.
    pub session_id: Option<String>,
    /// Appended to the built-in system prompt (it must not vary between turns).
    pub system_prompt: Option<String>,
    /// Model requests per turn; default [`DEFAULT_MAX_ROUNDS`].
    pub max_rounds: Option<usize>,
    /// Time limit of one `Exec` script; default [`DEFAULT_EXEC_TIME_LIMIT`].
    pub exec_time_limit: Option<Duration>,
    /// The MCP manager's connect, tool-call and shutdown timeouts.
    pub mcp_timeouts: Timeouts,
    /// How a dropped SSE server is re-dialed.
    pub mcp_reconnect: ReconnectPolicy,
    /// The IDE does not trust the project: none of its servers runs or can be approved
    /// (TRUST-9).
    pub project_untrusted: bool,
}
