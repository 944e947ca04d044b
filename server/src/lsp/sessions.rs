//! The session registry: many agents in one sidecar, each owning its MCP manager; versioned
//! snapshots for replies and `wave/mcp/serversChanged`; the conversation of each session, the
//! one record clients render from (CHAT-1), with one turn worker per session that runs turns
//! in the order they were sent (CHAT-2); reconfiguration (config reload) and destroy, where a
//! destroy that arrives while a session is being reconfigured is queued and carried out when
//! the reconfiguration ends (LIFE-9).
//!
//! Versions: one counter per process, drawn under one async lock. A notification is queued
//! while that lock is held, so notifications leave in version order; a reply draws its version
//! only after the session's forwarder has pushed every change up to the state the reply shows,
//! so a reply's version is at least that of every notification before it, and a snapshot with a
//! higher version never shows an older state (UI-11).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tower_lsp_server::Client;
use wave_mcp_agent::{Agent, AgentOptions, Message, ModelSettings, Role};
use wave_mcp_manager::{
    DEFAULT_SHUTDOWN_GRACE, Error as ManagerError, ManagerOptions, McpManager, Snapshot, UrlOpener,
    config, login_timeout,
};
use wave_mcp_protocol::{
    ChatAppRef, ChatAppResult, ChatMessage, ChatRole, ChatToolCall, ConfigPaths,
    DEFAULT_SESSION_ID, DestroyState, ErrorKind, McpOpenUrl, McpPromptsResult, McpResourcesResult,
    McpServersChanged, McpSource, ModelOptions, OpenUrlParams, ServersSnapshot,
    SessionCreateParams, SessionCreated, SessionDestroyed, SessionHistoryEntry,
    SessionHistoryResult, SessionMessage, SessionMessageParams, SessionSendAccepted,
    SetToolEnabledParams,
};

mod live;

use super::elicit::SessionElicitor;
use super::watch::ConfigWatcher;
use super::{Failure, absolute, config_edit, tool_switch_edit};
use crate::view::server_view;

/// How long a reply waits for the forwarder to push the changes before it (it normally takes
/// microseconds; the bound only keeps a reply from hanging on a stuck client).
const FORWARD_WAIT: Duration = Duration::from_secs(2);
/// A disconnect answers after at most this long, whatever the process does (UI-4).
const DISCONNECT_LIMIT: Duration = Duration::from_secs(10);

/// The snapshot counter of the process, behind the lock that orders notifications.
#[derive(Default)]
struct Versions(tokio::sync::Mutex<u64>);

/// Sends one session's snapshots: notifications from its manager's changes, and replies.
struct Publisher {
    session_id: String,
    client: Client,
    versions: Arc<Versions>,
    manager: McpManager,
    /// Manager version of the newest snapshot sent, as a reply or a notification.
    shown: AtomicU64,
    /// Manager version the forwarder has dealt with.
    forwarded: watch::Sender<u64>,
}

impl Publisher {
    fn wire(&self, version: u64, snapshot: &Snapshot) -> ServersSnapshot {
        ServersSnapshot {
            version,
            session_id: self.session_id.clone(),
            servers: snapshot.servers.iter().map(server_view).collect(),
        }
    }

    /// `wave/mcp/serversChanged` with `snapshot`, unless a reply already showed something newer.
    async fn push(&self, snapshot: &Snapshot) {
        let mut counter = self.versions.0.lock().await;
        if snapshot.version < self.shown.load(Ordering::SeqCst) {
            return;
        }
        self.shown.store(snapshot.version, Ordering::SeqCst);
        *counter += 1;
        let params = self.wire(*counter, snapshot);
        self.client
            .send_notification::<McpServersChanged>(params)
            .await;
    }

    /// The latest snapshot with a fresh version, for a reply.
    async fn reply(&self) -> ServersSnapshot {
        let target = self.manager.snapshot().version;
        let mut forwarded = self.forwarded.subscribe();
        let caught_up = forwarded.wait_for(|&version| version >= target);
        if tokio::time::timeout(FORWARD_WAIT, caught_up).await.is_err() {
            tracing::warn!(session = %self.session_id, "replying before every change was pushed");
        }
        let mut counter = self.versions.0.lock().await;
        let snapshot = self.manager.snapshot();
        self.shown.fetch_max(snapshot.version, Ordering::SeqCst);
        *counter += 1;
        self.wire(*counter, &snapshot)
    }

    /// Pushes every change of the manager, in order; after a lag, the latest state (UI-5).
    async fn forward(self: Arc<Self>, mut events: broadcast::Receiver<Arc<Snapshot>>) {
        loop {
            let snapshot = match events.recv().await {
                Ok(snapshot) => snapshot,
                Err(RecvError::Lagged(_)) => self.manager.snapshot(),
                Err(RecvError::Closed) => return,
            };
            self.push(&snapshot).await;
            self.forwarded
                .send_modify(|version| *version = (*version).max(snapshot.version));
        }
    }
}

#[derive(Default)]
struct Life {
    /// Reconfigurations running now.
    reconfiguring: usize,
    /// A destroy arrived during a reconfiguration; the last one to end carries it out.
    destroy_queued: bool,
    destroyed: bool,
}

