//! Tool calls the server runs as tasks (SRV-5) through the real sidecar and the real CLI: the
//! model's call of our test server's `task` tool shows each status message on the running call
//! as `wave/session/progress` (a message, no total) and its result reaches the model; Stop
//! sends `tasks/cancel` (the server records it); `wave-mcp call` runs a task to its result.

use std::time::Duration;

use serde_json::json;
use wave_mcp_testkit::{FakeModel, call, say};

use super::lsp_client::*;
use super::support::*;

const PROGRESS: &str = "wave/session/progress";
const MESSAGE: &str = "wave/session/message";
const ENDED: &str = "wave/session/turnEnded";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_5_a_task_tools_status_messages_reach_the_chat_as_progress_and_its_result_the_model() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&["--tools", "task"]) }));
    let model = FakeModel::start(vec![
        call("mcp__a__task", json!({ "steps": 2 })),
        say("the task is done"),
    ])
    .await;
    sandbox.allow_tool_calls();
    let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |_| {}).await;
    let turn = sidecar.send_text("run the task").await;
    let ended = sidecar
        .wait_notification(0, ENDED, |p| p["turn"] == turn)
        .await;
    assert!(ended.get("error").is_none(), "{ended:#}");
    let progress = sidecar.notifications(PROGRESS);
    let messages: Vec<&str> = progress
        .iter()
        .map(|p| {
            assert_eq!(p["turn"], turn, "{p:#}");
            assert!(p.get("total").is_none_or(|t| t.is_null()), "{p:#}");
            p["message"].as_str().unwrap()
        })
        .collect();
    assert_eq!(messages, ["queued", "step 1 of 2", "step 2 of 2", "done"]);
    let tool = sidecar
        .notifications(MESSAGE)
        .into_iter()
        .find(|m| m["message"]["role"] == "tool")
        .expect("the task's result is recorded");
    assert_eq!(tool["message"]["content"], "task finished after 2 steps");
    assert!(
        model.request(1)["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "tool"
                && m["content"]
                    .to_string()
                    .contains("task finished after 2 steps")),
        "{:#}",
        model.request(1)
    );
    sidecar.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_5_stop_sends_tasks_cancel_for_the_running_task() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&["--tools", "task"]) }));
    let model = FakeModel::start(vec![
        call("mcp__a__task", json!({ "hold": true })),
        say("never asked"),
    ])
    .await;
    sandbox.allow_tool_calls();
    let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |_| {}).await;
    let turn = sidecar.send_text("run the task").await;
    sidecar
        .wait_notification(0, PROGRESS, |p| p["message"] == "holding")
        .await;
    assert_eq!(sandbox.count_events("task-cancel"), 0);
    let stopped = sidecar
        .ok("wave/session/cancel", json!({ "sessionId": "default" }))
        .await;
    assert_eq!(stopped["cancelled"], true);
    let ended = sidecar
        .wait_notification(0, ENDED, |p| p["turn"] == turn)
        .await;
    assert_eq!(ended["cancelled"], true, "{ended:#}");
    assert!(
        eventually(Duration::from_secs(30), || sandbox
            .count_events("task-cancel")
            == 1)
        .await,
        "the server never saw tasks/cancel: {:?}",
        sandbox.events()
    );
    assert_eq!(model.requests().len(), 1, "no model request after Stop");
    sidecar.stop().await;
}

#[test]
fn srv_5_wave_mcp_call_runs_a_task_to_its_result() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&["--tools", "task"]) }));
    let output = cli(&sandbox, &["call", "a", "task", r#"{"steps": 1}"#], &[]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        text(&output).contains("task finished after 1 steps"),
        "{}",
        text(&output)
    );
    assert_eq!(sandbox.count_events("task-create"), 1);
}
