//! [`McpManager`]: every configured server of one agent, its status, its live connection, and the
//! rules for when to dial (LAZY-*), when to stop (LIFE-*) and what to show (CACHE-*).
//!
//! All state sits behind one synchronous mutex that is never held across an await. Every change
//! bumps a version and publishes a full [`Snapshot`] on a `watch` channel. Each dial and each
//! connection belongs to a *generation* of its server; an event of an older generation (a late
//! dial result, a stale process exit) never touches the current one (LIFE-7).
//!
//! This file holds the public API and the shared state; `types` the public value types, `slot`
//! the per-server slot and its transitions, `dial` dialing, reconnect and connection loss,
//! `catalog` prompts and resources.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Map, Value};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::auth;
use crate::cache;
use crate::config::{self, ConfigProblem, ServerEntry};
use crate::elicitation::{Elicitations, Elicitor};
use crate::login::{self, UrlOpener};
use crate::switches;
use crate::trust::{ServerApproval, TrustStore};

mod app;
mod approval;
mod catalog;
pub use catalog::{Catalog, PromptArgumentSummary, PromptSummary, ResourceSummary};
mod dial;
mod slot;
mod types;

use slot::{Slot, State};
use types::DialDone;
pub use types::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_SHUTDOWN_GRACE, DEFAULT_TOOL_TIMEOUT, ManagerOptions, McpTool,
    PendingDials, ReconnectPolicy, ServerSnapshot, Snapshot, Status, Timeouts, ToolSummary,
};

/// Snapshots a subscriber may fall behind before it sees `Lagged`.
const SUBSCRIBER_BACKLOG: usize = 512;