/// A session's conversation: every message with its turn, in order (CHAT-1), and the turns
/// queued for its worker (CHAT-2). A message is recorded and notified under the same lock, so
/// notifications leave in index order and a history reply never misses one that was notified.
#[derive(Default)]
struct Conversation {
    messages: Vec<SessionHistoryEntry>,
    /// The last turn number handed out.
    last_turn: u64,
    /// Accepted and not ended, in order; the first is the one running.
    running: Vec<u64>,
    /// The worker's queue, made with the first turn.
    queue: Option<mpsc::UnboundedSender<(u64, String)>>,
}

/// What a session is created from.
struct SessionOptions {
    workdir: PathBuf,
    home: PathBuf,
    servers: Map<String, Value>,
    model: ModelOptions,
    /// The IDE does not trust the project (TRUST-9).
    project_untrusted: bool,
    /// The client shows MCP Apps (APPS-1).
    apps: bool,
}

/// One agent with its MCP servers, its publisher and its lifecycle.
pub struct Session {
    pub id: String,
    /// The agent's manager (a clone: MCP requests never wait for a running turn).
    pub(super) manager: McpManager,
    /// `None` when no model is configured: the session then only manages MCP servers.
    agent: Option<tokio::sync::Mutex<Agent>>,
    /// Why there is no agent.
    pub(super) no_agent: Option<String>,
    /// The agent's funnel permission check, taken at creation: an app's calls go through it
    /// without the agent's lock (APPS-4).
    pub(super) gate: Option<wave_mcp_agent::ToolGate>,
    /// The client shows MCP Apps: the servers are told, `wave/app/*` works (APPS-1).
    pub(super) apps: bool,
    home: PathBuf,
    publisher: Arc<Publisher>,
    forwarder: Mutex<Option<JoinHandle<()>>>,
    life: Mutex<Life>,
    /// One reload at a time.
    reload: tokio::sync::Mutex<()>,
    /// The conversation, the only record of it (CHAT-1).
    conversation: tokio::sync::Mutex<Conversation>,
    /// Runs the queued turns one after another (CHAT-2); aborted by teardown.
    turn_worker: Mutex<Option<JoinHandle<()>>>,
    /// The running turn and its stop switch (LONG-3).
    stop: live::Stop,
}

impl Session {
    /// Creates the session's agent, or, without a model, its MCP manager alone. Spawns nothing.
    fn open(
        id: String,
        options: SessionOptions,
        client: Client,
        versions: Arc<Versions>,
    ) -> Session {
        let SessionOptions {
            workdir,
            home,
            servers,
            model,
            project_untrusted,
            apps,
        } = options;
        let agent = Agent::create(AgentOptions {
            workdir: workdir.clone(),
            mcp_servers: servers.clone(),
            model: ModelSettings {
                base_url: model.base_url,
                api_key: model.api_key,
                model: model.model,
                ..ModelSettings::default()
            },
            home: Some(home.clone()),
            project_untrusted,
            ..AgentOptions::default()
        });
        let (agent, no_agent, manager, gate) = match agent {
            Ok(agent) => {
                let manager = agent.manager().clone();
                let gate = agent.tool_gate();
                (
                    Some(tokio::sync::Mutex::new(agent)),
                    None,
                    manager,
                    Some(gate),
                )
            }
            Err(e) => {
                tracing::info!(session = %id, "no agent, MCP servers only: {e}");
                let manager = McpManager::new(ManagerOptions {
                    workdir,
                    home: Some(home.clone()),
                    servers,
                    project_untrusted,
                    ..ManagerOptions::default()
                });
                (None, Some(e.to_string()), manager, None)
            }
        };
        if apps {
            manager.declare_apps();
        }
        // The servers' questions go to the client's chat page (LONG-5, LONG-6).
        manager.set_elicitor(Arc::new(SessionElicitor {
            client: client.clone(),
            session_id: id.clone(),
        }));
        // Subscribe before reading the version, so no change falls between the two.
        let events = manager.subscribe();
        let (forwarded, _) = watch::channel(manager.snapshot().version);
        let publisher = Arc::new(Publisher {
            session_id: id.clone(),
            client,
            versions,
            manager: manager.clone(),
            shown: AtomicU64::new(0),
            forwarded,
        });
        let logs = forward_logs(
            publisher.client.clone(),
            id.clone(),
            manager.subscribe_logs(),
        );
        let snapshots = publisher.clone().forward(events);
        let forwarder = tokio::spawn(async move {
            tokio::join!(snapshots, logs);
        });
        Session {
            id,
            manager,
            agent,
            no_agent,
            gate,
            apps,
            home,
            publisher,
            forwarder: Mutex::new(Some(forwarder)),
            life: Mutex::new(Life::default()),
            reload: tokio::sync::Mutex::new(()),
            conversation: tokio::sync::Mutex::default(),
            turn_worker: Mutex::new(None),
            stop: live::Stop::default(),
        }
    }

    /// The client connection (for an app's consent question).
    pub(super) fn publisher_client(&self) -> Client {
        self.publisher.client.clone()
    }

