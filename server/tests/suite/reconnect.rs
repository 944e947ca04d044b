//! Automatic reconnect of dropped sse streams (LIFE-4), never after a user disconnect or destroy
//! (LIFE-5), stale events of the dropped stream ignored (LIFE-7), and tool calls meanwhile (TOOL-7).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast;
use wave_mcp_manager::{Error, McpManager, ReconnectPolicy, Snapshot, Status, result_text};

use super::support::*;

fn sse_manager(sandbox: &Sandbox, sse: &HttpServer, policy: ReconnectPolicy) -> McpManager {
    sandbox.write_project(json!({ "s": { "type": "sse", "url": sse.url } }));
    let mut options = sandbox.options(Value::Null);
    options.reconnect = policy;
    McpManager::new(options)
}

fn quick_policy() -> ReconnectPolicy {
    ReconnectPolicy {
        initial_delay: Duration::from_millis(100),
        max_delay: Duration::from_millis(400),
        attempts: 5,
    }
}

/// Collects the statuses of server `s` until `last` is seen (bounded).
async fn statuses_until(
    updates: &mut broadcast::Receiver<Arc<Snapshot>>,
    last: Status,
) -> Vec<(Status, Arc<Snapshot>)> {
    let mut seen: Vec<(Status, Arc<Snapshot>)> = Vec::new();
    let collected = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(snapshot) = updates.recv().await {
            let status = snapshot.servers[0].status;
            if seen.last().map(|(s, _)| *s) != Some(status) {
                seen.push((status, snapshot.clone()));
            }
            if status == last {
                return;
            }
        }
    })
    .await;
    let order: Vec<Status> = seen.iter().map(|(s, _)| *s).collect();
    assert!(collected.is_ok(), "never reached {last:?}: {order:?}");
    seen
}

// LIFE-4, INS-2, TOOL-7: the server drops the stream → `reconnecting` (tools and instructions
// kept) → `connected` on a new connection with a fresh tool list; subscribers see it in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn life_4_dropped_stream_reconnects_on_a_new_connection() {
    let sse = HttpServer::start_sse(&["--instructions", "keep me"]);
    let sandbox = Sandbox::new();
    let manager = sse_manager(&sandbox, &sse, quick_policy());
    manager.connect("s").await.unwrap();
    let before = server(&manager, "s");
    assert_eq!(sse.stat("sseConnections"), 1);
    let mut updates = manager.subscribe();
    sse.control("drop");
    let seen = statuses_until(&mut updates, Status::Connected).await;
    let order: Vec<Status> = seen.iter().map(|(s, _)| *s).collect();
    assert_eq!(order, [Status::Reconnecting, Status::Connected]);
    let reconnecting = &seen[0].1.servers[0];
    assert_eq!(
        reconnecting.tools, before.tools,
        "TOOL-7: previous tools kept"
    );
    assert_eq!(
        reconnecting.instructions.as_deref(),
        Some("keep me"),
        "INS-2"
    );
    assert!(!reconnecting.tools_from_cache);
    let after = server(&manager, "s");
    assert_ne!(after.connection_id, before.connection_id);
    assert!(after.connection_id.is_some());
    assert_eq!(after.tools.len(), before.tools.len());
    assert_eq!(sse.stat("sseConnections"), 2, "one new stream");
    let echoed = manager
        .call_tool("mcp__s__echo", json!({"text": "back"}).as_object().cloned())
        .await
        .unwrap();
    assert_eq!(result_text(&echoed), "back");
    // LIFE-7: the old stream's session is gone and nothing of it reaches the new connection.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(status(&manager, "s"), Status::Connected);
    assert_eq!(sse.stat("open"), 1);
    manager.cleanup().await;
}

// LIFE-4: the backoff sequence doubles from `initial_delay` up to `max_delay` and stays there.
#[test]
fn life_4_backoff_doubles_up_to_the_cap() {
    let ms = Duration::from_millis;
    let policy = ReconnectPolicy {
        initial_delay: ms(100),
        max_delay: ms(1000),
        attempts: 8,
    };
    let delays: Vec<Duration> = (0..8).map(|n| policy.delay(n)).collect();
    assert_eq!(
        delays,
        [
            ms(100),
            ms(200),
            ms(400),
            ms(800),
            ms(1000),
            ms(1000),
            ms(1000),
            ms(1000)
        ]
    );
    // No overflow far past the cap.
    assert_eq!(policy.delay(40), ms(1000));
    assert_eq!(policy.delay(u32::MAX), ms(1000));
    assert_eq!(ReconnectPolicy::default().delay(0), Duration::from_secs(1));
    assert_eq!(ReconnectPolicy::default().delay(5), Duration::from_secs(30));
}

