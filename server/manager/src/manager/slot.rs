//! One configured server's slot: its status, generation, live connection, retained tools and dial
//! in flight, the transitions between them (stop, auto-dial due) and how a slot reads as a snapshot.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;

use super::types::DialDone;
use super::{Catalog, McpTool, ServerSnapshot, SharedState, Snapshot, Status, ToolSummary};
use crate::Error;
use crate::auth;
use crate::cache::{self, CacheFile, CacheKeyInput};
use crate::config::{self, ServerEntry};
use crate::connection::Connection;
use crate::names;
use crate::switches::ToolSwitches;
use crate::trust::{ServerApproval, TrustStore, TrustView};

pub(super) struct State {
    pub(super) slots: Vec<Slot>,
    /// Project entries waiting for the user's approval: listed, never dialed (TRUST-1).
    pub(super) awaiting: Vec<Slot>,
    /// Servers that were connected when they started waiting for approval again (a changed
    /// entry, a revoke): approved again, they are dialed again.
    pub(super) resume: HashSet<String>,
    pub(super) destroyed: bool,
    pub(super) version: u64,
    pub(super) cache: CacheFile,
    /// Canonical URLs with stored credentials, as last read from the credential file.
    pub(super) signed_in: HashSet<String>,
    /// The sign-in running for a server; a newer one cancels it.
    pub(super) logins: HashMap<String, CancellationToken>,
}

pub(super) struct Slot {
    pub(super) entry: ServerEntry,
    pub(super) fingerprint: Option<String>,
    /// The credential-file key of a remote server: its canonical URL, variables expanded.
    pub(super) credential_key: Option<String>,
    pub(super) status: Status,
    pub(super) error: Option<String>,
    pub(super) generation: u64,
    /// Dialed at least once this session, by a turn or explicitly (LAZY-10).
    pub(super) dialed: bool,
    /// Disconnected by the user; sticky until an explicit connect (LAZY-6).
    pub(super) user_disconnected: bool,
    pub(super) live: Option<Live>,
    /// While `reconnecting`: the dropped connection's tools and instructions (TOOL-7, INS-2).
    pub(super) retained: Option<Retained>,
    pub(super) dial: Option<InFlight>,
    /// Set on a slot of [`State::awaiting`]: what approving it would run.
    pub(super) approval: Option<ServerApproval>,
}

pub(super) struct Retained {
    pub(super) tools: Vec<McpTool>,
    pub(super) instructions: Option<String>,
    pub(super) connected_at: DateTime<Utc>,
}

pub(super) struct Live {
    pub(super) connection: Arc<Connection>,
    pub(super) instructions: Option<String>,
    pub(super) tools: Vec<McpTool>,
    pub(super) connected_at: DateTime<Utc>,
    /// Prompts and resources, once listed (PRM-1).
    pub(super) catalog: Option<Arc<Catalog>>,
    /// How many tool-list and catalog refreshes of this connection have started: a refresh
    /// installs its result only if no later one started meanwhile, so a slow, older listing
    /// never replaces a newer one (BUD-6, PRM-4).
    pub(super) tools_refreshes: u64,
    pub(super) catalog_refreshes: u64,
}

pub(super) struct InFlight {
    pub(super) cancel: CancellationToken,
    pub(super) done: DialDone,
}

impl Slot {
    /// A project entry waiting for approval: `needs-approval` with `reason`, and nothing of it
    /// expanded (no credential key: its `${VAR}`s stay unread, TRUST-1).
    pub(super) fn awaiting(
        entry: ServerEntry,
        workdir: &Path,
        approval: ServerApproval,
        reason: String,
    ) -> Slot {
        let mut slot = Slot::unexpanded(entry, workdir);
        slot.status = Status::NeedsApproval;
        slot.error = Some(reason);
        slot.approval = Some(approval);
        slot
    }

    pub(super) fn new(entry: ServerEntry, workdir: &Path) -> Slot {
        let mut slot = Slot::unexpanded(entry, workdir);
        slot.credential_key = slot
            .entry
            .config
            .as_ref()
            .ok()
            .filter(|c| c.transport_label() != "stdio")
            .and_then(|c| c.url.as_deref())
            .and_then(|url| config::expand(url, &|var| std::env::var(var).ok()).ok())
            .and_then(|url| auth::canonical_url(&url).ok());
        slot
    }

    fn unexpanded(entry: ServerEntry, workdir: &Path) -> Slot {
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
        Slot {
            entry,
            fingerprint,
            credential_key: None,
            status,
            error,
            generation: 0,
            dialed: false,
            user_disconnected: false,
            live: None,
            retained: None,
            dial: None,
            approval: None,
        }
    }

    /// The entry's `enabledTools` / `disabledTools` (every tool for an unreadable entry).
    pub(super) fn switches(&self) -> &ToolSwitches {
        static ALL: ToolSwitches = ToolSwitches::All;
        match &self.entry.config {
            Ok(config) => &config.tool_switches,
            Err(_) => &ALL,
        }
    }