    /// The last turn handed out (0 before the first).
    pub(super) async fn last_turn(&self) -> u64 {
        self.conversation.lock().await.last_turn
    }

    fn life(&self) -> MutexGuard<'_, Life> {
        self.life.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn workdir(&self) -> &Path {
        self.manager.workdir()
    }

    fn user_config_path(&self) -> PathBuf {
        config::user_config_path(&self.home)
    }

    fn project_config_path(&self) -> PathBuf {
        config::project_config_path(self.workdir())
    }

    /// The file an entry of `source` is edited in; plugin and constructor entries are read-only
    /// (DEL-4, BUD-2).
    fn entry_file(&self, name: &str, source: McpSource) -> Result<PathBuf, Failure> {
        match source {
            McpSource::User => Ok(self.user_config_path()),
            McpSource::Project => Ok(self.project_config_path()),
            McpSource::Plugin | McpSource::Constructor => {
                let from = match source {
                    McpSource::Plugin => "a plugin",
                    _ => "the host's constructor options",
                };
                Err(Failure::new(
                    ErrorKind::ReadOnly,
                    format!("MCP server \"{name}\" comes from {from} and is read-only"),
                ))
            }
        }
    }

    /// A switch the user flips on an approved project server keeps it approved: the approval
    /// moves to the edited entry before the file is written (TRUST-4, BUD-2).
    fn keep_approval(&self, path: &Path, params: &SetToolEnabledParams) -> Result<(), Failure> {
        let Ok(text) = std::fs::read_to_string(path) else {
            return Ok(()); // the edit itself reports the file
        };
        let edited =
            tool_switch_edit::with_tool_switched(&text, &params.name, &params.tool, params.enabled);
        let Ok(edited) = edited else {
            return Ok(());
        };
        let Some(entry) = config::parse_file(&edited)
            .ok()
            .and_then(|servers| servers.get(&params.name).cloned())
        else {
            return Ok(());
        };
        self.manager
            .keep_approval_for_edit(&params.name, &entry)
            .or_else(|e| self.failure(e))
    }

    /// Whether a change of `path` may change this session's servers.
    fn depends_on(&self, path: &Path) -> bool {
        // The trust store: `wave-mcp approve` / `revoke` in a terminal (TRUST-3).
        path == wave_mcp_manager::trust::trust_path(&self.home)
            || path == self.project_config_path()
            || path == self.user_config_path()
            || path == self.home.join(".wave")
            || path.starts_with(self.home.join(".wave").join("plugins"))
    }

    pub async fn servers(&self) -> ServersSnapshot {
        self.publisher.reply().await
    }

    /// `wave/mcp/logs`: one server's log (SRV-2).
    pub fn logs(&self, server: &str) -> wave_mcp_protocol::McpLogsResult {
        let log = self.manager.logs(server);
        wave_mcp_protocol::McpLogsResult {
            entries: log
                .entries
                .iter()
                .map(crate::view::log_entry_view)
                .collect(),
            dropped: log.dropped,
        }
    }

    /// `wave/mcp/prompts`: live or cached prompts of the servers the settings files' permission
    /// rules allow (PRM-1).
    pub fn prompts(&self) -> McpPromptsResult {
        let rules = wave_mcp_agent::settings::settings_rules(self.workdir(), &self.home);
        let snapshot = self.manager.snapshot();
        McpPromptsResult {
            session_id: self.id.clone(),
            prompts: crate::catalog_view::prompt_views(&snapshot, &rules),
        }
    }

    /// `wave/mcp/resources`: resources and templates of the allowed servers (PRM-3).
    pub fn resources(&self) -> McpResourcesResult {
        let rules = wave_mcp_agent::settings::settings_rules(self.workdir(), &self.home);
        let snapshot = self.manager.snapshot();
        let (resources, templates) = crate::catalog_view::resource_views(&snapshot, &rules);
        McpResourcesResult {
            session_id: self.id.clone(),
            resources,
            templates,
        }
    }

    /// `wave/mcp/complete` (SRV-3): the server's suggestions for one argument. A server without
    /// the `completions` capability is never asked; one that is not connected, or whose answer
    /// fails, has no suggestions (logged): a menu has nothing to show, not an error.
    pub async fn complete(
        &self,
        server: &str,
        reference: wave_mcp_manager::CompletionReference,
        argument: &wave_mcp_protocol::CompletionArgument,
        context: std::collections::HashMap<String, String>,
    ) -> Result<wave_mcp_protocol::McpCompleteResult, Failure> {
        match self
            .manager
            .complete(server, reference, &argument.name, &argument.value, context)
            .await
        {
            Ok(info) => Ok(wave_mcp_protocol::McpCompleteResult {
                values: info.values,
                total: info.total,
                has_more: info.has_more,
            }),
            Err(e) => {
                self.failure(e)?;
                Ok(wave_mcp_protocol::McpCompleteResult::default())
            }
        }
    }

    /// Connects and answers with the snapshot, also when the connect failed: the reason is the
    /// row's `error` (UI-12). Only a name that is not configured, or a project server the user
    /// has not approved (TRUST-1), is an error.
    pub async fn connect(&self, name: &str) -> Result<ServersSnapshot, Failure> {
        match self.manager.connect(name).await {
            Ok(()) => {}
            Err(e) => self.failure(e)?,
        }
        Ok(self.servers().await)
    }

