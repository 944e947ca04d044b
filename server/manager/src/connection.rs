//! One live MCP connection: dialing a resolved [`Transport`] through rmcp, and closing it with
//! its process tree.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CustomNotification, CustomRequest, CustomResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode, Implementation,
    ProgressNotificationParam, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use tokio::sync::oneshot;
use tokio_util::task::TaskTracker;

use crate::auth;
use crate::config::Transport;
use crate::elicitation::ElicitationHook;
pub(crate) use crate::error::DialError;
use crate::headers::header_map;
use crate::live::ProgressRoutes;
use crate::notice::NoticeReader;
use crate::process::{self, STDERR_TAIL_IN_REASON, ServerProcess, StderrTail, UnexpectedExit};
use crate::sse;

/// Least time given to the rmcp session to close before the process is signalled.
const CLOSE_MIN: Duration = Duration::from_millis(200);

/// Called when the server says its tool list changed.
pub(crate) type ToolsChanged = Arc<dyn Fn() + Send + Sync>;

/// Our side of the MCP session: identifies the client, relays `tools/list_changed`,
/// `prompts/list_changed` / `resources/list_changed` (PRM-4), and the server's questions to the
/// user when the manager has an elicitor (LONG-5 … LONG-7).
#[derive(Clone)]
pub(crate) struct Client {
    tools_changed: ToolsChanged,
    catalog_changed: ToolsChanged,
    /// Where `notifications/progress` of calls in flight go (LONG-2).
    progress: ProgressRoutes,
    elicitation: Option<ElicitationHook>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = self.elicitation.as_ref().map(|e| e.capability());
        ClientConfig::new(
            capabilities,
            Implementation::new("wave-mcp", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        (self.tools_changed)();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.deliver(params);
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let Some(hook) = &self.elicitation else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        // The server may give up on its question (`notifications/cancelled`) or the connection
        // may end: the question goes away then, and the next one of the session can be asked.
        tokio::select! {
            answer = hook.create(request) => answer,
            () = context.ct.cancelled() => Ok(ElicitResult::new(ElicitationAction::Cancel)),
        }
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleClient>,
    ) -> Result<CustomResult, McpError> {
        if let Some(answer) = self
            .elicitation
            .as_ref()
            .and_then(|h| h.custom_request(&request))
        {
            return answer;
        }
        Err(McpError::new(
            ErrorCode::METHOD_NOT_FOUND,
            request.method,
            None,
        ))
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(hook) = &self.elicitation {
            hook.custom_notification(&notification).await;
        }
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        (self.catalog_changed)();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        (self.catalog_changed)();
    }
}

/// A connected server: the rmcp session plus, for stdio, the process tree behind it.
pub(crate) struct Connection {
    pub peer: Peer<RoleClient>,
    service: Mutex<Option<RunningService<RoleClient, Client>>>,
    process: Mutex<Option<ServerProcess>>,
    stderr: Option<StderrTail>,
    /// The progress sinks of this connection's calls in flight.
    pub progress: ProgressRoutes,
    /// The way to the user, for the pages a tool call's `URLElicitationRequiredError` names.
    pub elicitation: Option<ElicitationHook>,
}

/// A successful dial.
pub(crate) struct Dialed {
    pub connection: Arc<Connection>,
    pub instructions: Option<String>,
    pub tools: Vec<Tool>,
    /// Fires if a stdio server's process ends without being asked to.
    pub exited: Option<oneshot::Receiver<UnexpectedExit>>,
    /// Fires with a reason if an sse stream ends without a local close.
    pub dropped: Option<oneshot::Receiver<String>>,
}

/// Dials, initializes and lists tools, all within `timeout`. On any failure everything started
/// is torn down before returning (dropping a [`ServerProcess`] kills its tree). A remote server
/// with stored sign-in credentials (in `credentials`) gets its access token (AUTH-3); one that
/// answers 401 fails with an error whose [`DialError::needs_auth`] is true (AUTH-1). A stdio
/// server's process group is recorded in the spawn registry in `run_dir` (REAP-1). The tasks it
/// leaves running (a stdio server's supervisor, an sse stream's reader) run under `tasks`, which
/// the manager's cleanup awaits.
pub(crate) async fn dial(
    transport: Transport,
    (tools_changed, catalog_changed): (ToolsChanged, ToolsChanged),
    elicitation: Option<ElicitationHook>,
    timeout: Duration,
    credentials: &Path,
    run_dir: &Path,
    tasks: &TaskTracker,
) -> Result<Dialed, DialError> {
    let client = Client {
        tools_changed,
        catalog_changed,
        progress: ProgressRoutes::default(),
        elicitation,
    };
    match transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let spawned = process::spawn(&command, &args, &env, &cwd, Some(run_dir), tasks)
                .map_err(|e| DialError::Spawn {
                    command: command.clone(),
                    cause: e.to_string(),
                })?;
            let mut process = spawned.process;
            let stderr = process.stderr().clone();
            let exited = process.take_exit_signal();
            // BUD-6: `tools/list_changed` is seen in the byte stream, before any result that
            // follows it; rmcp's own (later) callback is not needed for stdio.
            let stdout = NoticeReader::new(spawned.stdout, client.tools_changed.clone());
            let client = Client {
                tools_changed: Arc::new(|| {}),
                ..client
            };
            let started =
                tokio::time::timeout(timeout, finish_dial(client, (stdout, spawned.stdin))).await;
            let started = match started {
                Ok(Ok(started)) => started,
                Ok(Err(e)) => return Err(failed(e, process).await),
                Err(_) => return Err(failed(timed_out(timeout), process).await),
            };
            let mut dialed = dialed(started, Some(process), Some(stderr));
            dialed.exited = exited;
            Ok(dialed)
        }
        Transport::Http {
            url,
            mut headers,
            oauth,
        } => {
            // SPEC-2: a machine-to-machine grant gets its token here, no browser, no stored
            // sign-in.
            if let Some(settings) = &oauth
                && let Some(grant) = &settings.machine
            {
                let token = crate::grant::access_token(&url, grant, &settings.scopes)
                    .await
                    .map_err(DialError::MachineGrant)?;
                headers.push(("Authorization".into(), format!("Bearer {}", token.expose())));
            }
            let signed_in = match &oauth {
                Some(settings) if settings.machine.is_some() => None,
                Some(settings) => auth::authorized_client(credentials, &url, settings)
                    .await
                    .map_err(DialError::StoredSignIn)?,
                None => None,
            };
            let config = StreamableHttpClientTransportConfig::with_uri(url.clone())
                .custom_headers(header_map(&headers)?);
            let dialing = async {
                match signed_in {
                    Some(client_with_token) => {
                        let transport =
                            StreamableHttpClientTransport::with_client(client_with_token, config);
                        finish_dial(client, transport).await
                    }
                    None => {
                        let transport =
                            StreamableHttpClientTransport::with_client(auth::mcp_http(), config);
                        finish_dial(client, transport).await
                    }
                }
            };
            let started = tokio::time::timeout(timeout, dialing)
                .await
                .map_err(|_| timed_out(timeout))?
                .map_err(|e| own_header_rejected(e, oauth.is_none()));
            let started = match started {
                Err(DialError::InsufficientScope { scopes, .. }) => {
                    return Err(step_up(credentials, &url, scopes).await);
                }
                started => started?,
            };
            Ok(dialed(started, None, None))
        }
        Transport::Sse {
            url,
            mut headers,
            oauth,
        } => {
            if let Some(settings) = &oauth
                && let Some(grant) = &settings.machine
            {
                let token = crate::grant::access_token(&url, grant, &settings.scopes)
                    .await
                    .map_err(DialError::MachineGrant)?;
                headers.push(("Authorization".into(), format!("Bearer {}", token.expose())));
            } else if let Some(settings) = &oauth
                && let Some(signed_in) = auth::authorized_client(credentials, &url, settings)
                    .await
                    .map_err(DialError::StoredSignIn)?
            {
                // The legacy transport has no 401-retry of its own: take a valid (refreshed)
                // token up front.
                let token = signed_in
                    .get_access_token()
                    .await
                    .map_err(|e| DialError::SignInExpired(crate::login::describe(e)))?;
                headers.push(("Authorization".into(), format!("Bearer {token}")));
            }
            let dialing = async {
                let transport = sse::connect_sse(&url, &headers, tasks).await?;
                let dropped = transport.closed_signal();
                Ok::<_, DialError>((finish_dial(client, transport).await?, dropped))
            };
            let (started, dropped) = tokio::time::timeout(timeout, dialing)
                .await
                .map_err(|_| timed_out(timeout))?
                .map_err(|e| own_header_rejected(e, oauth.is_none()))?;
            let mut dialed = dialed(started, None, None);
            dialed.dropped = Some(dropped);
            Ok(dialed)
        }
    }
}

