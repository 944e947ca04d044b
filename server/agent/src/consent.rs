//! Asking the user (TRUST-3, TRUST-5, TRUST-6). A host gives a turn a [`Consent`]: it approves
//! project servers before the turn dials them, and confirms tool calls the permission rules do
//! not pre-approve. A turn without one approves nothing and declines every call that would ask.
//! What the user allowed for the session is kept by the agent ([`SessionGrants`]); what they
//! allowed `always` goes to the user's trust store. Both are pinned to the tool's definition.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde_json::{Map, Value};
pub use wave_mcp_manager::ServerApproval;

/// One tool call waiting for the user's decision.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolConfirmation {
    /// The model's tool call (an `Exec` script's nested calls carry the `Exec` call's id).
    pub tool_call_id: String,
    pub server: String,
    /// The server's own name for the tool.
    pub tool: String,
    pub full_name: String,
    pub arguments: Map<String, Value>,
    /// The server's `title` and annotations (hints: read-only, destructive, open-world).
    pub title: Option<String>,
    pub annotations: Option<wave_mcp_manager::ToolAnnotations>,
    /// The user allowed this tool before, for another definition (TRUST-6).
    pub definition_changed: bool,
}

/// The user's answer about one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolDecision {
    /// Run this call only.
    Once,
    /// Run it, and its later calls while the session lives.
    Session,
    /// Run it, and remember the permission in the user's trust store.
    Always,
    /// Do not run it.
    Deny,
}

/// Who asks the user: the IDE through the sidecar, or the terminal.
pub trait Consent: Send + Sync {
    /// The names of `servers` the user approved. An empty list approves nothing.
    fn approve_servers(&self, servers: Vec<ServerApproval>) -> BoxFuture<'static, Vec<String>>;
    /// The user's decision on one call; a host that cannot ask answers [`ToolDecision::Deny`].
    fn confirm_tool(&self, request: ToolConfirmation) -> BoxFuture<'static, ToolDecision>;
}

/// Tools allowed for the session, each pinned to the definition it was allowed for.
#[derive(Debug, Default)]
pub(crate) struct SessionGrants(Mutex<HashMap<String, Arc<str>>>);

impl SessionGrants {
    /// The definition `full_name` was allowed for in this session, if it was.
    pub(crate) fn get(&self, full_name: &str) -> Option<Arc<str>> {
        let grants = self.0.lock().unwrap_or_else(|e| e.into_inner());
        grants.get(full_name).cloned()
    }

    pub(crate) fn insert(&self, full_name: &str, definition: Arc<str>) {
        let mut grants = self.0.lock().unwrap_or_else(|e| e.into_inner());
        grants.insert(full_name.to_string(), definition);
    }
}
