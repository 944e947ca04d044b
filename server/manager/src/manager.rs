//! [`McpManager`]: every configured server of one agent, its status, its live connection, and the
//! rules for when to dial (LAZY-*), when to stop (LIFE-*) and what to show (CACHE-*).
//!
//! All state sits behind one synchronous mutex that is never held across an await. Every change
//! bumps a version and publishes a full [`Snapshot`] on a `watch` channel. Each dial and each
//! connection belongs to a *generation* of its server; an event of an older generation (a late
//! dial result, a stale process exit) never touches the current one (LIFE-7).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::Error;
use crate::auth;
use crate::cache::{self, CacheFile, CacheKeyInput};
use crate::config::{self, ConfigProblem, ServerEntry, Source};
use crate::connection::{self, Connection, DialError, Dialed};
use crate::elicitation::{Elicitations, Elicitor};
use crate::login::{self, UrlOpener};
use crate::names;
use crate::switches::{self, ToolSwitches};

mod catalog;
pub use catalog::{Catalog, PromptArgumentSummary, PromptSummary, ResourceSummary};

/// Default time for spawn/dial + `initialize` + the first tool list.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time for one tool call without progress (`toolTimeoutSec`, LONG-4).
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(600);
/// Snapshots a subscriber may fall behind before it sees `Lagged`.
const SUBSCRIBER_BACKLOG: usize = 512;
/// Default time a stdio server gets between SIGTERM and SIGKILL.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Timeouts used when a server's config does not set its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub connect: Duration,
    pub tool_call: Duration,
    pub shutdown_grace: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: DEFAULT_CONNECT_TIMEOUT,
            tool_call: DEFAULT_TOOL_TIMEOUT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
        }
    }
}

/// How a dropped sse stream is re-dialed (LIFE-4): `initial_delay` doubling up to `max_delay`,
/// at most `attempts` tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconnectPolicy {
    pub initial_delay: Duration,
    pub max_delay: Duration,
    pub attempts: u32,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            initial_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            attempts: 5,
        }
    }
}

impl ReconnectPolicy {
    /// The wait before attempt `n` (0-based).
    pub fn delay(&self, n: u32) -> Duration {
        let factor = 2u32.saturating_pow(n);
        self.initial_delay
            .saturating_mul(factor)
            .min(self.max_delay)
    }
}

/// What a manager is created from.
#[derive(Debug, Clone, Default)]
pub struct ManagerOptions {
    /// The agent's working directory: project config, stdio servers' cwd, cache scope.
    pub workdir: PathBuf,
    /// Replaces the home directory (`~/.wave/...`); `None` = the user's home.
    pub home: Option<PathBuf>,
    /// Constructor-level `mcpServers` (highest precedence, CFG-2).
    pub servers: Map<String, Value>,
    pub timeouts: Timeouts,
    pub reconnect: ReconnectPolicy,
}

/// A server's connection state (LIFE-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Connected,
    Connecting,
    Reconnecting,
    Error,
    Disconnected,
    /// A remote server answered HTTP 401: it needs a sign-in (AUTH-1).
    #[serde(rename = "needs-auth")]
    NeedsAuth,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Connected => "connected",
            Status::Connecting => "connecting",
            Status::Reconnecting => "reconnecting",
            Status::Error => "error",
            Status::Disconnected => "disconnected",
            Status::NeedsAuth => "needs-auth",
        }
    }
}

/// A tool as shown in lists (live or from the cache).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSummary {
    pub name: String,
    pub full_name: String,
    pub description: Option<String>,
    /// Switched on by the entry's `enabledTools` / `disabledTools` (BUD-1).
    pub enabled: bool,
}

/// A callable tool of a live connection.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    pub server: String,
    /// The server's own name for the tool.
    pub name: String,
    /// `mcp__<server>__<tool>`: the name declared to the model and used to route calls.
    pub full_name: String,
    pub description: Option<String>,
    /// The input schema, cleaned for LLM APIs (TOOL-5).
    pub input_schema: Arc<Map<String, Value>>,
}

/// One server as lists show it. Config values are as written, never expanded (SEC-1).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSnapshot {
    pub name: String,
    pub source: Source,
    pub config_path: Option<PathBuf>,
    pub transport: String,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub url: Option<String>,
    pub status: Status,
    pub error: Option<String>,
    pub tools: Vec<ToolSummary>,
    /// The tools come from the snapshot cache, not from a live connection (CACHE-2).
    pub tools_from_cache: bool,
    pub last_connected_at: Option<DateTime<Utc>>,
    /// The `instructions` of the live connection, kept while reconnecting (INS-1, INS-2).
    pub instructions: Option<String>,
    /// Identifies the live connection: a new connection (reconnect included) gets a new id.
    pub connection_id: Option<u64>,
    /// Sign-in credentials are stored for this remote server (AUTH-3).
    pub signed_in: bool,
    /// Prompts, resources and resource templates, live or cached (PRM-1, PRM-3).
    pub catalog: Catalog,
}

/// Every server of a manager at one moment. `version` grows with every change.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    pub version: u64,
    pub servers: Vec<ServerSnapshot>,
}

impl Snapshot {
    /// The server named `name`, if it is configured.
    pub fn server(&self, name: &str) -> Option<&ServerSnapshot> {
        self.servers.iter().find(|s| s.name == name)
    }
}

/// Dials started by [`McpManager::start_turn_dials`]; they run whether or not this is awaited.
#[must_use = "await `settled` before building the turn's tool list"]
pub struct PendingDials(Vec<DialDone>);

impl PendingDials {
    /// How many servers are being dialed.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Resolves when every one of them is connected or failed.
    pub async fn settled(self) {
        futures::future::join_all(self.0).await;
    }
}

type DialDone = Shared<BoxFuture<'static, ()>>;

/// Where a tool call goes ([`McpManager::route`]).
enum Route {
    Live(LiveRoute),
    /// The server is reconnecting: wait for `reconnect` (bounded by `timeout`), then route again.
    Reconnecting {
        server: String,
        tool: String,
        reconnect: DialDone,
        timeout: Duration,
    },
}

struct LiveRoute {
    peer: rmcp::Peer<rmcp::RoleClient>,
    progress: crate::live::ProgressRoutes,
    server: String,
    tool: String,
    timeout: Duration,
}

