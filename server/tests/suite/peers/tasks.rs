//! Tasks against a third-party server (SRV-5): PyPI `fastmcp-tasks` (its own venv,
//! `tests/peers/py_tasks.py`), whose tools run only as tasks of the 2026-07-28
//! `io.modelcontextprotocol/tasks` extension. `wave-mcp call` runs one to its result; in a chat
//! turn its status message reaches the chat as `wave/session/progress` (a message, no total),
//! and Stop sends `tasks/cancel`, which the server acts on (it writes its cancel marker).
//! The same for the 2025-11-25 `tasks` capability: npm `@modelcontextprotocol/server-everything`
//! (`simulate-research-query`, with its question through `tasks/result`) and
//! `tests/peers/ts_tasks.mjs` on the TypeScript SDK v1 (a task that never changes status: the
//! timeout and Stop send `tasks/cancel`), both also over Streamable HTTP (server-everything
//! answering in SSE streams, the TypeScript peer in JSON bodies), where what rmcp's types drop
//! of the server's tasks is read from its raw answers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use wave_mcp_manager::{CallHooks, ElicitationAnswer, McpManager, Progress, result_text};
use wave_mcp_testkit::{FakeModel, call, say};

use super::super::lsp_client::Sidecar;
use super::super::support::*;
use super::elicit::Scripted;
use super::{HttpPeer, everything_bin, marked_processes, marker_env, peer_path, start_everything};

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
    stop_cancels_the_task_on_the_server(&sandbox, "mcp__pt__wait_forever").await;
    gone(&sandbox).await;
}

// ---- the 2025-11-25 revision: the `tasks` capability ------------------------------------------

/// npm `@modelcontextprotocol/server-everything` over stdio: it speaks 2025-11-25, declares
/// `tasks.requests.tools.call` and runs `simulate-research-query` as a task only.
fn everything(sandbox: &Sandbox) -> Option<Value> {
    let bin = peer_path(
        "npm @modelcontextprotocol/server-everything",
        "npm/node_modules/.bin/mcp-server-everything",
    )?;
    let (var, value) = marker_env(sandbox);
    Some(json!({ "command": bin, "args": ["stdio"], "env": { var: value } }))
}

/// `tests/peers/ts_tasks.mjs` on the TypeScript SDK v1 (`$WAVE_PEERS_DIR/sdk`): its `stuck` tool
/// is a 2025-11-25 task that never changes status; `tasks/cancel` makes it write its marker.
fn ts_tasks(sandbox: &Sandbox, extra: Value) -> Option<Value> {
    let modules = peer_path(
        "npm @modelcontextprotocol/sdk",
        "sdk/node_modules/@modelcontextprotocol/sdk/package.json",
    )?;
    let modules = modules.ancestors().nth(3).unwrap().to_path_buf();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/ts_tasks.mjs");
    let (var, value) = marker_env(sandbox);
    let mut entry = json!({
        "command": "node",
        "args": [script, "--cancel-marker", marker(sandbox)],
        "env": { var: value, "WAVE_TS_MODULES": modules },
    });
    if let (Some(entry), Some(extra)) = (entry.as_object_mut(), extra.as_object()) {
        entry.extend(extra.clone());
    }
    Some(entry)
}

/// The progress messages of one call, in order.
fn progress_sink() -> (Arc<Mutex<Vec<String>>>, CallHooks) {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = seen.clone();
    let hooks = CallHooks {
        progress: Some(Arc::new(move |p: Progress| {
            assert_eq!(p.total, None, "a task's status has no total");
            sink.lock().unwrap().extend(p.message);
        })),
        cancel: None,
    };
    (seen, hooks)
}

/// A turn whose model calls `tool`, a task that never ends: its "waiting" status reaches the
/// chat as progress (no total), Stop ends the turn, the server gets the task's cancel (its marker
/// file appears), and no process is left.
async fn stop_cancels_the_task_on_the_server(sandbox: &Sandbox, tool: &str) {
    let model = FakeModel::start(vec![call(tool, json!({})), say("never asked")]).await;
    sandbox.allow_tool_calls();
    let sidecar = Sidecar::with_model(sandbox, &model.base_url, |_| {}).await;
    let turn = sidecar.send_text("wait").await;
    let status = sidecar
        .wait_notification(0, PROGRESS, |p| p["message"] == "waiting")
        .await;
    assert_eq!(status["turn"], turn);
    assert!(status.get("total").is_none_or(Value::is_null), "{status:#}");
    assert!(!marker(sandbox).exists());
    let stopped = sidecar
        .ok("wave/session/cancel", json!({ "sessionId": "default" }))
        .await;
    assert_eq!(stopped["cancelled"], true);
    let ended = sidecar
        .wait_notification(0, ENDED, |p| p["turn"] == turn)
        .await;
    assert_eq!(ended["cancelled"], true, "{ended:#}");
    assert!(
        eventually(Duration::from_secs(60), || marker(sandbox).exists()).await,
        "the server never got the task's cancel"
    );
    sidecar.stop().await;
}

