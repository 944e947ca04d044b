//! The spawn registry seen from the manager (REAP-1): a connected stdio server's process group
//! is recorded with its start time and its owner, and the record goes when the group is reaped.

use std::path::PathBuf;

use serde_json::json;
use wave_mcp_manager::registry::{self, OwnerFile};

use super::support::{Sandbox, wait_for_pids};

/// `/proc/<pid>/stat` field 22, read here independently of the registry.
fn start_of(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, rest) = stat.rsplit_once(')').unwrap();
    rest.split_whitespace().nth(19).unwrap().parse().unwrap()
}

fn owner_file(sandbox: &Sandbox) -> PathBuf {
    let owner = registry::current_owner().expect("own start time");
    assert_eq!(owner.pid, std::process::id());
    assert_eq!(owner.start, start_of(owner.pid));
    registry::run_dir(&sandbox.home).join(format!("{}-{}.json", owner.pid, owner.start))
}

fn recorded(sandbox: &Sandbox) -> Vec<(u32, u64)> {
    let Ok(bytes) = std::fs::read(owner_file(sandbox)) else {
        return Vec::new();
    };
    let file: OwnerFile = serde_json::from_slice(&bytes).expect("owner file parses");
    file.groups.iter().map(|g| (g.pgid, g.start)).collect()
}

// REAP-1: connect records the server's group (pgid = leader pid, leader start time) in this
// process's owner file under the run directory; disconnect (TERM, grace, KILL) removes it, and
// the file goes with the last record; a second server has its own record beside the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reap_1_connected_groups_are_recorded_until_reaped() {
    let sandbox = Sandbox::new();
    let a = sandbox.server_with_pids("a", &["--spawn-descendants", "1"]);
    let b = sandbox.server_with_pids("b", &["--ignore-sigterm"]);
    let manager = wave_mcp_manager::McpManager::new(sandbox.options(json!({ "a": a, "b": b })));
    manager.connect("a").await.expect("connect a");
    let a_pid = wait_for_pids(&sandbox.pid_file("a"), 2).await[0];
    assert_eq!(recorded(&sandbox), vec![(a_pid, start_of(a_pid))]);
    manager.connect("b").await.expect("connect b");
    let b_pid = wait_for_pids(&sandbox.pid_file("b"), 1).await[0];
    let mut both = recorded(&sandbox);
    both.sort();
    let mut expected = vec![(a_pid, start_of(a_pid)), (b_pid, start_of(b_pid))];
    expected.sort();
    assert_eq!(both, expected);

    manager.disconnect("a").await.expect("disconnect a");
    assert_eq!(recorded(&sandbox), vec![(b_pid, start_of(b_pid))]);
    manager.disconnect("b").await.expect("disconnect b");
    assert!(
        !owner_file(&sandbox).exists(),
        "the owner file outlived its last group"
    );
    sandbox.assert_no_process_left().await;
}
