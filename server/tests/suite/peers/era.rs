//! The MCP revision a connection speaks (SPEC-1) and the 2026-07-28 multi-round-trip requests
//! and subscriptions (SPEC-3), against servers on the official TypeScript SDK v2 (npm
//! `@modelcontextprotocol/server`, `tests/peers/ts2_server.mjs`: 2026-only with
//! `legacy: 'reject'`, and dual-era) over stdio and Streamable HTTP, and against our own test
//! server limited to one era. The TypeScript peer logs every `initialize` it receives (and, over
//! HTTP, each request's method and protocol headers) so the tests assert the wire.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use wave_mcp_manager::{Elicitation, ElicitationAnswer, Elicitor, McpManager, Status, result_text};

use super::super::support::*;
use super::{HttpPeer, free_port, marker_env, peer_path};

/// `$WAVE_PEERS_DIR/sdk2`, where `node_modules/@modelcontextprotocol/server` is.
fn sdk2() -> Option<PathBuf> {
    let pkg = peer_path(
        "npm @modelcontextprotocol/server 2.4.0 (TypeScript SDK v2)",
        "sdk2/node_modules/@modelcontextprotocol/server/package.json",
    )?;
    Some(pkg.ancestors().nth(3).unwrap().to_path_buf())
}

fn ts2_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/ts2_server.mjs")
}

/// A stdio entry for the TypeScript peer; `legacy` is its `serveStdio` option.
fn ts2_stdio(sandbox: &Sandbox, modules: &Path, legacy: Option<&str>) -> Value {
    let (var, value) = marker_env(sandbox);
    let mut args = vec![ts2_script().display().to_string(), "stdio".into()];
    if let Some(legacy) = legacy {
        args.extend(["--legacy".into(), legacy.into()]);
    }
    json!({ "command": "node", "args": args, "env": {
        var: value,
        "WAVE_TS2_MODULES": modules,
        "WAVE_TS2_LOG": sandbox.path("ts2.log"),
    } })
}

async fn ts2_http(sandbox: &Sandbox, modules: &Path, legacy: Option<&str>) -> HttpPeer {
    let port = free_port();
    let mut command = Command::new("node");
    command
        .arg(ts2_script())
        .args(["http", &port.to_string()])
        .env("WAVE_TS2_MODULES", modules)
        .env("WAVE_TS2_LOG", sandbox.path("ts2.log"));
    if let Some(legacy) = legacy {
        command.args(["--legacy", legacy]);
    }
    HttpPeer::start(sandbox, command, port).await
}