/// A `403 insufficient_scope`: the missing scopes are kept with the stored sign-in for the next
/// `login` (SPEC-2), which the error asks for unless step-ups are exhausted.
pub(crate) async fn step_up(credentials: &Path, url: &str, scopes: Vec<String>) -> DialError {
    let (path, key, wanted) = (credentials.to_path_buf(), url.to_string(), scopes.clone());
    let may_help = tokio::task::spawn_blocking(move || auth::record_step_up(&path, &key, &wanted))
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or(true);
    DialError::InsufficientScope {
        scopes,
        exhausted: !may_help,
    }
}

/// A 401 to an entry's own `Authorization` header is that header's fault, not a missing
/// sign-in: `error`, and OAuth never starts (AUTH-7).
fn own_header_rejected(error: DialError, own_header: bool) -> DialError {
    if own_header && error.needs_auth() {
        return DialError::OwnHeaderRejected(Box::new(error));
    }
    error
}

/// A stdio dial that failed: the tree is gone before the failure is reported (no orphan even if
/// the caller exits right away), and the reason ends with the server's last stderr lines.
async fn failed(cause: DialError, process: ServerProcess) -> DialError {
    let stderr = process.stderr().clone();
    process.terminate(Duration::ZERO).await;
    let tail = stderr.last(STDERR_TAIL_IN_REASON);
    if tail.is_empty() {
        return cause;
    }
    DialError::WithStderr {
        cause: Box::new(cause),
        stderr: tail,
    }
}

