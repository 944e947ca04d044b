//! `wave-mcp lsp`: the IDE sidecar. LSP over stdio (tower-lsp-server) carrying the custom
//! `wave/*` messages declared in `wave-mcp-protocol` (see `docs/protocol.md`).
//!
//! Every session (agent) lives in the [`sessions::Registry`]; the `wave/mcp/*` methods act on
//! the default session, created at `initialize` for the workspace, unless a `sessionId` says
//! otherwise. Config files are watched ([`watch`]) and deletions edit them in place
//! ([`config_edit`]). Logs go to stderr: stdout is the LSP channel.

pub(crate) mod app_sandbox;
mod apps;
pub(crate) mod config_edit;
mod consent;
mod elicit;
mod registry;
mod sessions;
mod stdout;
mod tool_switch_edit;
mod watch;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use std::future::Future;

use anyhow::Result;
use futures::future::{Either, Ready, ready};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::{self, ErrorCode, Request, Response};
use tower_lsp_server::ls_types::request::Request as Message;
use tower_lsp_server::ls_types::{
    DidChangeWorkspaceFoldersParams, InitializeParams, InitializeResult, InitializedParams, OneOf,
    ServerCapabilities, ServerInfo, WorkspaceFolder, WorkspaceFoldersServerCapabilities,
    WorkspaceServerCapabilities,
};
use tower_lsp_server::{Client, LanguageServer, LspService, Server};
use wave_mcp_protocol::{
    AppCallTool, AppCallToolParams, AppCallToolResult, AppClosed, AppClosedParams, AppClosedResult,
    AppReadResource, AppReadResourceResult, AppResource, AppResourceParams, AppResourceResult,
};
use wave_mcp_protocol::{
    ConfigPaths, DEFAULT_SESSION_ID, DeleteParams, ErrorData, ErrorKind, InitializationOptions,
    METHODS, McpApprove, McpConfigPaths, McpConnect, McpDelete, McpDisconnect, McpLogin, McpLogout,
    McpRevoke, McpServers, McpSetToolEnabled, REQUEST_FAILED, ServerParams, ServersSnapshot,
    SessionCreate, SessionCreateParams, SessionCreated, SessionDestroy, SessionDestroyParams,
    SessionDestroyed, SessionHistory, SessionHistoryParams, SessionHistoryResult, SessionParams,
    SessionSend, SessionSendAccepted, SessionSendParams, SetToolEnabledParams, WorkspaceTrust,
    WorkspaceTrustParams,
};
use wave_mcp_protocol::{
    McpComplete, McpCompleteParams, McpCompleteResult, McpLogs, McpLogsResult, McpPrompts,
    McpPromptsResult, McpResources, McpResourcesResult,
};
use wave_mcp_protocol::{
    RegistryAdd, RegistryAddParams, RegistryAdded, RegistryGet, RegistryGetParams, RegistrySearch,
    RegistrySearchParams, RegistrySearchResult, RegistryServerDetails,
};
use wave_mcp_protocol::{SessionCancel, SessionCancelParams, SessionCancelResult};

use sessions::Registry;

/// Requests handled at once. Connects wait for their server, so this is well above the
/// library's default of 4: a slow connect must not hold up a list or a disconnect.
const CONCURRENCY: usize = 64;

/// A request that could not be carried out: a `RequestFailed` JSON-RPC error whose `data` names
/// the cause (and the file, for config edits).
#[derive(Debug)]
pub struct Failure {
    kind: ErrorKind,
    message: String,
    path: Option<PathBuf>,
}

