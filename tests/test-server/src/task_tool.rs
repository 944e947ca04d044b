//! The `task` tool (SRV-5): a tool the server runs as a task of the 2026-07-28
//! `io.modelcontextprotocol/tasks` extension. Each `tasks/get` moves it one step on (status
//! message "step N of M") until it completes; `hold` keeps it working with the same message
//! until it is cancelled; `ask` first asks a question (`input_required`), answered with
//! `tasks/update`. `task-create`, `task-update` and `task-cancel` go to the event log.

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CreateTaskResult,
    DetailedTask, GetTaskResult, InputRequests, Task, TaskPayload, TaskStatus,
};
use serde_json::json;

/// The tool's name; only exposed when named in `--tools`.
pub const TASK_TOOL: &str = "task";

/// The server's suggested interval between two `tasks/get`.
const POLL_INTERVAL_MS: u64 = 20;

/// Timestamps are not what the tests look at: every task carries this one.
const TIMESTAMP: &str = "2026-07-28T00:00:00Z";

#[derive(Debug, Default)]
struct TaskState {
    steps: u64,
    done_steps: u64,
    hold: bool,
    ask: bool,
    answer: Option<String>,
    cancelled: bool,
}

/// The tasks of every session of the server.
#[derive(Debug, Default)]
pub struct Tasks {
    next_id: Mutex<u64>,
    tasks: Mutex<HashMap<String, TaskState>>,
}

/// The tool's definition: `steps`, `hold`, `ask`.
pub fn tool() -> rmcp::model::Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "steps": { "type": "integer", "description": "How many status messages before the result." },
            "hold": { "type": "boolean", "description": "Stay working, unchanged, until cancelled." },
            "ask": { "type": "boolean", "description": "Ask a question first." },
        },
    });
    let serde_json::Value::Object(schema) = schema else {
        unreachable!("a JSON object literal")
    };
    rmcp::model::Tool::new(
        TASK_TOOL,
        "Runs as a task (io.modelcontextprotocol/tasks).",
        std::sync::Arc::new(schema),
    )
}

impl Tasks {
    /// `tools/call task`: a new task, working.
    pub fn create(&self, request: &CallToolRequestParams) -> (String, CallToolResponse) {
        let argument = |name: &str| request.arguments.as_ref().and_then(|a| a.get(name));
        let state = TaskState {
            steps: argument("steps").and_then(|v| v.as_u64()).unwrap_or(3),
            hold: argument("hold").and_then(|v| v.as_bool()).unwrap_or(false),
            ask: argument("ask").and_then(|v| v.as_bool()).unwrap_or(false),
            ..TaskState::default()
        };
        let id = {
            let mut next = self.next_id.lock().unwrap_or_else(|e| e.into_inner());
            *next += 1;
            format!("task-{next}")
        };
        self.tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), state);
        let task = Task::new(&id, TaskStatus::Working, TIMESTAMP, TIMESTAMP)
            .with_status_message("queued")
            .with_poll_interval_ms(POLL_INTERVAL_MS);
        (id, CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    /// `tasks/get`: one step on, or the question, or the result.
    pub fn get(&self, task_id: &str) -> Result<GetTaskResult, McpError> {
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        let Some(state) = tasks.get_mut(task_id) else {
            return Err(McpError::invalid_params("no such task", None));
        };
        let task = |status, message: &str| {
            Task::new(task_id, status, TIMESTAMP, TIMESTAMP)
                .with_status_message(message)
                .with_poll_interval_ms(POLL_INTERVAL_MS)
        };
        let detailed = if state.cancelled {
            DetailedTask::new(
                task(TaskStatus::Cancelled, "cancelled"),
                TaskPayload::Cancelled,
            )
        } else if state.ask && state.answer.is_none() {
            let requests: InputRequests = serde_json::from_value(json!({
                "confirm": { "method": "elicitation/create", "params": {
                    "mode": "form", "message": "Go on with the task?",
                    "requestedSchema": { "type": "object", "properties": { "answer": { "type": "string" } }, "required": ["answer"] },
                }},
            }))
            .map_err(|e| McpError::internal_error(format!("bad input request: {e}"), None))?;
            DetailedTask::new(
                task(TaskStatus::InputRequired, "waiting for an answer"),
                TaskPayload::InputRequired {
                    input_requests: requests,
                },
            )
        } else if state.hold {
            DetailedTask::new(task(TaskStatus::Working, "holding"), TaskPayload::Working)
        } else if state.done_steps < state.steps {
            state.done_steps += 1;
            let message = format!("step {} of {}", state.done_steps, state.steps);
            DetailedTask::new(task(TaskStatus::Working, &message), TaskPayload::Working)
        } else {
            let mut text = format!("task finished after {} steps", state.steps);
            if let Some(answer) = &state.answer {
                text.push_str(&format!(", answer {answer}"));
            }
            let result = CallToolResult::success(vec![ContentBlock::text(text)]);
            let serde_json::Value::Object(result) = serde_json::to_value(result)
                .map_err(|e| McpError::internal_error(e.to_string(), None))?
            else {
                return Err(McpError::internal_error("result is not an object", None));
            };
            DetailedTask::new(
                task(TaskStatus::Completed, "done"),
                TaskPayload::Completed { result },
            )
        };
        Ok(GetTaskResult::new(detailed))
    }

    /// `tasks/update`: the answer to the question; returns it for the event log.
    pub fn update(
        &self,
        task_id: &str,
        responses: &rmcp::model::InputResponses,
    ) -> Result<String, McpError> {
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        let Some(state) = tasks.get_mut(task_id) else {
            return Err(McpError::invalid_params("no such task", None));
        };
        let answer = responses
            .get("confirm")
            .and_then(|r| r.pointer("/content/answer"))
            .and_then(|a| a.as_str().map(str::to_string))
            .unwrap_or_else(|| "none".into());
        state.answer = Some(answer.clone());
        Ok(answer)
    }

    /// `tasks/cancel`.
    pub fn cancel(&self, task_id: &str) -> Result<(), McpError> {
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        let Some(state) = tasks.get_mut(task_id) else {
            return Err(McpError::invalid_params("no such task", None));
        };
        state.cancelled = true;
        Ok(())
    }
}
