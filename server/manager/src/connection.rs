//! One live MCP connection: dialing a resolved [`Transport`] through rmcp, and closing it with
//! its process tree.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::background::Background;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CustomNotification, CustomRequest, CustomResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode, ErrorData, Implementation,
    ProgressNotificationParam, ProtocolVersion, RootsCapabilities, Tool,
};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, NotificationContext,
    RequestContext, RunningService,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport};
use rmcp::{ClientHandler, Peer, RoleClient};
use tokio::sync::oneshot;

use crate::auth;
use crate::config::Transport;
use crate::elicitation::ElicitationHook;
pub(crate) use crate::error::DialError;
use crate::headers::header_map;
use crate::http_tee::HttpTee;
use crate::live::ProgressRoutes;
use crate::logs::LogSink;
use crate::notice::NoticeReader;
use crate::process::{self, STDERR_TAIL_IN_REASON, ServerProcess, StderrTail, UnexpectedExit};
use crate::roots::Roots;
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
    /// Fed from a stdio server's byte stream or an HTTP server's answers (SRV-5).
    legacy_tasks: crate::tasks::Legacy,
    elicitation: Option<ElicitationHook>,
    /// What `roots/list` answers (SRV-1).
    roots: Roots,
    /// The server's log: its `notifications/message` and stderr lines (SRV-2).
    log: LogSink,
    /// A stdio server's messages are logged from its byte stream, in order: not here.
    log_from_stream: bool,
    /// The revision offered inside `initialize` (SPEC-1): never one without that handshake.
    legacy_version: ProtocolVersion,
    /// The host shows MCP Apps (APPS-1).
    apps: bool,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = self.elicitation.as_ref().map(|e| e.capability());
        let mut roots = RootsCapabilities::default();
        roots.list_changed = Some(true);
        capabilities.roots = Some(roots);
        // SRV-5: tool calls the server runs as tasks are followed (`crate::tasks`).
        let mut extensions = crate::tasks::extension_capability();
        // APPS-1: only for hosts that can show apps.
        if self.apps {
            crate::apps::declare(&mut extensions);
        }
        capabilities.extensions = Some(extensions);
        let mut config = ClientConfig::new(
            capabilities,
            Implementation::new("wave-mcp", env!("CARGO_PKG_VERSION")),
        );
        // rmcp defaults to its newest revision, which has no `initialize`: a client must offer
        // one whose lifecycle it follows.
        config.protocol_version = self.legacy_version.clone();
        config
    }

    // Roots are deprecated from 2026-07-28 on (SEP-2577); 2025 servers still ask (SRV-1).
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, McpError> {
        Ok(self.roots.list())
    }

    // Logging is deprecated from 2026-07-28 on (SEP-2577); 2025 servers still log (SRV-2).
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if self.log_from_stream {
            return;
        }
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "info".into());
        self.log.message(&level, params.logger, &params.data);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        (self.tools_changed)();
    }

    async fn on_progress(
        &self,
        _params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // Delivered as read, in order with the results: `live::ProgressTap`.
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

/// The revisions this client speaks, most preferred first (SPEC-1): 2026-07-28 through
/// `server/discover`, the rest through `initialize`.
pub const PROTOCOL_VERSIONS: [ProtocolVersion; 4] = [
    ProtocolVersion::V_2026_07_28,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
];

/// How a dial opens the session, chosen from the revision remembered for the entry as written
/// (SPEC-1): nothing remembered or 2026-07-28 probes with `server/discover` and falls back; a
/// remembered handshake revision goes straight to `initialize` with it, so a server that never
/// answers the probe costs its timeout once per config change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    Probe,
    Initialize(ProtocolVersion),
    Discover,
}

