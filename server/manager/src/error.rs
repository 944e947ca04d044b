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
    #[error("completion of \"{argument}\" for MCP server \"{server}\" failed: {reason}")]
    Completion {
        server: String,
        argument: String,
        reason: String,
    },
    #[error("resource \"{uri}\" of MCP server \"{server}\" could not be read: {reason}")]
    Resource {
        server: String,
        uri: String,
        reason: String,
    },
    /// A request was refused for want of a sign-in or of scope (401, 403 insufficient_scope):
    /// the server is `needs-auth` (SPEC-4); `reason` says why and how to sign in.
    #[error("MCP server \"{server}\" needs sign-in: {reason}")]
    NeedsSignIn {
        server: String,
        reason: String,
        /// The scopes a `403 insufficient_scope` named (empty for a 401).
        scopes: Vec<String>,
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
    /// A machine-to-machine grant (`client_credentials`, `jwt-bearer`) could not get a token.
    #[error("machine sign-in failed: {0}")]
    MachineGrant(String),
    /// The remote server answered HTTP 401: `needs-auth`, no retry (AUTH-1).
    #[error("the server answered 401 Unauthorized")]
    Unauthorized,
    /// The server answered `403` with `error="insufficient_scope"` (SPEC-2, SPEC-4). Signing in
    /// again asks for the missing scopes, unless that was tried [`crate::auth::MAX_STEP_UPS`]
    /// times already (`exhausted`).
    #[error("{}", refusal_words(&Refusal::InsufficientScope(scopes.clone()), *exhausted))]
    InsufficientScope {
        scopes: Vec<String>,
        exhausted: bool,
    },
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
    /// The dial error of a refused request.
    pub(crate) fn refused(refusal: Refusal) -> DialError {
        match refusal {
            Refusal::Unauthorized => DialError::Unauthorized,
            Refusal::InsufficientScope(scopes) => DialError::InsufficientScope {
                scopes,
                exhausted: false,
            },
        }
    }

    /// Whether signing in can fix it: the status is `needs-auth` and reconnecting stops (AUTH-1).
    pub(crate) fn needs_auth(&self) -> bool {
        match self {
            DialError::Unauthorized | DialError::SignInExpired(_) => true,
            DialError::InsufficientScope { exhausted, .. } => !exhausted,
            DialError::SseStatus(status) => *status == http::StatusCode::UNAUTHORIZED,
            _ => false,
        }
    }
}

/// Why a server refused a request, found in an rmcp error's chain of sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// HTTP 401: no valid token.
    Unauthorized,
    /// HTTP 403 `insufficient_scope`, with the scopes the challenge names (may be empty).
    InsufficientScope(Vec<String>),
}

/// The refusal (401, 403 insufficient_scope) behind an rmcp error, if that is what it is.
pub(crate) fn refusal_of(error: &(dyn std::error::Error + 'static)) -> Option<Refusal> {
    use rmcp::transport::streamable_http_client::{
        AuthRequiredError, InsufficientScopeError, StreamableHttpError,
    };
    let mut current = Some(error);
    while let Some(error) = current {
        if error.downcast_ref::<AuthRequiredError>().is_some() {
            return Some(Refusal::Unauthorized);
        }
        if let Some(e) = error.downcast_ref::<InsufficientScopeError>() {
            return Some(insufficient(&e.www_authenticate_header));
        }
        if let Some(e) = error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            match e {
                StreamableHttpError::AuthRequired(_) => return Some(Refusal::Unauthorized),
                StreamableHttpError::InsufficientScope(e) => {
                    return Some(insufficient(&e.www_authenticate_header));
                }
                _ => {}
            }
        }
        if let Some(e) = error.downcast_ref::<rmcp::transport::DynamicTransportError>() {
            current = Some(e.error.as_ref());
            continue;
        }
        current = error.source();
    }
    None
}

fn insufficient(challenge: &str) -> Refusal {
    let scopes = challenge_param(challenge, "scope")
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    Refusal::InsufficientScope(scopes)
}

/// The reason a user sees for a refusal.
pub(crate) fn refusal_words(refusal: &Refusal, exhausted: bool) -> String {
    match refusal {
        Refusal::Unauthorized => "the server answered 401 Unauthorized".into(),
        Refusal::InsufficientScope(scopes) => {
            let missing = match scopes.as_slice() {
                [] => "more scope (it named none)".to_string(),
                [one] => format!("scope `{one}`"),
                many => format!("scopes `{}`", many.join(" ")),
            };
            let mut words = format!(
                "the server refused the sign-in's token for want of {missing} (403 insufficient_scope)"
            );
            if exhausted {
                words.push_str(&format!(
                    "; it kept refusing after {} sign-ins, so signing in again will not help",
                    crate::auth::MAX_STEP_UPS
                ));
            }
            words
        }
    }
}

