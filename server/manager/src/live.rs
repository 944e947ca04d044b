//! Live tool calls: every `tools/call` carries a `progressToken` (rmcp sets one per request);
//! the server's `notifications/progress` for it reach the caller's [`CallHooks::progress`]
//! and restart the call's timeout (LONG-2); a call the caller stops, or one past its timeout,
//! gets `notifications/cancelled` with its request id and a reason (LONG-3, LONG-4). A call the
//! server refuses with `URLElicitationRequiredError` (MCP 2025-11-25) puts the pages it names to
//! the user as URL-mode elicitations (LONG-6) and fails saying what became of them. A call the
//! server runs as a task (2026-07-28 extension or 2025-11-25 capability) is followed to its end
//! by [`crate::tasks`] (SRV-5).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, ProgressNotificationParam, ProgressToken, RequestId,
    ServerResult,
};
use rmcp::model::{JsonRpcMessage, JsonRpcNotification, ServerNotification};
use rmcp::service::{PeerRequestOptions, RxJsonRpcMessage, ServiceError, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{Peer, RoleClient};
pub use tokio_util::sync::CancellationToken;

use crate::elicitation::{ElicitationHook, URL_ELICITATION_REQUIRED};
use crate::error::Error;

/// The reason sent with `notifications/cancelled` when the user stops a turn.
pub const STOPPED_BY_USER: &str = "the user stopped the turn";

/// One `notifications/progress` of a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Receives the progress of one call.
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// What a caller can attach to one tool call.
#[derive(Clone, Default)]
pub struct CallHooks {
    /// Called for each `notifications/progress` of the call.
    pub progress: Option<ProgressSink>,
    /// Cancelled: the call ends with [`Error::ToolCancelled`] and the server is told.
    pub cancel: Option<CancellationToken>,
}

/// The progress sinks of one connection's calls in flight, by progress token. The connection's
/// client handler routes `notifications/progress` through it.
#[derive(Clone, Default)]
pub(crate) struct ProgressRoutes(Arc<Mutex<HashMap<ProgressToken, ProgressSink>>>);

impl ProgressRoutes {
    pub(crate) fn deliver(&self, params: ProgressNotificationParam) {
        let sink = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&params.progress_token)
            .cloned();
        if let Some(sink) = sink {
            sink(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }

    fn insert(&self, token: ProgressToken, sink: ProgressSink) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token, sink);
    }

    fn remove(&self, token: &ProgressToken) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(token);
    }
}

/// Where one call goes.
pub(crate) struct Target<'a> {
    pub peer: &'a Peer<RoleClient>,
    pub routes: &'a ProgressRoutes,
    /// What a 2025-11-25 server said about running tool calls as tasks (SRV-5).
    pub legacy_tasks: &'a crate::tasks::Legacy,
    /// Where the pages of a `URLElicitationRequiredError` are put to the user.
    pub elicitation: Option<&'a ElicitationHook>,
    pub server: &'a str,
    pub tool: &'a str,
    /// Without progress for this long, the call is cancelled (each progress restarts it).
    pub timeout: Duration,
}