async fn gone(sandbox: &Sandbox) {
    let gone = eventually(Duration::from_secs(10), || {
        marked_processes(sandbox).is_empty()
    })
    .await;
    assert!(gone, "left running: {:?}", marked_processes(sandbox));
}

// SRV-5: in a chat turn, server-everything's `simulate-research-query` (2025-11-25,
// `taskSupport: "required"`) runs as a task: created with `tools/call` + `task`, polled with
// `tasks/get`, its result fetched with `tasks/result` and given to the model; each stage's status
// message reached the chat as `wave/session/progress` (a message, no total).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_5_everything_research_query_runs_as_a_2025_11_25_task() {
    let sandbox = Sandbox::new();
    let Some(entry) = everything(&sandbox) else {
        return;
    };
    sandbox.write_project(json!({ "everything": entry }));
    research_runs_as_a_task(&sandbox).await;
    gone(&sandbox).await;
}

// SRV-5: the same over Streamable HTTP, where server-everything answers in SSE streams: its
// `initialize` result and `tools/list` (which rmcp's types drop the task fields of) are read on
// the way, so the tool is called with `task` and its stages reach the chat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_5_everything_research_query_runs_as_a_2025_11_25_task_over_streamable_http() {
    let Some(bin) = everything_bin() else {
        return;
    };
    let sandbox = Sandbox::new();
    let peer = start_everything(&sandbox, &bin, "streamableHttp").await;
    sandbox.write_project(json!({ "everything": { "type": "http", "url": peer.url("/mcp") } }));
    research_runs_as_a_task(&sandbox).await;
    drop(peer);
    gone(&sandbox).await;
}

