//! Dialing a slot and what follows: the dial and reconnect tasks, failure, installing a connection,
//! watching for its loss, and refreshing its tools on `tools/list_changed`.

use std::collections::HashSet;
use std::sync::{Arc, Weak};
use std::time::Duration;

use chrono::Utc;
use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::model::Tool;
use tokio_util::sync::CancellationToken;

use super::slot::{InFlight, Live, Retained, State};
use super::types::DialDone;
use super::{McpTool, SharedState, Status, catalog};
use crate::config::{self, ServerEntry};
use crate::connection::{self, DialError, Dialed};
use crate::inert;
use crate::login;
use crate::names;

impl SharedState {
    /// Marks the slot `connecting` under a new generation and spawns its dial.
    pub(super) fn start_dial(self: &Arc<Self>, state: &mut State, index: usize) -> DialDone {
        let slot = &mut state.slots[index];
        slot.generation += 1;
        slot.dialed = true;
        slot.status = Status::Connecting;
        slot.error = None;
        self.start_task(state, index, run_dial)
    }

    /// Spawns a dial-like task for the slot's current generation and records it as in flight.
    pub(super) fn start_task<F, Fut>(
        self: &Arc<Self>,
        state: &mut State,
        index: usize,
        task: F,
    ) -> DialDone
    where
        F: FnOnce(Arc<SharedState>, ServerEntry, u64, CancellationToken) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let slot = &mut state.slots[index];
        let cancel = self.root.child_token();
        let what = format!("dial of {}", slot.entry.name);
        let handle = self.tasks.spawn(
            what,
            task(
                self.clone(),
                slot.entry.clone(),
                slot.generation,
                cancel.clone(),
            ),
        );
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

