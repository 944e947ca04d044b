//! Load (issue 18, CHAT-2): one real sidecar over stdio, `WAVE_FAULTS_LOAD_SESSIONS` sessions
//! (100 by default, what CI runs) × 3 configured test servers, every session running streamed
//! turns with tool calls at the same time against its own streaming fake model, some turns
//! stopped with `wave/session/cancel` (during a tool call or during the stream). Every turn
//! ends once, each session's pushed messages are exactly its history (nothing lost, nothing
//! reordered), and after shutdown no process is left, checked by pid. Prints the sidecar's RSS
//! per idle session and per connected server (docs/performance.md), without thresholds.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use wave_mcp_testkit::{FakeModel, Step, paced, say, stall};

use super::{assert_no_panic, env_count, initialize, spawn_logged};
use crate::suite::lsp_client::*;
use crate::suite::support::*;

const MESSAGE: &str = "wave/session/message";
const DELTA: &str = "wave/session/delta";
const ENDED: &str = "wave/session/turnEnded";
const SERVERS: [&str; 3] = ["s0", "s1", "s2"];
/// Bound for one wait under load (300 servers on a shared 2-core machine): a limit, not a speed
/// test.
const LOAD_LIMIT: Duration = Duration::from_secs(300);

/// What a turn of the plan does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// One model answer calling a tool of each of the three servers, then a streamed answer.
    ToolCalls,
    /// A call of `slow` (ten minutes), stopped while it runs.
    CancelInTool,
    /// A streamed answer that never ends, stopped after its first delta.
    CancelInStream,
}

/// The plan of session `i`: `turns` turns; every fourth session stops one of them.
fn plan(i: usize, turns: usize) -> Vec<Turn> {
    let mut plan = vec![Turn::ToolCalls; turns];
    let stopped = turns.min(2) - 1;
    match i % 8 {
        0 => plan[stopped] = Turn::CancelInTool,
        4 => plan[stopped] = Turn::CancelInStream,
        _ => {}
    }
    plan
}

/// The model script of a session following `plan`.
fn script(i: usize, plan: &[Turn]) -> Vec<Step> {
    let mut steps = Vec::new();
    for (t, turn) in plan.iter().enumerate() {
        match turn {
            Turn::ToolCalls => {
                steps.push(paced(
                    1,
                    Step::Call(vec![
                        (
                            "mcp__s0__echo".into(),
                            json!({ "text": format!("echo {i}/{t}") }),
                        ),
                        (
                            "mcp__s1__add".into(),
                            json!({ "a": i as f64, "b": t as f64 }),
                        ),
                        (
                            "mcp__s2__echo".into(),
                            json!({ "text": format!("again {i}/{t}") }),
                        ),
                    ]),
                ));
                steps.push(paced(
                    1,
                    say(&format!("session {i} turn {t} answered in several words")),
                ));
            }
            Turn::CancelInTool => {
                steps.push(wave_mcp_testkit::call(
                    "mcp__s1__slow",
                    json!({ "ms": 600_000 }),
                ));
            }
            Turn::CancelInStream => steps.push(stall(&format!("session {i} keeps talking "))),
        }
    }
    steps
}

