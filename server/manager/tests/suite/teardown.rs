//! Teardown (LAZY-8, LIFE-6, LIFE-8): disconnect and cleanup end the whole process tree of a
//! stdio server, one that ignores SIGTERM included, asserted by pid; cleanup is idempotent.

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
