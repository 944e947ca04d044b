//! Live turns (LONG-1 … LONG-4) through the real sidecar, the real CLI and real MCP servers:
//! streamed text as `wave/session/delta`, each message sent as soon as it is complete, MCP
//! progress as `wave/session/progress` (the TypeScript SDK's `progressExample.js`, a Python
//! SDK server), Stop (`wave/session/cancel`, Ctrl-C) with `notifications/cancelled` checked on
//! the server side, and `toolTimeoutSec` that progress keeps from firing.
//!
//! The Python peer (`tests/peers/long_server.py`) logs `<event> <request id>` lines; the SDK
//! cancels a handler only for a `notifications/cancelled` naming that request's id, so a
//! `cancelled <id>` line after `started <id>` is the server's word that the right cancel came.
//! No wall-clock thresholds: a tool that would run for minutes cannot have returned before the
//! test stops it, and the timeout case leaves a six-fold margin both ways.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wave_mcp_agent::{Agent, AgentOptions, ModelSettings, TurnEvent, TurnHooks};
use wave_mcp_testkit::{FakeModel, call, exec, paced, say, stall};

use super::super::lsp_client::Sidecar;
use super::super::support::*;
use super::{marked_processes, marker_env, peer_path, python};

const DELTA: &str = "wave/session/delta";
const MESSAGE: &str = "wave/session/message";
const PROGRESS: &str = "wave/session/progress";
const ENDED: &str = "wave/session/turnEnded";

fn long_server_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/long_server.py")
}

fn long_log(sandbox: &Sandbox) -> PathBuf {
    sandbox.path("long-peer.log")
}

/// A stdio entry for the Python long-tools peer, with `extra` keys merged in.
fn long_server(sandbox: &Sandbox, python: &Path, extra: Value) -> Value {
    let (var, value) = marker_env(sandbox);
    let mut entry = json!({
        "command": python,
        "args": [long_server_script(), "--log", long_log(sandbox)],
        "env": { var: value },
    });
    if let Value::Object(extra) = extra {
        entry.as_object_mut().unwrap().extend(extra);
    }
    entry
}

/// The peer's log as `(event, request id)` pairs.
fn peer_events(sandbox: &Sandbox) -> Vec<(String, String)> {
    std::fs::read_to_string(long_log(sandbox))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let (event, id) = line.split_once(' ')?;
            Some((event.to_string(), id.to_string()))
        })
        .collect()
}

/// The request id of the `n`-th call the peer started.
async fn started_call(sandbox: &Sandbox, n: usize) -> String {
    let started = || {
        peer_events(sandbox)
            .into_iter()
            .filter(|(event, _)| event == "started")
            .nth(n)
    };
    assert!(
        eventually(Duration::from_secs(60), || started().is_some()).await,
        "the peer never started call {n}: {:?}",
        peer_events(sandbox)
    );
    started().unwrap().1
}

/// Waits until the peer logged `cancelled <id>`.
async fn assert_cancelled_on_the_server(sandbox: &Sandbox, id: &str) {
    let cancelled = || {
        peer_events(sandbox)
            .iter()
            .any(|(event, logged)| event == "cancelled" && logged == id)
    };
    assert!(
        eventually(Duration::from_secs(30), cancelled).await,
        "LONG-3: the server never got notifications/cancelled for request {id}: {:?}",
        peer_events(sandbox)
    );
}

/// Position of the first logged sidecar message that satisfies `check`.
fn position(sidecar: &Sidecar, check: impl Fn(&Value) -> bool) -> usize {
    sidecar
        .messages()
        .iter()
        .position(check)
        .expect("no such message")
}

