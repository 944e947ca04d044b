//! Lazy dial: a new manager starts nothing (LAZY-1); an explicit connect dials its server only
//! (LAZY-5); a turn dials every server that is due and none twice (LAZY-2, LAZY-3), and when
//! nothing is due it has nothing to wait for (LAZY-9).

use serde_json::json;
use wave_mcp_manager::Status;

use super::support::*;

fn three_servers(sandbox: &SandboxDirs) {
    write_project(
        sandbox,
        json!({
            "a": server(sandbox, "a", &["--tools", "echo"]),
            "b": server(sandbox, "b", &["--tools", "echo"]),
            "c": server(sandbox, "c", &["--tools", "echo"]),
        }),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lazy_1_lazy_5_nothing_starts_until_asked_and_connect_dials_only_its_server() {
    let sandbox = sandbox();
    three_servers(&sandbox);
    let manager = manager(&sandbox);
    // LAZY-1: every server listed, disconnected, and no task pending that could spawn one later.
    let snapshot = manager.snapshot();
    let mut names: Vec<&str> = snapshot.servers.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["a", "b", "c"]);
    assert!(
        snapshot
            .servers
            .iter()
            .all(|s| s.status == Status::Disconnected && s.connection_id.is_none()),
        "{snapshot:?}"
    );
    assert_eq!(
        manager.background_tasks(),
        0,
        "LAZY-1: work pending at start"
    );
    assert_eq!(starts(&sandbox), 0, "LAZY-1: a server started");
    assert_eq!(sandbox.live_processes(), Vec::<u32>::new());

    // LAZY-5: an explicit connect dials at once, and only that server.
    manager.connect("b").await.unwrap();
    assert_eq!(status(&manager, "b"), Status::Connected);
    assert_eq!(starts(&sandbox), 1);
    assert_eq!(read_pids(&sandbox.pid_file("b")).len(), 1);
    for other in ["a", "c"] {
        assert_eq!(status(&manager, other), Status::Disconnected);
        assert!(
            read_pids(&sandbox.pid_file(other)).is_empty(),
            "{other} ran"
        );
    }
    manager.cleanup().await;
    sandbox.assert_no_process_left().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lazy_2_lazy_3_lazy_9_a_turn_dials_the_due_servers_once() {
    let sandbox = sandbox();
    three_servers(&sandbox);
    let manager = manager(&sandbox);
    manager.connect("a").await.unwrap();
    let first_id = row(&manager, "a").connection_id;
    assert!(first_id.is_some());

    // LAZY-2, LAZY-3: the turn dials b and c; the connected a is reused, not dialed again.
    let pending = manager
        .start_turn_dials()
        .expect("b and c were never dialed");
    assert_eq!(pending.len(), 2);
    pending.settled().await;
    for name in ["a", "b", "c"] {
        assert_eq!(status(&manager, name), Status::Connected, "{name}");
    }
    assert_eq!(starts(&sandbox), 3);
    assert_eq!(
        row(&manager, "a").connection_id,
        first_id,
        "LAZY-3: a redialed"
    );
    assert_eq!(
        manager.tools().len(),
        3,
        "every live server's echo is declared"
    );

    // LAZY-9: nothing due, so no dial and nothing to await.
    assert!(manager.start_turn_dials().is_none());
    assert_eq!(starts(&sandbox), 3);
    manager.cleanup().await;
    sandbox.assert_no_process_left().await;
}
