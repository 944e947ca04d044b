//! Cache (CACHE-1, CACHE-2, CACHE-7): a server that is not connected now shows the tools of its
//! last connection from the cache file, marked as cached, without starting anything; cached
//! tools are never declared, and a live connection replaces them.

use serde_json::json;
use wave_mcp_manager::Status;

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_2_cache_7_tools_of_a_disconnected_server_come_from_the_cache_marked_cached() {
    let sandbox = sandbox();
    write_project(
        &sandbox,
        json!({
            "a": server(&sandbox, "a", &["--tools", "echo,add"]),
            "b": server(&sandbox, "b", &["--tools", "echo"]),
        }),
    );
    let first = manager(&sandbox);
    first.connect("a").await.unwrap();
    let live = row(&first, "a");
    assert!(!live.tools_from_cache);
    assert_eq!(tool_names(&live), ["add", "echo"]);
    // Cleanup awaits the background cache write.
    first.cleanup().await;
    assert!(cache_file(&sandbox).is_file(), "no cache file written");

    // A later manager (another session on this machine): nothing runs, the tools are cached.
    let second = manager(&sandbox);
    let cached = row(&second, "a");
    assert_eq!(cached.status, Status::Disconnected);
    assert!(cached.tools_from_cache, "CACHE-2: not marked as cached");
    assert_eq!(tool_names(&cached), ["add", "echo"]);
    assert!(cached.last_connected_at.is_some());
    // CACHE-1: never connected, so no snapshot.
    let never = row(&second, "b");
    assert!(
        never.tools.is_empty() && !never.tools_from_cache,
        "{never:?}"
    );
    // CACHE-7: cached tools are not declared; LAZY-1: listing them started nothing.
    assert!(second.tools().is_empty(), "{:?}", second.tools());
    assert_eq!(starts(&sandbox), 1);

    second.connect("a").await.unwrap();
    let reconnected = row(&second, "a");
    assert!(!reconnected.tools_from_cache);
    assert_eq!(tool_names(&reconnected), ["add", "echo"]);
    assert_eq!(second.tools().len(), 2);
    second.cleanup().await;
    sandbox.assert_no_process_left().await;
}
