//! The MCP revision a connection speaks (SPEC-1) with servers built on other current official
//! SDKs: a TypeScript SDK v2 server (npm `@modelcontextprotocol/server` 2.4.0,
//! `tests/peers/ts2_server.mjs --versions 2025-06-18`) written for 2025-06-18 only, hand-wired
//! to the SDK's stdio and stateful Streamable HTTP transports, and a PyPI `fastmcp` 4.1.6 server
//! (`tests/peers/py_fastmcp.py`, its own venv) over stdio, stateful and stateless Streamable
//! HTTP. Each test lists the tools, calls one, checks the negotiated revision in the snapshot
//! and in the CLI (`tools --json`, then `servers --json` in a later process) and asserts the
//! wire from the peer's own tap of what it received.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value, json};
use wave_mcp_manager::{McpManager, Status, result_text};

use super::super::support::*;
use super::{HttpPeer, free_port, marker_env, peer_path};

const MODERN: &str = "2026-07-28";

/// `$WAVE_PEERS_DIR/sdk2`, where `node_modules/@modelcontextprotocol/server` is.
fn sdk2() -> Option<PathBuf> {
    let pkg = peer_path(
        "npm @modelcontextprotocol/server 2.4.0 (TypeScript SDK v2)",
        "sdk2/node_modules/@modelcontextprotocol/server/package.json",
    )?;
    Some(pkg.ancestors().nth(3).unwrap().to_path_buf())
}

/// The Python of the venv that holds PyPI `fastmcp` 4.1.6.
fn fastmcp_python() -> Option<PathBuf> {
    peer_path(
        "PyPI fastmcp 4.1.6 (fastmcp-venv)",
        "fastmcp-venv/bin/python",
    )
}

fn peer_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/peers")
        .join(name)
}