    /// `wave/mcp/approve`: approves the project server as written now and connects it; a
    /// failed connect is the row's `error` (TRUST-3).
    pub async fn approve(&self, name: &str) -> Result<ServersSnapshot, Failure> {
        if let Err(e) = self.manager.approve(name).await {
            self.failure(e)?;
        }
        self.connect(name).await
    }

    /// `wave/mcp/revoke`: disconnects the project server and forgets its approval (TRUST-3).
    pub async fn revoke(&self, name: &str) -> Result<ServersSnapshot, Failure> {
        if let Err(e) = self.manager.revoke(name).await {
            self.failure(e)?;
        }
        Ok(self.servers().await)
    }

    /// The request failure a manager error is, or `Ok` for one that is only the row's state
    /// (logged).
    fn failure(&self, error: ManagerError) -> Result<(), Failure> {
        let kind = match &error {
            ManagerError::UnknownServer(_) | ManagerError::ApprovalNotNeeded(_) => {
                ErrorKind::UnknownServer
            }
            ManagerError::NeedsApproval(_) => ErrorKind::NeedsApproval,
            ManagerError::Untrusted(_) => ErrorKind::Untrusted,
            ManagerError::Destroyed => return Err(Failure::unknown_session(&self.id)),
            ManagerError::Trust { path, reason } => {
                return Err(Failure::new(ErrorKind::Io, reason.clone()).with_path(path));
            }
            _ => {
                tracing::info!(session = %self.id, "{error}");
                return Ok(());
            }
        };
        Err(Failure::new(kind, error.to_string()))
    }

    /// Disconnects and always answers with the latest snapshot: a missing entry, a failing or
    /// slow teardown still get one (UI-4).
    pub async fn disconnect(&self, name: &str) -> ServersSnapshot {
        let limit = DEFAULT_SHUTDOWN_GRACE + DISCONNECT_LIMIT;
        match tokio::time::timeout(limit, self.manager.disconnect(name)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::info!(session = %self.id, "disconnect {name}: {e}"),
            Err(_) => tracing::warn!(
                session = %self.id,
                "teardown of {name} takes longer than {limit:?}; answering anyway"
            ),
        }
        self.servers().await
    }

    /// Signs in to `name` (AUTH-2): the client is asked to open the authorization URL
    /// (`wave/mcp/openUrl`); if it cannot, the sidecar opens it itself. Answers once signed in
    /// and connected, or with the failure (AUTH-8).
    pub async fn login(&self, name: &str) -> Result<ServersSnapshot, Failure> {
        let client = self.publisher.client.clone();
        let (session_id, server) = (self.id.clone(), name.to_string());
        let open: UrlOpener = Arc::new(move |url: String| {
            let client = client.clone();
            let params = OpenUrlParams {
                session_id: session_id.clone(),
                name: server.clone(),
                url,
                purpose: None,
            };
            Box::pin(async move {
                match client.send_request::<McpOpenUrl>(params).await {
                    Ok(result) => result.opened,
                    Err(e) => {
                        tracing::info!("the client did not open the sign-in URL: {}", e.message);
                        false
                    }
                }
            })
        });
        match self.manager.login(name, open, login_timeout()).await {
            // A sign-in that worked but whose connect failed: the row's error (UI-12).
            Ok(()) | Err(ManagerError::Connect { .. }) => Ok(self.servers().await),
            Err(e @ ManagerError::UnknownServer(_)) => {
                Err(Failure::new(ErrorKind::UnknownServer, e.to_string()))
            }
            Err(ManagerError::Destroyed) => Err(Failure::unknown_session(&self.id)),
            Err(e @ ManagerError::SignInCancelled(_)) => {
                Err(Failure::new(ErrorKind::SignInCancelled, e.to_string()))
            }
            Err(e) => Err(Failure::new(ErrorKind::SignInFailed, e.to_string())),
        }
    }

    /// Signs out of `name` (AUTH-5) and answers with the snapshot.
    pub async fn logout(&self, name: &str) -> Result<ServersSnapshot, Failure> {
        match self.manager.logout(name).await {
            Ok(()) => Ok(self.servers().await),
            Err(e @ ManagerError::UnknownServer(_)) => {
                Err(Failure::new(ErrorKind::UnknownServer, e.to_string()))
            }
            Err(ManagerError::Destroyed) => Err(Failure::unknown_session(&self.id)),
            Err(ManagerError::Credentials { path, reason }) => {
                Err(Failure::new(ErrorKind::Io, reason).with_path(&path))
            }
            Err(e) => Err(Failure::new(ErrorKind::Io, e.to_string())),
        }
    }

    pub fn config_paths(&self) -> ConfigPaths {
        let text = |path: &Path| path.to_string_lossy().into_owned();
        ConfigPaths {
            user_config_path: text(&self.user_config_path()),
            project_config_path: text(&self.project_config_path()),
            project_name: self
                .workdir()
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_else(|| text(self.workdir())),
            workdir: text(self.workdir()),
        }
    }

