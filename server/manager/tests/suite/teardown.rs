//! Teardown (LAZY-8, LIFE-6, LIFE-8): disconnect and cleanup end the whole process tree of a
//! stdio server, one that ignores SIGTERM included, asserted by pid; cleanup is idempotent; a
//! server is signalled only after it had the grace period to exit on the end of its input.

use std::time::Duration;

use serde_json::json;
use wave_mcp_manager::{Error, Status};

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lazy_8_life_6_disconnect_kills_the_whole_tree_and_can_reconnect() {
    let sandbox = sandbox();
    write_project(
        &sandbox,
        json!({ "tree": server(&sandbox, "tree", &[
            "--tools", "echo", "--ignore-sigterm", "--spawn-descendants", "2",
        ]) }),
    );
    let manager = manager(&sandbox);
    manager.connect("tree").await.unwrap();
    let pids = wait_for_pids(&sandbox.pid_file("tree"), 3).await;
    assert!(pids.iter().all(|&pid| alive(pid)), "{pids:?}");

    manager.disconnect("tree").await.unwrap();
    assert_all_dead(&pids).await;
    assert_eq!(status(&manager, "tree"), Status::Disconnected);
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());
    // LIFE-6: disconnect is a runtime action; the server can connect again.
    manager.connect("tree").await.unwrap();
    assert_eq!(status(&manager, "tree"), Status::Connected);
    manager.cleanup().await;
    sandbox.assert_no_process_left().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lazy_8_life_8_cleanup_kills_every_tree_and_is_idempotent() {
    let sandbox = sandbox();
    write_project(
        &sandbox,
        json!({
            "a": server(&sandbox, "a", &["--tools", "echo", "--spawn-descendants", "1"]),
            "b": server(&sandbox, "b", &[
                "--tools", "add", "--ignore-sigterm", "--spawn-descendants", "2",
            ]),
        }),
    );
    let manager = manager(&sandbox);
    manager
        .start_turn_dials()
        .expect("both are due")
        .settled()
        .await;
    let mut pids = wait_for_pids(&sandbox.pid_file("a"), 2).await;
    pids.extend(wait_for_pids(&sandbox.pid_file("b"), 3).await);

    manager.cleanup().await;
    assert_all_dead(&pids).await;
    assert_eq!(manager.background_tasks(), 0);
    assert!(manager.is_destroyed());
    // LIFE-8: a second cleanup neither fails nor changes anything.
    manager.cleanup().await;
    for name in ["a", "b"] {
        assert_eq!(status(&manager, name), Status::Disconnected, "{name}");
    }
    assert_eq!(manager.connect("a").await, Err(Error::Destroyed));
    assert!(manager.start_turn_dials().is_none());
    sandbox.assert_no_process_left().await;
}

// LAZY-8 and the MCP lifecycle's stdio shutdown (2025-06-18): stdin is closed first and the server
// gets the grace period to exit on its own; only then SIGTERM. A server still working through
// what it read (a `notifications/cancelled` sent just before the close, LONG-3) is not cut short;
// one that outstays the grace period is still signalled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lazy_8_disconnect_signals_only_a_server_that_does_not_exit_on_end_of_input() {
    let sandbox = sandbox();
    write_project(
        &sandbox,
        json!({
            "calm": server(&sandbox, "calm", &["--tools", "echo", "--linger-after-eof-ms", "200"]),
            "stuck": server(&sandbox, "stuck", &[
                "--tools", "echo", "--linger-after-eof-ms", "600000",
            ]),
        }),
    );
    let manager = manager_with_grace(&sandbox, Duration::from_secs(20));
    manager.connect("calm").await.unwrap();
    let calm = wait_for_pids(&sandbox.pid_file("calm"), 1).await[0];
    manager.disconnect("calm").await.unwrap();
    assert_all_dead(&[calm]).await;
    assert_eq!(
        events_of(&sandbox, Some(calm)),
        ["start", "init-begin", "init-end", "eof", "exit"],
        "the server exited on its own, unsignalled"
    );

    manager.cleanup().await;

    let manager = manager_with_grace(&sandbox, Duration::from_millis(300));
    manager.connect("stuck").await.unwrap();
    let stuck = wait_for_pids(&sandbox.pid_file("stuck"), 1).await[0];
    manager.disconnect("stuck").await.unwrap();
    assert_all_dead(&[stuck]).await;
    assert_eq!(
        events_of(&sandbox, Some(stuck)),
        ["start", "init-begin", "init-end", "eof", "sigterm"]
    );
    manager.cleanup().await;
    sandbox.assert_no_process_left().await;
}