/// The gaps between the drop and the first `GET /sse`, and between consecutive ones, as the
/// server saw them.
fn attempt_gaps(sse: &HttpServer) -> Vec<Duration> {
    let stats = sse.stats();
    let times = |key: &str| -> Vec<u64> {
        stats[key]
            .as_array()
            .unwrap_or_else(|| panic!("no {key} in {stats}"))
            .iter()
            .map(|t| t.as_u64().unwrap())
            .collect()
    };
    let drop = *times("dropsUs").last().expect("a drop was recorded");
    let mut at: Vec<u64> = times("sseAttemptsUs")
        .into_iter()
        .filter(|&t| t > drop)
        .collect();
    at.insert(0, drop);
    at.windows(2)
        .map(|w| Duration::from_micros(w[1] - w[0]))
        .collect()
}

// LIFE-4: every reconnect refused → `error` with the last reason after 5 attempts, and no
// attempt afterwards. The server saw the waits before the attempts grow as the policy says: each
// gap is at least that attempt's backoff (a lower bound only, so a slow machine cannot fail it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn life_4_refused_reconnects_end_in_error_and_stop() {
    let sse = HttpServer::start_sse(&[]);
    let sandbox = Sandbox::new();
    let manager = sse_manager(&sandbox, &sse, quick_policy());
    manager.connect("s").await.unwrap();
    sse.control("refuse?count=100");
    let mut updates = manager.subscribe();
    sse.control("drop");
    let seen = statuses_until(&mut updates, Status::Error).await;
    let order: Vec<Status> = seen.iter().map(|(s, _)| *s).collect();
    assert_eq!(order, [Status::Reconnecting, Status::Error]);
    let failed = server(&manager, "s");
    let reason = failed.error.unwrap();
    assert!(
        reason.contains("reconnect failed after 5 attempts"),
        "{reason}"
    );
    assert!(reason.contains("503"), "{reason}");
    assert!(failed.tools.is_empty() || failed.tools_from_cache);
    assert!(
        manager.tools().is_empty(),
        "an errored server's tools are not declared"
    );
    assert_eq!(sse.stat("refused"), 5);
    let gaps = attempt_gaps(&sse);
    // quick_policy(): 100 ms doubling up to 400 ms (written out, not computed by `delay`).
    let backoff = [100, 200, 400, 400, 400].map(Duration::from_millis);
    assert_eq!(gaps.len(), 5, "{gaps:?}");
    for (n, (gap, wait)) in gaps.iter().zip(&backoff).enumerate() {
        assert!(
            gap >= wait,
            "attempt {} came {gap:?} after the previous one, before its backoff {wait:?} (gaps {gaps:?})",
            n + 1
        );
    }
    // Twice the longest backoff: still exactly five refused attempts, one accepted stream ever.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(sse.stat("refused"), 5);
    assert_eq!(sse.stat("sseConnections"), 1);
    manager.cleanup().await;
}

// LIFE-5: the user disconnects a healthy sse server. Closing the stream ourselves is not a drop:
// longer than twice the longest backoff later, the server has still seen exactly one stream ever
// and no snapshot said `reconnecting`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn life_5_disconnect_of_a_healthy_stream_never_reconnects() {
    let sse = HttpServer::start_sse(&[]);
    let sandbox = Sandbox::new();
    let manager = sse_manager(&sandbox, &sse, quick_policy());
    manager.connect("s").await.unwrap();
    assert_eq!(sse.stat("sseConnections"), 1);
    let mut updates = manager.subscribe();
    manager.disconnect("s").await.unwrap();
    assert_eq!(status(&manager, "s"), Status::Disconnected);
    assert!(
        eventually(Duration::from_secs(10), || sse.stat("open") == 0).await,
        "the stream was not closed"
    );
    // quick_policy's max backoff is 400 ms: 1 s is more than two of them.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(
        sse.stat("sseConnections"),
        1,
        "a reconnect followed the disconnect"
    );
    assert_eq!(sse.stat("sseRequests"), 1, "another GET /sse was attempted");
    assert_eq!(status(&manager, "s"), Status::Disconnected);
    let mut statuses = Vec::new();
    while let Ok(snapshot) = updates.try_recv() {
        statuses.push(snapshot.servers[0].status);
    }
    assert!(
        !statuses.contains(&Status::Reconnecting),
        "reconnecting after a user disconnect: {statuses:?}"
    );
    manager.cleanup().await;
}

