//! The agent runtime: one conversation session on top of one MCP manager.
//!
//! [`Agent::create`] registers the configured MCP servers and starts nothing (LAZY-1).
//! [`Agent::send_message`] runs a turn: the first turn dials every server while the turn is
//! prepared and waits for them before building the tool declarations (LAZY-2); a turn with
//! nothing to dial has no MCP await at all (LAZY-9). Before every model request the servers'
//! `instructions` are announced in `isMeta` history messages (see [`announce`] for the marker
//! format); the system prompt never changes (INS-11). Tools are declared flat
//! (`mcp__<server>__<tool>`) or as one `Exec` tool running JavaScript (see `exec.rs`), and every
//! call — flat or from a script — goes through one funnel: permission check ([`permissions`]),
//! the user's consent ([`consent`]), routing by full name, result rendering. Project servers run only
//! once the user approved them (asked before the turn dials them). The model client speaks OpenAI-compatible Chat
//! Completions; `isMeta` messages go to the model as `user` messages (a `system` message after
//! the first is rejected by many servers). The history is kept as a JSONL transcript under
//! `<home>/.wave/sessions/`.

mod agent;
pub mod announce;
mod chat;
pub mod consent;
mod error;
mod exec;
mod gate;
mod live;
mod message;
mod model;
mod options;
pub mod permissions;
mod pool;
pub mod settings;
pub mod tool_rank;
pub mod tool_search;
mod transcript;

pub use agent::{Agent, ToolCallReport, ToolOutcome, TurnReport};
pub use chat::{chat, chat_with_interrupts};
pub use consent::{Consent, ServerApproval, ToolConfirmation, ToolDecision};
pub use error::AgentError;
pub use gate::{AppCall, ToolGate};
pub use live::{CancellationToken, TurnEvent, TurnHooks};
pub use message::{AppResult, Image, Message, Role, ToolCall};
pub use options::{
    AgentOptions, DEFAULT_BASE_URL, DEFAULT_EXEC_TIME_LIMIT, DEFAULT_MAX_ROUNDS,
    DEFAULT_MODEL_TIMEOUT, ModelSettings, ToolPoolMode,
};
pub use permissions::{DefaultMode, PermissionRules, Verdict};
pub use pool::EXEC_TOOL;
pub use wave_mcp_manager::{ReconnectPolicy, ServerSnapshot, Status, Timeouts};