/// Sends `tools/call` and waits for its result, its timeout or the caller's cancel.
pub(crate) async fn call(
    target: Target<'_>,
    params: CallToolRequestParams,
    hooks: &CallHooks,
) -> Result<CallToolResult, Error> {
    let Target {
        peer,
        routes,
        legacy_tasks,
        elicitation,
        server,
        tool,
        timeout,
    } = target;
    let failed = |reason: String| Error::ToolCall {
        server: server.to_string(),
        tool: tool.to_string(),
        reason,
    };
    let cancel = hooks.cancel.clone().unwrap_or_default();
    if cancel.is_cancelled() {
        return Err(Error::ToolCancelled {
            server: server.to_string(),
            tool: tool.to_string(),
        });
    }
    // SPEC-3: `input_required` replies are answered by the user and the call is sent again.
    let mut rounds = crate::mrtr::Rounds::new(elicitation);
    let mut params = params;
    // SRV-5: a 2025-11-25 server that runs this tool as a task is asked for one.
    let info = peer.peer_info();
    let as_task = legacy_tasks.runs_as_task(info.as_ref().map(|i| &i.protocol_version), tool);
    loop {
        let request = if as_task {
            crate::tasks::legacy_call_request(&params)
        } else {
            ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()))
        };
        let options = PeerRequestOptions::with_timeout(timeout).reset_timeout_on_progress();
        let handle = peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| request_failed(&e, server, failed))?;
        let (id, token) = (handle.id.clone(), handle.progress_token.clone());
        if let Some(sink) = &hooks.progress {
            routes.insert(token.clone(), sink.clone());
        }
        let _unroute = Unroute { routes, token };
        let response = tokio::select! {
            response = handle.await_response() => response,
            () = cancel.cancelled() => {
                send_cancelled(peer, id, STOPPED_BY_USER).await;
                return Err(Error::ToolCancelled {
                    server: server.to_string(),
                    tool: tool.to_string(),
                });
            }
        };
        return match response {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            // SRV-5: the server runs the call as a task: the 2026-07-28 extension's
            // `CreateTaskResult`, or a 2025-11-25 one (rmcp has no type for it).
            Ok(ServerResult::CreateTaskResult(created)) => {
                let era = crate::tasks::Era::Extension;
                let follow = crate::tasks::Follow {
                    peer,
                    elicitation,
                    server,
                    tool,
                    timeout,
                    era,
                };
                crate::tasks::follow(follow, created.task, hooks).await
            }
            Ok(ServerResult::CustomResult(custom)) if as_task => {
                let Some(created) = crate::tasks::legacy_created(&custom.0) else {
                    return Err(failed("unexpected response to tools/call".into()));
                };
                let era = crate::tasks::Era::Legacy;
                let follow = crate::tasks::Follow {
                    peer,
                    elicitation,
                    server,
                    tool,
                    timeout,
                    era,
                };
                crate::tasks::follow(follow, created, hooks).await
            }
            // A result without `content` decodes as an empty result.
            Ok(ServerResult::EmptyResult(_)) => Ok(CallToolResult::default()),
            Ok(ServerResult::InputRequiredResult(asked)) => {
                let retry = tokio::select! {
                    retry = rounds.answer(asked) => retry.map_err(failed)?,
                    () = cancel.cancelled() => return Err(Error::ToolCancelled {
                        server: server.to_string(),
                        tool: tool.to_string(),
                    }),
                };
                params.input_responses = retry.input_responses;
                params.request_state = retry.request_state;
                continue;
            }
            Ok(_) => Err(failed("unexpected response to tools/call".into())),
            // rmcp has sent `notifications/cancelled` ("request timeout") already.
            Err(ServiceError::Timeout { .. }) => Err(Error::ToolTimeout {
                server: server.to_string(),
                tool: tool.to_string(),
                millis: timeout.as_millis(),
            }),
            Err(ServiceError::McpError(error)) if error.code.0 == URL_ELICITATION_REQUIRED => {
                let outcome = crate::elicitation::ask_required_pages(elicitation, &error).await;
                Err(failed(outcome))
            }
            Err(e) => Err(request_failed(&e, server, failed)),
        };
    }
}

/// A failed request in words; a 401 or 403 `insufficient_scope` is [`Error::NeedsSignIn`]
/// (SPEC-4).
fn request_failed(
    error: &ServiceError,
    server: &str,
    failed: impl FnOnce(String) -> Error,
) -> Error {
    match crate::error::refusal_of(error) {
        Some(refusal) => Error::NeedsSignIn {
            server: server.to_string(),
            reason: crate::error::refusal_words(&refusal, false),
            scopes: match refusal {
                crate::error::Refusal::InsufficientScope(scopes) => scopes,
                crate::error::Refusal::Unauthorized => Vec::new(),
            },
        },
        None => failed(crate::error::in_words(error)),
    }
}

/// `notifications/cancelled` for request `id`.
async fn send_cancelled(peer: &Peer<RoleClient>, id: RequestId, reason: &str) {
    let notification = CancelledNotification::new(CancelledNotificationParam::new(
        Some(id),
        Some(reason.to_string()),
    ));
    if let Err(e) = peer.send_notification(notification.into()).await {
        tracing::info!("cannot send notifications/cancelled: {e}");
    }
}

/// A connection's transport with its `notifications/progress` delivered as they are read, in
/// order with the responses: rmcp hands each notification to the handler in a task of its own,
/// which can run after the result that followed it, when the call's route is gone (LONG-2).
pub(crate) struct ProgressTap<T> {
    pub inner: T,
    pub routes: ProgressRoutes,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for ProgressTap<T> {
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if let Some(JsonRpcMessage::Notification(JsonRpcNotification {
            notification: ServerNotification::ProgressNotification(progress),
            ..
        })) = &message
        {
            self.routes.deliver(progress.params.clone());
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// Removes a call's progress route when the call ends, however it ends.
struct Unroute<'a> {
    routes: &'a ProgressRoutes,
    token: ProgressToken,
}

impl Drop for Unroute<'_> {
    fn drop(&mut self) {
        self.routes.remove(&self.token);
    }
}