/// The MCP servers of one agent. Cheap to clone; all clones share the same state.
#[derive(Clone)]
pub struct McpManager {
    shared: Arc<SharedState>,
}

struct SharedState {
    workdir: PathBuf,
    cache_path: PathBuf,
    /// `~/.wave/mcp-credentials.json` (AUTH-3).
    credentials_path: PathBuf,
    /// Where the spawn registry records this manager's process groups (REAP-1).
    run_dir: PathBuf,
    timeouts: Timeouts,
    reconnect: ReconnectPolicy,
    problems: Vec<ConfigProblem>,
    /// Home directory and constructor servers, for [`McpManager::reload`].
    config_inputs: (PathBuf, Map<String, Value>),
    state: Mutex<State>,
    /// The latest snapshot.
    latest: watch::Sender<Arc<Snapshot>>,
    /// Every snapshot, in order, for subscribers.
    events: broadcast::Sender<Arc<Snapshot>>,
    tasks: TaskTracker,
    root: CancellationToken,
    /// Tool-list refreshes announced by `tools/list_changed` and not finished yet (BUD-6).
    refreshing: watch::Sender<usize>,
    /// Who answers the servers' questions to the user (LONG-5).
    elicitations: Elicitations,
}

struct State {
    slots: Vec<Slot>,
    destroyed: bool,
    version: u64,
    cache: CacheFile,
    /// Canonical URLs with stored credentials, as last read from the credential file.
    signed_in: HashSet<String>,
    /// The sign-in running for a server; a newer one cancels it.
    logins: HashMap<String, CancellationToken>,
}

struct Slot {
    entry: ServerEntry,
    fingerprint: Option<String>,
    /// The credential-file key of a remote server: its canonical URL, variables expanded.
    credential_key: Option<String>,
    status: Status,
    error: Option<String>,
    generation: u64,
    /// Dialed at least once this session, by a turn or explicitly (LAZY-10).
    dialed: bool,
    /// Disconnected by the user; sticky until an explicit connect (LAZY-6).
    user_disconnected: bool,
    live: Option<Live>,
    /// While `reconnecting`: the dropped connection's tools and instructions (TOOL-7, INS-2).
    retained: Option<Retained>,
    dial: Option<InFlight>,
}

struct Retained {
    tools: Vec<McpTool>,
    instructions: Option<String>,
    connected_at: DateTime<Utc>,
}

struct Live {
    connection: Arc<Connection>,
    instructions: Option<String>,
    tools: Vec<McpTool>,
    connected_at: DateTime<Utc>,
    /// Prompts and resources, once listed (PRM-1).
    catalog: Option<Arc<Catalog>>,
}

struct InFlight {
    cancel: CancellationToken,
    done: DialDone,
}

impl McpManager {
    /// Reads the config and registers every server as `disconnected`. Spawns and dials nothing
    /// (LAZY-1, CFG-8); safe to call outside an async runtime.
    pub fn new(mut options: ManagerOptions) -> McpManager {
        options.workdir = absolute(&options.workdir);
        let home = options
            .home
            .or_else(dirs::home_dir)
            .map(|home| absolute(&home))
            .unwrap_or_else(|| options.workdir.clone());
        let loaded = config::load(&options.workdir, &home, &options.servers);
        let cache_path = cache::cache_path(&home);
        let cache = cache::read(&cache_path);
        let credentials_path = auth::credentials_path(&home);
        let signed_in = read_signed_in(&credentials_path);
        let slots = loaded
            .servers
            .into_iter()
            .map(|entry| Slot::new(entry, &options.workdir))
            .collect();
        let mut state = State {
            slots,
            destroyed: false,
            version: 0,
            cache,
            signed_in,
            logins: HashMap::new(),
        };
        let first = state.snapshot();
        let (latest, _) = watch::channel(Arc::new(first));
        let (events, _) = broadcast::channel(SUBSCRIBER_BACKLOG);
        McpManager {
            shared: Arc::new(SharedState {
                workdir: options.workdir,
                cache_path,
                credentials_path,
                run_dir: crate::registry::run_dir(&home),
                timeouts: options.timeouts,
                reconnect: options.reconnect,
                problems: loaded.problems,
                config_inputs: (home, options.servers),
                state: Mutex::new(state),
                latest,
                events,
                tasks: TaskTracker::new(),
                root: CancellationToken::new(),
                refreshing: watch::Sender::new(0),
                elicitations: Elicitations::default(),
            }),
        }
    }

    pub fn workdir(&self) -> &Path {
        &self.shared.workdir
    }

    /// Lets the servers ask the user (MCP elicitation, LONG-5): connections dialed from now on
    /// declare the `elicitation` capability and send their `elicitation/create` to `elicitor`.
    pub fn set_elicitor(&self, elicitor: Arc<dyn Elicitor>) {
        self.shared.elicitations.set(elicitor);
    }

    /// Config files that were skipped, each with the reason (CFG-4).
    pub fn config_problems(&self) -> &[ConfigProblem] {
        &self.shared.problems
    }