impl Lifecycle {
    /// The lifecycle for a remembered revision (`None`: never connected as written).
    pub(crate) fn remembered(version: Option<&str>) -> Lifecycle {
        let Some(version) = version else {
            return Lifecycle::Probe;
        };
        match PROTOCOL_VERSIONS.iter().find(|v| v.as_str() == version) {
            Some(v) if v.has_initialize() => Lifecycle::Initialize(v.clone()),
            _ => Lifecycle::Probe,
        }
    }

    fn mode(&self) -> (ClientLifecycleMode, ProtocolVersion) {
        let modern = vec![ProtocolVersion::V_2026_07_28];
        match self {
            Lifecycle::Probe => (
                ClientLifecycleMode::Auto {
                    preferred_versions: modern,
                    legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
                },
                ProtocolVersion::LATEST_WITH_INITIALIZE,
            ),
            Lifecycle::Initialize(version) => (ClientLifecycleMode::Initialize, version.clone()),
            Lifecycle::Discover => (
                ClientLifecycleMode::Discover {
                    preferred_versions: modern,
                },
                ProtocolVersion::LATEST_WITH_INITIALIZE,
            ),
        }
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
    /// What a 2025-11-25 server said about running tool calls as tasks (SRV-5).
    pub legacy_tasks: crate::tasks::Legacy,
    /// The way to the user, for the pages a tool call's `URLElicitationRequiredError` names.
    pub elicitation: Option<ElicitationHook>,
    /// The negotiated revision, e.g. `2026-07-28` (SPEC-1).
    pub protocol_version: String,
    /// Ends the `subscriptions/listen` stream of a 2026-07-28 session (SPEC-3).
    listening: tokio_util::sync::CancellationToken,
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

/// What a dial needs besides its transport.
pub(crate) struct DialSetup<'a> {
    pub changed: (ToolsChanged, ToolsChanged),
    pub elicitation: Option<ElicitationHook>,
    /// What `roots/list` answers (SRV-1).
    pub roots: Roots,
    /// The server's log (SRV-2).
    pub log: LogSink,
    pub timeout: Duration,
    /// The host shows MCP Apps (APPS-1).
    pub apps: bool,
    pub credentials: &'a Path,
    pub run_dir: &'a Path,
    pub tasks: &'a Background,
    /// From the revision remembered for the entry as written.
    pub lifecycle: Lifecycle,
}

/// Dials, opens the session and lists tools, all within `timeout` (each attempt). On any
/// failure everything started is torn down before returning (dropping a [`ServerProcess`] kills
/// its tree). A server that refuses the offered revision with `-32022` and names the ones it
/// supports is dialed once more with the best of those this client speaks (SPEC-1). A remote
/// server with stored sign-in credentials (in `credentials`) gets its access token (AUTH-3); one
/// that answers 401 fails with an error whose [`DialError::needs_auth`] is true (AUTH-1). A stdio
/// server's process group is recorded in the spawn registry in `run_dir` (REAP-1). The tasks it
/// leaves running (a stdio server's supervisor, an sse stream's reader) run under `tasks`, which
/// the manager's cleanup awaits.
pub(crate) async fn dial(transport: Transport, setup: DialSetup<'_>) -> Result<Dialed, DialError> {
    // The legacy sse transport has no `server/discover`: always the handshake.
    let lifecycle = match (&transport, &setup.lifecycle) {
        (Transport::Sse { .. }, Lifecycle::Initialize(v)) => Lifecycle::Initialize(v.clone()),
        (Transport::Sse { .. }, _) => {
            Lifecycle::Initialize(ProtocolVersion::LATEST_WITH_INITIALIZE)
        }
        (_, lifecycle) => lifecycle.clone(),
    };
    let error = match dial_once(transport.clone(), &setup, &lifecycle).await {
        Err(error) => error,
        dialed => return dialed,
    };
    let supported = match &error {
        DialError::UnsupportedVersion { supported, .. } => supported,
        DialError::WithStderr { cause, .. } => match cause.as_ref() {
            DialError::UnsupportedVersion { supported, .. } => supported,
            _ => return Err(error),
        },
        _ => return Err(error),
    };
    let Some(next) = retry_lifecycle(supported, &lifecycle) else {
        if PROTOCOL_VERSIONS
            .iter()
            .any(|v| supported.iter().any(|s| s == v.as_str()))
        {
            return Err(error);
        }
        return Err(DialError::NoCommonVersion {
            offered: PROTOCOL_VERSIONS.iter().map(|v| v.to_string()).collect(),
            supported: supported.clone(),
        });
    };
    tracing::info!(
        ?next,
        "MCP server refused the offered revision; dialing again"
    );
    dial_once(transport, &setup, &next).await
}

/// The lifecycle that reaches the best revision `supported` lists, unless it is what was tried.
fn retry_lifecycle(supported: &[String], tried: &Lifecycle) -> Option<Lifecycle> {
    let best = PROTOCOL_VERSIONS
        .iter()
        .find(|v| supported.iter().any(|s| s == v.as_str()))?;
    let next = match best.has_initialize() {
        true => Lifecycle::Initialize(best.clone()),
        false => Lifecycle::Discover,
    };
    (next != *tried).then_some(next)
}

async fn dial_once(
    transport: Transport,
    setup: &DialSetup<'_>,
    lifecycle: &Lifecycle,
) -> Result<Dialed, DialError> {
    let (mode, legacy_version) = lifecycle.mode();
    let DialSetup {
        changed: (tools_changed, catalog_changed),
        elicitation,
        roots,
        log,
        timeout,
        credentials,
        run_dir,
        tasks,
        apps,
        ..
    } = setup;
    let (timeout, tasks) = (*timeout, *tasks);
    let client = Client {
        tools_changed: tools_changed.clone(),
        catalog_changed: catalog_changed.clone(),
        progress: ProgressRoutes::default(),
        legacy_tasks: crate::tasks::Legacy::default(),
        elicitation: elicitation.clone(),
        roots: roots.clone(),
        log: log.clone(),
        log_from_stream: false,
        legacy_version,
        apps: *apps,
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
            stderr.attach_log(client.log.clone());
            let exited = process.take_exit_signal();
            // BUD-6: `tools/list_changed` is seen in the byte stream, before any result that
            // follows it; rmcp's own (later) callback is not needed for stdio.
            // SRV-2: log messages too, in the order the server wrote them.
            let stdout = NoticeReader::new(
                spawned.stdout,
                client.tools_changed.clone(),
                Some(client.log.clone()),
            )
            .with_legacy_tasks(client.legacy_tasks.clone());
            let client = Client {
                tools_changed: Arc::new(|| {}),
                log_from_stream: true,
                ..client
            };
            let started =
                tokio::time::timeout(timeout, finish_dial(client, (stdout, spawned.stdin), mode))
                    .await;
            let started = match started {
                Ok(Ok(started)) => started,
                Ok(Err(e)) => return Err(failed(e, process).await),
                Err(_) => return Err(failed(timed_out(timeout), process).await),
            };
            let mut dialed = dialed(started, Some(process), Some(stderr), tasks);
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
            machine_grant(&url, oauth.as_ref(), &mut headers).await?;
            // SRV-5: what a 2025-11-25 server says of its task tools is read on the way.
            let http = HttpTee::new(auth::mcp_http(), client.legacy_tasks.clone());
            let signed_in = match &oauth {
                Some(settings) if settings.machine.is_some() => None,
                Some(settings) => {
                    auth::authorized_client(credentials, &url, settings, http.clone())
                        .await
                        .map_err(DialError::StoredSignIn)?
                }
                None => None,
            };
            let config = StreamableHttpClientTransportConfig::with_uri(url.clone())
                .custom_headers(header_map(&headers)?);
            let dialing = async {
                match signed_in {
                    Some(client_with_token) => {
                        let transport =
                            StreamableHttpClientTransport::with_client(client_with_token, config);
                        finish_dial(client, transport, mode).await
                    }
                    None => {
                        let transport = StreamableHttpClientTransport::with_client(http, config);
                        finish_dial(client, transport, mode).await
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
            Ok(dialed(started, None, None, tasks))
        }
        Transport::Sse {
            url,
            mut headers,
            oauth,
        } => {
            let machine = machine_grant(&url, oauth.as_ref(), &mut headers).await?;
            if !machine
                && let Some(settings) = &oauth
                && let Some(signed_in) =
                    auth::authorized_client(credentials, &url, settings, auth::mcp_http())
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
                Ok::<_, DialError>((finish_dial(client, transport, mode).await?, dropped))
            };
            let (started, dropped) = tokio::time::timeout(timeout, dialing)
                .await
                .map_err(|_| timed_out(timeout))?
                .map_err(|e| own_header_rejected(e, oauth.is_none()))?;
            let mut dialed = dialed(started, None, None, tasks);
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
    (service, instructions, tools, subscription): Started,
    process: Option<ServerProcess>,
    stderr: Option<StderrTail>,
    tasks: &Background,
) -> Dialed {
    let negotiated = service
        .peer_info()
        .map(|info| info.protocol_version.clone());
    let protocol_version = negotiated
        .as_ref()
        .map(|v| v.to_string())
        .unwrap_or_default();
    let listening = tokio_util::sync::CancellationToken::new();
    let client = service.service();
    if negotiated != Some(ProtocolVersion::V_2025_11_25) {
        // Only a 2025-11-25 connection runs tools as tasks of that revision (SRV-5).
        client.legacy_tasks.stop_reading();
    }
    if let Some(subscription) = subscription {
        tasks.spawn(
            "subscriptions/listen relay",
            crate::listen::relay(
                subscription,
                client.tools_changed.clone(),
                client.catalog_changed.clone(),
                listening.clone(),
            ),
        );
    }
    Dialed {
        connection: Arc::new(Connection {
            progress: client.progress.clone(),
            legacy_tasks: client.legacy_tasks.clone(),
            elicitation: client.elicitation.clone(),
            peer: service.peer().clone(),
            service: Mutex::new(Some(service)),
            process: Mutex::new(process),
            stderr,
            protocol_version,
            listening,
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
    Option<rmcp::service::Subscription>,
);

/// The longest a dial waits for the acknowledgment of `subscriptions/listen`.
const LISTEN_ACK: Duration = Duration::from_secs(5);

async fn finish_dial<T, E, A>(
    client: Client,
    transport: T,
    mode: ClientLifecycleMode,
) -> Result<Started, DialError>
where
    T: IntoTransport<RoleClient, E, A> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let transport = crate::live::ProgressTap {
        inner: transport.into_transport(),
        routes: client.progress.clone(),
    };
    let service = client
        .serve_with_lifecycle(transport, mode)
        .await
        .map_err(opening_failed)?;
    let instructions = service
        .peer_info()
        .and_then(|info| info.instructions.clone());
    // SPEC-3: on 2026-07-28 list changes come through `subscriptions/listen`. Its request goes
    // out before the listing's (`join!` polls it first, and its first poll queues it), so no
    // change after the listing is missed; its acknowledgment is awaited alongside the listing,
    // not before it, so the 2026-07-28 dial pays no extra round trip (bench row 10).
    let modern = service.peer_info().is_some_and(|info| {
        let caps = &info.capabilities;
        let changes = caps.tools.as_ref().and_then(|c| c.list_changed) == Some(true)
            || caps.prompts.as_ref().and_then(|c| c.list_changed) == Some(true)
            || caps.resources.as_ref().and_then(|c| c.list_changed) == Some(true);
        !info.protocol_version.has_initialize() && changes
    });
    let subscribe = async {
        match modern {
            true => crate::listen::open(service.peer(), LISTEN_ACK).await,
            false => None,
        }
    };
    let (subscription, tools) = tokio::join!(subscribe, service.peer().list_all_tools());
    let tools = tools.map_err(|e| match crate::error::refusal_of(&e) {
        Some(refusal) => DialError::refused(refusal),
        None => DialError::ListTools(crate::error::in_words(&e)),
    })?;
    Ok((service, instructions, tools, subscription))
}

/// Why the session could not be opened, in words (SPEC-4): a `-32022` that names the revisions
/// the server supports becomes [`DialError::UnsupportedVersion`], which the dial retries.
fn opening_failed(error: ClientInitializeError) -> DialError {
    // SPEC-4: a 401/403 with its challenge (scopes) is a refusal, named in words.
    if let Some(refusal) = crate::error::refusal_of(&error) {
        return DialError::refused(refusal);
    }
    if error.is_authorization_required() {
        return DialError::Unauthorized;
    }
    let rpc = match &error {
        ClientInitializeError::JsonRpcError(e) => Some(e),
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => match fallback.as_ref() {
            ClientInitializeError::JsonRpcError(e) => Some(e),
            _ => None,
        },
        _ => None,
    };
    if let Some(rpc) = rpc
        && let Some(supported) = supported_versions(rpc)
    {
        return DialError::UnsupportedVersion {
            message: rpc.message.to_string(),
            supported,
        };
    }
    match &error {
        // The `server/discover` probe was answered after rmcp's probe timeout (a slow-starting
        // server, e.g. Python on a loaded machine), while the fallback `initialize` waited: the
        // late answer shows the server speaks 2026-07-28, so the dial is retried with
        // `server/discover` and no probe timeout.
        ClientInitializeError::ConflictInitResponseId(..) => DialError::UnsupportedVersion {
            message: "it answered server/discover after the probe had timed out".into(),
            supported: vec![ProtocolVersion::V_2026_07_28.to_string()],
        },
        // `server/discover` answered (or refused with `-32022`) listing only revisions that
        // open with `initialize`: the dial retries with the best of them.
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => DialError::UnsupportedVersion {
            message: "server/discover offers no 2026-07-28".into(),
            supported: server_supported.iter().map(|v| v.to_string()).collect(),
        },
        // A 2025 server that answers any method it does not know with an empty result (the
        // official conformance suite's servers do): `server/discover` got no description of
        // the server, so it is taken as a server of the 2025 revisions and dialed with
        // `initialize`. (After an `initialize` that got no result, the retry finds nothing new
        // to try and this error stands.)
        ClientInitializeError::ExpectedInitResult(_) => DialError::UnsupportedVersion {
            message: "its answer was not the result of that request".into(),
            supported: PROTOCOL_VERSIONS
                .iter()
                .filter(|v| v.has_initialize())
                .map(|v| v.to_string())
                .collect(),
        },
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => {
            DialError::Initialize(crate::error::in_words(fallback.as_ref()))
        }
        _ => DialError::Initialize(crate::error::in_words(&error)),
    }
}

/// The `supported` list of an unsupported-protocol-version error (`-32022`).
fn supported_versions(error: &ErrorData) -> Option<Vec<String>> {
    if error.code != ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
        return None;
    }
    let list = error.data.as_ref()?.get("supported")?.as_array()?;
    Some(
        list.iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
    )
}

/// SPEC-2: with a machine-to-machine grant, its access token (fetched now, never stored) as the
/// `Authorization` header; whether the entry has one.
async fn machine_grant(
    url: &str,
    oauth: Option<&crate::config::OAuthSettings>,
    headers: &mut Vec<(String, String)>,
) -> Result<bool, DialError> {
    let Some((settings, grant)) = oauth.and_then(|s| Some((s, s.machine.as_ref()?))) else {
        return Ok(false);
    };
    let token = crate::grant::access_token(url, grant, &settings.scopes)
        .await
        .map_err(DialError::MachineGrant)?;
    headers.push(("Authorization".into(), format!("Bearer {}", token.expose())));
    Ok(true)
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
        self.listening.cancel();
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