    pub(super) fn current_tools(&self) -> &[McpTool] {
        match (&self.live, &self.retained) {
            (Some(live), _) => &live.tools,
            (None, Some(retained)) => &retained.tools,
            (None, None) => &[],
        }
    }

    pub(super) fn due_for_auto_dial(&self) -> bool {
        !self.dialed
            && !self.user_disconnected
            && self.status == Status::Disconnected
            && self.entry.config.is_ok()
    }

    /// Leaves the current generation behind: takes the connection and any dial in flight.
    pub(super) fn stop(&mut self, status: Status) -> (Option<Live>, Option<InFlight>) {
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

    pub(super) fn snapshot(
        &self,
        cache: &CacheFile,
        signed_in: &HashSet<String>,
        trust: &TrustView<'_>,
    ) -> ServerSnapshot {
        // TRUST-6: tools allowed `always` for another definition than the live one.
        let changed_definitions: HashSet<&str> = self
            .live
            .as_ref()
            .map(|live| {
                live.tools
                    .iter()
                    .filter(|t| {
                        trust
                            .tool_permission(&self.entry.name, &t.name)
                            .is_some_and(|pinned| pinned != &*t.definition)
                    })
                    .map(|t| t.name.as_str())
                    .collect()
            })
            .unwrap_or_default();
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
                        definition_changed: changed_definitions.contains(t.name.as_str()),
                        hidden_text: t.hidden_text,
                        title: t.title.clone(),
                        annotations: t.annotations.clone(),
                        icons: t.icons.clone(),
                        ui: t.ui.clone(),
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
                        definition_changed: false,
                        hidden_text: t.hidden_text,
                        title: t.title.clone(),
                        annotations: t.annotations.clone(),
                        icons: t.icons.clone(),
                        ui: None,
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
            icons: self
                .live
                .as_ref()
                .and_then(|live| live.connection.peer.peer_info())
                .and_then(|info| {
                    let server = info.server_info.as_ref()?;
                    Some(crate::icons::safe(server.icons.as_deref()))
                })
                .unwrap_or_default(),
            connection_id: self.live.as_ref().map(|_| self.generation),
            signed_in: self
                .credential_key
                .as_ref()
                .is_some_and(|key| signed_in.contains(key)),
            catalog: self.catalog_view(cache),
            approval: self.approval.clone(),
            protocol_version: match &self.live {
                Some(live) => Some(live.connection.protocol_version.clone()),
                None => self
                    .fingerprint
                    .as_ref()
                    .and_then(|f| cache.lookup(&self.entry.name, f))
                    .and_then(|entry| entry.protocol_version.clone()),
            }
            .filter(|v| !v.is_empty()),
        }
    }
}

impl State {
    /// The slot a name resolves to; a project entry waiting for approval is no slot to act on
    /// ([`Error::NeedsApproval`]).
    pub(super) fn index_of(&self, name: &str) -> Result<usize, Error> {
        if let Some(index) = self.slots.iter().position(|s| s.entry.name == name) {
            return Ok(index);
        }
        match self.awaiting.iter().any(|s| s.entry.name == name) {
            true => Err(Error::NeedsApproval(name.to_string())),
            false => Err(Error::UnknownServer(name.to_string())),
        }
    }

    /// Every slot's row, each project entry waiting for approval right after the server of the
    /// same name it would replace, else at the end.
    pub(super) fn snapshot(&mut self, trust: &TrustStore) -> Snapshot {
        self.version += 1;
        let trust = &trust.view();
        let row = |s: &Slot| s.snapshot(&self.cache, &self.signed_in, trust);
        let mut servers: Vec<ServerSnapshot> = self.slots.iter().map(row).collect();
        for waiting in &self.awaiting {
            let at = servers.iter().position(|s| s.name == waiting.entry.name);
            match at {
                Some(at) => servers.insert(at + 1, row(waiting)),
                None => servers.push(row(waiting)),
            }
        }
        Snapshot {
            version: self.version,
            servers,
        }
    }

    /// `(server, fingerprint)` of every readable entry, waiting ones included (their cached
    /// tools stay listed): what a cache writer keeps for this workdir.
    pub(super) fn configured(&self) -> Vec<(String, String)> {
        self.slots
            .iter()
            .chain(&self.awaiting)
            .filter_map(|s| Some((s.entry.name.clone(), s.fingerprint.clone()?)))
            .collect()
    }

    /// Full names in use by other servers' live tools.
    pub(super) fn names_taken_except(&self, server: &str) -> HashSet<String> {
        self.slots
            .iter()
            .filter(|s| s.entry.name != server)
            .filter_map(|s| s.live.as_ref())
            .flat_map(|l| l.tools.iter().map(|t| t.full_name.clone()))
            .collect()
    }
}

impl SharedState {
    /// The second half of a stop: close what [`Slot::stop`] took, outside the lock.
    pub(super) async fn finish_stopping(&self, live: Option<Live>, dial: Option<InFlight>) {
        if let Some(live) = live {
            live.connection.close(self.timeouts.shutdown_grace).await;
        }
        if let Some(dial) = dial {
            dial.done.await;
        }
    }
}