    /// The latest snapshot of every server (LIFE-1).
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.shared.latest.borrow().clone()
    }

    /// Every later status or tool change, in order, as a full snapshot. A receiver that falls
    /// more than a few hundred snapshots behind gets `Lagged` and should resync from
    /// [`McpManager::snapshot`].
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Snapshot>> {
        self.shared.events.subscribe()
    }

    /// Starts the dials a turn needs: every server never dialed and never disconnected by the
    /// user (LAZY-2, LAZY-4, LAZY-6, LAZY-10), all at once. `None` when there is nothing to dial:
    /// a synchronous check, so such a turn has no extra await (LAZY-9).
    pub fn start_turn_dials(&self) -> Option<PendingDials> {
        let mut state = self.shared.lock();
        if state.destroyed {
            return None;
        }
        let due: Vec<usize> = (0..state.slots.len())
            .filter(|&i| state.slots[i].due_for_auto_dial())
            .collect();
        if due.is_empty() {
            return None;
        }
        let dials = due
            .into_iter()
            .map(|i| self.shared.start_dial(&mut state, i))
            .collect();
        self.shared.publish(&mut state);
        Some(PendingDials(dials))
    }

    /// Connects `name` now, whatever the lazy rules say (LAZY-5, LIFE-2). Waits for the result.
    pub async fn connect(&self, name: &str) -> Result<(), Error> {
        let done = {
            let mut state = self.shared.lock();
            if state.destroyed {
                return Err(Error::Destroyed);
            }
            let index = state.index_of(name)?;
            let slot = &mut state.slots[index];
            slot.user_disconnected = false;
            if slot.status == Status::Connected {
                return Ok(());
            }
            if slot.status == Status::Reconnecting {
                // The user asked: dial now instead of waiting out the backoff.
                let _ = slot.stop(Status::Connecting);
            }
            match &slot.dial {
                Some(dial) => dial.done.clone(),
                None => {
                    let done = self.shared.start_dial(&mut state, index);
                    self.shared.publish(&mut state);
                    done
                }
            }
        };
        done.await;
        let state = self.shared.lock();
        if state.destroyed {
            return Err(Error::Destroyed);
        }
        let slot = &state.slots[state.index_of(name)?];
        match slot.status {
            Status::Connected => Ok(()),
            _ => Err(Error::Connect {
                server: name.to_string(),
                reason: slot
                    .error
                    .clone()
                    .unwrap_or_else(|| format!("server is {}", slot.status.as_str())),
            }),
        }
    }

    /// Ends the connection and its process tree; the server stays `disconnected` for the rest of
    /// the session unless connected explicitly (LAZY-6, LIFE-5, LIFE-6). The config is untouched.
    pub async fn disconnect(&self, name: &str) -> Result<(), Error> {
        let (live, dial) = {
            let mut state = self.shared.lock();
            if state.destroyed {
                return Err(Error::Destroyed);
            }
            let index = state.index_of(name)?;
            let slot = &mut state.slots[index];
            slot.user_disconnected = true;
            slot.dialed = true;
            let taken = slot.stop(Status::Disconnected);
            self.shared.publish(&mut state);
            taken
        };
        self.shared.finish_stopping(live, dial).await;
        Ok(())
    }

    /// Signs in to the remote server `name` (AUTH-2) and connects it. `open` shows the
    /// authorization URL to the user; sign-in waits `timeout` for the browser's callback. A newer
    /// `login` of the same server cancels this one ([`Error::SignInCancelled`]); so does dropping
    /// the future. Any failure leaves the stored credentials as they were (AUTH-8).
    pub async fn login(&self, name: &str, open: UrlOpener, timeout: Duration) -> Result<(), Error> {
        let failed = |reason: String| Error::SignIn {
            server: name.to_string(),
            reason,
        };
        let (entry, cancel) = {
            let mut state = self.shared.lock();
            if state.destroyed {
                return Err(Error::Destroyed);
            }
            let index = state.index_of(name)?;
            let entry = state.slots[index].entry.clone();
            let cancel = self.shared.root.child_token();
            if let Some(older) = state.logins.insert(name.to_string(), cancel.clone()) {
                older.cancel();
            }
            (entry, cancel)
        };
        let _forget = LoginGuard {
            shared: &self.shared,
            name,
            cancel: cancel.clone(),
        };
        let env = |var: &str| std::env::var(var).ok();
        let transport = config::resolve(&entry, &self.shared.workdir, &env).map_err(failed)?;
        let Some((url, oauth)) = transport.remote() else {
            return Err(failed(
                "it is a stdio server; sign-in is for remote (http, sse) servers".into(),
            ));
        };
        let Some(oauth) = oauth else {
            return Err(failed(
                "its entry sets its own `Authorization` header, which is used instead of OAuth"
                    .into(),
            ));
        };
        let path = &self.shared.credentials_path;
        tokio::select! {
            _ = cancel.cancelled() => return Err(Error::SignInCancelled(name.to_string())),
            result = login::sign_in(
                url, oauth, path, &open, timeout, (&self.shared.tasks, &self.shared.root),
            ) => result.map_err(failed)?,
        }
        tracing::info!(server = %name, "signed in to MCP server");
        self.refresh_signed_in();
        // A live connection still runs without the new tokens: reconnect it.
        let connected = {
            let state = self.shared.lock();
            let index = state.index_of(name)?;
            state.slots[index].status == Status::Connected
        };
        if connected {
            self.disconnect(name).await?;
        }
        self.connect(name).await
    }

    /// Disconnects `name` and deletes its stored credentials, revoking them first where the
    /// authorization server offers revocation (AUTH-5).
    pub async fn logout(&self, name: &str) -> Result<(), Error> {
        let key = {
            let mut state = self.shared.lock();
            if state.destroyed {
                return Err(Error::Destroyed);
            }
            let index = state.index_of(name)?;
            if let Some(running) = state.logins.remove(name) {
                running.cancel();
            }
            state.slots[index].credential_key.clone()
        };
        self.disconnect(name).await?;
        if let Some(key) = key {
            let path = self.shared.credentials_path.clone();
            let removed = {
                let path = path.clone();
                tokio::task::spawn_blocking(move || {
                    auth::update(&path, |servers| servers.remove(&key))
                })
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r)
            };
            let removed = removed.map_err(|reason| Error::Credentials { path, reason })?;
            if let Some(record) = removed {
                login::revoke(&record).await;
            }
        }
        self.refresh_signed_in();
        Ok(())
    }

    /// Rereads which servers have stored credentials and publishes the change.
    fn refresh_signed_in(&self) {
        let signed_in = read_signed_in(&self.shared.credentials_path);
        let mut state = self.shared.lock();
        if state.signed_in != signed_in {
            state.signed_in = signed_in;
            self.shared.publish(&mut state);
        }
    }

    /// Resolves when every tool-list refresh announced so far has finished; `None` (nothing to
    /// await) when none is running. A model request built after it declares the new lists
    /// (BUD-6).
    pub fn tool_lists_settled(&self) -> Option<impl std::future::Future<Output = ()> + use<>> {
        if *self.shared.refreshing.borrow() == 0 {
            return None;
        }
        let mut counter = self.shared.refreshing.subscribe();
        Some(async move {
            let _ = counter.wait_for(|running| *running == 0).await;
        })
    }

    /// Tools of live connections, and of connections being re-established (TOOL-7), in config
    /// order. Never tools from the cache (CACHE-7).
    pub fn tools(&self) -> Vec<McpTool> {
        let state = self.shared.lock();
        state
            .slots
            .iter()
            .flat_map(|slot| {
                let switches = slot.switches();
                slot.current_tools()
                    .iter()
                    .filter(move |t| switches.allows(&t.name))
                    .cloned()
            })
            .collect()
    }

    /// Like [`McpManager::tools`], with the tools switched off by `enabledTools` /
    /// `disabledTools` too, each with whether it is switched on (BUD-1: the CLI lists them all).
    pub fn all_tools(&self) -> Vec<(McpTool, bool)> {
        let state = self.shared.lock();
        state
            .slots
            .iter()
            .flat_map(|slot| {
                let switches = slot.switches();
                slot.current_tools()
                    .iter()
                    .map(move |t| (t.clone(), switches.allows(&t.name)))
            })
            .collect()
    }

    /// The servers whose entry sets `alwaysLoad: true` (BUD-5).
    pub fn always_loaded(&self) -> HashSet<String> {
        let state = self.shared.lock();
        state
            .slots
            .iter()
            .filter(|slot| slot.entry.config.as_ref().is_ok_and(|c| c.always_load))
            .map(|slot| slot.entry.name.clone())
            .collect()
    }

    /// The server and the tool's own name behind a full name, among the tools of [`McpManager::tools`];
    /// `None` for an unknown name. Cheaper than searching `tools()`: nothing but the two names is
    /// copied.
    pub fn tool_owner(&self, full_name: &str) -> Option<(String, String)> {
        let state = self.shared.lock();
        state.slots.iter().find_map(|slot| {
            let tool = slot
                .current_tools()
                .iter()
                .find(|t| t.full_name == full_name)?;
            Some((slot.entry.name.clone(), tool.name.clone()))
        })
    }

    /// The rmcp peer of `server`'s live connection; `None` unless it is connected. Read-only:
    /// for callers that measure or diagnose the connection itself (the benchmarks compare a
    /// direct `call_tool` on it with the agent's execution funnel). Tool calls should go
    /// through [`McpManager::call_tool`].
    pub fn peer(&self, server: &str) -> Option<rmcp::Peer<rmcp::RoleClient>> {
        let state = self.shared.lock();
        let slot = state.slots.iter().find(|s| s.entry.name == server)?;
        slot.live.as_ref().map(|live| live.connection.peer.clone())
    }

    /// Calls a tool by its full name (TOOL-3, TOOL-6); the server is found by that name alone.
    /// A call to a server that is `reconnecting` waits for the reconnect, bounded by the call
    /// timeout, and fails with [`Error::Reconnecting`] if it does not come back (TOOL-7).
    pub async fn call_tool(
        &self,
        full_name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<CallToolResult, Error> {
        self.call_tool_with(full_name, arguments, &crate::live::CallHooks::default())
            .await
    }

    /// [`McpManager::call_tool`] with progress and cancel hooks (LONG-2, LONG-3). The call's
    /// timeout restarts with each progress notification (LONG-4).
    pub async fn call_tool_with(
        &self,
        full_name: &str,
        arguments: Option<Map<String, Value>>,
        hooks: &crate::live::CallHooks,
    ) -> Result<CallToolResult, Error> {
        let live = match self.route(full_name)? {
            Route::Live(live) => live,
            Route::Reconnecting {
                server,
                tool,
                reconnect,
                timeout,
            } => {
                let came_back = tokio::time::timeout(timeout, reconnect).await.is_ok();
                match (came_back, self.route(full_name)) {
                    (true, Ok(Route::Live(live))) => live,
                    (false, _) | (_, Ok(Route::Reconnecting { .. })) => {
                        return Err(Error::Reconnecting { server, tool });
                    }
                    // Back, but the reconnect failed (or the tool is gone).
                    (true, Err(e)) => match self.failure_of(&server) {
                        Some(reason) => return Err(Error::Connect { server, reason }),
                        None => return Err(e),
                    },
                }
            }
        };
        let LiveRoute {
            peer,
            progress,
            server,
            tool,
            timeout,
        } = live;
        let mut params = CallToolRequestParams::new(tool.clone());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let target = crate::live::Target {
            peer: &peer,
            routes: &progress,
            server: &server,
            tool: &tool,
            timeout,
        };
        crate::live::call(target, params, hooks).await
    }

    /// The reason a server is in `error`, if it is.
    fn failure_of(&self, server: &str) -> Option<String> {
        let state = self.shared.lock();
        let slot = &state.slots[state.index_of(server).ok()?];
        match slot.status {
            Status::Error => slot.error.clone(),
            _ => None,
        }
    }

    /// Where a call of `full_name` goes, found under one lock: a live connection, or a
    /// `reconnecting` server whose retained tools include it (TOOL-7).
    fn route(&self, full_name: &str) -> Result<Route, Error> {
        let state = self.shared.lock();
        if state.destroyed {
            return Err(Error::Destroyed);
        }
        for slot in &state.slots {
            if let Some(tool) = slot
                .current_tools()
                .iter()
                .find(|t| t.full_name == full_name)
                && !slot.switches().allows(&tool.name)
            {
                // BUD-1: a switched-off tool is not callable.
                return Err(Error::ToolDisabled {
                    server: slot.entry.name.clone(),
                    tool: tool.name.clone(),
                });
            }
            let timeout = || self.shared.tool_timeout_for(&slot.entry);
            if let Some(live) = &slot.live
                && let Some(tool) = live.tools.iter().find(|t| t.full_name == full_name)
            {
                return Ok(Route::Live(LiveRoute {
                    peer: live.connection.peer.clone(),
                    progress: live.connection.progress.clone(),
                    server: slot.entry.name.clone(),
                    tool: tool.name.clone(),
                    timeout: timeout(),
                }));
            }
            if let (Some(retained), Some(dial)) = (&slot.retained, &slot.dial)
                && let Some(tool) = retained.tools.iter().find(|t| t.full_name == full_name)
            {
                return Ok(Route::Reconnecting {
                    server: slot.entry.name.clone(),
                    tool: tool.name.clone(),
                    reconnect: dial.done.clone(),
                    timeout: timeout(),
                });
            }
        }
        Err(Error::UnknownTool(full_name.to_string()))
    }

    /// Disconnects everything, cancels dials in flight (their results are closed as they
    /// arrive, LAZY-7) and refuses to dial from then on. Idempotent (LIFE-8).
    pub async fn cleanup(&self) {
        let stopping: Vec<_> = {
            let mut state = self.shared.lock();
            state.destroyed = true;
            self.shared.root.cancel();
            let stopping = state
                .slots
                .iter_mut()
                .map(|slot| slot.stop(Status::Disconnected))
                .collect();
            self.shared.publish(&mut state);
            stopping
        };
        let shared = &self.shared;
        futures::future::join_all(
            stopping
                .into_iter()
                .map(|(live, dial)| shared.finish_stopping(live, dial)),
        )
        .await;
        self.shared.tasks.close();
        self.shared.tasks.wait().await;
    }

    /// How many of the manager's background tasks (dials, reconnects, connection watchers,
    /// cache writes) are alive now. Every process the manager starts is started by one of them,
    /// so zero means nothing is pending that could start one later: the sync point tests use
    /// to assert "nothing was spawned" without waiting for a while first (LAZY-1, LAZY-9).
    pub fn background_tasks(&self) -> usize {
        self.shared.tasks.len()
    }

    /// Whether [`McpManager::cleanup`] ran.
    pub fn is_destroyed(&self) -> bool {
        self.shared.lock().destroyed
    }

    /// Re-reads the config from the same sources and applies the difference (a watched config
    /// file changed): a new server appears `disconnected`; a removed one is torn down and leaves
    /// the list; a changed one gets a fresh slot and, only if it was connected (or connecting),
    /// is dialed again once its old process tree is reaped. Unchanged servers keep their
    /// connection. A file that was readable at creation and is not now (half-written, broken)
    /// leaves everything as it is. Publishes only when something changed; waits for the
    /// teardowns and the re-dials. Does nothing after [`McpManager::cleanup`].
    pub async fn reload(&self) {
        let shared = &self.shared;
        let (home, constructor) = &shared.config_inputs;
        let loaded = config::load(&shared.workdir, home, constructor);
        let known = |p: &ConfigProblem| shared.problems.iter().any(|k| k.path == p.path);
        if let Some(problem) = loaded.problems.iter().find(|p| !known(p)) {
            tracing::warn!("keeping the MCP servers as they are: {problem}");
            return;
        }
        let (stopping, redial, configured) = {
            let mut state = shared.lock();
            if state.destroyed {
                return;
            }
            let mut old = std::mem::take(&mut state.slots);
            let mut stopping = Vec::new();
            let mut redial = Vec::new();
            let mut changed = false;
            for entry in loaded.servers {
                let Some(at) = old.iter().position(|s| s.entry.name == entry.name) else {
                    changed = true;
                    state.slots.push(Slot::new(entry, &shared.workdir));
                    continue;
                };
                let mut slot = old.remove(at);
                if slot.entry == entry {
                    state.slots.push(slot);
                    continue;
                }
                if switches::same_connection(&slot.entry, &entry) {
                    // BUD-2: only the tool switches changed; the connection stays.
                    changed = true;
                    slot.entry = entry;
                    state.slots.push(slot);
                    continue;
                }
                changed = true;
                let was_connected = matches!(
                    slot.status,
                    Status::Connected | Status::Connecting | Status::Reconnecting
                );
                stopping.push(slot.stop(Status::Disconnected));
                let mut fresh = Slot::new(entry, &shared.workdir);
                // Later than every event of the old slot's connections (LIFE-7).
                fresh.generation = slot.generation;
                fresh.user_disconnected = slot.user_disconnected;
                if was_connected && fresh.entry.config.is_ok() {
                    redial.push((fresh.entry.name.clone(), fresh.generation));
                }
                state.slots.push(fresh);
            }
            for mut slot in old {
                changed = true;
                stopping.push(slot.stop(Status::Disconnected));
            }
            if !changed {
                return;
            }
            shared.publish(&mut state);
            (stopping, redial, state.configured())
        };
        // CACHE-4: entries of servers that left the config (or whose entry changed) leave the
        // cache file now, not only at the next connect. Awaited, so nothing is left pending.
        let (path, workdir) = (shared.cache_path.clone(), shared.workdir.clone());
        let pruned =
            tokio::task::spawn_blocking(move || cache::prune(&path, &workdir, &configured)).await;
        if let Ok(Err(e)) = pruned {
            tracing::debug!("cannot prune the MCP tool cache: {e}");
        }
        futures::future::join_all(
            stopping
                .into_iter()
                .map(|(live, dial)| shared.finish_stopping(live, dial)),
        )
        .await;
        let dials: Vec<DialDone> = {
            let mut state = shared.lock();
            if state.destroyed {
                return;
            }
            // Only slots nobody touched meanwhile (an explicit connect may have dialed already).
            let due: Vec<usize> = redial
                .iter()
                .filter_map(|(name, generation)| {
                    let index = state.index_of(name).ok()?;
                    let slot = &state.slots[index];
                    let untouched = slot.generation == *generation && slot.dial.is_none();
                    (untouched && slot.status == Status::Disconnected).then_some(index)
                })
                .collect();
            if due.is_empty() {
                return;
            }
            let dials = due
                .into_iter()
                .map(|index| shared.start_dial(&mut state, index))
                .collect();
            shared.publish(&mut state);
            dials
        };
        futures::future::join_all(dials).await;
    }
}

