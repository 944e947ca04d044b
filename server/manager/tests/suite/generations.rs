//! Generations (LIFE-7, LAZY-7): every connection of a server is a new generation with its own
//! id, and a dial whose generation is no longer the server's (disconnected or destroyed while
//! dialing) is closed with its process tree, never installed.

use serde_json::json;
use wave_mcp_manager::{Error, Status};

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn life_7_a_reconnect_is_a_new_connection_with_a_new_id() {
    let sandbox = sandbox();
    write_project(
        &sandbox,
        json!({ "a": server(&sandbox, "a", &["--tools", "echo"]) }),
    );
    let manager = manager(&sandbox);
    manager.connect("a").await.unwrap();
    let first = row(&manager, "a").connection_id.expect("a connection id");
    let first_pids = read_pids(&sandbox.pid_file("a"));
    manager.disconnect("a").await.unwrap();
    assert_all_dead(&first_pids).await;
    assert_eq!(row(&manager, "a").connection_id, None);

    manager.connect("a").await.unwrap();
    let second = row(&manager, "a").connection_id.expect("a connection id");
    assert_ne!(first, second, "the new connection kept the old id");
    assert_eq!(starts(&sandbox), 2);
    assert_eq!(status(&manager, "a"), Status::Connected);
    manager.cleanup().await;
    sandbox.assert_no_process_left().await;
}

/// A dial of a slow server, with its process tree up and its initialize pending.
async fn slow_dial_in_flight(sandbox: &SandboxDirs) -> (wave_mcp_manager::McpManager, Vec<u32>) {
    write_project(
        sandbox,
        json!({ "slow": server(sandbox, "slow", &[
            "--tools", "echo", "--slow-initialize-ms", "1500", "--spawn-descendants", "1",
        ]) }),
    );
    let manager = manager(sandbox);
    // Not awaited: the turn's dial runs in the background.
    drop(manager.start_turn_dials().expect("slow is due"));
    let pids = wait_for_pids(&sandbox.pid_file("slow"), 2).await;
    assert_eq!(status(&manager, "slow"), Status::Connecting);
    (manager, pids)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn life_7_a_dial_superseded_by_disconnect_is_closed_and_never_installed() {
    let sandbox = sandbox();
    let (manager, stale) = slow_dial_in_flight(&sandbox).await;
    manager.disconnect("slow").await.unwrap();
    assert_all_dead(&stale).await;
    // Past the slow initialize: the stale dial could have finished by now, but it never shows.
    let settled = eventually(std::time::Duration::from_secs(10), || {
        manager.background_tasks() == 0
    })
    .await;
    assert!(settled, "the stale dial never ended");
    let slow = row(&manager, "slow");
    assert_eq!(slow.status, Status::Disconnected);
    assert_eq!(slow.connection_id, None);
    assert!(manager.tools().is_empty(), "{:?}", manager.tools());

    // The next generation connects normally; the old tree stays dead.
    manager.connect("slow").await.unwrap();
    assert_eq!(status(&manager, "slow"), Status::Connected);
    assert_eq!(starts(&sandbox), 2);
    assert!(stale.iter().all(|&pid| !alive(pid)), "{stale:?}");
    manager.cleanup().await;
    sandbox.assert_no_process_left().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lazy_7_a_dial_in_flight_at_destroy_leaves_no_process() {
    let sandbox = sandbox();
    let (manager, stale) = slow_dial_in_flight(&sandbox).await;
    manager.cleanup().await;
    // Cleanup awaited every task: nothing is left that could install or spawn anything.
    assert_eq!(manager.background_tasks(), 0);
    assert_all_dead(&stale).await;
    assert_eq!(status(&manager, "slow"), Status::Disconnected);
    assert_eq!(manager.connect("slow").await, Err(Error::Destroyed));
    sandbox.assert_no_process_left().await;
}