/// A server whose stream was just dropped, with a 600 ms backoff before the first re-dial.
async fn in_backoff() -> (HttpServer, Sandbox, McpManager) {
    let sse = HttpServer::start_sse(&[]);
    let sandbox = Sandbox::new();
    let policy = ReconnectPolicy {
        initial_delay: Duration::from_millis(600),
        max_delay: Duration::from_millis(600),
        attempts: 5,
    };
    let manager = sse_manager(&sandbox, &sse, policy);
    manager.connect("s").await.unwrap();
    let mut updates = manager.subscribe();
    sse.control("drop");
    statuses_until(&mut updates, Status::Reconnecting).await;
    (sse, sandbox, manager)
}

// LIFE-5: a user disconnect during the backoff ends it at once; no connection attempt follows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn life_5_disconnect_during_backoff_cancels_the_reconnect() {
    let (sse, _sandbox, manager) = in_backoff().await;
    manager.disconnect("s").await.unwrap();
    assert_eq!(status(&manager, "s"), Status::Disconnected);
    // Twice the backoff.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(status(&manager, "s"), Status::Disconnected);
    assert_eq!(
        sse.stat("sseConnections"),
        1,
        "a reconnect happened after disconnect"
    );
    assert_eq!(sse.stat("refused"), 0);
    assert!(
        manager.start_turn_dials().is_none(),
        "LAZY-6 holds after a drop too"
    );
    manager.cleanup().await;
}

// LIFE-5, LIFE-8: destroy during the backoff cancels it too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn life_5_destroy_during_backoff_cancels_the_reconnect() {
    let (sse, _sandbox, manager) = in_backoff().await;
    manager.cleanup().await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(sse.stat("sseConnections"), 1);
    assert_eq!(status(&manager, "s"), Status::Disconnected);
}

// TOOL-7: a call made while reconnecting waits for the reconnect and then runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_7_call_during_reconnect_waits_and_runs() {
    let sse = HttpServer::start_sse(&[]);
    let sandbox = Sandbox::new();
    let manager = sse_manager(&sandbox, &sse, quick_policy());
    manager.connect("s").await.unwrap();
    sse.control("refuse?count=2");
    let mut updates = manager.subscribe();
    sse.control("drop");
    statuses_until(&mut updates, Status::Reconnecting).await;
    assert!(
        manager
            .tools()
            .iter()
            .any(|t| t.full_name == "mcp__s__echo"),
        "tools stay declared while reconnecting"
    );
    let echoed = manager
        .call_tool(
            "mcp__s__echo",
            json!({"text": "waited"}).as_object().cloned(),
        )
        .await
        .unwrap();
    assert_eq!(result_text(&echoed), "waited");
    assert_eq!(status(&manager, "s"), Status::Connected);
    manager.cleanup().await;
}

// TOOL-7: when the reconnect does not come back within the call timeout, the call fails with a
// clear "reconnecting" error (never "no such tool"); when it fails for good, with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_7_call_during_failed_reconnect_names_the_state() {
    let sse = HttpServer::start_sse(&[]);
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({
        "s": { "type": "sse", "url": sse.url, "toolTimeoutMs": 150 }
    }));
    let mut options = sandbox.options(Value::Null);
    options.reconnect = ReconnectPolicy {
        initial_delay: Duration::from_millis(500),
        max_delay: Duration::from_millis(500),
        attempts: 1,
    };
    let manager = McpManager::new(options);
    manager.connect("s").await.unwrap();
    sse.control("refuse?count=100");
    let mut updates = manager.subscribe();
    sse.control("drop");
    statuses_until(&mut updates, Status::Reconnecting).await;
    let err = manager.call_tool("mcp__s__echo", None).await.unwrap_err();
    assert_eq!(
        err,
        Error::Reconnecting {
            server: "s".into(),
            tool: "echo".into()
        }
    );
    assert!(err.to_string().contains("reconnecting"), "{err}");
    statuses_until(&mut updates, Status::Error).await;
    manager.cleanup().await;
}