/// After this long, a cleanup still waiting names the background tasks it waits for.
const CLEANUP_REPORT_AFTER: Duration = Duration::from_secs(15);

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
    legacy_tasks: crate::tasks::Legacy,
    elicitation: Option<crate::elicitation::ElicitationHook>,
    server: String,
    tool: String,
    output: Option<Arc<crate::output::OutputSchema>>,
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
    tasks: crate::background::Background,
    root: CancellationToken,
    /// Tool-list refreshes announced by `tools/list_changed` and not finished yet (BUD-6).
    refreshing: watch::Sender<usize>,
    /// Who answers the servers' questions to the user (LONG-5).
    elicitations: Elicitations,
    /// The host can show MCP Apps: dials declare `io.modelcontextprotocol/ui` (APPS-1).
    pub(crate) apps: std::sync::atomic::AtomicBool,
    /// The user's approvals and tool permissions for this project (TRUST-2).
    trust: TrustStore,
    /// The IDE does not trust the project: no project server runs (TRUST-9).
    untrusted: std::sync::atomic::AtomicBool,
    /// One reload at a time (a config change, an approval, a trust change).
    reloading: tokio::sync::Mutex<()>,
    /// What `roots/list` answers (SRV-1).
    roots: crate::roots::Roots,
    /// Each server's log (SRV-2).
    logs: crate::logs::Logs,
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
        let trust = TrustStore::new(&home, &options.workdir);
        let arranged = approval::arrange(
            loaded.servers,
            &trust,
            options.project_untrusted,
            &options.workdir,
        );
        let slots = arranged
            .runnable
            .into_iter()
            .map(|entry| Slot::new(entry, &options.workdir))
            .collect();
        let mut state = State {
            slots,
            awaiting: arranged.awaiting,
            resume: HashSet::new(),
            destroyed: false,
            version: 0,
            cache,
            signed_in,
            logins: HashMap::new(),
        };
        let first = state.snapshot(&trust);
        let (latest, _) = watch::channel(Arc::new(first));
        let (events, _) = broadcast::channel(SUBSCRIBER_BACKLOG);
        McpManager {
            shared: Arc::new(SharedState {
                logs: crate::logs::Logs::default(),
                roots: crate::roots::Roots::new(
                    options
                        .roots
                        .unwrap_or_else(|| vec![options.workdir.clone()]),
                ),
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
                tasks: crate::background::Background::default(),
                root: CancellationToken::new(),
                refreshing: watch::Sender::new(0),
                elicitations: Elicitations::default(),
                apps: std::sync::atomic::AtomicBool::new(false),
                trust,
                untrusted: options.project_untrusted.into(),
                reloading: tokio::sync::Mutex::new(()),
            }),
        }
    }

    pub fn workdir(&self) -> &Path {
        &self.shared.workdir
    }

    /// `server`'s log: its `notifications/message` and stderr lines of this manager's
    /// connections, the newest [`logs::LOG_ENTRIES`](crate::logs::LOG_ENTRIES) (SRV-2).
    pub fn logs(&self, server: &str) -> crate::logs::ServerLog {
        self.shared.logs.read(server)
    }

    /// Every entry appended to any server's log from now on, with the server's name (SRV-2).
    pub fn subscribe_logs(
        &self,
    ) -> tokio::sync::broadcast::Receiver<(String, crate::logs::LogEntry)> {
        self.shared.logs.subscribe()
    }

    /// The directories servers may work in (SRV-1).
    pub fn roots(&self) -> Vec<PathBuf> {
        self.shared.roots.folders()
    }

    /// Replaces the roots (the IDE's workspace folders changed, SRV-1): later `roots/list`
    /// answers give the new list, and every live connection is told
    /// `notifications/roots/list_changed` (in the background). Nothing is sent when the list
    /// is the same.
    pub fn set_roots(&self, folders: Vec<PathBuf>) {
        let folders: Vec<PathBuf> = folders.iter().map(|f| absolute(f)).collect();
        if !self.shared.roots.set(folders) {
            return;
        }
        let peers: Vec<(String, rmcp::Peer<rmcp::RoleClient>)> = {
            let state = self.shared.lock();
            state
                .slots
                .iter()
                .filter_map(|slot| {
                    let live = slot.live.as_ref()?;
                    Some((slot.entry.name.clone(), live.connection.peer.clone()))
                })
                .collect()
        };
        if peers.is_empty() {
            return;
        }
        self.shared
            .tasks
            .spawn("roots/list_changed to the servers", async move {
                for (server, peer) in peers {
                    if let Err(e) = peer.notify_roots_list_changed().await {
                        tracing::debug!(server, "cannot send roots/list_changed: {e}");
                    }
                }
            });
    }

    /// Lets the servers ask the user (MCP elicitation, LONG-5): connections dialed from now on
    /// declare the `elicitation` capability and send their `elicitation/create` to `elicitor`.
    pub fn set_elicitor(&self, elicitor: Arc<dyn Elicitor>) {
        self.shared.elicitations.set(elicitor);
    }

    /// The host shows MCP Apps: dials from now on declare the `io.modelcontextprotocol/ui`
    /// extension with the app MIME type (APPS-1). Hosts that cannot show apps never call it.
    pub fn declare_apps(&self) {
        self.shared
            .apps
            .store(true, std::sync::atomic::Ordering::Relaxed);
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

    /// The live (or retained) tool of that full name, switched on or not.
    pub fn tool(&self, full_name: &str) -> Option<McpTool> {
        let state = self.shared.lock();
        state.slots.iter().find_map(|slot| {
            slot.current_tools()
                .iter()
                .find(|t| t.full_name == full_name)
                .cloned()
        })
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
            legacy_tasks,
            elicitation,
            server,
            tool,
            output,
            timeout,
        } = live;
        let mut params = CallToolRequestParams::new(tool.clone());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let target = crate::live::Target {
            peer: &peer,
            routes: &progress,
            legacy_tasks: &legacy_tasks,
            elicitation: elicitation.as_ref(),
            server: &server,
            tool: &tool,
            timeout,
        };
        match crate::live::call(target, params, hooks).await {
            Err(Error::NeedsSignIn { server, scopes, .. }) => {
                Err(self.refused(&server, scopes).await)
            }
            // SRV-4: a result that breaks the tool's output schema is an error result.
            Ok(result) => Ok(crate::output::checked(
                output.as_deref(),
                &server,
                &tool,
                result,
            )),
            Err(e) => Err(e),
        }
    }

    /// A call refused with 401 or 403 `insufficient_scope` (SPEC-2, SPEC-4): the error says the
    /// server needs sign-in and why (a step-up's scopes kept for the next `login`), and the
    /// server becomes `needs-auth` with that reason, its connection ended as a dial refused at
    /// connect would be, so the settings page offers "Sign in" and `login` dials it again with
    /// the new token. Once sign-ins for more scope were tried [`auth::MAX_STEP_UPS`] times the
    /// error says signing in will not help, and the connection stays up for other tools.
    async fn refused(&self, server: &str, scopes: Vec<String>) -> Error {
        let entry = {
            let state = self.shared.lock();
            state
                .index_of(server)
                .ok()
                .map(|i| state.slots[i].entry.clone())
        };
        let env = |var: &str| std::env::var(var).ok();
        let url = entry
            .and_then(|entry| config::resolve(&entry, &self.shared.workdir, &env).ok())
            .and_then(|t| t.remote().map(|(url, _)| url.to_string()));
        let error = match (url, scopes.is_empty()) {
            (Some(url), false) => {
                crate::connection::step_up(&self.shared.credentials_path, &url, scopes).await
            }
            (_, false) => crate::error::DialError::InsufficientScope {
                scopes,
                exhausted: false,
            },
            (_, true) => crate::error::DialError::Unauthorized,
        };
        let needs_auth = error.needs_auth();
        let reason = match needs_auth {
            true => format!(
                "{error}; sign in with `wave-mcp login {server}` or \"Sign in\" on the settings page"
            ),
            false => error.to_string(),
        };
        if needs_auth {
            self.mark_needs_auth(server, &reason).await;
        }
        match needs_auth {
            true => Error::NeedsSignIn {
                server: server.to_string(),
                reason,
                scopes: Vec::new(),
            },
            false => Error::Connect {
                server: server.to_string(),
                reason,
            },
        }
    }

    /// Ends `server`'s live connection and makes it `needs-auth` with `reason` (a request it
    /// refused for want of sign-in or scope); nothing when it is not connected any more.
    async fn mark_needs_auth(&self, server: &str, reason: &str) {
        let (live, dial) = {
            let mut state = self.shared.lock();
            let Ok(index) = state.index_of(server) else {
                return;
            };
            let slot = &mut state.slots[index];
            if slot.status != Status::Connected {
                return;
            }
            let taken = slot.stop(Status::NeedsAuth);
            slot.error = Some(reason.to_string());
            tracing::warn!(server = %server, "MCP server needs sign-in: {reason}");
            self.shared.publish(&mut state);
            taken
        };
        self.shared.finish_stopping(live, dial).await;
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
                    legacy_tasks: live.connection.legacy_tasks.clone(),
                    elicitation: live.connection.elicitation.clone(),
                    server: slot.entry.name.clone(),
                    tool: tool.name.clone(),
                    output: tool.output_schema.clone(),
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
        let stopped = async {
            futures::future::join_all(
                stopping
                    .into_iter()
                    .map(|(live, dial)| shared.finish_stopping(live, dial)),
            )
            .await;
            shared.tasks.close();
            shared.tasks.wait().await;
        };
        let mut stopped = std::pin::pin!(stopped);
        // Every task ends on its own once the connections are closed. One that does not would
        // hold cleanup for ever: say which, so the hang has a name.
        if tokio::time::timeout(CLEANUP_REPORT_AFTER, &mut stopped)
            .await
            .is_err()
        {
            tracing::warn!(
                waiting_for = ?self.shared.tasks.running(),
                "MCP cleanup is still waiting for background tasks"
            );
            stopped.await;
        }
    }

    /// The manager's background tasks running now, by name (dials, watchers, readers): what
    /// [`McpManager::cleanup`] would wait for.
    pub fn running_background_tasks(&self) -> Vec<String> {
        self.shared.tasks.running()
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

    /// Project entries waiting for the user's approval (TRUST-3): none while the IDE does not
    /// trust the project, since they could not be approved anyway (TRUST-9).
    pub fn awaiting_approval(&self) -> Vec<ServerApproval> {
        if self
            .shared
            .untrusted
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            return Vec::new();
        }
        let state = self.shared.lock();
        state
            .awaiting
            .iter()
            .filter_map(|slot| slot.approval.clone())
            .collect()
    }

    /// Approves the project server `name` exactly as it is written now: the approval goes to
    /// the user's trust store, pinned to the entry's fingerprint, and the entry becomes a server
    /// that may run (replacing a same-named user or plugin server). Connects nothing: the next
    /// turn or an explicit connect dials it (TRUST-1, TRUST-3).
    pub async fn approve(&self, name: &str) -> Result<(), Error> {
        let fingerprint = {
            let state = self.shared.lock();
            if state.destroyed {
                return Err(Error::Destroyed);
            }
            if self
                .shared
                .untrusted
                .load(std::sync::atomic::Ordering::SeqCst)
            {
                return Err(Error::Untrusted(name.to_string()));
            }
            let waiting = state.awaiting.iter().find(|s| s.entry.name == name);
            match waiting.and_then(|slot| slot.approval.as_ref()) {
                Some(approval) => approval.fingerprint.clone(),
                None => return self.check_project_server(&state, name),
            }
        };
        let owned = name.to_string();
        self.write_trust(move |trust| trust.approve(&owned, &fingerprint))
            .await?;
        tracing::info!(server = %name, "project MCP server approved");
        self.reload().await;
        Ok(())
    }

    /// Forgets the approval of project server `name` (and the tools allowed `always` for it):
    /// its connection and process tree end, it is `needs-approval` again, and a same-named user
    /// or plugin server it replaced comes back (TRUST-3).
    pub async fn revoke(&self, name: &str) -> Result<(), Error> {
        {
            let state = self.shared.lock();
            if state.destroyed {
                return Err(Error::Destroyed);
            }
            if !state.awaiting.iter().any(|s| s.entry.name == name) {
                self.check_project_server(&state, name)?;
            }
        }
        let owned = name.to_string();
        self.write_trust(move |trust| trust.revoke(&owned).map(drop))
            .await?;
        tracing::info!(server = %name, "approval of project MCP server revoked");
        self.reload().await;
        Ok(())
    }

    /// One write of the trust store, off the async runtime; a failure names the file.
    async fn write_trust(
        &self,
        write: impl FnOnce(&TrustStore) -> Result<(), String> + Send + 'static,
    ) -> Result<(), Error> {
        let shared = self.shared.clone();
        tokio::task::spawn_blocking(move || write(&shared.trust))
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r)
            .map_err(|reason| Error::Trust {
                path: self.shared.trust.path().to_path_buf(),
                reason,
            })
    }

    /// The user edits an approved project entry through the host (a tool switch, BUD-2): the
    /// approval moves to the edited form, `edited` (the entry's new JSON), before the file is
    /// written, so the connection stays. An entry that is not approved stays unapproved.
    pub fn keep_approval_for_edit(&self, name: &str, edited: &Value) -> Result<(), Error> {
        let approved = {
            let state = self.shared.lock();
            state
                .slots
                .iter()
                .any(|s| s.entry.name == name && s.entry.source == config::Source::Project)
        };
        if !approved {
            return Ok(());
        }
        let fingerprint = crate::trust::entry_fingerprint(edited);
        self.shared
            .trust
            .approve(name, &fingerprint)
            .map_err(|reason| Error::Trust {
                path: self.shared.trust.path().to_path_buf(),
                reason,
            })
    }

    /// `Ok` when `name` is a project server that runs (approved), else why it has no approval.
    fn check_project_server(&self, state: &State, name: &str) -> Result<(), Error> {
        let slot = &state.slots[state.index_of(name)?];
        match slot.entry.source {
            config::Source::Project => Ok(()),
            _ => Err(Error::ApprovalNotNeeded(name.to_string())),
        }
    }

    /// The IDE's trust in the project changed (TRUST-9): untrusted, every project server stops
    /// and waits; trusted again, approved ones may run.
    pub async fn set_project_trusted(&self, trusted: bool) {
        let was = self
            .shared
            .untrusted
            .swap(!trusted, std::sync::atomic::Ordering::SeqCst);
        if was == trusted {
            self.reload().await;
        }
    }

    /// Whether the IDE trusts the project (TRUST-9): in an untrusted one no project server can
    /// be approved.
    pub fn project_trusted(&self) -> bool {
        !self
            .shared
            .untrusted
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The user's trust store for this project: tool permissions kept `always` (TRUST-5).
    pub fn trust(&self) -> &TrustStore {
        &self.shared.trust
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
        let _one_at_a_time = shared.reloading.lock().await;
        let (home, constructor) = &shared.config_inputs;
        let loaded = config::load(&shared.workdir, home, constructor);
        let known = |p: &ConfigProblem| shared.problems.iter().any(|k| k.path == p.path);
        if let Some(problem) = loaded.problems.iter().find(|p| !known(p)) {
            tracing::warn!("keeping the MCP servers as they are: {problem}");
            return;
        }
        let untrusted = shared.untrusted.load(std::sync::atomic::Ordering::SeqCst);
        let arranged = approval::arrange(loaded.servers, &shared.trust, untrusted, &shared.workdir);
        let (stopping, redial, configured) = {
            let mut state = shared.lock();
            if state.destroyed {
                return;
            }
            let mut old = std::mem::take(&mut state.slots);
            let mut stopping = Vec::new();
            let mut redial = Vec::new();
            let mut changed = !approval::same_waiting(&state.awaiting, &arranged.awaiting);
            state.awaiting = arranged.awaiting;
            for entry in arranged.runnable {
                let Some(at) = old.iter().position(|s| s.entry.name == entry.name) else {
                    changed = true;
                    let fresh = Slot::new(entry, &shared.workdir);
                    // Connected before its entry changed (or its approval was revoked), approved
                    // again now: it comes back (TRUST-4).
                    if state.resume.remove(&fresh.entry.name) && fresh.entry.config.is_ok() {
                        redial.push((fresh.entry.name.clone(), fresh.generation));
                    }
                    state.slots.push(fresh);
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
                let was_connected = matches!(
                    slot.status,
                    Status::Connected | Status::Connecting | Status::Reconnecting
                );
                let waits = state
                    .awaiting
                    .iter()
                    .any(|w| w.entry.name == slot.entry.name);
                if was_connected && waits {
                    state.resume.insert(slot.entry.name.clone());
                }
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

impl SharedState {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn publish(&self, state: &mut State) {
        let snapshot = Arc::new(state.snapshot(&self.trust));
        self.latest.send_replace(snapshot.clone());
        let _ = self.events.send(snapshot);
    }

    fn tool_timeout_for(&self, entry: &ServerEntry) -> Duration {
        entry
            .config
            .as_ref()
            .ok()
            .and_then(|c| c.tool_timeout)
            .unwrap_or(self.timeouts.tool_call)
    }
}

/// One spelling per directory: absolute (EDIT-2) and canonical where it exists, so `W`, `W/`
/// and `W/.` share config paths and cache entries.
fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The signed-in servers of the credential file; a file that cannot be read counts as none
/// (a dial then reports it, naming the file).
fn read_signed_in(path: &Path) -> HashSet<String> {
    auth::signed_in_keys(path).unwrap_or_else(|e| {
        tracing::warn!("{e}");
        HashSet::new()
    })
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
