//! The manager's one error type.

/// Everything a manager operation can fail with. Messages are one lowercase line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("no MCP server named \"{0}\" is configured")]
    UnknownServer(String),
    #[error("the MCP manager was destroyed")]
    Destroyed,
    #[error("no MCP tool named \"{0}\"")]
    UnknownTool(String),
    #[error("MCP server \"{server}\" is reconnecting; try \"{tool}\" again shortly")]
    Reconnecting { server: String, tool: String },
    #[error("MCP server \"{server}\" failed to connect: {reason}")]
    Connect { server: String, reason: String },
    #[error("sign-in to MCP server \"{server}\" failed: {reason}")]
    SignIn { server: String, reason: String },
    #[error("sign-in to MCP server \"{0}\" was cancelled")]
    SignInCancelled(String),
    #[error("{reason}")]
    Credentials {
        path: std::path::PathBuf,
        reason: String,
    },
    #[error("tool \"{tool}\" of MCP server \"{server}\" timed out after {millis} ms")]
    ToolTimeout {
        server: String,
        tool: String,
        millis: u128,
    },
    #[error("MCP server \"{server}\" is not connected ({status})")]
    NotConnected { server: String, status: String },
    #[error("prompt \"{prompt}\" of MCP server \"{server}\" failed: {reason}")]
    Prompt {
        server: String,
        prompt: String,
        reason: String,
    },
    #[error("resource \"{uri}\" of MCP server \"{server}\" could not be read: {reason}")]
    Resource {
        server: String,
        uri: String,
        reason: String,
    },
    #[error("tool \"{tool}\" of MCP server \"{server}\" failed: {reason}")]
    ToolCall {
        server: String,
        tool: String,
        reason: String,
    },
}

/// Why a dial failed. Messages are one lowercase line naming the cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DialError {
    /// The remote server answered HTTP 401: `needs-auth`, no retry (AUTH-1).
    NeedsAuth(String),
    /// Anything else: `error`.
    Failed(String),
}

impl DialError {
    pub(crate) fn reason(self) -> String {
        match self {
            DialError::NeedsAuth(reason) | DialError::Failed(reason) => reason,
        }
    }
}

impl From<String> for DialError {
    fn from(reason: String) -> DialError {
        DialError::Failed(reason)
    }
}
