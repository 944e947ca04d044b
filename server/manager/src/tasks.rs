//! Tool calls the server runs as tasks (SRV-5), in both eras: the 2026-07-28
//! `io.modelcontextprotocol/tasks` extension and the 2025-11-25 `tasks` capability. A task is
//! polled with `tasks/get` at the server's interval (`pollIntervalMs`; 2025-11-25:
//! `pollInterval`) until it ends; each new status message reaches the caller as progress (a
//! message, no total); a task the caller stops, or one whose status does not change for the
//! call's timeout, gets `tasks/cancel` (LONG-3, LONG-4). A 2026-07-28 task that asks
//! (`input_required`) has its questions put to the user through the elicitation hook and
//! answered with `tasks/update`; a 2025-11-25 one is answered the way that revision asks:
//! `tasks/result` is called, and the server's `elicitation/create` requests that arrive while it
//! is pending reach the user through the connection's client handler. A finished 2025-11-25 task
//! gives its result through `tasks/result`.
//!
//! rmcp 3.11 models only the 2026-07-28 extension (its 2025-11-25 task types went in 3.0): the
//! 2025-11-25 requests go out as custom requests built from rmcp's parameter types, and what
//! its types drop (the server's `tasks.requests.tools.call`, a tool's `execution.taskSupport`,
//! a task's `pollInterval`) is read from the server's messages as they arrive ([`Legacy`]): a
//! stdio server's lines (`notice.rs`), a Streamable HTTP server's raw answers to `initialize`
//! and `tools/list` (`http_tee.rs`, the HTTP client under rmcp's transport). The legacy SSE
//! transport (2024-11-05) never negotiates 2025-11-25, so nothing is read there.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, CancelTaskParams, ClientRequest, CustomRequest,
    ExtensionCapabilities, GetTaskParams, InputRequiredResult, JsonObject, ProtocolVersion,
    ServerResult, TASKS_EXTENSION_ID, Task, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};
use serde_json::Value;
use tokio::time::Instant;

use crate::error::Error;
use crate::live::{CallHooks, Progress};

/// Polled this often when the server suggests no interval.
const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Never polled faster than this, whatever the server suggests.
const MIN_POLL_INTERVAL: Duration = Duration::from_millis(10);

/// How long a stopped call waits for the server to acknowledge `tasks/cancel`.
const CANCEL_WAIT: Duration = Duration::from_secs(5);

/// The retention asked for a 2025-11-25 task (`task.ttl`), in milliseconds: an hour.
const LEGACY_TTL_MS: u64 = 60 * 60 * 1000;

/// The client's `extensions` capability declaring the Tasks extension.
pub(crate) fn extension_capability() -> ExtensionCapabilities {
    let mut extensions = ExtensionCapabilities::new();
    extensions.insert(TASKS_EXTENSION_ID.to_string(), JsonObject::new());
    extensions
}

/// Which revision's tasks a call follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// The 2026-07-28 `io.modelcontextprotocol/tasks` extension.
    Extension,
    /// The 2025-11-25 `tasks` capability.
    Legacy,
}

/// What a 2025-11-25 server said about tasks that rmcp's types do not keep: whether it runs
/// `tools/call` as tasks (`capabilities.tasks.requests.tools.call`) and which of its tools may
/// or must run as one (`execution.taskSupport` `optional` or `required`). Fed with the raw
/// lines of a stdio server's output (`notice.rs`), in the order it wrote them, or with the raw
/// answers of a Streamable HTTP server to `initialize` and `tools/list` (`http_tee.rs`), until
/// the connection shows it will never run a tool as a 2025-11-25 task: then reading stops, and
/// the reader keeps no long lines and scans nothing for it, or the HTTP requests go through
/// rmcp's client untouched ([`Legacy::is_reading`]).
#[derive(Clone, Default)]
pub(crate) struct Legacy(Arc<LegacyShared>);

#[derive(Default)]
struct LegacyShared {
    state: Mutex<LegacyState>,
    /// Set once the server is known not to run tool calls as 2025-11-25 tasks.
    done: AtomicBool,
}

#[derive(Default)]
struct LegacyState {
    tool_calls: bool,
    tools: HashSet<String>,
}

