//! Tasks against a third-party server (SRV-5): PyPI `fastmcp-tasks` (its own venv,
//! `tests/peers/py_tasks.py`), whose tools run only as tasks of the 2026-07-28
//! `io.modelcontextprotocol/tasks` extension. `wave-mcp call` runs one to its result; in a chat
//! turn its status message reaches the chat as `wave/session/progress` (a message, no total),
//! and Stop sends `tasks/cancel`, which the server acts on (it writes its cancel marker).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use wave_mcp_testkit::{FakeModel, call, say};

use super::super::lsp_client::Sidecar;
use super::super::support::*;
use super::{marked_processes, marker_env, peer_path};

const PROGRESS: &str = "wave/session/progress";
const ENDED: &str = "wave/session/turnEnded";

fn tasks_python() -> Option<PathBuf> {
    peer_path("PyPI fastmcp-tasks (tasks-venv)", "tasks-venv/bin/python")
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/py_tasks.py")
}

fn marker(sandbox: &Sandbox) -> PathBuf {
    sandbox.path("task-cancelled")
}

fn tasks_server(sandbox: &Sandbox, python: &Path) -> Value {
    let (var, value) = marker_env(sandbox);
    json!({
        "command": python,
        "args": [script(), "--cancel-marker", marker(sandbox)],
        "env": { var: value },
    })
}

#[test]
fn srv_5_wave_mcp_call_runs_a_fastmcp_task_tool_to_its_result() {
    let Some(python) = tasks_python() else { return };
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "pt": tasks_server(&sandbox, &python) }));
    let output = cli(&sandbox, &["call", "pt", "crunch", r#"{"steps": 2}"#], &[]);
    assert!(output.status.success(), "{}", text(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "crunched 2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_5_a_fastmcp_task_shows_its_status_and_stop_cancels_it_on_the_server() {
    let Some(python) = tasks_python() else { return };
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "pt": tasks_server(&sandbox, &python) }));
    let model = FakeModel::start(vec![
        call("mcp__pt__wait_forever", json!({})),
        say("never asked"),
    ])
    .await;
    sandbox.allow_tool_calls();
    let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |_| {}).await;
    let turn = sidecar.send_text("wait").await;
    let status = sidecar
        .wait_notification(0, PROGRESS, |p| p["message"] == "waiting")
        .await;
    assert_eq!(status["turn"], turn);
    assert!(status.get("total").is_none_or(Value::is_null), "{status:#}");
    assert!(!marker(&sandbox).exists());
    let stopped = sidecar
        .ok("wave/session/cancel", json!({ "sessionId": "default" }))
        .await;
    assert_eq!(stopped["cancelled"], true);
    let ended = sidecar
        .wait_notification(0, ENDED, |p| p["turn"] == turn)
        .await;
    assert_eq!(ended["cancelled"], true, "{ended:#}");
    assert!(
        eventually(Duration::from_secs(60), || marker(&sandbox).exists()).await,
        "the server never cancelled the task"
    );
    sidecar.stop().await;
    assert!(
        eventually(Duration::from_secs(10), || marked_processes(&sandbox)
            .is_empty())
        .await
    );
}
