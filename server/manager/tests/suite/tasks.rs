//! Tool calls the server runs as tasks (SRV-5), against our test server's `task` tool (the
//! 2026-07-28 `io.modelcontextprotocol/tasks` extension): the task runs to its result, its
//! status messages arrive as progress (a message, no total), its question is put to the user
//! and answered, and it is cancelled with `tasks/cancel` on stop (LONG-3) and when its status
//! does not change for the tool timeout (LONG-4) — the server records each `tasks/cancel`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use wave_mcp_manager::{
    CallHooks, CancellationToken, Elicitation, ElicitationAction, ElicitationAnswer, Elicitor,
    Error, Progress, result_text,
};

use super::support::*;

/// The progress the call reported, in order.
#[derive(Clone, Default)]
struct Reported(Arc<Mutex<Vec<Progress>>>);

impl Reported {
    fn hooks(&self, cancel: Option<CancellationToken>) -> CallHooks {
        let reported = self.0.clone();
        CallHooks {
            progress: Some(Arc::new(move |p: Progress| {
                reported.lock().unwrap().push(p);
            })),
            cancel,
        }
    }

    fn messages(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|p| p.message.clone())
            .collect()
    }
}

/// The event log lines `event <pid> <detail>` of `event`, their details.
fn details(sandbox: &SandboxDirs, event: &str) -> Vec<String> {
    std::fs::read_to_string(sandbox.path("events.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            (words.next()? == event).then(|| words.skip(1).collect::<Vec<_>>().join(" "))
        })
        .collect()
}

fn arguments(value: Value) -> Option<Map<String, Value>> {
    value.as_object().cloned()
}

fn task_server(sandbox: &SandboxDirs, extra: Value) -> wave_mcp_manager::McpManager {
    let mut entry = server(sandbox, "a", &["--tools", "echo,task"]);
    if let (Some(entry), Some(extra)) = (entry.as_object_mut(), extra.as_object()) {
        entry.extend(extra.clone());
    }
    write_project(sandbox, json!({ "a": entry }));
    manager(sandbox)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_5_a_task_tool_runs_to_its_result_with_its_status_messages_as_progress() {
    let sandbox = sandbox();
    let manager = task_server(&sandbox, json!({}));
    manager.connect("a").await.unwrap();
    let reported = Reported::default();
    let result = manager
        .call_tool_with(
            "mcp__a__task",
            arguments(json!({ "steps": 3 })),
            &reported.hooks(None),
        )
        .await
        .unwrap();
    assert_eq!(result_text(&result), "task finished after 3 steps");
    assert_eq!(details(&sandbox, "task-create"), ["task-1"]);
    assert_eq!(
        reported.messages(),
        [
            "queued",
            "step 1 of 3",
            "step 2 of 3",
            "step 3 of 3",
            "done"
        ]
    );
    assert!(
        reported.0.lock().unwrap().iter().all(|p| p.total.is_none()),
        "a task's progress has no total"
    );
    manager.cleanup().await;
    sandbox.assert_no_process_left().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_5_stop_cancels_the_task_on_the_server() {
    let sandbox = sandbox();
    let manager = task_server(&sandbox, json!({}));
    manager.connect("a").await.unwrap();
    let reported = Reported::default();
    let cancel = CancellationToken::new();
    let stopper = {
        let (reported, cancel) = (reported.clone(), cancel.clone());
        tokio::spawn(async move {
            // Stop once the task is seen running.
            let running = eventually(Duration::from_secs(60), || {
                reported.messages().iter().any(|m| m == "holding")
            })
            .await;
            cancel.cancel();
            running
        })
    };
    let outcome = manager
        .call_tool_with(
            "mcp__a__task",
            arguments(json!({ "hold": true })),
            &reported.hooks(Some(cancel)),
        )
        .await;
    assert!(
        stopper.await.unwrap(),
        "the task never reported it was running"
    );
    assert!(
        matches!(outcome, Err(Error::ToolCancelled { .. })),
        "{outcome:?}"
    );
    assert_eq!(details(&sandbox, "task-cancel"), ["task-1"]);
    // The connection is still good for other calls.
    let echoed = manager
        .call_tool("mcp__a__echo", arguments(json!({ "text": "still here" })))
        .await
        .unwrap();
    assert_eq!(result_text(&echoed), "still here");
    manager.cleanup().await;
    sandbox.assert_no_process_left().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_5_a_task_whose_status_stays_the_same_past_the_tool_timeout_is_cancelled() {
    let sandbox = sandbox();
    let manager = task_server(&sandbox, json!({ "toolTimeoutMs": 300 }));
    manager.connect("a").await.unwrap();
    let reported = Reported::default();
    let outcome = manager
        .call_tool_with(
            "mcp__a__task",
            arguments(json!({ "hold": true })),
            &reported.hooks(None),
        )
        .await;
    assert!(
        matches!(outcome, Err(Error::ToolTimeout { .. })),
        "{outcome:?}"
    );
    assert_eq!(details(&sandbox, "task-cancel"), ["task-1"]);
    // Under load the first poll may come after the deadline: only the seed status is sure.
    assert_eq!(
        reported.messages().first().map(String::as_str),
        Some("queued")
    );
    manager.cleanup().await;
    sandbox.assert_no_process_left().await;
}

/// Answers every form with `answer: "yes"`, and remembers the questions.
#[derive(Default)]
struct SaysYes(Mutex<Vec<String>>);

impl Elicitor for SaysYes {
    fn url_mode(&self) -> bool {
        false
    }

    fn elicit(&self, request: Elicitation) -> BoxFuture<'static, ElicitationAnswer> {
        self.0.lock().unwrap().push(request.message);
        let mut content = Map::new();
        content.insert("answer".into(), json!("yes"));
        Box::pin(async move {
            ElicitationAnswer {
                action: ElicitationAction::Accept,
                content: Some(content),
            }
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_5_a_task_question_is_put_to_the_user_and_answered_with_tasks_update() {
    let sandbox = sandbox();
    let manager = task_server(&sandbox, json!({}));
    let user = Arc::new(SaysYes::default());
    manager.set_elicitor(user.clone());
    manager.connect("a").await.unwrap();
    let reported = Reported::default();
    let result = manager
        .call_tool_with(
            "mcp__a__task",
            arguments(json!({ "steps": 1, "ask": true })),
            &reported.hooks(None),
        )
        .await
        .unwrap();
    assert_eq!(
        result_text(&result),
        "task finished after 1 steps, answer yes"
    );
    assert_eq!(*user.0.lock().unwrap(), ["Go on with the task?"]);
    assert_eq!(details(&sandbox, "task-update"), ["yes"]);
    assert!(
        reported
            .messages()
            .iter()
            .any(|m| m == "waiting for an answer")
    );
    manager.cleanup().await;
    sandbox.assert_no_process_left().await;
}