impl Slot {
    fn new(entry: ServerEntry, workdir: &Path) -> Slot {
        let fingerprint = entry.config.as_ref().ok().map(|c| {
            cache::fingerprint(&CacheKeyInput {
                name: &entry.name,
                workdir,
                transport: &c.transport_label(),
                command: c.command.as_deref(),
                args: &c.args,
                url: c.url.as_deref(),
                env: &c.env,
                headers: &c.headers,
            })
        });
        // An entry that cannot be read is an error from the start, with the file and field.
        let (status, error) = match &entry.config {
            Ok(_) => (Status::Disconnected, None),
            Err(e) => (Status::Error, Some(e.clone())),
        };
        let credential_key = entry
            .config
            .as_ref()
            .ok()
            .filter(|c| c.transport_label() != "stdio")
            .and_then(|c| c.url.as_deref())
            .and_then(|url| config::expand(url, &|var| std::env::var(var).ok()).ok())
            .and_then(|url| auth::canonical_url(&url).ok());
        Slot {
            entry,
            fingerprint,
            credential_key,
            status,
            error,
            generation: 0,
            dialed: false,
            user_disconnected: false,
            live: None,
            retained: None,
            dial: None,
        }
    }

    /// The entry's `enabledTools` / `disabledTools` (every tool for an unreadable entry).
    fn switches(&self) -> &ToolSwitches {
        static ALL: ToolSwitches = ToolSwitches::All;
        match &self.entry.config {
            Ok(config) => &config.tool_switches,
            Err(_) => &ALL,
        }
    }