/// `VmRSS` of `pid` in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// Polls the sidecar's log from `cursor` for the first message satisfying `check`; returns its
/// position and the message. Panics after [`LOAD_LIMIT`] naming `what`.
async fn wait_for(
    sidecar: &Sidecar,
    cursor: &mut usize,
    what: &str,
    check: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + LOAD_LIMIT;
    loop {
        let new = sidecar.messages_since(*cursor);
        if let Some(at) = new.iter().position(&check) {
            *cursor += at + 1;
            return new[at].clone();
        }
        *cursor += new.len();
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: nothing within {LOAD_LIMIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn is(message: &Value, method: &str, session: &str, turn: u64) -> bool {
    message["method"] == method
        && message["params"]["sessionId"] == session
        && message["params"]["turn"] == turn
}

/// Runs the plan of one session, one turn after the other; returns the turn numbers.
async fn drive(sidecar: &Sidecar, session: &str, plan: &[Turn]) -> Vec<u64> {
    let mut turns = Vec::new();
    for (t, kind) in plan.iter().enumerate() {
        let mut cursor = sidecar.received();
        let accepted = sidecar
            .ok(
                "wave/session/send",
                json!({ "sessionId": session, "text": format!("{session} turn {t}") }),
            )
            .await;
        let turn = accepted["turn"].as_u64().unwrap();
        let what = format!("{session} turn {turn} ({kind:?})");
        match kind {
            Turn::ToolCalls => {}
            Turn::CancelInTool => {
                wait_for(sidecar, &mut cursor, &what, |m| {
                    is(m, MESSAGE, session, turn)
                        && m["params"]["message"]["toolCalls"][0]["name"] == "mcp__s1__slow"
                })
                .await;
            }
            Turn::CancelInStream => {
                wait_for(sidecar, &mut cursor, &what, |m| is(m, DELTA, session, turn)).await;
            }
        }
        if *kind != Turn::ToolCalls {
            let stopped = sidecar
                .ok("wave/session/cancel", json!({ "sessionId": session }))
                .await;
            assert_eq!(stopped["cancelled"], true, "{what}: {stopped}");
        }
        let ended = wait_for(sidecar, &mut cursor, &what, |m| is(m, ENDED, session, turn)).await;
        let ended = &ended["params"];
        assert!(ended.get("error").is_none(), "{what}: {ended}");
        assert_eq!(
            ended["cancelled"],
            *kind != Turn::ToolCalls,
            "{what}: {ended}"
        );
        turns.push(turn);
    }
    turns
}

/// CHAT-2 for one session: the pushed `wave/session/message`s, in arrival order, are exactly the
/// history (same turn, index and message, indices 0, 1, 2, ...); every turn ended once, after its
/// last message; each turn's deltas add up to its assistant text; a completed turn holds the
/// results of all three servers' tools.
fn check_session(messages: &[Value], history: &Value, session: &str, plan: &[Turn], turns: &[u64]) {
    let mine: Vec<&Value> = messages
        .iter()
        .filter(|m| m["params"]["sessionId"] == session)
        .collect();
    let pushed: Vec<Value> = mine
        .iter()
        .filter(|m| m["method"] == MESSAGE)
        .map(|m| {
            json!([
                m["params"]["turn"],
                m["params"]["index"],
                m["params"]["message"]
            ])
        })
        .collect();
    let recorded: Vec<Value> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| json!([e["turn"], e["index"], e["message"]]))
        .collect();
    assert_eq!(pushed.len(), recorded.len(), "{session}: lost messages");
    for (n, (p, r)) in pushed.iter().zip(&recorded).enumerate() {
        assert_eq!(p, r, "{session}: message {n} differs from the history");
        assert_eq!(p[1], n as u64, "{session}: message {n} out of order");
    }
    assert_eq!(history["runningTurns"], json!([]), "{session}");
    let mut deltas: BTreeMap<u64, String> = BTreeMap::new();
    let mut assistant: BTreeMap<u64, String> = BTreeMap::new();
    for m in &mine {
        let turn = m["params"]["turn"].as_u64().unwrap_or_default();
        if m["method"] == DELTA {
            let text = m["params"]["text"].as_str().unwrap();
            deltas.entry(turn).or_default().push_str(text);
        }
        if m["method"] == MESSAGE && m["params"]["message"]["role"] == "assistant" {
            let text = m["params"]["message"]["content"]
                .as_str()
                .unwrap_or_default();
            assistant.entry(turn).or_default().push_str(text);
        }
    }
    for (&turn, kind) in turns.iter().zip(plan) {
        let ends: Vec<usize> = mine
            .iter()
            .enumerate()
            .filter(|(_, m)| m["method"] == ENDED && m["params"]["turn"] == turn)
            .map(|(n, _)| n)
            .collect();
        assert_eq!(ends.len(), 1, "{session} turn {turn}: turnEnded {ends:?}");
        let last = mine
            .iter()
            .rposition(|m| m["method"] == MESSAGE && m["params"]["turn"] == turn)
            .expect("the turn's messages");
        assert!(
            last < ends[0],
            "{session} turn {turn}: a message after turnEnded"
        );
        assert_eq!(
            deltas.get(&turn).cloned().unwrap_or_default(),
            assistant.get(&turn).cloned().unwrap_or_default(),
            "{session} turn {turn}: deltas vs assistant text"
        );
        let results: Vec<&Value> = recorded
            .iter()
            .filter(|e| e[0] == turn && e[2]["role"] == "tool")
            .map(|e| &e[2])
            .collect();
        match kind {
            Turn::ToolCalls => {
                assert_eq!(results.len(), 3, "{session} turn {turn}: {results:#?}");
                assert!(
                    results.iter().all(|r| r["isError"] == false),
                    "{session} turn {turn}: {results:#?}"
                );
            }
            Turn::CancelInTool => {
                assert_eq!(results.len(), 1, "{session} turn {turn}: {results:#?}");
                assert_eq!(results[0]["isError"], true, "{session} turn {turn}");
            }
            Turn::CancelInStream => assert!(results.is_empty(), "{session} turn {turn}"),
        }
    }
}

// Load, CHAT-2: `WAVE_FAULTS_LOAD_SESSIONS` (100) sessions × 3 servers in one sidecar, each
// session with its own streaming fake model running `WAVE_FAULTS_LOAD_TURNS` (2) turns with tool
// calls at the same time as all the others; every fourth session stops one turn (during the
// `slow` call or during the stream). Every turn ends exactly once (cancelled where stopped),
// nothing is lost or reordered within a session, the sidecar never panics, and after shutdown
// every server process (recorded by pid while connected) is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_100_sessions_by_3_servers_with_streamed_turns_and_cancels_lose_nothing() {
    let sessions = env_count("WAVE_FAULTS_LOAD_SESSIONS", 100);
    let turns = env_count("WAVE_FAULTS_LOAD_TURNS", 2);
    let sandbox = Sandbox::new();
    let servers: serde_json::Map<String, Value> = SERVERS
        .iter()
        .map(|name| (name.to_string(), sandbox.server(&[])))
        .collect();
    sandbox.write_project(Value::Object(servers));
    sandbox.allow_tool_calls();
    let log = sandbox.path("sidecar.log");
    let sidecar = spawn_logged(&sandbox, &log, "warn", &[("WAVE_TOOL_SEARCH", "off")]);
    initialize(&sidecar, &sandbox).await;
    let pid = sidecar.pid().expect("the sidecar's pid");
    let rss_started = rss_kib(pid);

    let plans: Vec<Vec<Turn>> = (0..sessions).map(|i| plan(i, turns)).collect();
    let mut models = Vec::new();
    let mut ids = Vec::new();
    for (i, plan) in plans.iter().enumerate() {
        let model = FakeModel::start(script(i, plan)).await;
        let created = sidecar
            .ok(
                "wave/session/create",
                json!({ "model": { "baseUrl": model.base_url, "model": "fake" } }),
            )
            .await;
        ids.push(created["sessionId"].as_str().unwrap().to_string());
        models.push(model);
    }
    let rss_idle = rss_kib(pid);
    assert!(
        sandbox.live_processes().is_empty(),
        "idle sessions start no server"
    );

    // Connect every server of every session, ten sessions at a time.
    let connect = |id: String| {
        let sidecar = &sidecar;
        async move {
            for name in SERVERS {
                let snapshot = sidecar
                    .ok("wave/mcp/connect", json!({ "name": name, "sessionId": id }))
                    .await;
                assert_eq!(
                    status_of(&snapshot, name).as_deref(),
                    Some("connected"),
                    "{id}: {snapshot}"
                );
            }
        }
    };
    futures::stream::iter(ids.clone())
        .map(connect)
        .buffer_unordered(10)
        .collect::<Vec<()>>()
        .await;
    let pids = sandbox.live_processes();
    assert_eq!(
        pids.len(),
        sessions * SERVERS.len(),
        "one process per server"
    );
    let rss_connected = rss_kib(pid);

    let driven = futures::future::join_all(
        ids.iter()
            .zip(&plans)
            .map(|(id, plan)| drive(&sidecar, id, plan)),
    )
    .await;
    let rss_after_turns = rss_kib(pid);

    let messages = sidecar.messages();
    for ((id, plan), turns) in ids.iter().zip(&plans).zip(&driven) {
        let history = sidecar
            .ok("wave/session/history", json!({ "sessionId": id }))
            .await;
        check_session(&messages, &history, id, plan, turns);
    }
    let stopped = plans
        .iter()
        .flatten()
        .filter(|t| **t != Turn::ToolCalls)
        .count();
    let per_session = (rss_idle.saturating_sub(rss_started)) as f64 / sessions as f64;
    let per_server = (rss_connected.saturating_sub(rss_idle)) as f64 / pids.len() as f64;
    eprintln!(
        "load: {sessions} sessions x {} servers, {} turns ({stopped} cancelled), {} messages",
        SERVERS.len(),
        sessions * turns,
        messages.len()
    );
    eprintln!(
        "load: sidecar RSS {rss_started} KiB started, {rss_idle} KiB with {sessions} idle \
         sessions, {rss_connected} KiB with {} servers connected, {rss_after_turns} KiB after \
         the turns; {per_session:.1} KiB per idle session, {per_server:.1} KiB per connected \
         server",
        pids.len()
    );
    sidecar.stop().await;
    assert_all_dead(&pids).await;
    sandbox.assert_no_process_left().await;
    assert_no_panic(&log);
    drop(models);
}
