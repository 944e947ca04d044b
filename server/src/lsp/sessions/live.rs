//! A turn as it runs (LONG-1 … LONG-3): each message the agent adds is recorded and notified
//! as soon as it is complete (the assistant message with its tool calls before they run, each
//! tool result when it returns), assistant text goes out as `wave/session/delta` while it
//! streams, MCP progress as `wave/session/progress`; `wave/session/cancel` stops the turn.

use tokio::sync::mpsc;
use wave_mcp_agent::{CancellationToken, Role, TurnEvent, TurnHooks};
use wave_mcp_protocol::{
    SessionCancelResult, SessionDelta, SessionDeltaParams, SessionProgress, SessionProgressParams,
    SessionTurnEnded, SessionTurnEndedParams,
};

use super::{Session, chat_message};

/// The running turn of a session and its stop switch.
pub(super) type Stop = std::sync::Mutex<Option<(u64, CancellationToken)>>;

impl Session {
    /// Runs turn `turn` with the agent, relaying its events while it runs, then notifies its end.
    pub(super) async fn run_live_turn(&self, turn: u64, text: String) {
        let Some(agent) = &self.agent else {
            return;
        };
        let cancel = CancellationToken::new();
        *self.stop.lock().unwrap_or_else(|e| e.into_inner()) = Some((turn, cancel.clone()));
        let (events, mut received) = mpsc::unbounded_channel();
        let hooks = TurnHooks {
            events: Some(events),
            cancel,
            // TRUST-3, TRUST-5: the chat page approves servers and confirms tool calls.
            consent: Some(std::sync::Arc::new(super::super::consent::TurnConsent {
                client: self.publisher.client.clone(),
                session_id: self.id.clone(),
                turn,
            })),
        };
        let running = async {
            let mut agent = agent.lock().await;
            agent.send_message_live(&text, hooks).await
        };
        let relay = async {
            // The user's own message was recorded when it was sent.
            let mut own_message = true;
            while let Some(event) = received.recv().await {
                self.relay(turn, &text, &mut own_message, event).await;
            }
        };
        let (result, ()) = tokio::join!(running, relay);
        *self.stop.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let cancelled = result.as_ref().is_ok_and(|report| report.cancelled);
        let mut conversation = self.conversation.lock().await;
        conversation.running.retain(|&t| t != turn);
        let params = SessionTurnEndedParams {
            session_id: self.id.clone(),
            turn,
            error: result.err().map(|e| e.to_string()),
            cancelled,
        };
        self.publisher
            .client
            .send_notification::<SessionTurnEnded>(params)
            .await;
    }

    async fn relay(&self, turn: u64, text: &str, own_message: &mut bool, event: TurnEvent) {
        let client = &self.publisher.client;
        match event {
            TurnEvent::Message(message) => {
                let typed =
                    message.role == Role::User && !message.is_meta && message.content == text;
                if typed && std::mem::take(own_message) {
                    return;
                }
                let mut conversation = self.conversation.lock().await;
                self.record(
                    &mut conversation,
                    turn,
                    chat_message(message, &self.manager),
                )
                .await;
            }
            TurnEvent::Delta(text) => {
                // Under the conversation's lock: the index is the one the message gets next.
                let conversation = self.conversation.lock().await;
                let params = SessionDeltaParams {
                    session_id: self.id.clone(),
                    turn,
                    message_index: conversation.messages.len() as u64,
                    text,
                };
                client.send_notification::<SessionDelta>(params).await;
            }
            TurnEvent::Progress {
                tool_call_id,
                progress,
                total,
                message,
            } => {
                let params = SessionProgressParams {
                    session_id: self.id.clone(),
                    turn,
                    tool_call_id,
                    progress,
                    total,
                    message,
                };
                client.send_notification::<SessionProgress>(params).await;
            }
        }
    }

    /// `wave/session/cancel`: stops the running turn, if there is one (LONG-3).
    pub fn cancel(&self) -> SessionCancelResult {
        let running = self.stop.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let cancelled = match running {
            Some((turn, token)) => {
                tracing::info!(session = %self.id, "stopping turn {turn}");
                token.cancel();
                true
            }
            None => false,
        };
        SessionCancelResult {
            session_id: self.id.clone(),
            cancelled,
        }
    }
}
