//! Tool calls the server runs as tasks (SRV-5, the 2026-07-28 `io.modelcontextprotocol/tasks`
//! extension): a `tools/call` answered with a task handle is polled with `tasks/get` at the
//! server's `pollIntervalMs` until it ends; each new status message reaches the caller as
//! progress (a message, no total); a task that asks (`input_required`) has its questions put to
//! the user through the elicitation hook and answered with `tasks/update`; a task the caller
//! stops, or one whose status does not change for the call's timeout, gets `tasks/cancel`
//! (LONG-3, LONG-4).

use std::time::Duration;

use rmcp::model::{
    CallToolResult, CancelTaskParams, CreateTaskResult, ExtensionCapabilities, GetTaskParams,
    InputRequiredResult, JsonObject, TASKS_EXTENSION_ID, Task, TaskPayload, UpdateTaskParams,
};
use rmcp::{Peer, RoleClient};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::live::{CallHooks, Progress};

/// Polled this often when the server suggests no interval.
const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Never polled faster than this, whatever the server suggests.
const MIN_POLL_INTERVAL: Duration = Duration::from_millis(10);

/// How long a stopped call waits for the server to acknowledge `tasks/cancel`.
const CANCEL_WAIT: Duration = Duration::from_secs(5);

/// The client's `extensions` capability declaring the Tasks extension.
pub(crate) fn extension_capability() -> ExtensionCapabilities {
    let mut extensions = ExtensionCapabilities::new();
    extensions.insert(TASKS_EXTENSION_ID.to_string(), JsonObject::new());
    extensions
}

/// Where the task runs and who waits for it.
pub(crate) struct Follow<'a> {
    pub peer: &'a Peer<RoleClient>,
    pub elicitation: Option<&'a crate::elicitation::ElicitationHook>,
    pub server: &'a str,
    pub tool: &'a str,
    /// Without a status change for this long, the task is cancelled.
    pub timeout: Duration,
}

/// What became of one poll.
enum Step {
    Poll(Box<(Task, TaskPayload)>),
    Stopped,
    TimedOut,
}

/// Follows the task `created` until it ends, the caller stops it or it stalls.
pub(crate) async fn follow(
    target: Follow<'_>,
    created: CreateTaskResult,
    hooks: &CallHooks,
) -> Result<CallToolResult, Error> {
    let Follow {
        peer,
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
    let task_id = created.task.task_id.clone();
    let mut rounds = crate::mrtr::Rounds::new(elicitation);
    let mut messages = 0u32;
    let mut last_seen = (created.task.status, None::<String>);
    let mut last_change = Instant::now();
    let mut task = created.task;
    let mut payload = TaskPayload::Working;
    loop {
        let seen = (task.status, task.status_message.clone());
        if seen != last_seen {
            last_change = Instant::now();
            if let Some(message) = &task.status_message
                && seen.1 != last_seen.1
                && let Some(sink) = &hooks.progress
            {
                messages += 1;
                sink(Progress {
                    progress: f64::from(messages),
                    total: None,
                    message: Some(message.clone()),
                });
            }
            last_seen = seen;
        }
        match payload {
            TaskPayload::Completed { result } => {
                return serde_json::from_value(serde_json::Value::Object(result))
                    .map_err(|e| failed(format!("the task's result is not a tool result: {e}")));
            }
            TaskPayload::Failed { error } => {
                let message = error
                    .get("message")
                    .and_then(|m| m.as_str())
                    .unwrap_or("no reason given");
                return Err(failed(format!("the task failed: {message}")));
            }
            TaskPayload::Cancelled => {
                return Err(failed("the server cancelled the task".into()));
            }
            TaskPayload::InputRequired { input_requests } => {
                let asked = InputRequiredResult::from_input_requests(input_requests);
                let answered = tokio::select! {
                    answered = rounds.answer(asked) => answered.map_err(failed)?,
                    () = cancel.cancelled() => {
                        return Err(stop(peer, &task_id, server, tool).await);
                    }
                };
                let responses = answered.input_responses.unwrap_or_default();
                let update = UpdateTaskParams::new(task_id.clone(), responses);
                peer.update_task(update)
                    .await
                    .map_err(|e| failed(crate::error::in_words(&e)))?;
                // The time the user took to answer is not the task stalling.
                last_change = Instant::now();
            }
            _ => {}
        }
        let interval = task
            .poll_interval_ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_POLL_INTERVAL)
            .max(MIN_POLL_INTERVAL);
        match poll(peer, &task_id, interval, last_change + timeout, &cancel).await {
            Ok(Step::Poll(next)) => (task, payload) = *next,
            Ok(Step::Stopped) => return Err(stop(peer, &task_id, server, tool).await),
            Ok(Step::TimedOut) => {
                send_cancel(peer, &task_id).await;
                return Err(Error::ToolTimeout {
                    server: server.to_string(),
                    tool: tool.to_string(),
                    millis: timeout.as_millis(),
                });
            }
            Err(e) => return Err(failed(crate::error::in_words(&e))),
        }
    }
}

/// Waits `interval`, then asks `tasks/get`; the caller's stop or the deadline end the wait.
async fn poll(
    peer: &Peer<RoleClient>,
    task_id: &str,
    interval: Duration,
    deadline: Instant,
    cancel: &CancellationToken,
) -> Result<Step, rmcp::service::ServiceError> {
    let get = async {
        tokio::time::sleep(interval).await;
        peer.get_task(GetTaskParams::new(task_id)).await
    };
    tokio::select! {
        got = get => got.map(|got| Step::Poll(Box::new((got.task.task, got.task.payload)))),
        () = tokio::time::sleep_until(deadline) => Ok(Step::TimedOut),
        () = cancel.cancelled() => Ok(Step::Stopped),
    }
}

/// The caller stopped the task: the server is told with `tasks/cancel`.
async fn stop(peer: &Peer<RoleClient>, task_id: &str, server: &str, tool: &str) -> Error {
    send_cancel(peer, task_id).await;
    Error::ToolCancelled {
        server: server.to_string(),
        tool: tool.to_string(),
    }
}

/// `tasks/cancel` for `task_id`; a server that does not acknowledge it (within
/// [`CANCEL_WAIT`]) is only logged.
async fn send_cancel(peer: &Peer<RoleClient>, task_id: &str) {
    let sent = tokio::time::timeout(
        CANCEL_WAIT,
        peer.cancel_task(CancelTaskParams::new(task_id)),
    );
    match sent.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::info!("cannot cancel task {task_id}: {e}"),
        Err(_) => tracing::info!("task {task_id}: tasks/cancel was not acknowledged"),
    }
}