/// The JSON lines a peer's tap wrote to `file` in the sandbox.
fn tap(sandbox: &Sandbox, file: &str) -> Vec<Value> {
    std::fs::read_to_string(sandbox.path(file))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The revisions offered inside `initialize` requests, in order.
fn offered(log: &[Value]) -> Vec<String> {
    log.iter()
        .filter_map(|l| l.get("initialize")?.as_str().map(str::to_string))
        .collect()
}

/// Connects `name`, checks status and revision in the snapshot, that `echo` is listed and that
/// a call of it answers `echo: hello`; then the CLI, in processes of its own, shows the same
/// revision while connected (`tools NAME --json`) and as the last negotiated (`servers --json`).
async fn lists_calls_and_shows(sandbox: &Sandbox, name: &str, entry: Value, revision: &str) {
    let manager = McpManager::new(sandbox.options(json!({ name: entry.clone() })));
    manager
        .connect(name)
        .await
        .unwrap_or_else(|e| panic!("connecting {name}: {e}"));
    let snapshot = server(&manager, name);
    assert_eq!(snapshot.status, Status::Connected);
    assert_eq!(snapshot.protocol_version.as_deref(), Some(revision));
    let names: Vec<String> = manager.tools().into_iter().map(|t| t.full_name).collect();
    let echo = format!("mcp__{name}__echo");
    assert!(names.contains(&echo), "{echo} not in {names:?}");
    let arguments: Option<Map<String, Value>> = json!({ "text": "hello" }).as_object().cloned();
    let result = manager
        .call_tool(&echo, arguments)
        .await
        .unwrap_or_else(|e| panic!("calling {echo}: {e}"));
    assert_eq!(result_text(&result), "echo: hello");
    manager.cleanup().await;

    sandbox.write_project(json!({ name: entry }));
    let out = cli(sandbox, &["tools", name, "--json"], &[]);
    assert!(out.status.success(), "tools --json: {}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("tools --json prints JSON");
    assert_eq!(v["server"]["protocolVersion"], revision, "{v:#}");
    assert!(v.to_string().contains("\"echo\""), "{v:#}");
    let out = cli(sandbox, &["servers", "--json"], &[]);
    assert!(out.status.success(), "servers --json: {}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("servers --json prints JSON");
    let rows = v.as_array().or_else(|| v["servers"].as_array()).unwrap();
    let row = rows.iter().find(|r| r["name"] == name).expect("the server");
    assert_eq!(row["protocolVersion"], revision, "{v:#}");
}

// ---- TypeScript SDK v2, a server written for 2025-06-18 only --------------------------------

fn ts2_legacy_stdio(sandbox: &Sandbox, modules: &Path) -> Value {
    let (var, value) = marker_env(sandbox);
    let script = peer_script("ts2_server.mjs");
    json!({
        "command": "node",
        "args": [script, "stdio", "--versions", "2025-06-18"],
        "env": { var: value, "WAVE_TS2_MODULES": modules, "WAVE_TS2_LOG": sandbox.path("ts2.log") },
    })
}

// SPEC-1: a TypeScript SDK v2 server limited to 2025-06-18 on stdio answers the
// `server/discover` probe "method not found"; the dial falls back to `initialize`, offering
// 2025-11-25 (never 2026-07-28), the server counter-offers 2025-06-18, and that is what is
// shown; tools and a call work. A later process (the CLI) offers the remembered 2025-06-18
// without probing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_1_ts_sdk_v2_server_limited_to_2025_06_18_over_stdio_falls_back() {
    let Some(modules) = sdk2() else { return };
    let sandbox = Sandbox::new();
    let entry = ts2_legacy_stdio(&sandbox, &modules);
    lists_calls_and_shows(&sandbox, "ts2old", entry, "2025-06-18").await;
    // The first dial probes, then offers 2025-11-25; the CLI's later dial remembers 2025-06-18,
    // offers it and does not probe.
    let log = tap(&sandbox, "ts2.log");
    assert_eq!(log.first(), Some(&json!({ "discover": true })), "{log:?}");
    let probes = log.iter().filter(|l| l.get("discover").is_some()).count();
    assert_eq!(probes, 1, "{log:?}");
    assert_eq!(offered(&log), ["2025-11-25", "2025-06-18"], "{log:?}");
    sandbox.assert_no_process_left().await;
}

// SPEC-1: the same server on the SDK's stateful Streamable HTTP transport refuses the probe
// (`400`, not initialized); the dial falls back to `initialize` offering 2025-11-25, and every
// later request carries the session id and `MCP-Protocol-Version: 2025-06-18`. A later process
// (the CLI) offers the remembered 2025-06-18 without probing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_1_ts_sdk_v2_server_limited_to_2025_06_18_over_streamable_http_falls_back() {
    let Some(modules) = sdk2() else { return };
    let sandbox = Sandbox::new();
    let port = free_port();
    let mut command = Command::new("node");
    command
        .arg(peer_script("ts2_server.mjs"))
        .args(["http", &port.to_string(), "--versions", "2025-06-18"])
        .env("WAVE_TS2_MODULES", &modules)
        .env("WAVE_TS2_LOG", sandbox.path("ts2.log"));
    let peer = HttpPeer::start(&sandbox, command, port).await;
    let entry = json!({ "type": "http", "url": peer.url("/mcp") });
    lists_calls_and_shows(&sandbox, "ts2old", entry, "2025-06-18").await;
    let log = tap(&sandbox, "ts2.log");
    let requests: Vec<&Value> = log.iter().filter(|l| l.get("method").is_some()).collect();
    assert_eq!(requests[0]["method"], "server/discover", "{log:?}");
    let probes = requests
        .iter()
        .filter(|l| l["method"] == "server/discover")
        .count();
    assert_eq!(probes, 1, "{log:?}");
    assert_eq!(offered(&log), ["2025-11-25", "2025-06-18"], "{log:?}");
    let after_handshake: Vec<&&Value> = requests
        .iter()
        .filter(|l| l["method"] != "server/discover" && l["method"] != "initialize")
        .collect();
    assert!(
        after_handshake.iter().any(|l| l["method"] == "tools/call"),
        "{log:?}"
    );
    for request in after_handshake {
        assert_eq!(request["header"], "2025-06-18", "{request}");
        assert!(request["session"].is_string(), "no session id: {request}");
    }
}

// ---- PyPI fastmcp 4.1.6 (serves 2026-07-28 and the 2025 handshake) --------------------------

/// Asserts the 2026-07-28 wire in `log` (the fastmcp tap): calls were made, and every server
/// process that got a call got no `initialize`, and each request it got carried 2026-07-28 in
/// `_meta` (over HTTP, the header too, and no session id). Any `initialize` at all (a stdio
/// server that started so slowly under load that the `server/discover` probe timed out, then
/// restarted) offered 2025-11-25, never 2026-07-28.
fn assert_modern_wire(log: &[Value], http: bool) {
    assert!(log.iter().any(|l| l["method"] == "tools/call"), "{log:?}");
    assert!(
        offered(log).iter().all(|v| v == "2025-11-25"),
        "an initialize offered another revision: {log:?}"
    );
    let callers: Vec<&Value> = log
        .iter()
        .filter(|l| l["method"] == "tools/call")
        .map(|l| &l["pid"])
        .collect();
    for message in log.iter().filter(|l| callers.contains(&&l["pid"])) {
        assert_ne!(message["method"], "initialize", "{log:?}");
        if message["request"] != true {
            continue;
        }
        assert_eq!(message["metaVersion"], MODERN, "{message}");
        if http {
            assert_eq!(message["header"], MODERN, "{message}");
            assert_eq!(message["session"], Value::Null, "{message}");
        }
    }
}

async fn fastmcp_http(sandbox: &Sandbox, python: &Path, stateless: bool) -> HttpPeer {
    let port = free_port();
    let mut command = Command::new(python);
    command
        .arg(peer_script("py_fastmcp.py"))
        .args(["http", &port.to_string()])
        .env("WAVE_FASTMCP_LOG", sandbox.path("fastmcp.log"));
    if stateless {
        command.arg("--stateless");
    }
    HttpPeer::start(sandbox, command, port).await
}

// SPEC-1: a fastmcp 4.1.6 server on stdio is spoken to in 2026-07-28: `server/discover`, no
// `initialize` to the process that serves the calls, the revision in every request's `_meta`.
// (Python starting slowly on a loaded machine may answer the probe after its timeout; the dial
// is then retried with `server/discover` and no timeout.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_1_fastmcp_server_over_stdio_speaks_2026_07_28() {
    let Some(python) = fastmcp_python() else {
        return;
    };
    let sandbox = Sandbox::new();
    let (var, value) = marker_env(&sandbox);
    let entry = json!({
        "command": python, "args": [peer_script("py_fastmcp.py"), "stdio"], "startupTimeoutSec": 120,
        "env": { var: value, "WAVE_FASTMCP_LOG": sandbox.path("fastmcp.log") },
    });
    lists_calls_and_shows(&sandbox, "fast", entry, MODERN).await;
    let log = tap(&sandbox, "fastmcp.log");
    assert_eq!(log[0]["method"], "server/discover", "{log:?}");
    assert_modern_wire(&log, false);
    sandbox.assert_no_process_left().await;
}

