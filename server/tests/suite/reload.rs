//! `McpManager::reload`: a config file changed on disk (the sidecar's watcher calls it). New
//! servers appear disconnected, removed ones are torn down, changed ones are reconnected only if
//! they were connected, with the old tree reaped first and its late events ignored (LIFE-7).

use std::time::Duration;

use serde_json::json;
use wave_mcp_manager::{McpManager, Status};

use super::support::*;

// CFG-8, LAZY-1: a server added to the file appears `disconnected`; nothing is spawned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_adds_new_servers_disconnected_and_spawns_nothing() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&[]) }));
    let manager = sandbox.manager();
    let mut events = manager.subscribe();
    sandbox.write_project(json!({ "a": sandbox.server(&[]), "b": sandbox.server(&[]) }));
    sandbox.write_user(json!({ "u": sandbox.server(&[]) }));
    manager.reload().await;
    let snapshot = events.try_recv().expect("one snapshot published");
    let names: Vec<&str> = snapshot.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["u", "a", "b"]);
    assert!(
        snapshot
            .servers
            .iter()
            .all(|s| s.status == Status::Disconnected)
    );
    assert!(
        events.try_recv().is_err(),
        "exactly one snapshot per reload"
    );
    // Sync point: nothing pending after the reload, so nothing can spawn later either.
    assert_eq!(
        manager.background_tasks(),
        0,
        "LAZY-1: work pending after a reload"
    );
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
    manager.cleanup().await;
}

// LIFE-7, LAZY-8, LAZY-6: changed + connected → reconnected (new connection, old tree gone, and
// the old process's exit does not touch the new connection); unchanged + connected → the same
// connection; changed + disconnected → stays disconnected, not spawned; removed + connected →
// torn down and gone from the list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_reconnects_only_changed_connected_servers_and_reaps_what_goes() {
    let sandbox = Sandbox::new();
    let descendants = ["--spawn-descendants", "2"];
    sandbox.write_project(json!({
        "changed": sandbox.server_with_pids("changed-1", &descendants),
        "same": sandbox.server_with_pids("same", &descendants),
        "idle": sandbox.server_with_pids("idle-1", &[]),
        "removed": sandbox.server_with_pids("removed", &descendants),
    }));
    let manager = sandbox.manager();
    for name in ["changed", "same", "removed"] {
        manager.connect(name).await.unwrap();
    }
    let changed_old = wait_for_pids(&sandbox.pid_file("changed-1"), 3).await;
    let same = wait_for_pids(&sandbox.pid_file("same"), 3).await;
    let removed = wait_for_pids(&sandbox.pid_file("removed"), 3).await;
    let same_connection = server(&manager, "same").connection_id;
    let changed_connection = server(&manager, "changed").connection_id;

    sandbox.write_project(json!({
        "changed": sandbox.server_with_pids("changed-2", &descendants),
        "same": sandbox.server_with_pids("same", &descendants),
        "idle": sandbox.server_with_pids("idle-2", &[]),
    }));
    manager.reload().await;

    let snapshot = manager.snapshot();
    let names: Vec<&str> = snapshot.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["changed", "same", "idle"]);
    assert_eq!(status(&manager, "changed"), Status::Connected);
    assert_ne!(
        server(&manager, "changed").connection_id,
        changed_connection
    );
    assert_all_dead(&changed_old).await;
    assert_all_dead(&removed).await;
    let changed_new = wait_for_pids(&sandbox.pid_file("changed-2"), 3).await;
    assert!(changed_new.iter().all(|&p| alive(p)));
    assert_eq!(server(&manager, "same").connection_id, same_connection);
    assert!(
        same.iter().all(|&p| alive(p)),
        "an unchanged server keeps its process"
    );
    assert_eq!(status(&manager, "idle"), Status::Disconnected);
    assert!(
        read_pids(&sandbox.pid_file("idle-2")).is_empty(),
        "idle was spawned"
    );
    // LIFE-7: the old generation's exit (already delivered) left the new connection alone.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(status(&manager, "changed"), Status::Connected);
    assert_eq!(manager.tools().len(), 2 * 9);

    manager.cleanup().await;
    assert_all_dead(&changed_new).await;
    assert_all_dead(&same).await;
}

// A half-written or broken file must not tear servers down: the reload keeps the current state
// and publishes nothing. A reload with no change publishes nothing either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_keeps_everything_when_a_file_breaks_or_nothing_changed() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server_with_pids("a", &[]) }));
    let manager = sandbox.manager();
    manager.connect("a").await.unwrap();
    let pids = wait_for_pids(&sandbox.pid_file("a"), 1).await;
    let version = manager.snapshot().version;

    manager.reload().await;
    assert_eq!(
        manager.snapshot().version,
        version,
        "no change, no snapshot"
    );

    std::fs::write(
        sandbox.workdir.join(".mcp.json"),
        "{\"mcpServers\": {\"a\": ",
    )
    .unwrap();
    manager.reload().await;
    assert_eq!(manager.snapshot().version, version);
    assert_eq!(status(&manager, "a"), Status::Connected);
    assert!(pids.iter().all(|&p| alive(p)));

    // The file is deleted outright: that is a real change, the server goes.
    std::fs::remove_file(sandbox.workdir.join(".mcp.json")).unwrap();
    manager.reload().await;
    assert!(manager.snapshot().servers.is_empty());
    assert_all_dead(&pids).await;
    manager.cleanup().await;
}

// LAZY-6: a server the user disconnected stays disconnected through a config change: no
// re-dial by the reload, none by the next turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_keeps_a_user_disconnect() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&[]) }));
    let manager = sandbox.manager();
    manager.connect("a").await.unwrap();
    manager.disconnect("a").await.unwrap();
    sandbox.write_project(json!({ "a": sandbox.server(&["--name", "a2"]) }));
    manager.reload().await;
    assert_eq!(status(&manager, "a"), Status::Disconnected);
    assert!(manager.start_turn_dials().is_none(), "LAZY-6: no auto-dial");
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
    manager.cleanup().await;
}

// LIFE-8: after cleanup, reload neither lists nor dials anything new.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_after_cleanup_does_nothing() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&[]) }));
    let manager: McpManager = sandbox.manager();
    manager.cleanup().await;
    let version = manager.snapshot().version;
    sandbox
        .write_project(json!({ "a": sandbox.server(&["--name", "x"]), "b": sandbox.server(&[]) }));
    manager.reload().await;
    assert_eq!(manager.snapshot().version, version);
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
}

// LIFE-7, LAZY-7: a reload that arrives while a changed server is still dialing cancels that
// dial (its process is killed) and dials the new config instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_during_a_dial_replaces_it() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({
        "a": sandbox.server_with_pids("a-1", &["--slow-initialize-ms", "3000"]),
    }));
    let manager = sandbox.manager();
    let connecting = {
        let manager = manager.clone();
        tokio::spawn(async move { manager.connect("a").await })
    };
    let old = wait_for_pids(&sandbox.pid_file("a-1"), 1).await;
    assert_eq!(status(&manager, "a"), Status::Connecting);
    sandbox.write_project(json!({ "a": sandbox.server_with_pids("a-2", &[]) }));
    manager.reload().await;
    assert_all_dead(&old).await;
    assert_eq!(status(&manager, "a"), Status::Connected);
    let new = wait_for_pids(&sandbox.pid_file("a-2"), 1).await;
    assert!(alive(new[0]));
    let _ = connecting.await.unwrap();
    assert_eq!(status(&manager, "a"), Status::Connected);
    manager.cleanup().await;
    assert_all_dead(&new).await;
}