    fn current_tools(&self) -> &[McpTool] {
        match (&self.live, &self.retained) {
            (Some(live), _) => &live.tools,
            (None, Some(retained)) => &retained.tools,
            (None, None) => &[],
        }
    }

    fn due_for_auto_dial(&self) -> bool {
        !self.dialed
            && !self.user_disconnected
            && self.status == Status::Disconnected
            && self.entry.config.is_ok()
    }

    /// Leaves the current generation behind: takes the connection and any dial in flight.
    fn stop(&mut self, status: Status) -> (Option<Live>, Option<InFlight>) {
        self.generation += 1;
        self.status = status;
        self.error = None;
        self.retained = None;
        let dial = self.dial.take();
        if let Some(dial) = &dial {
            dial.cancel.cancel();
        }
        (self.live.take(), dial)
    }

    fn snapshot(&self, cache: &CacheFile, signed_in: &HashSet<String>) -> ServerSnapshot {
        let config = self.entry.config.as_ref().ok();
        let cached = match (&self.live, &self.retained, &self.fingerprint) {
            (None, None, Some(fingerprint)) => cache.lookup(&self.entry.name, fingerprint),
            _ => None,
        };
        let current = self
            .live
            .as_ref()
            .map(|l| (&l.tools, l.connected_at, &l.instructions))
            .or_else(|| {
                let r = self.retained.as_ref()?;
                Some((&r.tools, r.connected_at, &r.instructions))
            });
        let (tools, last_connected_at) = match (current, cached) {
            (Some((tools, connected_at, _)), _) => (
                tools
                    .iter()
                    .map(|t| ToolSummary {
                        name: t.name.clone(),
                        full_name: t.full_name.clone(),
                        description: t.description.clone(),
                        enabled: self.switches().allows(&t.name),
                    })
                    .collect(),
                Some(connected_at),
            ),
            (None, Some(entry)) => (
                entry
                    .tools
                    .iter()
                    .map(|t| ToolSummary {
                        name: t.name.clone(),
                        full_name: names::full_tool_name(&self.entry.name, &t.name),
                        description: t.description.clone(),
                        enabled: self.switches().allows(&t.name),
                    })
                    .collect(),
                Some(entry.last_connected_at),
            ),
            (None, None) => (Vec::new(), None),
        };
        ServerSnapshot {
            name: self.entry.name.clone(),
            source: self.entry.source,
            config_path: self.entry.config_path.clone(),
            transport: config.map_or_else(|| "unknown".into(), |c| c.transport_label()),
            command: config.and_then(|c| c.command.clone()),
            args: config.map(|c| c.args.clone()).unwrap_or_default(),
            url: config.and_then(|c| c.url.clone()),
            status: self.status,
            error: self.error.clone(),
            tools,
            tools_from_cache: current.is_none() && cached.is_some(),
            last_connected_at,
            instructions: current.and_then(|(_, _, text)| text.clone()),
            connection_id: self.live.as_ref().map(|_| self.generation),
            signed_in: self
                .credential_key
                .as_ref()
                .is_some_and(|key| signed_in.contains(key)),
            catalog: self.catalog_view(cache),
        }
    }
}

