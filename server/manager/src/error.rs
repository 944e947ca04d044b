//! The manager's one error type.

/// Everything a manager operation can fail with. Messages are one lowercase line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("no MCP server named \"{0}\" is configured")]
    UnknownServer(String),
    /// A project server the user has not approved as written (TRUST-1).
    #[error(
        "MCP server \"{0}\" of the project's .mcp.json is not approved: approve it with `wave-mcp approve {0}` or the settings page's Approve"
    )]
    NeedsApproval(String),
    /// The IDE does not trust the project (TRUST-9).
    #[error(
        "MCP server \"{0}\" cannot be approved: the workspace is not trusted (trust it in your IDE first)"
    )]
    Untrusted(String),
    #[error("MCP server \"{0}\" is not a project server: it needs no approval")]
    ApprovalNotNeeded(String),
    /// The trust store could not be read or written; `reason` names the file.
    #[error("{reason}")]
    Trust {
        path: std::path::PathBuf,
        reason: String,
    },
    #[error("the MCP manager was destroyed")]
    Destroyed,
    #[error("no MCP tool named \"{0}\"")]
    UnknownTool(String),
    #[error(
        "tool \"{tool}\" of MCP server \"{server}\" is switched off (`enabledTools` / `disabledTools` of its entry)"
    )]
    ToolDisabled { server: String, tool: String },
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
    /// The caller stopped the call; the server was sent `notifications/cancelled` (LONG-3).
    #[error("tool \"{tool}\" of MCP server \"{server}\" was cancelled: the user stopped the turn")]
    ToolCancelled { server: String, tool: String },
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

/// Why a dial failed, one variant per cause. `Display` is the reason the user sees (one lowercase
/// line, in the snapshot and the CLI); [`DialError::needs_auth`] sorts it into `needs-auth` or
/// `error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DialError {
    /// The entry does not resolve to a transport (an unset `${VAR}`, a bad url, ...).
    #[error("{0}")]
    Config(String),
    /// The stdio server's command could not be started.
    #[error("failed to start `{}`: {cause}", command.display())]
    Spawn {
        command: std::path::PathBuf,
        cause: String,
    },
    #[error("headers.{0}: not a valid HTTP header name")]
    HeaderName(String),
    /// The value may be an expanded secret: never shown.
    #[error("headers.{0}: not a valid HTTP header value")]
    HeaderValue(String),
    /// The stored sign-in of a remote server could not be read or prepared.
    #[error("{0}")]
    StoredSignIn(String),
    /// The stored sign-in could not give an access token (expired and not refreshable): AUTH-1.
    #[error("the stored sign-in is no longer valid ({0})")]
    SignInExpired(String),
    /// The remote server answered HTTP 401: `needs-auth`, no retry (AUTH-1).
    #[error("the server answered 401 Unauthorized")]
    Unauthorized,
    /// The legacy SSE endpoint answered this status (401 is `needs-auth`).
    #[error("sse endpoint returned {0}")]
    SseStatus(http::StatusCode),
    /// Any other failure of the legacy SSE stream before the session could start.
    #[error("{0}")]
    Sse(String),
    #[error("initialize failed: {0}")]
    Initialize(String),
    /// `-32022`: the server supports none of the offered revision; the dial retries once with
    /// the best of `supported` (SPEC-1).
    #[error(
        "the server refused the offered MCP revision ({message}); it supports {}",
        supported.join(", ")
    )]
    UnsupportedVersion {
        message: String,
        supported: Vec<String>,
    },
    /// The server and this client share no MCP revision.
    #[error(
        "the server supports MCP revision {} but this client speaks only {}",
        supported.join(", "),
        offered.join(", ")
    )]
    NoCommonVersion {
        offered: Vec<String>,
        supported: Vec<String>,
    },
    #[error("tools/list failed: {0}")]
    ListTools(String),
    #[error("timed out after {millis} ms waiting for the server to initialize")]
    TimedOut { millis: u128 },
    /// A 401 to the entry's own `Authorization` header: the header's fault, `error` (AUTH-7).
    #[error("{0}: the server rejected the entry's own `Authorization` header")]
    OwnHeaderRejected(Box<DialError>),
    /// A stdio dial that failed, with the server's last stderr lines.
    #[error("{cause}; stderr: {stderr}")]
    WithStderr {
        cause: Box<DialError>,
        stderr: String,
    },
    /// Every reconnect attempt of a dropped connection failed (LIFE-4); `last` is the last
    /// attempt's reason.
    #[error("reconnect failed after {attempts} attempts: {last}")]
    ReconnectFailed { attempts: u32, last: String },
}

impl DialError {
    /// Whether signing in can fix it: the status is `needs-auth` and reconnecting stops (AUTH-1).
    pub(crate) fn needs_auth(&self) -> bool {
        match self {
            DialError::Unauthorized | DialError::SignInExpired(_) => true,
            DialError::SseStatus(status) => *status == http::StatusCode::UNAUTHORIZED,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reasons users see (snapshots, the CLI, tests of every layer) are the ones the dial
    /// reported as strings before the enum, byte for byte.
    #[test]
    fn dial_error_messages_and_statuses_are_unchanged() {
        let unauthorized = || Box::new(DialError::Unauthorized);
        let cases = [
            (
                DialError::Spawn {
                    command: "/no/such/server".into(),
                    cause: "No such file or directory (os error 2)".into(),
                },
                "failed to start `/no/such/server`: No such file or directory (os error 2)",
                false,
            ),
            (
                DialError::TimedOut { millis: 1500 },
                "timed out after 1500 ms waiting for the server to initialize",
                false,
            ),
            (
                DialError::Initialize("connection closed".into()),
                "initialize failed: connection closed",
                false,
            ),
            (
                DialError::ListTools("bad reply".into()),
                "tools/list failed: bad reply",
                false,
            ),
            (
                DialError::Unauthorized,
                "the server answered 401 Unauthorized",
                true,
            ),
            (
                DialError::SignInExpired("refresh refused".into()),
                "the stored sign-in is no longer valid (refresh refused)",
                true,
            ),
            (
                DialError::SseStatus(http::StatusCode::UNAUTHORIZED),
                "sse endpoint returned 401 Unauthorized",
                true,
            ),
            (
                DialError::SseStatus(http::StatusCode::NOT_FOUND),
                "sse endpoint returned 404 Not Found",
                false,
            ),
            (
                DialError::OwnHeaderRejected(unauthorized()),
                "the server answered 401 Unauthorized: the server rejected the entry's own \
                 `Authorization` header",
                false,
            ),
            (
                DialError::WithStderr {
                    cause: Box::new(DialError::Initialize("connection closed".into())),
                    stderr: "boom\nbye".into(),
                },
                "initialize failed: connection closed; stderr: boom\nbye",
                false,
            ),
            (
                DialError::HeaderName("bad name".into()),
                "headers.bad name: not a valid HTTP header name",
                false,
            ),
            (
                DialError::HeaderValue("X-Key".into()),
                "headers.X-Key: not a valid HTTP header value",
                false,
            ),
            (
                DialError::ReconnectFailed {
                    attempts: 3,
                    last: "sse endpoint unreachable: connection refused".into(),
                },
                "reconnect failed after 3 attempts: sse endpoint unreachable: connection refused",
                false,
            ),
        ];
        for (error, message, needs_auth) in cases {
            assert_eq!(error.to_string(), message);
            assert_eq!(error.needs_auth(), needs_auth, "{message}");
        }
    }
}