// LONG-1: the answer streams as deltas whose text adds up to the complete message, all before
// it and carrying its index; the complete message is still sent once, and the history holds
// complete messages only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_1_text_streams_as_deltas_and_the_history_holds_complete_messages() {
    let sandbox = Sandbox::new();
    let answer = "one two three four five six";
    let model = FakeModel::start(vec![paced(20, say(answer))]).await;
    sandbox.allow_tool_calls();
    let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |_| {}).await;
    let turn = sidecar.send_text("count for me").await;
    let ended = sidecar
        .wait_notification(0, ENDED, |p| p["turn"] == turn)
        .await;
    assert_eq!(ended["cancelled"], false, "{ended:#}");
    assert_eq!(
        model.request(0)["stream"],
        true,
        "the request asks for a stream"
    );

    let deltas = sidecar.notifications(DELTA);
    assert!(deltas.len() >= 6, "word by word: {deltas:#?}");
    let streamed: String = deltas.iter().map(|d| d["text"].as_str().unwrap()).collect();
    assert_eq!(streamed, answer);
    let complete = sidecar
        .notifications(MESSAGE)
        .into_iter()
        .filter(|m| m["message"]["role"] == "assistant")
        .collect::<Vec<_>>();
    assert_eq!(complete.len(), 1, "sent once: {complete:#?}");
    assert_eq!(complete[0]["message"]["content"], answer);
    for delta in &deltas {
        assert_eq!(delta["messageIndex"], complete[0]["index"], "{delta:#}");
        assert_eq!(delta["turn"], turn);
    }
    let last_delta = sidecar
        .messages()
        .iter()
        .rposition(|m| m["method"] == DELTA)
        .unwrap();
    let message_at = position(&sidecar, |m| {
        m["method"] == MESSAGE && m["params"]["message"]["role"] == "assistant"
    });
    assert!(last_delta < message_at, "deltas come before the message");

    let history = sidecar
        .ok("wave/session/history", json!({ "sessionId": "default" }))
        .await;
    let contents: Vec<&Value> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| &entry["message"]["content"])
        .collect();
    assert_eq!(contents, [&json!("count for me"), &json!(answer)]);
    sidecar.stop().await;
}

// LONG-1, LONG-3: the assistant message with its tool call is sent before the tool runs out (it
// would take ten minutes); Stop then sends `notifications/cancelled` with that call's request id
// (the server says so), records the cancelled result, makes no further model request and ends
// the turn with `cancelled: true`; the server stays connected and the next turn works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_3_stop_cancels_the_call_in_flight_by_request_id_and_the_next_turn_works() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "long": long_server(&sandbox, &python, json!({})) }));
    let model = FakeModel::start(vec![
        call("mcp__long__sleepy", json!({ "seconds": 600 })),
        say("back again"),
    ])
    .await;
    sandbox.allow_tool_calls();
    let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |_| {}).await;
    let idle = sidecar
        .ok("wave/session/cancel", json!({ "sessionId": "default" }))
        .await;
    assert_eq!(idle, json!({ "sessionId": "default", "cancelled": false }));

    let turn = sidecar.send_text("sleep a long time").await;
    let assistant = sidecar
        .wait_notification(0, MESSAGE, |p| {
            p["message"]["toolCalls"][0]["name"] == "mcp__long__sleepy"
        })
        .await;
    let id = started_call(&sandbox, 0).await;
    assert!(
        sidecar
            .notifications(MESSAGE)
            .iter()
            .all(|m| m["message"]["role"] != "tool"),
        "LONG-1: the call message came while the tool runs"
    );
    let stopped = sidecar
        .ok("wave/session/cancel", json!({ "sessionId": "default" }))
        .await;
    assert_eq!(
        stopped,
        json!({ "sessionId": "default", "cancelled": true })
    );
    let ended = sidecar
        .wait_notification(0, ENDED, |p| p["turn"] == turn)
        .await;
    assert_eq!(ended["cancelled"], true, "{ended:#}");
    assert!(ended.get("error").is_none(), "{ended:#}");
    assert_cancelled_on_the_server(&sandbox, &id).await;

    let tool = sidecar
        .notifications(MESSAGE)
        .into_iter()
        .find(|m| m["message"]["role"] == "tool")
        .expect("the cancelled call is recorded");
    assert_eq!(tool["message"]["isError"], true);
    assert!(
        tool["message"]["content"]
            .as_str()
            .unwrap()
            .contains("cancelled"),
        "{tool:#}"
    );
    assert_eq!(model.requests().len(), 1, "no model request after Stop");

    let snapshot = sidecar
        .ok("wave/mcp/servers", json!({ "sessionId": "default" }))
        .await;
    assert_eq!(snapshot["servers"][0]["status"], "connected");
    let next = sidecar.send_text("are you there").await;
    let ended = sidecar
        .wait_notification(0, ENDED, |p| p["turn"] == next)
        .await;
    assert!(ended.get("error").is_none(), "{ended:#}");
    assert_eq!(ended["cancelled"], false);
    // The stopped call has its result in what the model sees next.
    let call_id = &assistant["message"]["toolCalls"][0]["id"];
    assert!(
        model.request(1)["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "tool" && &m["tool_call_id"] == call_id),
        "{:#}",
        model.request(1)
    );
    sidecar.stop().await;
    assert!(
        eventually(Duration::from_secs(10), || marked_processes(&sandbox)
            .is_empty())
        .await
    );
}

