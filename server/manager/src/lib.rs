//! The MCP manager: one per agent. Reads the MCP config, registers every server without
//! starting it, dials on demand, tears down whole process trees, and keeps a tool snapshot cache
//! for servers that are not connected. It knows nothing about LSP or IDEs.

pub mod auth;
pub mod cache;
pub mod config;
mod connection;
mod error;
mod files;
mod login;
mod manager;
pub mod names;
mod notice;
mod process;
pub mod registry;
mod render;
mod sse;
pub mod switches;

pub use config::{ConfigProblem, Source};
pub use error::Error;
pub use login::{DEFAULT_LOGIN_TIMEOUT, UrlOpener, login_timeout, open_in_browser};
pub use manager::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_SHUTDOWN_GRACE, DEFAULT_TOOL_TIMEOUT, ManagerOptions,
    McpManager, McpTool, PendingDials, ReconnectPolicy, ServerSnapshot, Snapshot, Status, Timeouts,
    ToolSummary,
};
pub use render::result_text;
pub use rmcp::model::{CallToolResult, ContentBlock};
pub use switches::ToolSwitches;
