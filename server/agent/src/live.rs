//! What a host sees of a turn while it runs, and how it stops one: [`TurnHooks`] carries an
//! event channel (assistant text as it streams, each message as soon as it is complete, tool
//! progress; LONG-1, LONG-2) and a cancel token (LONG-3).

use std::sync::Arc;

use tokio::sync::mpsc;
pub use wave_mcp_manager::CancellationToken;

use crate::consent::Consent;
use crate::message::Message;

/// The result of a tool call the model asked for that a stop kept from running (LONG-3).
pub(crate) const NOT_RUN: &str = "not run: the user stopped the turn";

/// One thing that happened in a running turn.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEvent {
    /// More text of the assistant message being generated (LONG-1). The complete message
    /// follows as a [`TurnEvent::Message`].
    Delta(String),
    /// A message was added to the history (user, meta, assistant with its tool calls before
    /// they run, each tool result as it returns).
    Message(Message),
    /// `notifications/progress` of the MCP call made for the model's tool call `tool_call_id`
    /// (directly or from an Exec script, LONG-2).
    Progress {
        tool_call_id: String,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
}

/// A host's handles on one turn.
#[derive(Clone, Default)]
pub struct TurnHooks {
    /// Where the turn's events go; `None`: nobody listens.
    pub events: Option<mpsc::UnboundedSender<TurnEvent>>,
    /// Cancelled: the model request in flight is aborted, every MCP call in flight is told
    /// (`notifications/cancelled`), no further request is made, and the turn ends with
    /// [`crate::TurnReport::cancelled`] (LONG-3).
    pub cancel: CancellationToken,
    /// Who asks the user to approve project servers and to confirm tool calls (TRUST-3,
    /// TRUST-5); `None`: nothing is approved and every call that would ask is declined.
    pub consent: Option<Arc<dyn Consent>>,
}

impl std::fmt::Debug for TurnHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnHooks")
            .field("events", &self.events)
            .field("cancel", &self.cancel)
            .field("consent", &self.consent.is_some())
            .finish()
    }
}

impl TurnHooks {
    /// Whether anyone receives the events (so building one is worth it).
    pub(crate) fn listening(&self) -> bool {
        self.events.is_some()
    }

    /// `work`, unless the turn is stopped first (`None`): the waits before a model request
    /// (dials, a tool-list refresh, `prompts/get`, `resources/read`) end at Stop too (LONG-3).
    pub(crate) async fn unless_stopped<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        tokio::select! {
            done = work => Some(done),
            () = self.cancel.cancelled() => None,
        }
    }

    pub(crate) fn emit(&self, event: TurnEvent) {
        if let Some(events) = &self.events {
            let _ = events.send(event);
        }
    }
}