/// The JSON lines the TypeScript peer logged.
fn ts2_log(sandbox: &Sandbox) -> Vec<Value> {
    std::fs::read_to_string(sandbox.path("ts2.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn manager_with(sandbox: &Sandbox, name: &str, entry: Value) -> McpManager {
    McpManager::new(sandbox.options(json!({ name: entry })))
}

fn args(value: Value) -> Option<Map<String, Value>> {
    value.as_object().cloned()
}

/// Connects, checks the revision, the instructions from `server/discover`, lists and calls echo.
async fn lists_and_calls(manager: &McpManager, name: &str, revision: &str) {
    manager
        .connect(name)
        .await
        .unwrap_or_else(|e| panic!("connecting {name}: {e}"));
    let snapshot = server(manager, name);
    assert_eq!(snapshot.status, Status::Connected);
    assert_eq!(snapshot.protocol_version.as_deref(), Some(revision));
    assert_eq!(
        snapshot.instructions.as_deref(),
        Some("TS SDK v2 peer for wave-mcp.")
    );
    let names: Vec<String> = manager.tools().into_iter().map(|t| t.full_name).collect();
    for tool in ["echo", "confirm", "nag"] {
        let full = format!("mcp__{name}__{tool}");
        assert!(names.contains(&full), "{full} not in {names:?}");
    }
    let result = manager
        .call_tool(
            &format!("mcp__{name}__echo"),
            args(json!({ "text": "hello" })),
        )
        .await
        .expect("call echo");
    assert_eq!(result_text(&result), "echo: hello");
}

fn initializes(log: &[Value]) -> Vec<String> {
    log.iter()
        .filter_map(|l| l.get("initialize")?.as_str().map(str::to_string))
        .collect()
}

// SPEC-1: a server that accepts only 2026-07-28 (`serveStdio(…, {legacy: 'reject'})`) is
// reached with `server/discover`, never `initialize`; tools, instructions and a call work, and
// the revision is shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_1_two_thousand_twenty_six_only_server_over_stdio_lists_and_calls() {
    let Some(modules) = sdk2() else { return };
    let sandbox = Sandbox::new();
    let manager = manager_with(
        &sandbox,
        "ts2",
        ts2_stdio(&sandbox, &modules, Some("reject")),
    );
    lists_and_calls(&manager, "ts2", "2026-07-28").await;
    manager.cleanup().await;
    let log = ts2_log(&sandbox);
    assert_eq!(initializes(&log), Vec::<String>::new(), "{log:?}");
    assert!(log.iter().any(|l| l.get("discover").is_some()), "{log:?}");
}

// SPEC-1: the same over Streamable HTTP (`createMcpHandler(…, {legacy: 'reject'})`): no
// `initialize`, every request carries `MCP-Protocol-Version: 2026-07-28`, and no session id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_1_two_thousand_twenty_six_only_server_over_streamable_http_lists_and_calls() {
    let Some(modules) = sdk2() else { return };
    let sandbox = Sandbox::new();
    let peer = ts2_http(&sandbox, &modules, Some("reject")).await;
    let manager = manager_with(
        &sandbox,
        "ts2",
        json!({ "type": "http", "url": peer.url("/mcp") }),
    );
    lists_and_calls(&manager, "ts2", "2026-07-28").await;
    manager.cleanup().await;
    let log = ts2_log(&sandbox);
    assert_eq!(initializes(&log), Vec::<String>::new(), "{log:?}");
    let requests: Vec<&Value> = log.iter().filter(|l| l.get("method").is_some()).collect();
    assert!(
        requests.iter().any(|l| l["method"] == "tools/call"),
        "{log:?}"
    );
    for request in &requests {
        assert_eq!(request["header"], "2026-07-28", "{request}");
        assert_eq!(request["session"], Value::Null, "{request}");
    }
}

// SPEC-1: a dual-era server (no `legacy` option) is spoken to in 2026-07-28.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_1_dual_era_server_over_stdio_speaks_2026_07_28() {
    let Some(modules) = sdk2() else { return };
    let sandbox = Sandbox::new();
    let manager = manager_with(&sandbox, "ts2", ts2_stdio(&sandbox, &modules, None));
    lists_and_calls(&manager, "ts2", "2026-07-28").await;
    manager.cleanup().await;
    assert_eq!(initializes(&ts2_log(&sandbox)), Vec::<String>::new());
}

/// The `init-begin` details of our test server's event log: `discover` or
/// `initialize:<offered revision>`, in order.
fn openings(sandbox: &Sandbox) -> Vec<String> {
    sandbox
        .events()
        .iter()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            match words.next()? {
                "init-begin" => words.nth(1).map(str::to_string),
                _ => None,
            }
        })
        .collect()
}

// SPEC-1: a server limited to 2025-11-25 refuses the `server/discover` probe (`-32022`), so it
// is dialed again with `initialize` offering 2025-11-25 (never 2026-07-28 inside `initialize`);
// the revision is remembered beside the cache entry, so a later manager (another process) goes
// straight to `initialize` with one process start; a changed entry probes again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_1_legacy_server_falls_back_and_the_remembered_era_skips_the_probe() {
    let sandbox = Sandbox::new();
    let entry = sandbox.server(&["--era", "legacy"]);
    let manager = manager_with(&sandbox, "old", entry.clone());
    manager.connect("old").await.expect("connect");
    assert_eq!(
        server(&manager, "old").protocol_version.as_deref(),
        Some("2025-11-25")
    );
    let result = manager
        .call_tool("mcp__old__echo", args(json!({ "text": "hi" })))
        .await
        .expect("call");
    assert_eq!(result_text(&result), "hi");
    manager.cleanup().await;
    assert_eq!(openings(&sandbox), ["initialize:2025-11-25"]);
    assert_eq!(
        sandbox.count_events("start"),
        2,
        "the probe, then initialize"
    );

    // Another manager of the same home: the last revision is shown before any dial, and the
    // dial skips the probe.
    let later = manager_with(&sandbox, "old", entry.clone());
    assert_eq!(
        server(&later, "old").protocol_version.as_deref(),
        Some("2025-11-25")
    );
    later.connect("old").await.expect("connect again");
    later.cleanup().await;
    assert_eq!(
        openings(&sandbox),
        ["initialize:2025-11-25", "initialize:2025-11-25"]
    );
    assert_eq!(sandbox.count_events("start"), 3, "no probe this time");

    // A changed entry (another argument) is a new fingerprint: nothing remembered, probed again.
    let changed = sandbox.server(&["--era", "legacy", "--name", "renamed"]);
    let third = manager_with(&sandbox, "old", changed);
    assert_eq!(server(&third, "old").protocol_version, None);
    third.connect("old").await.expect("connect changed");
    assert_eq!(
        server(&third, "old").protocol_version.as_deref(),
        Some("2025-11-25")
    );
    third.cleanup().await;
    assert_eq!(sandbox.count_events("start"), 5, "probed again");
    sandbox.assert_no_process_left().await;
}