    /// Queues a turn with `text` as an ordinary user message, sent verbatim (`/settings ...`
    /// included, ADD-4). The user's message is recorded and notified at once, as the first
    /// message of its turn (CHAT-1); the turn runs after every turn sent before it (CHAT-2), and
    /// its other messages and its end are notified when it finishes.
    pub async fn send(self: &Arc<Self>, text: String) -> Result<SessionSendAccepted, Failure> {
        if self.agent.is_none() {
            let reason = self.no_agent.as_deref().unwrap_or("no agent");
            return Err(Failure::new(
                ErrorKind::ChatUnavailable,
                format!("session \"{}\" cannot chat: {reason}", self.id),
            ));
        }
        let mut conversation = self.conversation.lock().await;
        conversation.last_turn += 1;
        let turn = conversation.last_turn;
        let message = ChatMessage {
            role: ChatRole::User,
            content: text.clone(),
            tool_calls: Vec::new(),
            tool_name: None,
            is_error: false,
            is_meta: false,
            tool_call_id: None,
            app: None,
        };
        self.record(&mut conversation, turn, message).await;
        conversation.running.push(turn);
        let queue = conversation
            .queue
            .get_or_insert_with(|| self.start_turn_worker());
        if queue.send((turn, text)).is_err() {
            tracing::warn!(session = %self.id, "turn {turn} not run: the session is closing");
        }
        Ok(SessionSendAccepted {
            session_id: self.id.clone(),
            turn,
        })
    }

    /// The worker that runs this session's turns, one at a time, in the order they were queued.
    /// It holds the session weakly: a session that is gone ends it.
    fn start_turn_worker(self: &Arc<Self>) -> mpsc::UnboundedSender<(u64, String)> {
        let (queue, mut turns) = mpsc::unbounded_channel::<(u64, String)>();
        let session = Arc::downgrade(self);
        let worker = tokio::spawn(async move {
            while let Some((turn, text)) = turns.recv().await {
                let Some(session) = session.upgrade() else {
                    return;
                };
                session.run_turn(turn, text).await;
            }
        });
        *self.turn_worker.lock().unwrap_or_else(|e| e.into_inner()) = Some(worker);
        queue
    }

    /// Appends one message to the conversation and notifies it (under the conversation's lock).
    async fn record(&self, conversation: &mut Conversation, turn: u64, message: ChatMessage) {
        let index = conversation.messages.len() as u64;
        conversation.messages.push(SessionHistoryEntry {
            turn,
            index,
            message: message.clone(),
        });
        let params = SessionMessageParams {
            session_id: self.id.clone(),
            turn,
            index,
            message,
        };
        self.publisher
            .client
            .send_notification::<SessionMessage>(params)
            .await;
    }

    /// `wave/session/history`: the whole conversation so far (CHAT-1).
    pub async fn history(&self) -> SessionHistoryResult {
        let conversation = self.conversation.lock().await;
        SessionHistoryResult {
            session_id: self.id.clone(),
            messages: conversation.messages.clone(),
            running_turns: conversation.running.clone(),
        }
    }

    /// Runs one turn and records what it adds to the agent's history as it is added: meta,
    /// assistant and tool messages (the user's own message was recorded when it was sent), then
    /// the end (see `live.rs`).
    async fn run_turn(&self, turn: u64, text: String) {
        self.run_live_turn(turn, text).await;
    }

    /// Counts a reconfiguration in, unless the session is destroyed or queued for it.
    fn begin_reconfigure(&self) -> bool {
        let mut life = self.life();
        if life.destroyed || life.destroy_queued {
            return false;
        }
        life.reconfiguring += 1;
        true
    }

    /// Counts a reconfiguration out; `true` when a queued destroy is now due.
    fn end_reconfigure(&self) -> bool {
        let mut life = self.life();
        life.reconfiguring -= 1;
        if life.reconfiguring > 0 || !life.destroy_queued || life.destroyed {
            return false;
        }
        life.destroyed = true;
        true
    }

    /// `Destroyed` when the caller must tear down now, `Queued` when a running reconfiguration
    /// will.
    fn request_destroy(&self) -> DestroyState {
        let mut life = self.life();
        if life.reconfiguring > 0 {
            life.destroy_queued = true;
            return DestroyState::Queued;
        }
        life.destroyed = true;
        DestroyState::Destroyed
    }

    /// Ends every connection and process of the session, stops its turns and saves its
    /// transcript (LIFE-8). Idempotent.
    async fn teardown(&self) {
        self.life().destroyed = true;
        // A destroyed session's last snapshots concern nobody (and after `exit` there is no
        // one to send them to).
        self.stop_forwarder();
        self.manager.cleanup().await;
        let worker = self
            .turn_worker
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(worker) = worker {
            worker.abort();
            let _ = worker.await;
        }
        if let Some(agent) = &self.agent {
            agent.lock().await.destroy().await;
        }
    }

    fn stop_forwarder(&self) {
        let forwarder = self
            .forwarder
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(forwarder) = forwarder {
            forwarder.abort();
        }
    }
}