impl State {
    fn index_of(&self, name: &str) -> Result<usize, Error> {
        self.slots
            .iter()
            .position(|s| s.entry.name == name)
            .ok_or_else(|| Error::UnknownServer(name.to_string()))
    }

    fn snapshot(&mut self) -> Snapshot {
        self.version += 1;
        Snapshot {
            version: self.version,
            servers: self
                .slots
                .iter()
                .map(|s| s.snapshot(&self.cache, &self.signed_in))
                .collect(),
        }
    }

    /// `(server, fingerprint)` of every readable entry: what a cache writer keeps for this workdir.
    fn configured(&self) -> Vec<(String, String)> {
        self.slots
            .iter()
            .filter_map(|s| Some((s.entry.name.clone(), s.fingerprint.clone()?)))
            .collect()
    }

    /// Full names in use by other servers' live tools.
    fn names_taken_except(&self, server: &str) -> HashSet<String> {
        self.slots
            .iter()
            .filter(|s| s.entry.name != server)
            .filter_map(|s| s.live.as_ref())
            .flat_map(|l| l.tools.iter().map(|t| t.full_name.clone()))
            .collect()
    }
}

impl SharedState {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn publish(&self, state: &mut State) {
        let snapshot = Arc::new(state.snapshot());
        self.latest.send_replace(snapshot.clone());
        let _ = self.events.send(snapshot);
    }

    /// Marks the slot `connecting` under a new generation and spawns its dial.
    fn start_dial(self: &Arc<Self>, state: &mut State, index: usize) -> DialDone {
        let slot = &mut state.slots[index];
        slot.generation += 1;
        slot.dialed = true;
        slot.status = Status::Connecting;
        slot.error = None;
        self.start_task(state, index, run_dial)
    }