/// A parameter of a `WWW-Authenticate` challenge (`scope`, `error`, ...), unquoted.
pub(crate) fn challenge_param(header: &str, name: &str) -> Option<String> {
    let mut rest = header;
    while !rest.is_empty() {
        let start = rest.find(|c: char| c.is_ascii_alphanumeric() || c == '_')?;
        rest = &rest[start..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(rest.len());
        let key = &rest[..end];
        rest = rest[end..].trim_start();
        let Some(after) = rest.strip_prefix('=') else {
            continue;
        };
        rest = after.trim_start();
        let value = if let Some(quoted) = rest.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut consumed = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, next)) = chars.next() {
                            value.push(next);
                        }
                    }
                    '"' => {
                        consumed = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            rest = &quoted[consumed..];
            value
        } else {
            let end = rest.find([',', ' ']).unwrap_or(rest.len());
            let value = rest[..end].to_string();
            rest = &rest[end..];
            value
        };
        if key.eq_ignore_ascii_case(name) {
            return Some(value);
        }
    }
    None
}

/// An rmcp error as a user reads it (SPEC-4): the cause in words, never a Rust type name
/// (`Transport [rmcp::transport::worker::WorkerTransport<…>] error: …`) or a `Debug` dump.
pub(crate) fn in_words(error: &(dyn std::error::Error + 'static)) -> String {
    use rmcp::service::ServiceError;
    if let Some(refusal) = refusal_of(error) {
        return refusal_words(&refusal, false);
    }
    if let Some(e) = error.downcast_ref::<ServiceError>() {
        return match e {
            ServiceError::McpError(e) => {
                format!("the server answered error {}: {}", e.code.0, e.message)
            }
            ServiceError::TransportSend(e) => {
                format!(
                    "the request could not be sent: {}",
                    in_words(e.error.as_ref())
                )
            }
            ServiceError::TransportClosed => "the connection to the server is closed".into(),
            ServiceError::UnexpectedResponse => "the server sent an unexpected response".into(),
            other => lowercase_first(&other.to_string()),
        };
    }
    if let Some(e) = error.downcast_ref::<rmcp::transport::DynamicTransportError>() {
        return in_words(e.error.as_ref());
    }
    if let Some(e) = error.downcast_ref::<reqwest::Error>() {
        return lowercase_first(&e.to_string());
    }
    let text = error.to_string();
    // A type name in a message of a layer we do not know: keep the words after it.
    match text.find("] error: ") {
        Some(at) if text[..at].contains("::") => lowercase_first(&text[at + 9..]),
        _ => lowercase_first(&text),
    }
}

/// Lower-cases the first letter unless it starts an acronym (`HTTP`, `SSE`).
fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    let acronym = text.chars().nth(1).is_some_and(char::is_uppercase);
    match chars.next() {
        Some(first) if !acronym => first.to_lowercase().chain(chars).collect(),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // SPEC-4: a challenge's parameters are read whatever their order and quoting.
    #[test]
    fn spec_4_challenge_params_are_read() {
        let header =
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/y""#;
        assert_eq!(challenge_param(header, "scope").as_deref(), Some("a b"));
        assert_eq!(
            challenge_param(header, "error").as_deref(),
            Some("insufficient_scope")
        );
        assert_eq!(
            challenge_param("Bearer realm=x, scope=read", "scope").as_deref(),
            Some("read")
        );
        assert_eq!(challenge_param("Bearer", "scope"), None);
    }

    // SPEC-4: a transport error of rmcp reads in words, without its Rust type name.
    #[test]
    fn spec_4_transport_errors_read_without_type_names() {
        use rmcp::transport::streamable_http_client::{
            InsufficientScopeError, StreamableHttpError,
        };
        let inner: StreamableHttpError<reqwest::Error> =
            StreamableHttpError::InsufficientScope(InsufficientScopeError::new(
                r#"Bearer error="insufficient_scope", scope="w""#.into(),
                None,
            ));
        let error =
            rmcp::ServiceError::TransportSend(rmcp::transport::DynamicTransportError::from_parts(
                "rmcp::transport::worker::WorkerTransport<X>",
                std::any::TypeId::of::<u8>(),
                Box::new(inner),
            ));
        assert!(
            error.to_string().contains("WorkerTransport"),
            "rmcp's own text"
        );
        assert_eq!(
            refusal_of(&error),
            Some(Refusal::InsufficientScope(vec!["w".into()]))
        );
        let words = in_words(&error);
        assert_eq!(
            words,
            "the server refused the sign-in's token for want of scope `w` (403 insufficient_scope)"
        );
        let closed = rmcp::ServiceError::TransportClosed;
        assert_eq!(in_words(&closed), "the connection to the server is closed");
    }

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
