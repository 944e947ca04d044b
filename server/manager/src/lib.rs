//! The MCP manager: one per agent. Reads the MCP config, registers every server without
//! starting it, dials on demand, tears down whole process trees, and keeps a tool snapshot cache
//! for servers that are not connected. It knows nothing about LSP or IDEs.

pub mod apps;
pub mod auth;
mod background;
pub mod cache;
pub mod config;
mod connection;
pub mod elicitation;
mod error;
mod files;
mod grant;
mod headers;
mod http_tee;
pub mod icons;
pub mod inert;
mod listen;
pub mod live;
mod login;
pub mod logs;
mod manager;
mod mrtr;
pub mod names;
mod notice;
pub mod output;
mod process;
pub mod registry;
mod render;
mod roots;
mod sse;
pub mod switches;
mod tasks;
pub mod trust;

pub use config::{ConfigProblem, Source};
pub use elicitation::{
    Elicitation, ElicitationAction, ElicitationAnswer, ElicitationKind, Elicitor,
};
pub use error::Error;
pub use files::Stamp;
pub use live::{CallHooks, CancellationToken, Progress, ProgressSink};
pub use login::{Browser, DEFAULT_LOGIN_TIMEOUT, UrlOpener, login_timeout};
pub use manager::{
    Catalog, DEFAULT_CONNECT_TIMEOUT, DEFAULT_SHUTDOWN_GRACE, DEFAULT_TOOL_TIMEOUT, ManagerOptions,
    McpManager, McpTool, PendingDials, PromptArgumentSummary, PromptSummary, ReconnectPolicy,
    ResourceSummary, ServerSnapshot, Snapshot, Status, Timeouts, ToolSummary,
};
pub use render::result_text;
pub use rmcp::model::{
    CallToolResult, CompletionInfo, ContentBlock, GetPromptResult, PromptMessage,
    ReadResourceResult, Reference as CompletionReference, ResourceContents, Role as PromptRole,
    ToolAnnotations,
};
pub use switches::ToolSwitches;
pub use trust::{ServerApproval, TrustStore};