/// Rewrites the one revision remembered in the tool cache from `was` to `now`, as if the last
/// connection of the entry had negotiated `now`.
pub(super) fn pretend_last_revision(sandbox: &Sandbox, was: &str, now: &str) {
    let cache = sandbox.home.join(".wave/mcp-tools-cache.json");
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(&cache).unwrap()).unwrap();
    let mut rewritten = 0;
    let mut stack = vec![&mut file];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                if map.get("protocolVersion") == Some(&json!(was)) {
                    map.insert("protocolVersion".into(), json!(now));
                    rewritten += 1;
                }
                stack.extend(map.values_mut());
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
    assert_eq!(rewritten, 1, "{file:#}");
    std::fs::write(&cache, serde_json::to_string(&file).unwrap()).unwrap();
}

// SPEC-1: a remembered handshake revision that the server no longer accepts (it now speaks only
// 2026-07-28) is refused with `-32022` naming `2026-07-28`; the dial is retried once with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_1_unsupported_version_error_is_retried_with_a_listed_revision() {
    let sandbox = Sandbox::new();
    let entry = sandbox.server(&["--era", "modern"]);
    let manager = manager_with(&sandbox, "new", entry.clone());
    manager.connect("new").await.expect("connect");
    assert_eq!(
        server(&manager, "new").protocol_version.as_deref(),
        Some("2026-07-28")
    );
    manager.cleanup().await;
    // Pretend the last connection negotiated 2025-11-25.
    pretend_last_revision(&sandbox, "2026-07-28", "2025-11-25");

    let later = manager_with(&sandbox, "new", entry);
    later.connect("new").await.expect("connect after -32022");
    assert_eq!(
        server(&later, "new").protocol_version.as_deref(),
        Some("2026-07-28")
    );
    let result = later
        .call_tool("mcp__new__echo", args(json!({ "text": "again" })))
        .await
        .expect("call");
    assert_eq!(result_text(&result), "again");
    later.cleanup().await;
    assert_eq!(
        openings(&sandbox),
        ["discover", "initialize:2025-11-25", "discover"]
    );
    sandbox.assert_no_process_left().await;
}

/// An elicitor that records each question and answers from a list (the last answer repeats).
struct Scripted {
    asked: Mutex<Vec<Elicitation>>,
    answers: Mutex<Vec<ElicitationAnswer>>,
}

impl Scripted {
    fn new(answers: Vec<ElicitationAnswer>) -> Arc<Scripted> {
        Arc::new(Scripted {
            asked: Mutex::default(),
            answers: Mutex::new(answers),
        })
    }

    fn messages(&self) -> Vec<String> {
        self.asked
            .lock()
            .unwrap()
            .iter()
            .map(|e| e.message.clone())
            .collect()
    }
}

impl Elicitor for Scripted {
    fn url_mode(&self) -> bool {
        false
    }

    fn elicit(&self, request: Elicitation) -> BoxFuture<'static, ElicitationAnswer> {
        self.asked.lock().unwrap().push(request);
        let mut answers = self.answers.lock().unwrap();
        let answer = match answers.len() {
            1 => answers[0].clone(),
            _ => answers.remove(0),
        };
        Box::pin(async move { answer })
    }
}