// SPEC-1: a stdio server that answers the `server/discover` probe only after the probe's timeout
// (fastmcp holding its first message 12 s, as a slow start under load does) is not lost: the
// fallback `initialize` (offering 2025-11-25) meets the late answer, and the dial is retried
// with `server/discover` without the timeout; the second process serves everything on
// 2026-07-28 and gets no `initialize`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_1_a_probe_answered_after_its_timeout_is_retried_with_server_discover() {
    let Some(python) = fastmcp_python() else {
        return;
    };
    let sandbox = Sandbox::new();
    let (var, value) = marker_env(&sandbox);
    let entry = json!({
        "command": python, "args": [peer_script("py_fastmcp.py"), "stdio"], "startupTimeoutSec": 120,
        "env": {
            var: value,
            "WAVE_FASTMCP_LOG": sandbox.path("fastmcp.log"),
            "WAVE_FASTMCP_SLOW_PROBE": sandbox.path("slow-probe-taken"),
        },
    });
    lists_calls_and_shows(&sandbox, "fast", entry, MODERN).await;
    let log = tap(&sandbox, "fastmcp.log");
    let first = &log[0]["pid"];
    let first_process: Vec<&Value> = log.iter().filter(|l| &l["pid"] == first).collect();
    assert_eq!(first_process[0]["method"], "server/discover", "{log:?}");
    // The held probe's fallback offered 2025-11-25; under load a later dial's probe may time out
    // too and fall back the same way: every offer is 2025-11-25, never 2026-07-28.
    let offers = offered(&log);
    assert!(
        !offers.is_empty() && offers.iter().all(|v| v == "2025-11-25"),
        "{log:?}"
    );
    assert!(
        log.iter()
            .any(|l| &l["pid"] != first && l["method"] == "server/discover"),
        "no second dial with server/discover: {log:?}"
    );
    assert_modern_wire(&log, false);
    sandbox.assert_no_process_left().await;
}