// LONG-3: Stop while the model is still generating aborts the request; the text streamed so far
// is kept as the assistant's message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_3_stop_during_a_stream_keeps_the_text_so_far() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![stall("half an answer "), say("whole")]).await;
    sandbox.allow_tool_calls();
    let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |_| {}).await;
    let turn = sidecar.send_text("go").await;
    sidecar
        .wait_notification(0, DELTA, |p| p["text"] == "answer ")
        .await;
    let stopped = sidecar
        .ok("wave/session/cancel", json!({ "sessionId": "default" }))
        .await;
    assert_eq!(stopped["cancelled"], true);
    let ended = sidecar
        .wait_notification(0, ENDED, |p| p["turn"] == turn)
        .await;
    assert_eq!(ended["cancelled"], true);
    let kept = sidecar
        .notifications(MESSAGE)
        .into_iter()
        .find(|m| m["message"]["role"] == "assistant")
        .expect("the partial answer is recorded");
    assert_eq!(kept["message"]["content"], "half an answer ");
    assert_eq!(model.requests().len(), 1);
    let next = sidecar.send_text("again").await;
    sidecar
        .wait_notification(0, ENDED, |p| p["turn"] == next)
        .await;
    assert_eq!(model.requests().len(), 2);
    sidecar.stop().await;
}