impl Legacy {
    /// The needles a line must hold to be read: an `initialize` result's `tasks` capability or
    /// a tool's `taskSupport`.
    pub(crate) const NEEDLES: [&'static [u8]; 2] = [b"\"tasks\"", b"\"taskSupport\""];

    /// Reads one JSON-RPC message of the server: an `initialize` result (its `tasks`
    /// capability) or a page of `tools/list` (each tool's `execution.taskSupport`).
    pub(crate) fn read_line(&self, line: &[u8]) {
        let Ok(message) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let Some(result) = message.get("result") else {
            return;
        };
        let mut state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(version) = result.get("protocolVersion") {
            state.tool_calls = version == ProtocolVersion::V_2025_11_25.as_str()
                && result
                    .pointer("/capabilities/tasks/requests/tools/call")
                    .is_some_and(Value::is_object);
            if !state.tool_calls {
                self.stop_reading();
                return;
            }
        }
        let Some(tools) = result.get("tools").and_then(Value::as_array) else {
            return;
        };
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let support = tool
                .pointer("/execution/taskSupport")
                .and_then(Value::as_str);
            if matches!(support, Some("optional" | "required")) {
                state.tools.insert(name.to_string());
            } else {
                state.tools.remove(name);
            }
        }
    }

    /// Whether `tool` is called as a task on a connection that negotiated `version`: only on
    /// 2025-11-25, only when the server runs tool calls as tasks and the tool allows it.
    pub(crate) fn runs_as_task(&self, version: Option<&ProtocolVersion>, tool: &str) -> bool {
        if version != Some(&ProtocolVersion::V_2025_11_25) {
            return false;
        }
        let state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        state.tool_calls && state.tools.contains(tool)
    }

    /// Whether the server's lines are still worth reading: until it is known not to run tool
    /// calls as 2025-11-25 tasks (its `initialize` result, or the negotiated revision).
    pub(crate) fn is_reading(&self) -> bool {
        !self.0.done.load(Ordering::Relaxed)
    }

    /// Whether the server's `tools/list` answers are worth reading: its `initialize` result said
    /// it runs tool calls as 2025-11-25 tasks (HTTP reads nothing else: `http_tee.rs`).
    pub(crate) fn reads_tools(&self) -> bool {
        self.is_reading()
            && self
                .0
                .state
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .tool_calls
    }

    /// No more lines are read: the server will never run a tool as a 2025-11-25 task.
    pub(crate) fn stop_reading(&self) {
        self.0.done.store(true, Ordering::Relaxed);
    }
}

/// The 2025-11-25 `tools/call` that asks for a task: `params` with `task: { ttl }`.
pub(crate) fn legacy_call_request(params: &CallToolRequestParams) -> ClientRequest {
    let mut value = serde_json::to_value(params).unwrap_or_default();
    if let Some(object) = value.as_object_mut() {
        object.insert("task".into(), serde_json::json!({ "ttl": LEGACY_TTL_MS }));
    }
    ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(value)))
}

/// A 2025-11-25 `CreateTaskResult` (`{ task: Task }`), as rmcp's task.
pub(crate) fn legacy_created(result: &Value) -> Option<Task> {
    legacy_task(result.get("task")?)
}

/// A 2025-11-25 `Task` (`pollInterval`, `ttl`) as rmcp's (`pollIntervalMs`, `ttlMs`).
fn legacy_task(value: &Value) -> Option<Task> {
    let text = |key: &str| value.get(key).and_then(Value::as_str);
    let status: TaskStatus = serde_json::from_value(value.get("status")?.clone()).ok()?;
    let mut task = Task::new(
        text("taskId")?,
        status,
        text("createdAt").unwrap_or_default(),
        text("lastUpdatedAt").unwrap_or_default(),
    );
    if let Some(message) = text("statusMessage") {
        task = task.with_status_message(message);
    }
    if let Some(interval) = value.get("pollInterval").and_then(Value::as_u64) {
        task = task.with_poll_interval_ms(interval);
    }
    if let Some(ttl) = value.get("ttl").and_then(Value::as_u64) {
        task = task.with_ttl_ms(ttl);
    }
    Some(task)
}

/// Where the task runs and who waits for it.
pub(crate) struct Follow<'a> {
    pub peer: &'a Peer<RoleClient>,
    pub elicitation: Option<&'a crate::elicitation::ElicitationHook>,
    pub server: &'a str,
    pub tool: &'a str,
    /// Without a status change for this long, the task is cancelled.
    pub timeout: Duration,
    pub era: Era,
}

/// A pending 2025-11-25 `tasks/result`.
type Pending<'a> = Pin<Box<dyn Future<Output = Result<ServerResult, ServiceError>> + Send + 'a>>;

/// What became of one poll.
enum Step {
    Poll(Box<(Task, TaskPayload)>),
    /// A 2025-11-25 `tasks/result` answered.
    Result(Box<Result<ServerResult, ServiceError>>),
    Stopped,
    TimedOut,
}