fn dialed(
    (service, instructions, tools): Started,
    process: Option<ServerProcess>,
    stderr: Option<StderrTail>,
) -> Dialed {
    Dialed {
        connection: Arc::new(Connection {
            progress: service.service().progress.clone(),
            elicitation: service.service().elicitation.clone(),
            peer: service.peer().clone(),
            service: Mutex::new(Some(service)),
            process: Mutex::new(process),
            stderr,
        }),
        instructions,
        tools,
        exited: None,
        dropped: None,
    }
}

type Started = (
    RunningService<RoleClient, Client>,
    Option<String>,
    Vec<Tool>,
);

async fn finish_dial<T, E, A>(client: Client, transport: T) -> Result<Started, DialError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let service = client.serve(transport).await.map_err(|e| {
        if let Some(refusal) = crate::error::refusal_of(&e) {
            return DialError::refused(refusal);
        }
        if e.is_authorization_required() {
            return DialError::Unauthorized;
        }
        DialError::Initialize(crate::error::in_words(&e))
    })?;
    let instructions = service
        .peer_info()
        .and_then(|info| info.instructions.clone());
    let tools =
        service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| match crate::error::refusal_of(&e) {
                Some(refusal) => DialError::refused(refusal),
                None => DialError::ListTools(crate::error::in_words(&e)),
            })?;
    Ok((service, instructions, tools))
}

fn timed_out(timeout: Duration) -> DialError {
    DialError::TimedOut {
        millis: timeout.as_millis(),
    }
}

/// Appends the last stderr lines, the most useful part of a failure report.
pub(crate) fn with_stderr(reason: String, stderr: &StderrTail) -> String {
    let tail = stderr.last(STDERR_TAIL_IN_REASON);
    if tail.is_empty() {
        return reason;
    }
    format!("{reason}; stderr: {tail}")
}

impl Connection {
    /// The stderr tail of a stdio server.
    pub fn stderr(&self) -> Option<&StderrTail> {
        self.stderr.as_ref()
    }

    /// Ends the session (closing stdin) and tears down the process tree. Safe to call twice.
    pub async fn close(&self, grace: Duration) {
        let service = self
            .service
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(service) = service {
            // A server that stopped reading could block the close: the kill below still ends it.
            let _ = tokio::time::timeout(grace.max(CLOSE_MIN), service.cancel()).await;
        }
        let process = self
            .process
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(process) = process {
            process.terminate(grace).await;
        }
    }
}