impl Failure {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
            path: None,
        }
    }

    pub fn with_path(mut self, path: &Path) -> Failure {
        self.path = Some(path.to_path_buf());
        self
    }

    pub fn unknown_session(id: &str) -> Failure {
        Failure::new(
            ErrorKind::UnknownSession,
            format!("no session \"{id}\" (never created, or destroyed)"),
        )
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

impl From<Failure> for jsonrpc::Error {
    fn from(failure: Failure) -> jsonrpc::Error {
        let data = ErrorData {
            kind: failure.kind,
            path: failure.path.map(|p| p.to_string_lossy().into_owned()),
        };
        jsonrpc::Error {
            code: ErrorCode::ServerError(REQUEST_FAILED),
            message: failure.message.into(),
            data: serde_json::to_value(data).ok(),
        }
    }
}

/// Runs the sidecar until `exit`, the end of stdin, SIGTERM/SIGINT or the death of its parent
/// process, then tears every session down so that no MCP process outlives it (REAP-3).
pub async fn run() -> Result<()> {
    let registry: Arc<OnceLock<Arc<Registry>>> = Arc::default();
    let (service, socket) = LspService::build(|client| Backend {
        client,
        registry: registry.clone(),
    })
    .custom_method(McpServers::METHOD, Backend::dispatch::<McpServers>)
    .custom_method(McpConnect::METHOD, Backend::dispatch::<McpConnect>)
    .custom_method(McpDisconnect::METHOD, Backend::dispatch::<McpDisconnect>)
    .custom_method(McpDelete::METHOD, Backend::dispatch::<McpDelete>)
    .custom_method(
        McpSetToolEnabled::METHOD,
        Backend::dispatch::<McpSetToolEnabled>,
    )
    .custom_method(McpLogin::METHOD, Backend::dispatch::<McpLogin>)
    .custom_method(McpLogout::METHOD, Backend::dispatch::<McpLogout>)
    .custom_method(McpConfigPaths::METHOD, Backend::dispatch::<McpConfigPaths>)
    .custom_method(McpPrompts::METHOD, Backend::dispatch::<McpPrompts>)
    .custom_method(McpLogs::METHOD, Backend::dispatch::<McpLogs>)
    .custom_method(McpComplete::METHOD, Backend::dispatch::<McpComplete>)
    .custom_method(McpResources::METHOD, Backend::dispatch::<McpResources>)
    .custom_method(SessionCreate::METHOD, Backend::dispatch::<SessionCreate>)
    .custom_method(SessionSend::METHOD, Backend::dispatch::<SessionSend>)
    .custom_method(SessionHistory::METHOD, Backend::dispatch::<SessionHistory>)
    .custom_method(SessionDestroy::METHOD, Backend::dispatch::<SessionDestroy>)
    .custom_method(SessionCancel::METHOD, Backend::dispatch::<SessionCancel>)
    .custom_method(RegistrySearch::METHOD, Backend::dispatch::<RegistrySearch>)
    .custom_method(RegistryGet::METHOD, Backend::dispatch::<RegistryGet>)
    .custom_method(RegistryAdd::METHOD, Backend::dispatch::<RegistryAdd>)
    .custom_method(AppResource::METHOD, Backend::dispatch::<AppResource>)
    .custom_method(AppClosed::METHOD, Backend::dispatch::<AppClosed>)
    .custom_method(AppCallTool::METHOD, Backend::dispatch::<AppCallTool>)
    .custom_method(
        AppReadResource::METHOD,
        Backend::dispatch::<AppReadResource>,
    )
    .custom_method(McpApprove::METHOD, Backend::dispatch::<McpApprove>)
    .custom_method(McpRevoke::METHOD, Backend::dispatch::<McpRevoke>)
    .custom_method(
        <WorkspaceTrust as tower_lsp_server::ls_types::notification::Notification>::METHOD,
        Backend::workspace_trust,
    )
    .finish();
    let server =
        Server::new(stdin(), stdout::Stdout::open(), socket).concurrency_level(CONCURRENCY);
    tokio::select! {
        () = server.serve(EmptyParams(service)) => tracing::info!("LSP connection closed"),
        () = terminated() => tracing::info!("terminated by a signal"),
        () = parent_gone() => tracing::info!("the parent process is gone"),
    }
    if let Some(registry) = registry.get() {
        registry.shutdown().await;
    }
    Ok(())
}

/// Stdin read by a thread of its own. `tokio::io::stdin` reads on the runtime's blocking pool,
/// and a read still pending after `exit` (the client keeps its end open) would hold the runtime,
/// and the process, until the client closes it.
fn stdin() -> tokio::io::DuplexStream {
    let (mut writer, reader) = tokio::io::duplex(64 * 1024);
    let spawned = std::thread::Builder::new()
        .name("lsp-stdin".into())
        .spawn(move || {
            use std::io::Read;
            use tokio::io::AsyncWriteExt;
            let mut stdin = std::io::stdin().lock();
            let mut buffer = [0u8; 16 * 1024];
            loop {
                let n = match stdin.read(&mut buffer) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                // The reader side is gone once the server stopped: stop reading too.
                if futures::executor::block_on(writer.write_all(&buffer[..n])).is_err() {
                    return;
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!("cannot start the stdin reader: {e}");
    }
    reader
}

/// How often the sidecar checks that its parent still runs (REAP-3).
#[cfg(unix)]
const PARENT_POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// Resolves when the process that started the sidecar has died (REAP-3): the sidecar was then
/// re-parented, so its parent pid changed. A parent-pid watch rather than `PR_SET_PDEATHSIG`,
/// which fires when the *thread* that spawned us ends (JVM and Node hosts spawn from worker
/// threads), and which macOS lacks; the same polling serves both. Never resolves for a sidecar
/// started by init itself.
#[cfg(unix)]
async fn parent_gone() {
    let parent = nix::unistd::getppid();
    if parent.as_raw() <= 1 {
        return std::future::pending().await;
    }
    loop {
        tokio::time::sleep(PARENT_POLL).await;
        if nix::unistd::getppid() != parent {
            return;
        }
    }
}

#[cfg(not(unix))]
async fn parent_gone() {
    std::future::pending().await
}

#[cfg(unix)]
async fn terminated() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

#[cfg(not(unix))]
async fn terminated() {
    let _ = tokio::signal::ctrl_c().await;
}

struct Backend {
    client: Client,
    registry: Arc<OnceLock<Arc<Registry>>>,
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> jsonrpc::Result<InitializeResult> {
        let options: InitializationOptions = match params.initialization_options.clone() {
            None | Some(Value::Null) => InitializationOptions::default(),
            Some(value) => parse_params(value).map_err(|e| {
                jsonrpc::Error::invalid_params(e.message_at("initializationOptions"))
            })?,
        };
        let home = match &options.home {
            Some(home) => absolute(Path::new(home)),
            None => dirs::home_dir()
                .map(|home| absolute(&home))
                .unwrap_or_else(|| absolute(Path::new("."))),
        };
        // Reap the trees of crashed sidecars and CLIs in the background (REAP-2).
        drop(wave_mcp_manager::registry::reap_orphans_at_start(Some(
            home.clone(),
        )));
        let workdir = absolute(&workdir_of(&params, &options));
        if !workdir.is_dir() {
            tracing::warn!("workdir {} is not a directory", workdir.display());
        }
        let servers = options.mcp_servers.unwrap_or_default();
        let model = options.model.unwrap_or_default();
        let trusted = options.workspace_trusted.unwrap_or(true);
        let apps = options.apps.unwrap_or(false);
        let folders = workspace_folders(params.workspace_folders.as_deref().unwrap_or_default());
        let registry = Registry::start(
            self.client.clone(),
            home,
            workdir,
            servers,
            model,
            sessions::HostFlags { trusted, apps },
            folders,
        );
        if self.registry.set(registry).is_err() {
            return Err(jsonrpc::Error::invalid_request());
        }
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                experimental: Some(json!({
                    "wave": { "methods": METHODS, "defaultSessionId": DEFAULT_SESSION_ID },
                })),
                // SRV-1: the workspace folders are the servers' roots; tell us when they change.
                workspace: Some(WorkspaceServerCapabilities {
                    workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                        supported: Some(true),
                        change_notifications: Some(OneOf::Left(true)),
                    }),
                    file_operations: None,
                }),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo {
                name: "wave-mcp".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        tracing::debug!("client initialized");
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        let Some(registry) = self.registry.get() else {
            return;
        };
        registry.set_workspace_folders(
            workspace_folders(&params.event.added),
            workspace_folders(&params.event.removed),
        );
    }

    async fn shutdown(&self) -> jsonrpc::Result<()> {
        if let Some(registry) = self.registry.get() {
            registry.shutdown().await;
        }
        Ok(())
    }
}

impl Backend {
    fn registry(&self) -> jsonrpc::Result<&Arc<Registry>> {
        // tower-lsp-server answers custom methods before `initialize` itself; this is a guard.
        self.registry.get().ok_or_else(|| jsonrpc::Error {
            code: ErrorCode::ServerError(-32002),
            message: "server not initialized".into(),
            data: None,
        })
    }

    /// `wave/workspace/trust` (a notification): the IDE's trust in the project changed
    /// (TRUST-9).
    async fn workspace_trust(&self, params: Value) {
        let params: WorkspaceTrustParams = match parse(params) {
            Ok(params) => params,
            Err(e) => return tracing::warn!("ignoring wave/workspace/trust: {}", e.message),
        };
        if let Some(registry) = self.registry.get() {
            registry.set_trusted(params.trusted).await;
        }
    }

    /// The one entry of every `wave/*` request: params parsed into the message's declared
    /// `Params` (with the offending field's path), answered with its declared `Result`.
    async fn dispatch<M: Message>(&self, params: Value) -> jsonrpc::Result<M::Result>
    where
        Backend: Handles<M>,
    {
        self.handle(parse(params)?).await
    }
}

/// The sidecar's handler of request `M`. Its signature is the message's declared `Params` and
/// `Result` (`protocol/`): a handler whose types differ does not compile, and one that is not
/// implemented cannot be registered in [`run`].
trait Handles<M: Message> {
    fn handle(&self, params: M::Params) -> impl Future<Output = jsonrpc::Result<M::Result>> + Send;
}

impl Handles<McpServers> for Backend {
    async fn handle(&self, params: SessionParams) -> jsonrpc::Result<ServersSnapshot> {
        let session = self.registry()?.get(params.session_id.as_deref())?;
        Ok(session.servers().await)
    }
}

impl Handles<McpConnect> for Backend {
    async fn handle(&self, params: ServerParams) -> jsonrpc::Result<ServersSnapshot> {
        let session = self.registry()?.get(params.session_id.as_deref())?;
        Ok(session.connect(&params.name).await?)
    }
}

impl Handles<McpDisconnect> for Backend {
    async fn handle(&self, params: ServerParams) -> jsonrpc::Result<ServersSnapshot> {
        let session = self.registry()?.get(params.session_id.as_deref())?;
        Ok(session.disconnect(&params.name).await)
    }
}

impl Handles<McpLogin> for Backend {
    async fn handle(&self, params: ServerParams) -> jsonrpc::Result<ServersSnapshot> {
        let session = self.registry()?.get(params.session_id.as_deref())?;
        Ok(session.login(&params.name).await?)
    }
}

impl Handles<McpLogout> for Backend {
    async fn handle(&self, params: ServerParams) -> jsonrpc::Result<ServersSnapshot> {
        let session = self.registry()?.get(params.session_id.as_deref())?;
        Ok(session.logout(&params.name).await?)
    }
}

impl Handles<McpApprove> for Backend {
    async fn handle(&self, params: ServerParams) -> jsonrpc::Result<ServersSnapshot> {
        let session = self.registry()?.get(params.session_id.as_deref())?;
        Ok(session.approve(&params.name).await?)
    }
}

impl Handles<McpRevoke> for Backend {
    async fn handle(&self, params: ServerParams) -> jsonrpc::Result<ServersSnapshot> {
        let session = self.registry()?.get(params.session_id.as_deref())?;
        Ok(session.revoke(&params.name).await?)
    }
}

impl Handles<McpDelete> for Backend {
    async fn handle(&self, params: DeleteParams) -> jsonrpc::Result<ServersSnapshot> {
        let registry = self.registry()?;
        let session = registry.get(params.session_id.as_deref())?;
        Ok(registry
            .delete(&session, &params.name, params.source)
            .await?)
    }
}

impl Handles<RegistrySearch> for Backend {
    async fn handle(&self, params: RegistrySearchParams) -> jsonrpc::Result<RegistrySearchResult> {
        Ok(registry::search(&params.query, params.cursor.as_deref()).await?)
    }
}

impl Handles<RegistryGet> for Backend {
    async fn handle(&self, params: RegistryGetParams) -> jsonrpc::Result<RegistryServerDetails> {
        Ok(registry::get(&params.name, params.version.as_deref()).await?)
    }
}

impl Handles<RegistryAdd> for Backend {
    async fn handle(&self, params: RegistryAddParams) -> jsonrpc::Result<RegistryAdded> {
        let sessions = self.registry()?;
        let session = sessions.get(params.session_id.as_deref())?;
        let name = params.name.trim();
        if name.is_empty() {
            return Err(jsonrpc::Error::invalid_params(
                "params.name: the new server needs a name",
            ));
        }
        let install = registry::install(&params.server, params.version.as_deref()).await?;
        wave_mcp_manager::config::parse_server(&install.entry, &format!("mcpServers.{name}"))
            .map_err(|reason| {
                Failure::new(
                    ErrorKind::Registry,
                    format!("registry server \"{}\": {reason}", params.server),
                )
            })?;
        let (path, servers) = sessions
            .add(&session, name, params.scope, &install.entry)
            .await?;
        Ok(registry::added(&path, &install, servers))
    }
}

impl Handles<McpSetToolEnabled> for Backend {
    async fn handle(&self, params: SetToolEnabledParams) -> jsonrpc::Result<ServersSnapshot> {
        let registry = self.registry()?;
        let session = registry.get(params.session_id.as_deref())?;
        Ok(registry.set_tool_enabled(&session, &params).await?)
    }
}

impl Handles<McpConfigPaths> for Backend {
    async fn handle(&self, params: SessionParams) -> jsonrpc::Result<ConfigPaths> {
        let session = self.registry()?.get(params.session_id.as_deref())?;
        Ok(session.config_paths())
    }
}

impl Handles<McpPrompts> for Backend {
    async fn handle(&self, params: SessionParams) -> jsonrpc::Result<McpPromptsResult> {
        let session = self.registry()?.get(params.session_id.as_deref())?;
        Ok(session.prompts())
    }
}

impl Handles<McpLogs> for Backend {
    async fn handle(&self, params: ServerParams) -> jsonrpc::Result<McpLogsResult> {
        let session = self.registry()?.get(params.session_id.as_deref())?;
        Ok(session.logs(&params.name))
    }
}

impl Handles<McpComplete> for Backend {
    async fn handle(&self, params: McpCompleteParams) -> jsonrpc::Result<McpCompleteResult> {
        use wave_mcp_manager::CompletionReference;
        use wave_mcp_protocol::CompletionRefKind;
        let session = self.registry()?.get(params.session_id.as_deref())?;
        let target = match params.reference.kind {
            CompletionRefKind::Prompt => params.reference.name.map(CompletionReference::for_prompt),
            CompletionRefKind::Resource => {
                params.reference.uri.map(CompletionReference::for_resource)
            }
        };
        let Some(reference) = target else {
            return Err(jsonrpc::Error::invalid_params(
                "ref needs \"name\" with ref/prompt and \"uri\" with ref/resource",
            ));
        };
        let context = params
            .context
            .map(|c| c.arguments.into_iter().collect())
            .unwrap_or_default();
        Ok(session
            .complete(&params.server, reference, &params.argument, context)
            .await?)
    }
}

impl Handles<McpResources> for Backend {
    async fn handle(&self, params: SessionParams) -> jsonrpc::Result<McpResourcesResult> {
        let session = self.registry()?.get(params.session_id.as_deref())?;
        Ok(session.resources())
    }
}

impl Handles<SessionCreate> for Backend {
    async fn handle(&self, params: SessionCreateParams) -> jsonrpc::Result<SessionCreated> {
        Ok(self.registry()?.create(params)?)
    }
}

impl Handles<SessionSend> for Backend {
    async fn handle(&self, params: SessionSendParams) -> jsonrpc::Result<SessionSendAccepted> {
        let session = self.registry()?.get(Some(&params.session_id))?;
        Ok(session.send(params.text).await?)
    }
}

impl Handles<SessionHistory> for Backend {
    async fn handle(&self, params: SessionHistoryParams) -> jsonrpc::Result<SessionHistoryResult> {
        let session = self.registry()?.get(Some(&params.session_id))?;
        Ok(session.history().await)
    }
}

impl Handles<SessionCancel> for Backend {
    async fn handle(&self, params: SessionCancelParams) -> jsonrpc::Result<SessionCancelResult> {
        let session = self.registry()?.get(Some(&params.session_id))?;
        Ok(session.cancel())
    }
}

impl Handles<AppResource> for Backend {
    async fn handle(&self, params: AppResourceParams) -> jsonrpc::Result<AppResourceResult> {
        let registry = self.registry()?;
        let session = registry.get(Some(&params.session_id))?;
        Ok(session.app_resource(params, &registry.sandbox).await?)
    }
}

impl Handles<AppClosed> for Backend {
    async fn handle(&self, params: AppClosedParams) -> jsonrpc::Result<AppClosedResult> {
        let forgotten = self.registry()?.sandbox.forget(&params.url);
        Ok(AppClosedResult { forgotten })
    }
}

impl Handles<AppCallTool> for Backend {
    async fn handle(&self, params: AppCallToolParams) -> jsonrpc::Result<AppCallToolResult> {
        let session = self.registry()?.get(Some(&params.session_id))?;
        Ok(session.app_call_tool(params).await?)
    }
}

impl Handles<AppReadResource> for Backend {
    async fn handle(&self, params: AppResourceParams) -> jsonrpc::Result<AppReadResourceResult> {
        let session = self.registry()?.get(Some(&params.session_id))?;
        Ok(session.app_read_resource(params).await?)
    }
}

impl Handles<SessionDestroy> for Backend {
    async fn handle(&self, params: SessionDestroyParams) -> jsonrpc::Result<SessionDestroyed> {
        Ok(self.registry()?.destroy(&params.session_id).await?)
    }
}

/// Params deserialized with the path of the offending field in the message (`name: invalid
/// type: integer `5`, expected a string`), as an InvalidParams error.
fn parse<T: DeserializeOwned>(params: Value) -> jsonrpc::Result<T> {
    parse_params(params).map_err(|e| jsonrpc::Error::invalid_params(e.message_at("params")))
}

struct ParamsError {
    /// `name`, `mcpServers.x`; empty for the object itself (e.g. a missing field).
    path: String,
    message: String,
}

impl ParamsError {
    /// `params.name: invalid type: ...`, `params: missing field `name``.
    fn message_at(&self, root: &str) -> String {
        match self.path.as_str() {
            "" => format!("{root}: {}", self.message),
            path => format!("{root}.{path}: {}", self.message),
        }
    }
}

fn parse_params<T: DeserializeOwned>(params: Value) -> Result<T, ParamsError> {
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        ParamsError {
            path: if path == "." { String::new() } else { path },
            message: e.into_inner().to_string(),
        }
    })
}

/// The local directories among `folders` (absolute, canonical where they exist).
fn workspace_folders(folders: &[WorkspaceFolder]) -> Vec<PathBuf> {
    folders
        .iter()
        .filter_map(|folder| folder.uri.to_file_path())
        .map(|path| absolute(&path))
        .collect()
}

/// `initializationOptions.workdir`, else the first workspace folder, else `rootUri`, else
/// `rootPath`, else the current directory.
fn workdir_of(params: &InitializeParams, options: &InitializationOptions) -> PathBuf {
    if let Some(dir) = &options.workdir {
        return PathBuf::from(dir);
    }
    let folder = params
        .workspace_folders
        .as_ref()
        .and_then(|folders| folders.first())
        .and_then(|folder| folder.uri.to_file_path());
    if let Some(path) = folder {
        return path.into_owned();
    }
    #[allow(deprecated)]
    let root_uri = params.root_uri.as_ref().and_then(|uri| uri.to_file_path());
    if let Some(path) = root_uri {
        return path.into_owned();
    }
    #[allow(deprecated)]
    if let Some(path) = &params.root_path {
        return PathBuf::from(path);
    }
    PathBuf::from(".")
}

/// Absolute (from the sidecar's working directory) and canonical where it exists, like the
/// manager's own paths, so config paths compare equal to watcher events (EDIT-2).
pub fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// Lets a `wave/*` request omit `params` (or send `null`): handlers then see `{}`, so every
/// optional field takes its default. Also answers a *request* to a `$/` method with
/// MethodNotFound: LSP defines `$/` methods as notifications only, and tower-lsp-server drops
/// such requests without a reply, which would leave the client waiting forever. Everything else
/// passes through untouched.
struct EmptyParams<S>(S);

impl<S> tower_service::Service<Request> for EmptyParams<S>
where
    S: tower_service::Service<Request, Response = Option<Response>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Either<S::Future, Ready<Result<Option<Response>, S::Error>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if let (true, Some(id)) = (request.method().starts_with("$/"), request.id()) {
            let error = jsonrpc::Error::method_not_found();
            return Either::Right(ready(Ok(Some(Response::from_error(id.clone(), error)))));
        }
        let empty = matches!(request.params(), None | Some(Value::Null));
        if !(empty && request.method().starts_with("wave/")) {
            return Either::Left(self.0.call(request));
        }
        let (method, id, _) = request.into_parts();
        let builder = Request::build(method).params(json!({}));
        let request = match id {
            Some(id) => builder.id(id).finish(),
            None => builder.finish(),
        };
        Either::Left(self.0.call(request))
    }
}