    /// Spawns a dial-like task for the slot's current generation and records it as in flight.
    fn start_task<F, Fut>(self: &Arc<Self>, state: &mut State, index: usize, task: F) -> DialDone
    where
        F: FnOnce(Arc<SharedState>, ServerEntry, u64, CancellationToken) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let slot = &mut state.slots[index];
        let cancel = self.root.child_token();
        let handle = self.tasks.spawn(task(
            self.clone(),
            slot.entry.clone(),
            slot.generation,
            cancel.clone(),
        ));
        let done = async move {
            let _ = handle.await;
        }
        .boxed()
        .shared();
        slot.dial = Some(InFlight {
            cancel,
            done: done.clone(),
        });
        done
    }

    /// The second half of a stop: close what [`Slot::stop`] took, outside the lock.
    async fn finish_stopping(&self, live: Option<Live>, dial: Option<InFlight>) {
        if let Some(live) = live {
            live.connection.close(self.timeouts.shutdown_grace).await;
        }
        if let Some(dial) = dial {
            dial.done.await;
        }
    }

    fn tool_timeout_for(&self, entry: &ServerEntry) -> Duration {
        entry
            .config
            .as_ref()
            .ok()
            .and_then(|c| c.tool_timeout)
            .unwrap_or(self.timeouts.tool_call)
    }

    fn timeouts_for(&self, entry: &ServerEntry) -> Duration {
        entry
            .config
            .as_ref()
            .ok()
            .and_then(|c| c.connect_timeout)
            .unwrap_or(self.timeouts.connect)
    }

    /// Stores a fresh tool list for the current generation and records it in the cache.
    fn install_tools(&self, state: &mut State, index: usize, tools: Vec<Tool>) {
        let name = state.slots[index].entry.name.clone();
        let mut taken = state.names_taken_except(&name);
        let tools = to_mcp_tools(&name, tools, &mut taken);
        let slot = &mut state.slots[index];
        let Some(live) = slot.live.as_mut() else {
            return;
        };
        live.tools = tools;
        self.record_cache(state, index);
    }
}

/// One spelling per directory: absolute (EDIT-2) and canonical where it exists, so `W`, `W/`
/// and `W/.` share config paths and cache entries.
fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

fn to_mcp_tools(server: &str, tools: Vec<Tool>, taken: &mut HashSet<String>) -> Vec<McpTool> {
    tools
        .into_iter()
        .map(|tool| {
            let name = tool.name.to_string();
            let mut full_name = names::full_tool_name(server, &name);
            if !taken.insert(full_name.clone()) {
                full_name = names::disambiguated_tool_name(server, &name);
                taken.insert(full_name.clone());
            }
            McpTool {
                server: server.to_string(),
                full_name,
                description: tool.description.map(|d| d.to_string()),
                input_schema: Arc::new(names::clean_schema(&tool.input_schema)),
                name,
            }
        })
        .collect()
}

/// Resolves and dials one entry. `None` when cancelled: the dial future is dropped, which kills
/// whatever it had spawned (LAZY-7).
async fn dial_entry(
    shared: &Arc<SharedState>,
    entry: &ServerEntry,
    generation: u64,
    cancel: &CancellationToken,
) -> Option<Result<Dialed, DialError>> {
    let tools_changed = tools_changed_hook(Arc::downgrade(shared), entry.name.clone(), generation);
    let catalog_changed =
        catalog::catalog_changed_hook(Arc::downgrade(shared), entry.name.clone(), generation);
    let env = |var: &str| std::env::var(var).ok();
    let transport = match config::resolve(entry, &shared.workdir, &env) {
        Ok(transport) => transport,
        Err(reason) => return Some(Err(DialError::Config(reason))),
    };
    let timeout = shared.timeouts_for(entry);
    let dial = connection::dial(
        transport,
        (tools_changed, catalog_changed),
        shared.elicitations.hook(
            &entry.name,
            login::Browser::new(shared.tasks.clone(), shared.root.child_token()),
        ),
        timeout,
        &shared.credentials_path,
        &shared.run_dir,
        &shared.tasks,
    );
    tokio::select! {
        _ = cancel.cancelled() => None,
        result = dial => Some(result),
    }
}

async fn run_dial(
    shared: Arc<SharedState>,
    entry: ServerEntry,
    generation: u64,
    cancel: CancellationToken,
) {
    match dial_entry(&shared, &entry, generation, &cancel).await {
        None => {}
        Some(Ok(dialed)) => install_connection(&shared, &entry.name, generation, dialed).await,
        Some(Err(error)) => fail(&shared, &entry.name, generation, error),
    }
}

/// Re-dials a dropped sse connection with exponential backoff (LIFE-4). A user disconnect or a
/// destroy cancels it between or during attempts, and no attempt follows (LIFE-5).
async fn run_reconnect(
    shared: Arc<SharedState>,
    entry: ServerEntry,
    generation: u64,
    cancel: CancellationToken,
) {
    let policy = shared.reconnect;
    let mut last_reason = String::from("no attempt was made");
    for attempt in 0..policy.attempts {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(policy.delay(attempt)) => {}
        }
        tracing::info!(server = %entry.name, attempt = attempt + 1, "reconnecting MCP server");
        match dial_entry(&shared, &entry, generation, &cancel).await {
            None => return,
            Some(Ok(dialed)) => {
                return install_connection(&shared, &entry.name, generation, dialed).await;
            }
            // A sign-in is needed: retrying cannot help (AUTH-1).
            Some(Err(error)) if error.needs_auth() => {
                return fail(&shared, &entry.name, generation, error);
            }
            Some(Err(error)) => last_reason = error.to_string(),
        }
    }
    let error = DialError::ReconnectFailed {
        attempts: policy.attempts,
        last: last_reason,
    };
    fail(&shared, &entry.name, generation, error);
}

/// `error` (or `needs-auth`) with the reason, if `generation` is still the slot's.
fn fail(shared: &SharedState, name: &str, generation: u64, error: DialError) {
    let (status, reason) = match error.needs_auth() {
        true => (
            Status::NeedsAuth,
            format!(
                "{error}; sign in with `wave-mcp login {name}` or \"Sign in\" on the settings page"
            ),
        ),
        false => (Status::Error, error.to_string()),
    };
    tracing::warn!(server = %name, "MCP server failed to connect: {reason}");
    let mut state = shared.lock();
    let Ok(index) = state.index_of(name) else {
        return;
    };
    if state.destroyed || state.slots[index].generation != generation {
        return;
    }
    let slot = &mut state.slots[index];
    slot.dial = None;
    slot.retained = None;
    slot.status = status;
    slot.error = Some(reason);
    shared.publish(&mut state);
}