struct Inner {
    sessions: BTreeMap<String, Arc<Session>>,
    /// Destroyed while being reconfigured; torn down when the reconfiguration ends (LIFE-9).
    reclaim: Vec<Arc<Session>>,
    closed: bool,
}

/// What the client said of itself at `initialize`.
pub struct HostFlags {
    /// The IDE trusts the project (TRUST-9).
    pub trusted: bool,
    /// The client shows MCP Apps (APPS-1).
    pub apps: bool,
}

/// Every session of the sidecar.
pub struct Registry {
    client: Client,
    versions: Arc<Versions>,
    home: PathBuf,
    /// Workdir, constructor servers and model from `initialize`, the defaults of new sessions.
    workdir: PathBuf,
    servers: Map<String, Value>,
    model: ModelOptions,
    /// The IDE trusts the project (TRUST-9); new sessions start with it.
    trusted: std::sync::atomic::AtomicBool,
    /// The client shows MCP Apps (`initializationOptions.apps`, APPS-1).
    apps: bool,
    /// The sandbox origin of the apps, started by the first one (APPS-2).
    pub sandbox: super::app_sandbox::LazySandbox,
    /// The IDE's workspace folders: the roots of sessions working in one of them (SRV-1).
    folders: Mutex<Vec<PathBuf>>,
    inner: Mutex<Inner>,
    next_id: AtomicU64,
    watcher: ConfigWatcher,
}