// SPEC-1: a fastmcp 4.1.6 server on stateless Streamable HTTP: 2026-07-28, the
// `MCP-Protocol-Version` header and `_meta` on every request, no session id, no `initialize`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_1_fastmcp_server_over_stateless_http_speaks_2026_07_28() {
    let Some(python) = fastmcp_python() else {
        return;
    };
    let sandbox = Sandbox::new();
    let peer = fastmcp_http(&sandbox, &python, true).await;
    let entry = json!({ "type": "http", "url": peer.url("/mcp") });
    lists_calls_and_shows(&sandbox, "fast", entry, MODERN).await;
    assert_modern_wire(&tap(&sandbox, "fastmcp.log"), true);
}

// SPEC-1: a fastmcp 4.1.6 server on its default, stateful Streamable HTTP is spoken to in
// 2026-07-28 as well (no session). A later process that remembers 2025-11-25 for the entry
// dials the legacy way straight away: `initialize` offering 2025-11-25, then the session id and
// `MCP-Protocol-Version: 2025-11-25` on every request; tools and a call work on that era too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_1_fastmcp_server_over_stateful_http_serves_both_eras() {
    let Some(python) = fastmcp_python() else {
        return;
    };
    let sandbox = Sandbox::new();
    let peer = fastmcp_http(&sandbox, &python, false).await;
    let entry = json!({ "type": "http", "url": peer.url("/mcp") });
    lists_calls_and_shows(&sandbox, "fast", entry.clone(), MODERN).await;
    let modern = tap(&sandbox, "fastmcp.log");
    assert_modern_wire(&modern, true);

    super::era::pretend_last_revision(&sandbox, MODERN, "2025-11-25");
    let manager = McpManager::new(sandbox.options(json!({ "fast": entry })));
    assert_eq!(
        server(&manager, "fast").protocol_version.as_deref(),
        Some("2025-11-25")
    );
    manager
        .connect("fast")
        .await
        .expect("connect on 2025-11-25");
    assert_eq!(
        server(&manager, "fast").protocol_version.as_deref(),
        Some("2025-11-25")
    );
    let arguments: Option<Map<String, Value>> = json!({ "text": "old" }).as_object().cloned();
    let result = manager
        .call_tool("mcp__fast__echo", arguments)
        .await
        .expect("call on 2025-11-25");
    assert_eq!(result_text(&result), "echo: old");
    manager.cleanup().await;
    let log = tap(&sandbox, "fastmcp.log");
    let legacy = &log[modern.len()..];
    assert_eq!(legacy[0]["method"], "initialize", "{legacy:?}");
    assert_eq!(offered(legacy), ["2025-11-25"], "{legacy:?}");
    assert!(
        legacy.iter().any(|l| l["method"] == "tools/call"),
        "{legacy:?}"
    );
    for message in &legacy[1..] {
        assert_eq!(message["header"], "2025-11-25", "{message}");
        assert!(message["session"].is_string(), "no session id: {message}");
    }
}