/// The signed-in servers of the credential file; a file that cannot be read counts as none
/// (a dial then reports it, naming the file).
fn read_signed_in(path: &Path) -> HashSet<String> {
    auth::signed_in_keys(path).unwrap_or_else(|e| {
        tracing::warn!("{e}");
        HashSet::new()
    })
}

async fn install_connection(
    shared: &Arc<SharedState>,
    name: &str,
    generation: u64,
    dialed: Dialed,
) {
    let Dialed {
        connection,
        instructions,
        tools,
        exited,
        dropped,
    } = dialed;
    {
        let mut state = shared.lock();
        let index = state.index_of(name).ok();
        let current = index.filter(|&i| state.slots[i].generation == generation);
        if let (false, Some(index)) = (state.destroyed, current) {
            let slot = &mut state.slots[index];
            slot.dial = None;
            slot.retained = None;
            slot.status = Status::Connected;
            slot.error = None;
            slot.live = Some(Live {
                connection: connection.clone(),
                instructions,
                tools: Vec::new(),
                connected_at: Utc::now(),
                catalog: None,
            });
            shared.install_tools(&mut state, index, tools);
            shared.publish(&mut state);
            catalog::start_refresh(shared, name, generation);
            tracing::info!(server = %name, "MCP server connected");
            let stderr = connection.stderr().cloned();
            if let Some(exited) = exited {
                let reason = exited.map(move |exit| {
                    let exit = exit.ok()?.to_string();
                    Some(match &stderr {
                        Some(stderr) => connection::with_stderr(exit, stderr),
                        None => exit,
                    })
                });
                let lost = Lost::Exited;
                shared
                    .tasks
                    .spawn(watch_loss(shared, name, generation, lost, reason.boxed()));
            }
            if let Some(dropped) = dropped {
                let reason = dropped.map(Result::ok).boxed();
                let lost = Lost::Dropped;
                shared
                    .tasks
                    .spawn(watch_loss(shared, name, generation, lost, reason));
            }
            return;
        }
    }
    // Destroyed or superseded while dialing: close the result at once (LAZY-7, LIFE-7).
    tracing::debug!(server = %name, "closing a connection that arrived after its dial was abandoned");
    connection.close(shared.timeouts.shutdown_grace).await;
}

/// Forgets a finished sign-in, unless a newer one has replaced it.
struct LoginGuard<'a> {
    shared: &'a SharedState,
    name: &'a str,
    cancel: CancellationToken,
}

impl Drop for LoginGuard<'_> {
    fn drop(&mut self) {
        // Cancelled means replaced by a newer sign-in or removed by a logout: that entry stays.
        if !self.cancel.is_cancelled() {
            self.shared.lock().logins.remove(self.name);
        }
    }
}

/// How a live connection was lost without anyone asking.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lost {
    /// A stdio server's process ended: `error` (LIFE-3).
    Exited,
    /// An sse stream ended: `reconnecting`, tools and instructions kept (LIFE-4, TOOL-7).
    Dropped,
}

/// Waits for `signal` (a reason, or `None` for a teardown we asked for) and applies the loss if
/// it still concerns the current generation (LIFE-7).
fn watch_loss(
    shared: &Arc<SharedState>,
    name: &str,
    generation: u64,
    lost: Lost,
    signal: BoxFuture<'static, Option<String>>,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let shared = Arc::downgrade(shared);
    let name = name.to_string();
    async move {
        let Some(reason) = signal.await else {
            return;
        };
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let live = {
            let mut state = shared.lock();
            let Ok(index) = state.index_of(&name) else {
                return;
            };
            if state.destroyed || state.slots[index].generation != generation {
                // LIFE-7: an older connection's exit or close changes nothing.
                tracing::debug!(server = %name, generation, "ignoring the loss of an older connection: {reason}");
                return;
            }
            let Some(live) = state.slots[index].live.take() else {
                return;
            };
            tracing::warn!(server = %name, "MCP server connection lost: {reason}");
            let slot = &mut state.slots[index];
            slot.generation += 1;
            match lost {
                Lost::Exited => {
                    slot.status = Status::Error;
                    slot.error = Some(reason);
                }
                Lost::Dropped => {
                    slot.status = Status::Reconnecting;
                    slot.error = None;
                    slot.retained = Some(Retained {
                        tools: live.tools.clone(),
                        instructions: live.instructions.clone(),
                        connected_at: live.connected_at,
                    });
                    let _reconnect = shared.start_task(&mut state, index, run_reconnect);
                }
            }
            shared.publish(&mut state);
            live
        };
        live.connection.close(shared.timeouts.shutdown_grace).await;
    }
}

/// Ends one counted refresh, however its task ends.
struct RefreshGuard(Arc<SharedState>);

impl Drop for RefreshGuard {
    fn drop(&mut self) {
        self.0
            .refreshing
            .send_modify(|running| *running = running.saturating_sub(1));
    }
}

/// Refreshes a server's tools when it announces `tools/list_changed` (CACHE-5). The refresh is a
/// task of the manager's tracker, so `cleanup` awaits it like every other task.
fn tools_changed_hook(
    shared: Weak<SharedState>,
    name: String,
    generation: u64,
) -> connection::ToolsChanged {
    Arc::new(move || {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let name = name.clone();
        let tasks = shared.tasks.clone();
        // Counted from the notification on, so the next model request waits for it (BUD-6).
        shared.refreshing.send_modify(|running| *running += 1);
        let refreshing = RefreshGuard(shared.clone());
        tasks.spawn(async move {
            let _refreshing = refreshing;
            let peer = {
                let state = shared.lock();
                let slot = state.index_of(&name).ok().map(|i| &state.slots[i]);
                match slot.filter(|s| s.generation == generation) {
                    Some(slot) => slot.live.as_ref().map(|l| l.connection.peer.clone()),
                    None => None,
                }
            };
            let Some(peer) = peer else {
                return;
            };
            let Ok(tools) = peer.list_all_tools().await else {
                return;
            };
            let mut state = shared.lock();
            let Ok(index) = state.index_of(&name) else {
                return;
            };
            if state.slots[index].generation != generation {
                return;
            }
            shared.install_tools(&mut state, index, tools);
            shared.publish(&mut state);
        });
    })
}