fn accept(content: Value) -> ElicitationAnswer {
    ElicitationAnswer::accept(content.as_object().cloned())
}

async fn ts2_with(sandbox: &Sandbox, modules: &Path, elicitor: Arc<Scripted>) -> McpManager {
    let manager = manager_with(sandbox, "ts2", ts2_stdio(sandbox, modules, Some("reject")));
    manager.set_elicitor(elicitor);
    manager.connect("ts2").await.expect("connect");
    manager
}

// SPEC-3: a tool call answered with `input_required` puts the question to the user through the
// elicitation hook and is retried with the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_3_input_required_call_asks_the_user_and_retries_with_the_answer() {
    let Some(modules) = sdk2() else { return };
    let sandbox = Sandbox::new();
    let elicitor = Scripted::new(vec![accept(json!({ "ok": true }))]);
    let manager = ts2_with(&sandbox, &modules, elicitor.clone()).await;
    let result = manager
        .call_tool("mcp__ts2__confirm", None)
        .await
        .expect("call");
    assert_eq!(result_text(&result), "confirmed: true");
    assert_eq!(elicitor.messages(), ["Proceed with the deploy?"]);
    let asked = elicitor.asked.lock().unwrap()[0].clone();
    assert_eq!(asked.server, "ts2");
    manager.cleanup().await;
}

// SPEC-3: a declined question is not put to the user again in the same call: the server asking
// it again ends the call with an error that says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_3_declined_question_is_not_asked_again_in_the_same_call() {
    let Some(modules) = sdk2() else { return };
    let sandbox = Sandbox::new();
    let elicitor = Scripted::new(vec![ElicitationAnswer::decline()]);
    let manager = ts2_with(&sandbox, &modules, elicitor.clone()).await;
    let error = manager
        .call_tool("mcp__ts2__confirm", None)
        .await
        .expect_err("a re-asked declined question ends the call")
        .to_string();
    assert!(error.contains("\"ts2\""), "{error}");
    assert!(
        error.contains("the user declined the server's question (\"Proceed with the deploy?\")"),
        "{error}"
    );
    assert_eq!(elicitor.messages().len(), 1);
    manager.cleanup().await;
}

// SPEC-3: a server that keeps asking is cut off after 8 answered rounds with an error naming
// the server and saying it kept asking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_3_a_server_that_keeps_asking_is_cut_off_after_eight_rounds() {
    let Some(modules) = sdk2() else { return };
    let sandbox = Sandbox::new();
    let elicitor = Scripted::new(vec![accept(json!({ "ok": true }))]);
    let manager = ts2_with(&sandbox, &modules, elicitor.clone()).await;
    let error = manager
        .call_tool("mcp__ts2__nag", None)
        .await
        .expect_err("cut off")
        .to_string();
    assert!(error.contains("MCP server \"ts2\""), "{error}");
    assert!(error.contains("kept asking"), "{error}");
    assert_eq!(elicitor.messages().len(), 8);
    manager.cleanup().await;
}

// SPEC-3: `prompts/get` and `resources/read` answered with `input_required` ask and retry too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_3_prompt_and_resource_input_required_ask_and_retry() {
    let Some(modules) = sdk2() else { return };
    let sandbox = Sandbox::new();
    let elicitor = Scripted::new(vec![
        accept(json!({ "name": "Ada" })),
        accept(json!({ "password": "pw" })),
    ]);
    let manager = ts2_with(&sandbox, &modules, elicitor.clone()).await;
    let prompt = manager
        .get_prompt("ts2", "greet", Map::new())
        .await
        .expect("prompts/get");
    let text = serde_json::to_string(&prompt.messages).unwrap();
    assert!(text.contains("Hello, Ada!"), "{text}");
    let resource = manager
        .read_resource("ts2", "wave://secret")
        .await
        .expect("resources/read");
    let text = serde_json::to_string(&resource.contents).unwrap();
    assert!(text.contains("the secret for pw"), "{text}");
    assert_eq!(elicitor.messages(), ["Your name?", "Password?"]);
    manager.cleanup().await;
}