    /// The MCP revision last negotiated with the entry as written (SPEC-1), from the cache.
    pub(super) fn remembered_version(&self, name: &str) -> Option<String> {
        let state = self.lock();
        let slot = &state.slots[state.index_of(name).ok()?];
        let fingerprint = slot.fingerprint.as_ref()?;
        state
            .cache
            .lookup(name, fingerprint)?
            .protocol_version
            .clone()
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
    pub(super) fn install_tools(&self, state: &mut State, index: usize, tools: Vec<Tool>) {
        let name = state.slots[index].entry.name.clone();
        let source = state.slots[index].entry.source;
        let mut taken = state.names_taken_except(&name);
        let tools = to_mcp_tools(&name, source, tools, &mut taken);
        let slot = &mut state.slots[index];
        let Some(live) = slot.live.as_mut() else {
            return;
        };
        live.tools = tools;
        self.record_cache(state, index);
    }
}

fn to_mcp_tools(
    server: &str,
    source: config::Source,
    tools: Vec<Tool>,
    taken: &mut HashSet<String>,
) -> Vec<McpTool> {
    tools
        .into_iter()
        .map(|tool| {
            // TRUST-6: the definition exactly as presented, before anything is cleaned.
            let definition = crate::trust::definition_hash(&tool).into();
            let name = tool.name.to_string();
            let mut full_name = names::full_tool_name(server, &name);
            if !taken.insert(full_name.clone()) {
                full_name = names::disambiguated_tool_name(server, &name);
                taken.insert(full_name.clone());
            }
            // What the model reads loses its hidden characters (TRUST-7); the name is already
            // ASCII in `full_name`, and the server's own name is kept for calling it.
            let mut description = tool.description.map(|d| d.to_string());
            let mut input_schema = names::clean_schema(&tool.input_schema);
            let hidden_name = inert::strip_hidden(&name).1;
            // The titles are shown (the settings page, the CLI, the consent question): they
            // lose their hidden characters too.
            let mut title = tool.title;
            let mut annotations = tool.annotations;
            let hidden_title = inert::strip_hidden_option(&mut title)
                | annotations
                    .as_mut()
                    .is_some_and(|a| inert::strip_hidden_option(&mut a.title));
            let hidden_description = inert::strip_hidden_option(&mut description);
            let hidden_schema = inert::strip_hidden_in_schema(&mut input_schema);
            McpTool {
                ui: crate::apps::ToolUi::from_meta(tool.meta.as_ref().map(|m| &m.0)),
                server: server.to_string(),
                full_name,
                description,
                input_schema: Arc::new(input_schema),
                output_schema: tool
                    .output_schema
                    .map(|schema| Arc::new(crate::output::OutputSchema::new(schema))),
                hidden_text: hidden_name || hidden_title || hidden_description || hidden_schema,
                name,
                icons: crate::icons::safe(tool.icons.as_deref()),
                title,
                annotations,
                definition,
                source,
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
    let setup = connection::DialSetup {
        changed: (tools_changed, catalog_changed),
        roots: shared.roots.clone(),
        log: shared.logs.sink(&entry.name),
        elicitation: shared.elicitations.hook(
            &entry.name,
            login::Browser::new(shared.tasks.clone(), shared.root.child_token()),
        ),
        timeout,
        apps: shared.apps.load(std::sync::atomic::Ordering::Relaxed),
        credentials: &shared.credentials_path,
        run_dir: &shared.run_dir,
        tasks: &shared.tasks,
        lifecycle: connection::Lifecycle::remembered(
            shared.remembered_version(&entry.name).as_deref(),
        ),
    };
    let dial = connection::dial(transport, setup);
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

async fn install_connection(
    shared: &Arc<SharedState>,
    name: &str,
    generation: u64,
    dialed: Dialed,
) {
    let Dialed {
        connection,
        mut instructions,
        tools,
        exited,
        dropped,
    } = dialed;
    // Announced to the model: no hidden characters (TRUST-7).
    inert::strip_hidden_option(&mut instructions);
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
                tools_refreshes: 0,
                catalog_refreshes: 0,
            });
            shared.install_tools(&mut state, index, tools);
            shared.publish(&mut state);
            catalog::start_refresh(shared, name, generation);
            let level = slot_log_level(&state.slots[index]);
            shared.tasks.spawn(
                format!("logging/setLevel of {name}"),
                set_log_level(connection.peer.clone(), name.to_string(), level),
            );
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
                shared.tasks.spawn(
                    format!("exit watch of {name}"),
                    watch_loss(shared, name, generation, lost, reason.boxed()),
                );
            }
            if let Some(dropped) = dropped {
                let reason = dropped.map(Result::ok).boxed();
                let lost = Lost::Dropped;
                shared.tasks.spawn(
                    format!("sse stream watch of {name}"),
                    watch_loss(shared, name, generation, lost, reason),
                );
            }
            return;
        }
    }
    // Destroyed or superseded while dialing: close the result at once (LAZY-7, LIFE-7).
    tracing::debug!(server = %name, "closing a connection that arrived after its dial was abandoned");
    connection.close(shared.timeouts.shutdown_grace).await;
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
        tasks.spawn(format!("tool listing of {name}"), async move {
            let _refreshing = refreshing;
            let started = {
                let mut state = shared.lock();
                let index = state.index_of(&name).ok();
                let slot = index.map(|i| &mut state.slots[i]);
                match slot.filter(|s| s.generation == generation) {
                    Some(slot) => slot.live.as_mut().map(|live| {
                        live.tools_refreshes += 1;
                        (live.connection.peer.clone(), live.tools_refreshes)
                    }),
                    None => None,
                }
            };
            let Some((peer, refresh)) = started else {
                return;
            };
            let Ok(tools) = peer.list_all_tools().await else {
                return;
            };
            let mut state = shared.lock();
            let Ok(index) = state.index_of(&name) else {
                return;
            };
            let slot = &state.slots[index];
            let newest = slot.live.as_ref().map(|live| live.tools_refreshes) == Some(refresh);
            if slot.generation != generation || !newest {
                return;
            }
            shared.install_tools(&mut state, index, tools);
            shared.publish(&mut state);
        });
    })
}

/// The entry's `logLevel` (SRV-2), `info` when it sets none.
fn slot_log_level(slot: &super::slot::Slot) -> String {
    slot.entry
        .config
        .as_ref()
        .ok()
        .and_then(|config| config.log_level.clone())
        .unwrap_or_else(|| "info".into())
}

/// `logging/setLevel` to a server that declared `logging` (SRV-2); in the background, so the
/// dial never waits for it. A refusal is only logged.
#[allow(deprecated)] // Logging is deprecated from 2026-07-28 on (SEP-2577); 2025 servers log.
async fn set_log_level(peer: rmcp::Peer<rmcp::RoleClient>, server: String, level: String) {
    let declared = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.logging.is_some());
    if !declared {
        return;
    }
    let Ok(level) = serde_json::from_value(serde_json::Value::String(level)) else {
        return;
    };
    if let Err(e) = peer
        .set_level(rmcp::model::SetLevelRequestParams::new(level))
        .await
    {
        tracing::debug!(server, "logging/setLevel refused: {e}");
    }
}