impl Registry {
    /// Creates the registry with the default session (spawning nothing, LAZY-1) and starts
    /// watching its config files.
    pub fn start(
        client: Client,
        home: PathBuf,
        workdir: PathBuf,
        servers: Map<String, Value>,
        model: ModelOptions,
        host: HostFlags,
        folders: Vec<PathBuf>,
    ) -> Arc<Registry> {
        let HostFlags { trusted, apps } = host;
        let registry = Arc::new_cyclic(|weak: &Weak<Registry>| {
            let weak = weak.clone();
            Registry {
                client,
                versions: Arc::default(),
                home,
                workdir,
                servers,
                model,
                trusted: trusted.into(),
                apps,
                sandbox: super::app_sandbox::LazySandbox::default(),
                folders: Mutex::new(folders),
                inner: Mutex::new(Inner {
                    sessions: BTreeMap::new(),
                    reclaim: Vec::new(),
                    closed: false,
                }),
                next_id: AtomicU64::new(1),
                watcher: ConfigWatcher::start(move |paths| {
                    if let Some(registry) = weak.upgrade() {
                        registry.config_changed(&paths);
                    }
                }),
            }
        });
        let options = SessionOptions {
            workdir: registry.workdir.clone(),
            home: registry.home.clone(),
            servers: registry.servers.clone(),
            model: registry.model.clone(),
            project_untrusted: !trusted,
            apps: registry.apps,
        };
        if let Err(e) = registry.open(DEFAULT_SESSION_ID.into(), options) {
            tracing::error!("cannot open the default session: {}", e.message);
        }
        registry
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn open(&self, id: String, options: SessionOptions) -> Result<Arc<Session>, Failure> {
        let session = Arc::new(Session::open(
            id.clone(),
            options,
            self.client.clone(),
            self.versions.clone(),
        ));
        {
            let mut inner = self.lock();
            if inner.closed {
                drop(inner);
                session.stop_forwarder();
                return Err(Failure::new(
                    ErrorKind::ShuttingDown,
                    "the sidecar is shutting down",
                ));
            }
            inner.sessions.insert(id, session.clone());
        }
        self.watcher.watch_dir(session.workdir());
        self.watch_user_dirs();
        session.manager.set_roots(self.roots_for(session.workdir()));
        Ok(session)
    }

    /// The roots of a session working in `workdir` (SRV-1): the workspace folders when it is
    /// one of them, else its own directory.
    fn roots_for(&self, workdir: &Path) -> Vec<PathBuf> {
        let folders = self.folders.lock().unwrap_or_else(|e| e.into_inner());
        match folders.iter().any(|folder| folder == workdir) {
            true => folders.clone(),
            false => vec![workdir.to_path_buf()],
        }
    }

    /// `workspace/didChangeWorkspaceFolders`: every session's servers learn their new roots
    /// (`notifications/roots/list_changed`, SRV-1).
    pub fn set_workspace_folders(&self, added: Vec<PathBuf>, removed: Vec<PathBuf>) {
        {
            let mut folders = self.folders.lock().unwrap_or_else(|e| e.into_inner());
            folders.retain(|folder| !removed.contains(folder));
            for folder in added {
                if !folders.contains(&folder) {
                    folders.push(folder);
                }
            }
        }
        let sessions: Vec<Arc<Session>> = self.lock().sessions.values().cloned().collect();
        for session in sessions {
            session.manager.set_roots(self.roots_for(session.workdir()));
        }
    }

    /// `wave/session/create`.
    pub fn create(&self, params: SessionCreateParams) -> Result<SessionCreated, Failure> {
        let workdir = match &params.workdir {
            Some(dir) => absolute(Path::new(dir)),
            None => self.workdir.clone(),
        };
        let options = SessionOptions {
            workdir,
            home: self.home.clone(),
            servers: params.mcp_servers.unwrap_or_else(|| self.servers.clone()),
            model: params.model.unwrap_or_else(|| self.model.clone()),
            project_untrusted: !self.trusted.load(Ordering::SeqCst),
            apps: self.apps,
        };
        let id = format!("session-{}", self.next_id.fetch_add(1, Ordering::SeqCst));
        let session = self.open(id, options)?;
        Ok(SessionCreated {
            session_id: session.id.clone(),
        })
    }

    /// The session `id`, by default the default session.
    pub fn get(&self, id: Option<&str>) -> Result<Arc<Session>, Failure> {
        let id = id.unwrap_or(DEFAULT_SESSION_ID);
        self.lock()
            .sessions
            .get(id)
            .cloned()
            .ok_or_else(|| Failure::unknown_session(id))
    }

    /// `wave/session/destroy`: the session leaves the registry at once; its teardown runs now,
    /// or, while it is being reconfigured, from the reclaim queue when that ends (LIFE-9).
    pub async fn destroy(&self, id: &str) -> Result<SessionDestroyed, Failure> {
        let (session, state) = {
            let mut inner = self.lock();
            let Some(session) = inner.sessions.remove(id) else {
                return Err(Failure::unknown_session(id));
            };
            let state = session.request_destroy();
            if state == DestroyState::Queued {
                inner.reclaim.push(session.clone());
            }
            (session, state)
        };
        match state {
            DestroyState::Queued => {
                tracing::info!(session = %id, "destroy queued until the reconfiguration ends");
            }
            DestroyState::Destroyed => session.teardown().await,
        }
        Ok(SessionDestroyed {
            session_id: id.to_string(),
            state,
        })
    }

    /// Re-reads the session's config and applies it; a destroy queued meanwhile is carried out
    /// right after.
    pub async fn reconfigure(&self, session: &Arc<Session>) {
        if !session.begin_reconfigure() {
            return;
        }
        {
            let _one_at_a_time = session.reload.lock().await;
            session.manager.reload().await;
        }
        if !session.end_reconfigure() {
            return;
        }
        tracing::info!(session = %session.id, "reclaiming a session destroyed while reconfigured");
        session.teardown().await;
        self.lock().reclaim.retain(|s| !Arc::ptr_eq(s, session));
    }

    /// `wave/workspace/trust`: every session's project servers follow the IDE's trust
    /// (TRUST-9).
    pub async fn set_trusted(&self, trusted: bool) {
        self.trusted.store(trusted, Ordering::SeqCst);
        let sessions: Vec<Arc<Session>> = self.lock().sessions.values().cloned().collect();
        for session in sessions {
            session.manager.set_project_trusted(trusted).await;
        }
    }

    /// `wave/mcp/delete`: removes the entry from its file, then reloads, so the server leaves
    /// the list and its process tree ends if it was connected (DEL-2).
    pub async fn delete(
        &self,
        session: &Arc<Session>,
        name: &str,
        source: McpSource,
    ) -> Result<ServersSnapshot, Failure> {
        let path = session.entry_file(name, source)?;
        config_edit::remove_server(&path, name)?;
        tracing::info!(session = %session.id, "deleted MCP server {name} from {}", path.display());
        self.reconfigure(session).await;
        Ok(session.servers().await)
    }

    /// `wave/registry/add`: writes `entry` as a new entry of the scope's file (created when
    /// missing; every other byte kept), approves a project entry as written (the user's own
    /// add, TRUST-1; refused in an untrusted project, TRUST-9), then reloads (USE-3).
    pub async fn add(
        &self,
        session: &Arc<Session>,
        name: &str,
        source: McpSource,
        entry: &Value,
    ) -> Result<(PathBuf, ServersSnapshot), Failure> {
        let path = session.entry_file(name, source)?;
        if source == McpSource::Project && !session.manager.project_trusted() {
            return Err(Failure::new(
                ErrorKind::Untrusted,
                format!(
                    "cannot add \"{name}\" to {}: the IDE does not trust this project",
                    path.display()
                ),
            )
            .with_path(&path));
        }
        config_edit::add_server(&path, name, entry)?;
        if source == McpSource::Project {
            let fingerprint = wave_mcp_manager::trust::entry_fingerprint(entry);
            session
                .manager
                .trust()
                .approve(name, &fingerprint)
                .map_err(|reason| {
                    Failure::new(
                        ErrorKind::Io,
                        format!("added \"{name}\" but cannot record its approval: {reason}"),
                    )
                })?;
        }
        tracing::info!(session = %session.id, "added MCP server {name} to {}", path.display());
        self.reconfigure(session).await;
        Ok((path, session.servers().await))
    }

    /// `wave/mcp/setToolEnabled`: edits the entry's `disabledTools` (or `enabledTools`) in its
    /// file, then reloads; the server keeps its connection (BUD-2).
    pub async fn set_tool_enabled(
        &self,
        session: &Arc<Session>,
        params: &SetToolEnabledParams,
    ) -> Result<ServersSnapshot, Failure> {
        let (name, tool) = (&params.name, &params.tool);
        let path = session.entry_file(name, params.source)?;
        if params.source == McpSource::Project {
            session.keep_approval(&path, params)?;
        }
        tool_switch_edit::set_tool_enabled(&path, name, tool, params.enabled)?;
        tracing::info!(session = %session.id, enabled = params.enabled, "switched tool {tool} of MCP server {name} in {}", path.display());
        self.reconfigure(session).await;
        Ok(session.servers().await)
    }

    /// `~/.wave` (the home directory itself until `~/.wave` exists, to see it being created),
    /// `~/.wave/plugins` and every plugin directory in it. Directories that appear later are
    /// picked up at the next change.
    fn watch_user_dirs(&self) {
        let wave_dir = self.home.join(".wave");
        if !wave_dir.is_dir() {
            self.watcher.watch_dir(&self.home);
            return;
        }
        self.watcher.watch_dir(&wave_dir);
        let plugins = wave_dir.join("plugins");
        self.watcher.watch_dir(&plugins);
        for plugin in std::fs::read_dir(&plugins).into_iter().flatten().flatten() {
            self.watcher.watch_dir(&plugin.path());
        }
    }

    /// A watched file changed: reconfigure every session that reads it.
    fn config_changed(self: &Arc<Self>, paths: &[PathBuf]) {
        // `~/.wave`, its plugins directory or a plugin may have just been created.
        self.watch_user_dirs();
        let affected: Vec<Arc<Session>> = self
            .lock()
            .sessions
            .values()
            .filter(|s| paths.iter().any(|p| s.depends_on(p)))
            .cloned()
            .collect();
        for session in affected {
            tracing::info!(session = %session.id, "MCP config changed; reloading");
            let registry = self.clone();
            tokio::spawn(async move { registry.reconfigure(&session).await });
        }
    }

    /// `shutdown`, `exit`, end of stdin: tears every session down, queued ones included, and
    /// accepts no new one. Idempotent.
    pub async fn shutdown(&self) {
        let sessions: Vec<Arc<Session>> = {
            let mut inner = self.lock();
            inner.closed = true;
            let mut all: Vec<Arc<Session>> =
                std::mem::take(&mut inner.sessions).into_values().collect();
            all.append(&mut inner.reclaim);
            all
        };
        self.watcher.stop();
        futures::future::join_all(sessions.iter().map(|s| s.teardown())).await;
    }
}

/// A history message as the chat view shows it (images are not carried). A call of a tool
/// that has an app names it (APPS-2), and its result message carries the full result (APPS-5).
pub(super) fn chat_message(message: Message, manager: &McpManager) -> ChatMessage {
    ChatMessage {
        role: match message.role {
            Role::User => ChatRole::User,
            Role::Assistant => ChatRole::Assistant,
            Role::Tool => ChatRole::Tool,
        },
        content: message.content,
        tool_calls: message
            .tool_calls
            .into_iter()
            .map(|call| ChatToolCall {
                app: app_of(manager, &call.name),
                id: call.id,
                name: call.name,
                arguments: call.arguments,
            })
            .collect(),
        tool_name: message.tool_name,
        is_error: message.is_error,
        is_meta: message.is_meta,
        tool_call_id: message.tool_call_id,
        app: message.app.map(|app| *app).map(|app| ChatAppResult {
            server: app.server,
            tool: app.tool,
            resource_uri: app.resource_uri,
            result: app.result,
        }),
    }
}

/// The app of the tool `full_name`, if it has one.
fn app_of(manager: &McpManager, full_name: &str) -> Option<ChatAppRef> {
    let tool = manager.tool(full_name)?;
    let resource_uri = tool.ui?.resource_uri?;
    Some(ChatAppRef {
        server: tool.server,
        tool: tool.name,
        resource_uri,
    })
}

/// `wave/mcp/logAppended` for each server's new log entries (SRV-2): what arrived together goes
/// out together, per server, in order.
async fn forward_logs(
    client: Client,
    session_id: String,
    mut appended: tokio::sync::broadcast::Receiver<(String, wave_mcp_manager::logs::LogEntry)>,
) {
    use tokio::sync::broadcast::error::{RecvError, TryRecvError};
    loop {
        let first = match appended.recv().await {
            Ok(first) => first,
            Err(RecvError::Lagged(missed)) => {
                tracing::debug!(session = %session_id, missed, "log entries not forwarded");
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        let mut batch = vec![first];
        loop {
            match appended.try_recv() {
                Ok(next) => batch.push(next),
                Err(TryRecvError::Lagged(_)) => continue,
                Err(_) => break,
            }
        }
        // Consecutive entries of one server go in one notification.
        let mut start = 0;
        while start < batch.len() {
            let name = batch[start].0.clone();
            let end = batch[start..]
                .iter()
                .position(|(server, _)| *server != name)
                .map_or(batch.len(), |n| start + n);
            let params = wave_mcp_protocol::McpLogAppendedParams {
                session_id: session_id.clone(),
                name,
                entries: batch[start..end]
                    .iter()
                    .map(|(_, entry)| crate::view::log_entry_view(entry))
                    .collect(),
            };
            client
                .send_notification::<wave_mcp_protocol::McpLogAppended>(params)
                .await;
            start = end;
        }
    }
}