// SPEC-3 (BUD-6): on 2026-07-28, `subscriptions/listen` carries `tools/list_changed`; the tool
// list is refreshed from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_3_subscriptions_listen_refreshes_the_tool_list() {
    let Some(modules) = sdk2() else { return };
    let sandbox = Sandbox::new();
    let peer = ts2_http(&sandbox, &modules, Some("reject")).await;
    let manager = manager_with(
        &sandbox,
        "ts2",
        json!({ "type": "http", "url": peer.url("/mcp") }),
    );
    manager.connect("ts2").await.expect("connect");
    let has_added = |m: &McpManager| m.tools().iter().any(|t| t.full_name == "mcp__ts2__added");
    assert!(!has_added(&manager));
    // The subscription is opened right after the dial; wait until the peer has it.
    let listening = wave_mcp_testkit::eventually(Duration::from_secs(20), || {
        ts2_log(&sandbox)
            .iter()
            .any(|l| l["method"] == "subscriptions/listen")
    })
    .await;
    assert!(listening, "{:?}", ts2_log(&sandbox));
    manager
        .call_tool("mcp__ts2__add_tool", None)
        .await
        .expect("call add_tool");
    let refreshed =
        wave_mcp_testkit::eventually(Duration::from_secs(20), || has_added(&manager)).await;
    assert!(refreshed, "{:?}", manager.tools());
    manager.cleanup().await;
}

// SPEC-1: a server that never answers the `server/discover` probe costs the probe's timeout
// once: the dial falls back to `initialize` after it, and a later manager (another process) of
// the same entry goes straight to `initialize` without probing (the Python SDK peer, with its
// probe left unanswered).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_1_a_probe_that_times_out_is_paid_once_per_config() {
    let Some(python) = super::python() else {
        return;
    };
    let sandbox = Sandbox::new();
    let probes = sandbox.path("probes.log");
    let (var, value) = marker_env(&sandbox);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/py_elicit.py");
    let entry = json!({
        "command": python, "args": [script], "startupTimeoutSec": 120,
        "env": { var: value, "WAVE_PY_SILENT_PROBE_LOG": probes },
    });
    let probes_seen = || {
        std::fs::read_to_string(&probes)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let first = manager_with(&sandbox, "quiet", entry.clone());
    first
        .connect("quiet")
        .await
        .expect("connect after the probe");
    assert_eq!(
        server(&first, "quiet").protocol_version.as_deref(),
        Some("2025-11-25")
    );
    first.cleanup().await;
    assert_eq!(probes_seen(), 1);

    let later = manager_with(&sandbox, "quiet", entry);
    later
        .connect("quiet")
        .await
        .expect("connect without a probe");
    assert_eq!(
        server(&later, "quiet").protocol_version.as_deref(),
        Some("2025-11-25")
    );
    let tools: Vec<String> = later.tools().into_iter().map(|t| t.full_name).collect();
    assert!(
        tools.contains(&"mcp__quiet__ask_form".to_string()),
        "{tools:?}"
    );
    later.cleanup().await;
    assert_eq!(probes_seen(), 1, "the remembered revision skips the probe");
}

// SPEC-1: a 2025 server that answers `server/discover` — a method it does not know — with an
// empty result (hand-written servers do; so do the conformance suite's mocks) is dialed again
// with `initialize` and works; `initialize` offers 2025-11-25, never 2026-07-28.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_1_a_server_answering_discover_with_an_empty_result_falls_back() {
    let Some(python) = super::python() else {
        return;
    };
    let sandbox = Sandbox::new();
    let methods = sandbox.root.join("lax-methods.txt");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/lax_2025.py");
    let (var, value) = marker_env(&sandbox);
    let entry = json!({ "command": python, "args": [script, methods], "env": { var: value } });
    let manager = manager_with(&sandbox, "lax", entry);
    manager.connect("lax").await.expect("connect");
    assert_eq!(
        server(&manager, "lax").protocol_version.as_deref(),
        Some("2025-06-18")
    );
    let result = manager
        .call_tool("mcp__lax__echo", args(json!({ "text": "hi" })))
        .await
        .expect("call");
    assert_eq!(result_text(&result), "hi");
    manager.cleanup().await;
    let seen = std::fs::read_to_string(&methods).unwrap();
    let seen: Vec<&str> = seen.lines().collect();
    assert_eq!(seen[0], "server/discover", "{seen:?}");
    assert!(seen.contains(&"initialize"), "{seen:?}");
    assert!(super::marked_processes(&sandbox).is_empty());
}