/// Follows the task `created` until it ends, the caller stops it or it stalls.
pub(crate) async fn follow(
    target: Follow<'_>,
    created: Task,
    hooks: &CallHooks,
) -> Result<CallToolResult, Error> {
    let Follow {
        peer,
        elicitation,
        server,
        tool,
        timeout,
        era,
    } = target;
    let failed = |reason: String| Error::ToolCall {
        server: server.to_string(),
        tool: tool.to_string(),
        reason,
    };
    let cancel = hooks.cancel.clone().unwrap_or_default();
    let task_id = created.task_id.clone();
    let mut rounds = crate::mrtr::Rounds::new(elicitation);
    let mut messages = 0u32;
    let mut last_seen = (created.status, None::<String>);
    let mut last_change = Instant::now();
    let mut interval = created.poll_interval_ms;
    let mut task = created;
    let mut payload = TaskPayload::Working;
    // 2025-11-25: the `tasks/result` in flight, once the task asked or ended.
    let mut pending: Option<Pending<'_>> = None;
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
        // A 2025-11-25 `tasks/get` that leaves out the interval keeps the last one given.
        interval = task.poll_interval_ms.or(interval);
        if era == Era::Legacy {
            match task.status {
                TaskStatus::Cancelled => {
                    return Err(failed("the server cancelled the task".into()));
                }
                // The result (or the questions the task waits on) come with `tasks/result`.
                TaskStatus::Completed | TaskStatus::Failed | TaskStatus::InputRequired
                    if pending.is_none() =>
                {
                    pending = Some(Box::pin(legacy_result(peer, &task_id)));
                }
                _ => {}
            }
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
                        return Err(stop(peer, &task_id, server, tool, era).await);
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
        let wait = interval
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_POLL_INTERVAL)
            .max(MIN_POLL_INTERVAL);
        // While a 2025-11-25 task waits on the user (its questions arrive while `tasks/result`
        // is pending), the time they take is not the task stalling.
        let deadline = if era == Era::Legacy && task.status == TaskStatus::InputRequired {
            None
        } else {
            Some(last_change + timeout)
        };
        let get = async {
            tokio::time::sleep(wait).await;
            match era {
                Era::Extension => peer
                    .get_task(GetTaskParams::new(task_id.as_str()))
                    .await
                    .map(|got| Step::Poll(Box::new((got.task.task, got.task.payload)))),
                Era::Legacy => legacy_get(peer, &task_id, &task).await,
            }
        };
        let result = async {
            match pending.as_mut() {
                Some(pending) => Step::Result(Box::new(pending.await)),
                None => std::future::pending().await,
            }
        };
        let stalled = async {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        let step = tokio::select! {
            step = result => Ok(step),
            got = get => got,
            () = stalled => Ok(Step::TimedOut),
            () = cancel.cancelled() => Ok(Step::Stopped),
        };
        match step {
            Ok(Step::Poll(next)) => (task, payload) = *next,
            Ok(Step::Result(answer)) => {
                return match *answer {
                    Ok(ServerResult::CallToolResult(result)) => Ok(result),
                    Ok(ServerResult::EmptyResult(_)) => Ok(CallToolResult::default()),
                    Ok(_) => Err(failed("unexpected response to tasks/result".into())),
                    Err(e) => Err(failed(crate::error::in_words(&e))),
                };
            }
            Ok(Step::Stopped) => return Err(stop(peer, &task_id, server, tool, era).await),
            Ok(Step::TimedOut) => {
                send_cancel(peer, &task_id, era).await;
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

/// A 2025-11-25 `tasks/get`. rmcp reads a `working` answer as its own task (without the
/// interval: `last` keeps it); any other as a custom result, read here.
async fn legacy_get(
    peer: &Peer<RoleClient>,
    task_id: &str,
    last: &Task,
) -> Result<Step, ServiceError> {
    let got = peer
        .send_request(legacy_request("tasks/get", task_id))
        .await?;
    let task = match got {
        ServerResult::GetTaskResult(got) => {
            let mut task = got.task.task;
            task.poll_interval_ms = task.poll_interval_ms.or(last.poll_interval_ms);
            task
        }
        ServerResult::CustomResult(custom) => {
            legacy_task(&custom.0).ok_or(ServiceError::UnexpectedResponse)?
        }
        _ => return Err(ServiceError::UnexpectedResponse),
    };
    Ok(Step::Poll(Box::new((task, TaskPayload::Working))))
}

/// A 2025-11-25 `tasks/result`: the tool's result once the task ends.
async fn legacy_result(
    peer: &Peer<RoleClient>,
    task_id: &str,
) -> Result<ServerResult, ServiceError> {
    peer.send_request(legacy_request("tasks/result", task_id))
        .await
}

/// A 2025-11-25 task request (`tasks/get`, `tasks/result`, `tasks/cancel`): rmcp's parameters.
fn legacy_request(method: &str, task_id: &str) -> ClientRequest {
    let params = serde_json::to_value(GetTaskParams::new(task_id)).ok();
    ClientRequest::CustomRequest(CustomRequest::new(method, params))
}

/// The caller stopped the task: the server is told with `tasks/cancel`.
async fn stop(peer: &Peer<RoleClient>, task_id: &str, server: &str, tool: &str, era: Era) -> Error {
    send_cancel(peer, task_id, era).await;
    Error::ToolCancelled {
        server: server.to_string(),
        tool: tool.to_string(),
    }
}

/// `tasks/cancel` for `task_id`; a server that does not acknowledge it (within
/// [`CANCEL_WAIT`]) is only logged.
async fn send_cancel(peer: &Peer<RoleClient>, task_id: &str, era: Era) {
    let sent = async {
        match era {
            Era::Extension => peer.cancel_task(CancelTaskParams::new(task_id)).await,
            Era::Legacy => peer
                .send_request(legacy_request("tasks/cancel", task_id))
                .await
                .map(drop),
        }
    };
    match tokio::time::timeout(CANCEL_WAIT, sent).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::info!("cannot cancel task {task_id}: {e}"),
        Err(_) => tracing::info!("task {task_id}: tasks/cancel was not acknowledged"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // SRV-5: a 2025-11-25 server's `tasks` capability and its tools' `execution.taskSupport`
    // decide which calls ask for a task, on that revision only.
    #[test]
    fn srv_5_legacy_task_tools_are_read_from_the_server_messages() {
        let legacy = Legacy::default();
        let v2025 = Some(&ProtocolVersion::V_2025_11_25);
        legacy.read_line(br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","execution":{"taskSupport":"required"}}]}}"#);
        assert!(!legacy.runs_as_task(v2025, "a"), "no tasks capability yet");
        legacy.read_line(br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}}}}"#);
        legacy.read_line(br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b","execution":{"taskSupport":"optional"}},{"name":"c","execution":{"taskSupport":"forbidden"}},{"name":"d"}]}}"#);
        assert!(legacy.runs_as_task(v2025, "a"));
        assert!(legacy.runs_as_task(v2025, "b"));
        assert!(!legacy.runs_as_task(v2025, "c"));
        assert!(!legacy.runs_as_task(v2025, "d"));
        assert!(!legacy.runs_as_task(Some(&ProtocolVersion::V_2026_07_28), "a"));
        // A later listing that no longer marks `a` calls it plainly.
        legacy.read_line(br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"a"}]}}"#);
        assert!(!legacy.runs_as_task(v2025, "a"));
    }

    // SRV-5: reading stops once the server shows it runs no 2025-11-25 task tools (no `tasks`
    // capability for `tools/call`, or another revision), so its stdio is not scanned for them.
    #[test]
    fn srv_5_legacy_reading_stops_for_a_server_without_task_tools() {
        let tasks = br#"{"tasks":{"requests":{"tools":{"call":{}}}}}"#;
        let initialize = |version: &str, capabilities: &[u8]| {
            let capabilities = std::str::from_utf8(capabilities).unwrap();
            format!(
                r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":"{version}","capabilities":{capabilities}}}}}"#
            )
        };
        for (version, capabilities, reading) in [
            ("2025-11-25", &tasks[..], true),
            ("2025-11-25", b"{}", false),
            ("2025-06-18", &tasks[..], false),
        ] {
            let legacy = Legacy::default();
            assert!(legacy.is_reading());
            legacy.read_line(initialize(version, capabilities).as_bytes());
            assert_eq!(legacy.is_reading(), reading, "{version} {capabilities:?}");
            legacy.read_line(br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","execution":{"taskSupport":"required"}}]}}"#);
            let v2025 = Some(&ProtocolVersion::V_2025_11_25);
            assert_eq!(legacy.runs_as_task(v2025, "a"), reading);
        }
    }

    // SRV-5: a 2025-11-25 task (`pollInterval`, `ttl`) becomes rmcp's, and the call asks for one.
    #[test]
    fn srv_5_legacy_shapes() {
        let created = serde_json::json!({ "task": {
            "taskId": "t1", "status": "working", "statusMessage": "queued",
            "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z",
            "ttl": 60000, "pollInterval": 250 } });
        let task = legacy_created(&created).unwrap();
        assert_eq!(task.task_id, "t1");
        assert_eq!(task.status, TaskStatus::Working);
        assert_eq!(task.status_message.as_deref(), Some("queued"));
        assert_eq!(task.poll_interval_ms, Some(250));
        let params = CallToolRequestParams::new("slow");
        let ClientRequest::CustomRequest(request) = legacy_call_request(&params) else {
            panic!("not a custom request");
        };
        assert_eq!(request.method, "tools/call");
        let sent = request.params.unwrap();
        assert_eq!(sent["name"], "slow");
        assert_eq!(sent["task"]["ttl"], LEGACY_TTL_MS);
    }
}