/// A turn whose model calls server-everything's `simulate-research-query` (2025-11-25,
/// `taskSupport: "required"`): it runs as a task, created with `tools/call` + `task`, polled with
/// `tasks/get`, its result fetched with `tasks/result` and given to the model; each stage's
/// status message reached the chat as `wave/session/progress` (a message, no total).
async fn research_runs_as_a_task(sandbox: &Sandbox) {
    let model = FakeModel::start(vec![
        call(
            "mcp__everything__simulate-research-query",
            json!({ "topic": "tide pools" }),
        ),
        say("researched"),
    ])
    .await;
    sandbox.allow_tool_calls();
    let sidecar = Sidecar::with_model(sandbox, &model.base_url, |_| {}).await;
    let turn = sidecar.send_text("research tide pools").await;
    let ended = sidecar
        .wait_notification(0, ENDED, |p| p["turn"] == turn)
        .await;
    assert!(ended.get("error").is_none(), "{ended:#}");
    let messages: Vec<String> = sidecar
        .notifications(PROGRESS)
        .iter()
        .map(|p| {
            assert!(p.get("total").is_none_or(Value::is_null), "{p:#}");
            p["message"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    // Polled at the server's `pollInterval` (a second, a stage's length): some stages may fall
    // between two polls, but each one seen is shown once, in order.
    let stages = [
        "Gathering sources...",
        "Analyzing content...",
        "Synthesizing findings...",
        "Generating report...",
    ];
    let order: Vec<usize> = messages
        .iter()
        .map(|m| {
            stages
                .iter()
                .position(|s| s == m)
                .unwrap_or_else(|| panic!("{m}"))
        })
        .collect();
    assert!(
        !order.is_empty() && order.is_sorted_by(|a, b| a < b),
        "{messages:?}"
    );
    let asked = model.request(1);
    let tool = asked["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("{asked:#}"));
    let text = tool["content"].to_string();
    assert!(text.contains("# Research Report: tide pools"), "{text}");
    assert!(text.contains("Stage 4: Generating report"), "{text}");
    sidecar.stop().await;
}

// SRV-5: an ambiguous query puts the task in `input_required`; the client calls `tasks/result`,
// the server's `elicitation/create` (related to the task) reaches the user, and the answer
// shapes the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_5_everything_task_question_reaches_the_user_through_tasks_result() {
    let sandbox = Sandbox::new();
    let Some(entry) = everything(&sandbox) else {
        return;
    };
    let manager = McpManager::new(sandbox.options(json!({ "everything": entry })));
    let elicitor = Arc::new(Scripted {
        asked: Mutex::default(),
        answers: Mutex::new(vec![ElicitationAnswer::accept(
            json!({ "interpretation": "snake" }).as_object().cloned(),
        )]),
    });
    manager.set_elicitor(elicitor.clone());
    manager.connect("everything").await.expect("connect");
    let (seen, hooks) = progress_sink();
    let arguments = json!({ "topic": "python", "ambiguous": true })
        .as_object()
        .cloned();
    let result = manager
        .call_tool_with(
            "mcp__everything__simulate-research-query",
            arguments,
            &hooks,
        )
        .await
        .expect("the task's result");
    let text = result_text(&result);
    assert!(text.contains("# Research Report: python (snake)"), "{text}");
    let asked = elicitor.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].message.contains("multiple interpretations"),
        "{asked:?}"
    );
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.iter().any(|m| m.contains("Requesting clarification")),
        "{seen:?}"
    );
    manager.cleanup().await;
    gone(&sandbox).await;
}

// SRV-5, LONG-4: a 2025-11-25 task whose status does not change for the entry's `toolTimeoutSec`
// is cancelled with `tasks/cancel` (the server records it) and the call ends as timed out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_5_a_stalled_2025_11_25_task_gets_tasks_cancel_at_its_timeout() {
    let sandbox = Sandbox::new();
    let Some(entry) = ts_tasks(&sandbox, json!({ "toolTimeoutSec": 1 })) else {
        return;
    };
    let manager = McpManager::new(sandbox.options(json!({ "tt": entry })));
    manager.connect("tt").await.expect("connect");
    let (seen, hooks) = progress_sink();
    let error = manager
        .call_tool_with("mcp__tt__stuck", None, &hooks)
        .await
        .expect_err("a stalled task times out");
    assert!(
        matches!(error, wave_mcp_manager::Error::ToolTimeout { .. }),
        "{error}"
    );
    assert_eq!(seen.lock().unwrap().clone(), ["waiting"]);
    let cancelled = std::fs::read_to_string(marker(&sandbox)).expect("the server got tasks/cancel");
    assert!(
        cancelled.contains("Client cancelled task execution."),
        "{cancelled}"
    );
    manager.cleanup().await;
    gone(&sandbox).await;
}

// SRV-5, LONG-3: Stop in a chat turn sends `tasks/cancel` for a running 2025-11-25 task (the
// server records it); its status message reached the chat as `wave/session/progress`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_5_stop_sends_tasks_cancel_for_a_2025_11_25_task() {
    let sandbox = Sandbox::new();
    let Some(entry) = ts_tasks(&sandbox, json!({})) else {
        return;
    };
    sandbox.write_project(json!({ "tt": entry }));
    stop_cancels_the_task_on_the_server(&sandbox, "mcp__tt__stuck").await;
    gone(&sandbox).await;
}

// SRV-5, LONG-3: the same over Streamable HTTP, where the TypeScript SDK answers with JSON
// bodies: the raw `initialize` result and `tools/list` are read on the way, so `stuck` is called
// as a task; its status reaches the chat, and Stop sends `tasks/cancel` (the server records it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_5_stop_sends_tasks_cancel_for_a_2025_11_25_task_over_streamable_http() {
    let sandbox = Sandbox::new();
    let Some(entry) = ts_tasks(&sandbox, json!({})) else {
        return;
    };
    let port = free_port();
    let mut command = std::process::Command::new("node");
    let args = entry["args"].as_array().unwrap().iter();
    command
        .args(args.map(|a| a.as_str().unwrap()))
        .args(["--http", &port.to_string()])
        .env(
            "WAVE_TS_MODULES",
            entry["env"]["WAVE_TS_MODULES"].as_str().unwrap(),
        );
    let peer = HttpPeer::start(&sandbox, command, port).await;
    sandbox.write_project(json!({ "tt": { "type": "http", "url": peer.url("/mcp") } }));
    stop_cancels_the_task_on_the_server(&sandbox, "mcp__tt__stuck").await;
    drop(peer);
    gone(&sandbox).await;
}