// LONG-2: the official TypeScript SDK's progress example (stdio) reports progress for the call
// the model made; it reaches the client as `wave/session/progress` for that tool call, before
// the call's result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_2_progress_of_the_typescript_sdk_example_reaches_the_client() {
    let Some(example) = peer_path(
        "npm @modelcontextprotocol/sdk examples",
        "sdk/node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/progressExample.js",
    ) else {
        return;
    };
    let sandbox = Sandbox::new();
    let (var, value) = marker_env(&sandbox);
    sandbox.write_project(json!({
        "progress": { "command": "node", "args": [example], "env": { var: value } },
    }));
    let model = FakeModel::start(vec![
        call("mcp__progress__count", json!({ "n": 4 })),
        say("counted"),
    ])
    .await;
    sandbox.allow_tool_calls();
    let sidecar = Sidecar::with_model(&sandbox, &model.base_url, |_| {}).await;
    let turn = sidecar.send_text("count to four").await;
    let ended = sidecar
        .wait_notification(0, ENDED, |p| p["turn"] == turn)
        .await;
    assert!(ended.get("error").is_none(), "{ended:#}");
    let progress = sidecar.notifications(PROGRESS);
    let seen: Vec<(f64, f64, String)> = progress
        .iter()
        .map(|p| {
            assert_eq!(p["toolCallId"], "call_1_0", "{p:#}");
            assert_eq!(p["turn"], turn);
            (
                p["progress"].as_f64().unwrap(),
                p["total"].as_f64().unwrap(),
                p["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected: Vec<(f64, f64, String)> = (1..=4)
        .map(|i| (i as f64, 4.0, format!("Counting: {i}/4")))
        .collect();
    assert_eq!(seen, expected);
    let result_at = position(&sidecar, |m| {
        m["method"] == MESSAGE && m["params"]["message"]["role"] == "tool"
    });
    let last_progress = sidecar
        .messages()
        .iter()
        .rposition(|m| m["method"] == PROGRESS)
        .unwrap();
    assert!(last_progress < result_at);
    let tool = sidecar
        .notifications(MESSAGE)
        .into_iter()
        .find(|m| m["message"]["role"] == "tool")
        .unwrap();
    assert_eq!(tool["message"]["content"], "Counted to 4");
    sidecar.stop().await;
    assert!(
        eventually(Duration::from_secs(10), || marked_processes(&sandbox)
            .is_empty())
        .await
    );
}

fn agent(sandbox: &Sandbox, model: &FakeModel, servers: Value, exec_pool: bool) -> Agent {
    let Value::Object(servers) = servers else {
        panic!("servers must be an object")
    };
    let mut options = AgentOptions {
        workdir: sandbox.workdir.clone(),
        home: Some(sandbox.home.clone()),
        mcp_servers: servers,
        model: ModelSettings {
            base_url: Some(model.base_url.clone()),
            model: Some("fake".into()),
            ..ModelSettings::default()
        },
        permissions: Sandbox::pre_approved(),
        ..AgentOptions::default()
    };
    if exec_pool {
        options.tool_pool = wave_mcp_agent::ToolPoolMode::Exec;
    }
    Agent::create(options).unwrap()
}

/// Runs one turn, collecting its events.
async fn live_turn(agent: &mut Agent, text: &str) -> (wave_mcp_agent::TurnReport, Vec<TurnEvent>) {
    let (events, mut received) = tokio::sync::mpsc::unbounded_channel();
    let hooks = TurnHooks {
        events: Some(events),
        ..TurnHooks::default()
    };
    let report = agent.send_message_live(text, hooks).await.unwrap();
    let mut all = Vec::new();
    while let Ok(event) = received.try_recv() {
        all.push(event);
    }
    (report, all)
}

// LONG-4, LONG-2: with `toolTimeoutSec: 3`, a call that reports progress every half second
// outlives the timeout (each progress restarts it; ten steps, five seconds) — here made from an
// Exec script, whose progress is reported for the Exec call — while a silent ten-minute call is
// cut at it: the server is sent `notifications/cancelled` for it, the model gets an error result
// naming server, tool and timeout, and the turn goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_4_progress_outlives_tool_timeout_while_a_silent_call_is_cut_at_it() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let servers = json!({ "long": long_server(&sandbox, &python, json!({ "toolTimeoutSec": 3 })) });
    let model = FakeModel::start(vec![
        exec(r#"return await tools["mcp__long__steps"]({ count: 10, interval: 0.5 });"#),
        call("mcp__long__sleepy", json!({ "seconds": 600 })),
        say("went on"),
    ])
    .await;
    let mut agent = agent(&sandbox, &model, servers, true);
    let (report, events) = live_turn(&mut agent, "work").await;
    assert_eq!(report.text, "went on", "the turn goes on");
    assert!(!report.cancelled);

    let steps = &report.tool_calls[0];
    assert!(!steps.outcome.is_error, "{:?}", steps.outcome);
    assert!(
        steps.outcome.text.contains("did 10 steps"),
        "{:?}",
        steps.outcome
    );
    let progress: Vec<(String, f64)> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Progress {
                tool_call_id,
                progress,
                total,
                ..
            } => {
                assert_eq!(*total, Some(10.0));
                Some((tool_call_id.clone(), *progress))
            }
            _ => None,
        })
        .collect();
    let expected: Vec<(String, f64)> = (1..=10)
        .map(|i| (steps.call.id.clone(), i as f64))
        .collect();
    assert_eq!(progress, expected, "LONG-2: reported for the Exec call");

    let silent = &report.tool_calls[1];
    assert!(silent.outcome.is_error);
    assert!(
        silent
            .outcome
            .text
            .contains("tool \"sleepy\" of MCP server \"long\" timed out after 3000 ms"),
        "{:?}",
        silent.outcome
    );
    let id = started_call(&sandbox, 1).await;
    assert_cancelled_on_the_server(&sandbox, &id).await;
    let events = peer_events(&sandbox);
    assert!(
        events.contains(&("finished".to_string(), started_call(&sandbox, 0).await)),
        "{events:?}"
    );
    agent.destroy().await;
}

// LONG-4: `startupTimeoutSec` bounds connect + initialize + the first tools/list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_4_startup_timeout_sec_bounds_the_dial() {
    let sandbox = Sandbox::new();
    let mut entry = sandbox.server(&["--slow-initialize-ms", "60000"]);
    entry["startupTimeoutSec"] = json!(0.5);
    sandbox.write_project(json!({ "slow": entry }));
    let manager = sandbox.manager();
    assert!(manager.connect("slow").await.is_err());
    let snapshot = server(&manager, "slow");
    assert_eq!(snapshot.status, wave_mcp_manager::Status::Error);
    assert!(
        snapshot
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("500 ms"),
        "{:?}",
        snapshot.error
    );
    manager.cleanup().await;
}

