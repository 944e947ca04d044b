//! The legacy HTTP+SSE transport (`type: "sse"`) against our test server's SSE mode: list, call,
//! headers on the stream and on every POST, error reasons, and no SSE fallback for `http` (CFG-7).
//! Reconnect behaviour (LIFE-4, LIFE-5) is tested in its own module.

use std::time::Duration;

use serde_json::{Value, json};
use wave_mcp_manager::{Status, result_text};

use super::support::*;

fn args(value: Value) -> Option<serde_json::Map<String, Value>> {
    value.as_object().cloned()
}

// CFG-5, INS-1: an `sse` server connects, lists tools with full names, answers a call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cfg_5_sse_server_lists_tools_and_calls_echo() {
    let sse = HttpServer::start_sse(&["--name", "legacy", "--instructions", "use echo\nor add"]);
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "s": { "type": "sse", "url": sse.url } }));
    let manager = sandbox.manager();
    manager.start_turn_dials().unwrap().settled().await;
    let snapshot = server(&manager, "s");
    assert_eq!(snapshot.status, Status::Connected, "{:?}", snapshot.error);
    assert_eq!(snapshot.transport, "sse");
    assert_eq!(snapshot.instructions.as_deref(), Some("use echo\nor add"));
    let names: Vec<String> = manager.tools().into_iter().map(|t| t.full_name).collect();
    assert!(names.contains(&"mcp__s__echo".to_string()), "{names:?}");
    assert!(names.contains(&"mcp__s__add".to_string()), "{names:?}");
    let echoed = manager
        .call_tool("mcp__s__echo", args(json!({"text": "over sse"})))
        .await
        .unwrap();
    assert_eq!(result_text(&echoed), "over sse");
    let sum = manager
        .call_tool("mcp__s__add", args(json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(result_text(&sum), "5");
    assert_eq!(sse.stat("sseConnections"), 1);
    assert_eq!(sse.stat("open"), 1);
    manager.cleanup().await;
    // Closing the connection ends the event stream on the server.
    assert!(
        eventually(Duration::from_secs(5), || sse.stat("open") == 0).await,
        "the sse stream is still open after cleanup: {}",
        sse.stats()
    );
    assert_eq!(
        sse.stat("sseConnections"),
        1,
        "no reconnect after a local close"
    );
}

// CFG-5: config headers (expanded) go with the GET and with every POST; a refused server's
// error names the status and not the header value. (SEC-1 on the serialized wire output:
// `faults::secrets_never_reach_the_cache_snapshots_logs_or_cli`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cfg_5_headers_reach_the_stream_and_every_post() {
    let sse = HttpServer::start_sse(&["--require-header", "X-Api-Key:s3cret-sse"]);
    let sandbox = Sandbox::new();
    let var = format!("WAVE_TEST_SSE_KEY_{}", std::process::id());
    // SAFETY: the variable name is unique to this test process and test.
    unsafe { std::env::set_var(&var, "s3cret-sse") };
    sandbox.write_project(json!({
        "keyed": { "type": "sse", "url": sse.url, "headers": { "X-Api-Key": format!("${{{var}}}") } },
        "wrong-key": { "type": "sse", "url": sse.url, "headers": { "X-Api-Key": "s3cret-nope" } },
        "no-key": { "type": "sse", "url": sse.url },
    }));
    let manager = sandbox.manager();
    manager.start_turn_dials().unwrap().settled().await;
    let keyed = server(&manager, "keyed");
    // initialize, initialized and tools/list are POSTs: each would get 401 without the header.
    assert_eq!(keyed.status, Status::Connected, "{:?}", keyed.error);
    let echoed = manager
        .call_tool("mcp__keyed__echo", args(json!({"text": "with key"})))
        .await
        .unwrap();
    assert_eq!(result_text(&echoed), "with key");
    for name in ["wrong-key", "no-key"] {
        let snapshot = server(&manager, name);
        // A 401 without an own `Authorization` header asks for a sign-in (AUTH-1).
        assert_eq!(snapshot.status, Status::NeedsAuth, "{name}");
        let reason = snapshot.error.unwrap();
        assert!(
            reason.contains("sse endpoint returned 401 Unauthorized"),
            "{name}: {reason}"
        );
        assert!(!reason.contains("s3cret"), "{name}: {reason}");
    }
    manager.cleanup().await;
}

// CFG-7: a `type: "http"` (or untyped) server that only speaks SSE is an error, and the client
// never falls back to SSE: the server saw no request to `/sse`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cfg_7_http_server_that_only_speaks_sse_is_an_error_without_fallback() {
    let sse = HttpServer::start_sse(&[]);
    let sandbox = Sandbox::new();
    let mcp_url = format!("{}/mcp", sse.base);
    sandbox.write_project(json!({
        "typed": { "type": "http", "url": mcp_url },
        "untyped": { "url": mcp_url },
    }));
    let manager = sandbox.manager();
    manager.start_turn_dials().unwrap().settled().await;
    for name in ["typed", "untyped"] {
        let snapshot = server(&manager, name);
        assert_eq!(snapshot.status, Status::Error, "{name}");
        assert_eq!(snapshot.transport, "http", "{name}");
        assert!(snapshot.error.is_some(), "{name}");
    }
    let stats = sse.stats();
    assert!(stats["mcpRequests"].as_u64().unwrap() >= 2, "{stats}");
    assert_eq!(stats["sseRequests"], 0, "an SSE request was made: {stats}");
    assert_eq!(stats["sseConnections"], 0, "{stats}");
    manager.cleanup().await;
}

// An `sse` URL that is not an SSE endpoint: the reason names the HTTP status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_url_that_404s_reports_the_status() {
    let sse = HttpServer::start_sse(&[]);
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({
        "missing": { "type": "sse", "url": format!("{}/nowhere", sse.base) },
    }));
    let manager = sandbox.manager();
    manager.start_turn_dials().unwrap().settled().await;
    let snapshot = server(&manager, "missing");
    assert_eq!(snapshot.status, Status::Error);
    let reason = snapshot.error.unwrap();
    assert!(reason.contains("404 Not Found"), "{reason}");
    assert!(!reason.contains('\n'), "one line: {reason}");
    assert_eq!(sse.stat("sseConnections"), 0);
    manager.cleanup().await;
}

// The test server's control API: refused streams answer 503 and are counted; `drop` ends open
// streams (the client sees its stream end).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_server_refuses_and_drops_on_command() {
    let sse = HttpServer::start_sse(&[]);
    sse.control("refuse?count=2");
    for _ in 0..2 {
        assert_eq!(sse.request("GET", "/sse").0, 503);
    }
    let stats = sse.stats();
    assert_eq!(stats["refused"], 2, "{stats}");
    assert_eq!(stats["sseRequests"], 2, "{stats}");
    assert_eq!(stats["sseConnections"], 0, "{stats}");
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "s": { "type": "sse", "url": sse.url } }));
    let manager = sandbox.manager();
    manager.connect("s").await.unwrap();
    let before = server(&manager, "s").connection_id;
    assert_eq!(sse.stat("open"), 1);
    sse.control("drop");
    // Noticed: the connection is gone (reconnecting, or already replaced by a new one).
    let noticed = eventually(Duration::from_secs(5), || {
        let now = server(&manager, "s");
        now.status != Status::Connected || now.connection_id != before
    })
    .await;
    assert!(noticed, "the client did not notice the dropped stream");
    manager.cleanup().await;
}