/// Reads the child's stdout into a shared buffer.
fn collect(mut stdout: tokio::process::ChildStdout) -> Arc<Mutex<String>> {
    let text = Arc::new(Mutex::new(String::new()));
    let shared = text.clone();
    tokio::spawn(async move {
        let mut buffer = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buffer).await {
            if n == 0 {
                return;
            }
            shared
                .lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
    });
    text
}

async fn wait_for_text(text: &Arc<Mutex<String>>, wanted: &str) {
    let found = eventually(Duration::from_secs(60), || {
        text.lock().unwrap().contains(wanted)
    })
    .await;
    assert!(found, "no {wanted:?} in:\n{}", text.lock().unwrap());
}

fn interrupt(child: &tokio::process::Child) {
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
}

// LONG-1, LONG-3: `wave-mcp chat` prints the answer while it streams (the model has not
// finished it); Ctrl-C stops the turn and the chat goes on; at the prompt Ctrl-C quits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_3_ctrl_c_in_chat_stops_the_turn_and_at_the_prompt_quits() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start(vec![stall("thinking about it "), say("second answer")]).await;
    let mut command = tokio::process::Command::from(command(
        &sandbox,
        &["chat"],
        &[("WAVE_BASE_URL", &model.base_url), ("WAVE_MODEL", "fake")],
    ));
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let out = collect(child.stdout.take().unwrap());
    wait_for_text(&out, "wave-mcp chat in").await;
    stdin.write_all(b"hello\n").await.unwrap();
    wait_for_text(&out, "thinking about it").await;
    interrupt(&child);
    wait_for_text(&out, "(turn stopped)").await;
    stdin.write_all(b"and now\n").await.unwrap();
    wait_for_text(&out, "second answer").await;
    assert_eq!(model.requests().len(), 2);
    // The answer is printed before the turn is over: the first Ctrl-C may still find the turn
    // running (it stops it); the next one finds the prompt (or a stopped turn) and quits.
    let mut status = None;
    for _ in 0..20 {
        interrupt(&child);
        if let Ok(exited) = tokio::time::timeout(Duration::from_secs(3), child.wait()).await {
            status = Some(exited.unwrap());
            break;
        }
    }
    let status = status.expect("Ctrl-C at the prompt quits");
    assert!(status.success(), "{status:?}");
}

// LONG-3: Ctrl-C during `wave-mcp call` sends `notifications/cancelled` for the call (the server
// says so) and the command fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_3_ctrl_c_in_call_cancels_the_call_on_the_server() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "long": long_server(&sandbox, &python, json!({})) }));
    let mut command = tokio::process::Command::from(command(
        &sandbox,
        &["call", "long", "sleepy", r#"{"seconds": 600}"#],
        &[],
    ));
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let id = started_call(&sandbox, 0).await;
    interrupt(&child);
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the call ends after Ctrl-C")
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("cancelled"),
        "{output:?}"
    );
    assert_cancelled_on_the_server(&sandbox, &id).await;
    assert!(
        eventually(Duration::from_secs(10), || marked_processes(&sandbox)
            .is_empty())
        .await
    );
}
