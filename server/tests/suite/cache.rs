//! CACHE-*: the tool snapshot cache (`~/.wave/mcp-tools-cache.json`) through the real manager,
//! real test-server processes and the real `wave-mcp` binary. Every test has its own sandbox
//! HOME, so the developer's cache is never read or written.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use wave_mcp_manager::{Error, ManagerOptions, McpManager, Status};

use super::support::{Sandbox, eventually, server, test_server, wave_mcp, write_config};

fn cache_file(home: &Path) -> PathBuf {
    home.join(".wave").join("mcp-tools-cache.json")
}

/// The cache file as JSON (panics if it is missing or not JSON: the callers expect a write).
fn cache_json(home: &Path) -> Value {
    let path = cache_file(home);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}\n{text}", path.display()))
}

/// Every entry of the cache file.
fn cache_entries(home: &Path) -> Vec<Value> {
    match cache_json(home).get("entries") {
        Some(Value::Object(entries)) => entries.values().cloned().collect(),
        other => panic!("cache file has no entries object: {other:?}"),
    }
}

/// Entries of `server` recorded for `workdir`.
fn entries_of(home: &Path, server: &str, workdir: &Path) -> Vec<Value> {
    cache_entries(home)
        .into_iter()
        .filter(|e| {
            e["server"] == server && Path::new(e["workdir"].as_str().unwrap_or("")) == workdir
        })
        .collect()
}

fn tool_names(entry: &Value) -> Vec<String> {
    entry["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("entry without a tools array: {entry}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn snapshot_tool_names(manager: &McpManager, name: &str) -> Vec<String> {
    server(manager, name)
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect()
}

fn listed_names(manager: &McpManager) -> Vec<String> {
    manager
        .snapshot()
        .servers
        .iter()
        .map(|s| s.name.clone())
        .collect()
}

/// A stdio server whose config never changes while its tool list does: `sh` reads the list from
/// `tools_file` at each start. Command and args stay identical, so the fingerprint does too.
fn server_with_tools_file(sandbox: &Sandbox, tools_file: &Path) -> Value {
    json!({
        "command": "/bin/sh",
        "args": [
            "-c",
            r#"exec "$0" --tools "$(cat "$1")" --event-log "$2""#,
            test_server(),
            tools_file,
            sandbox.events_path(),
        ],
    })
}

/// Options of a manager for another workdir with the same HOME as `sandbox`.
fn options_for(sandbox: &Sandbox, workdir: &Path) -> ManagerOptions {
    ManagerOptions {
        workdir: workdir.to_path_buf(),
        ..sandbox.options(Value::Null)
    }
}

// CACHE-1
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_1_never_connected_server_is_listed_disconnected_without_tools() {
    let sb = Sandbox::new();
    sb.write_project(json!({ "s": sb.server(&["--tools", "echo,add"]) }));
    let manager = sb.manager();
    let s = server(&manager, "s");
    assert_eq!(s.status, Status::Disconnected);
    assert!(s.tools.is_empty(), "{:?}", s.tools);
    assert!(!s.tools_from_cache);
    assert_eq!(s.last_connected_at, None);
    assert!(manager.tools().is_empty());
    assert_eq!(sb.count_events("start"), 0, "listing spawned a server");

    // ... and it can be connected.
    manager.connect("s").await.expect("connect");
    let s = server(&manager, "s");
    assert_eq!(s.status, Status::Connected);
    assert_eq!(snapshot_tool_names(&manager, "s"), ["add", "echo"]);
    assert!(!s.tools_from_cache);
    manager.cleanup().await;
    assert!(sb.live_processes().is_empty());
}

// CACHE-2: a later manager shows the last tool list, from the cache, not connected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_2_later_manager_shows_cached_tools_as_disconnected() {
    let sb = Sandbox::new();
    sb.write_project(json!({ "s": sb.server(&["--tools", "echo,add"]) }));
    let first = sb.manager();
    first.connect("s").await.expect("connect");
    let live = server(&first, "s");
    assert_eq!(live.status, Status::Connected);
    assert!(!live.tools_from_cache);
    let connected_at = live
        .last_connected_at
        .expect("a live server has a connection time");
    first.cleanup().await;
    assert!(sb.live_processes().is_empty());
    let starts = sb.count_events("start");

    let second = sb.manager();
    let s = server(&second, "s");
    assert_eq!(s.status, Status::Disconnected);
    assert!(s.tools_from_cache);
    assert_eq!(s.last_connected_at, Some(connected_at));
    assert_eq!(s.error, None);
    let tools: Vec<(&str, &str, Option<&str>)> = s
        .tools
        .iter()
        .map(|t| {
            (
                t.name.as_str(),
                t.full_name.as_str(),
                t.description.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        tools,
        [
            ("add", "mcp__s__add", Some("Add two numbers.")),
            ("echo", "mcp__s__echo", Some("Echo the given text back.")),
        ]
    );
    assert_eq!(
        sb.count_events("start"),
        starts,
        "showing the cache spawned a server"
    );
    assert!(sb.live_processes().is_empty());

    // Connecting replaces the cached view by the live one.
    second.connect("s").await.expect("connect");
    let s = server(&second, "s");
    assert_eq!(s.status, Status::Connected);
    assert!(!s.tools_from_cache);
    second.cleanup().await;
    assert!(sb.live_processes().is_empty());
}

// CACHE-5: the same config (same fingerprint) reconnecting with fewer tools — down to none —
// overwrites the snapshot, the empty list included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_5_reconnect_overwrites_snapshot_even_with_empty_list() {
    let sb = Sandbox::new();
    let tools_file = sb.path("tools.txt");
    std::fs::write(&tools_file, "echo,add").unwrap();
    sb.write_project(json!({ "s": server_with_tools_file(&sb, &tools_file) }));

    let first = sb.manager();
    first.connect("s").await.expect("connect");
    assert_eq!(snapshot_tool_names(&first, "s"), ["add", "echo"]);
    first.cleanup().await;
    let entries = entries_of(&sb.home, "s", &sb.workdir);
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(tool_names(&entries[0]), ["add", "echo"]);

    // The server now exposes no tool; its config is unchanged, so the snapshot still applies.
    std::fs::write(&tools_file, "none").unwrap();
    let second = sb.manager();
    let s = server(&second, "s");
    assert!(
        s.tools_from_cache,
        "config unchanged, the snapshot must still show"
    );
    assert_eq!(snapshot_tool_names(&second, "s"), ["add", "echo"]);
    second.connect("s").await.expect("connect");
    let s = server(&second, "s");
    assert_eq!(s.status, Status::Connected);
    assert!(s.tools.is_empty(), "{:?}", s.tools);
    let second_connected_at = s.last_connected_at;
    assert!(second.tools().is_empty());
    second.cleanup().await;
    assert!(sb.live_processes().is_empty());

    // The entry exists, with an empty tools array, under the same key.
    let entries = entries_of(&sb.home, "s", &sb.workdir);
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["tools"], json!([]));

    let third = sb.manager();
    let s = server(&third, "s");
    assert_eq!(s.status, Status::Disconnected);
    assert!(s.tools.is_empty(), "stale tools shown: {:?}", s.tools);
    assert!(s.tools_from_cache, "an empty snapshot is still a snapshot");
    assert_eq!(s.last_connected_at, second_connected_at);
    third.cleanup().await;
}

// CACHE-5 with a server configured with no tools from the start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_5_server_without_tools_gets_an_empty_entry() {
    let sb = Sandbox::new();
    sb.write_project(json!({ "empty": sb.server(&["--tools", "none"]) }));
    let manager = sb.manager();
    manager.connect("empty").await.expect("connect");
    assert!(server(&manager, "empty").tools.is_empty());
    manager.cleanup().await;
    let entries = entries_of(&sb.home, "empty", &sb.workdir);
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["tools"], json!([]));
    assert!(entries[0]["lastConnectedAt"].is_string(), "{}", entries[0]);

    let later = sb.manager();
    let s = server(&later, "empty");
    assert!(s.tools_from_cache);
    assert!(s.tools.is_empty());
    assert!(s.last_connected_at.is_some());
}

// CACHE-3: a changed config (args, env) invalidates the snapshot until a new connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_3_changed_config_hides_the_old_snapshot() {
    let sb = Sandbox::new();
    sb.write_project(json!({ "s": sb.server(&["--tools", "echo"]) }));
    let first = sb.manager();
    first.connect("s").await.expect("connect");
    first.cleanup().await;
    assert!(
        server(&sb.manager(), "s").tools_from_cache,
        "precondition: a snapshot exists"
    );

    // Other args.
    sb.write_project(json!({ "s": sb.server(&["--tools", "echo,add"]) }));
    let changed = sb.manager();
    let s = server(&changed, "s");
    assert_eq!(s.status, Status::Disconnected);
    assert!(
        s.tools.is_empty(),
        "snapshot of another config shown: {:?}",
        s.tools
    );
    assert!(!s.tools_from_cache);
    assert_eq!(s.last_connected_at, None);

    // Same args, an env entry added.
    let mut with_env = sb.server(&["--tools", "echo"]);
    with_env["env"] = json!({ "EXTRA": "1" });
    sb.write_project(json!({ "s": with_env }));
    let s = server(&sb.manager(), "s");
    assert!(
        s.tools.is_empty(),
        "snapshot of another env shown: {:?}",
        s.tools
    );
    assert!(!s.tools_from_cache);

    // A successful connection with the new config makes a new snapshot and drops the old one.
    sb.write_project(json!({ "s": sb.server(&["--tools", "echo,add"]) }));
    let second = sb.manager();
    second.connect("s").await.expect("connect");
    second.cleanup().await;
    let entries = entries_of(&sb.home, "s", &sb.workdir);
    assert_eq!(
        entries.len(),
        1,
        "the invalid snapshot was kept: {entries:?}"
    );
    assert_eq!(tool_names(&entries[0]), ["add", "echo"]);
    let s = server(&sb.manager(), "s");
    assert!(s.tools_from_cache);
    assert_eq!(snapshot_tool_names(&sb.manager(), "s"), ["add", "echo"]);
    assert!(sb.live_processes().is_empty());
}

// CACHE-4, CACHE-8: one HOME, two workdirs with a server of the same name. Each has its own
// entry; a writer prunes only its own workdir's entries that are no longer configured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_8_two_workdirs_prune_only_their_own() {
    let sb = Sandbox::new();
    let a = sb.workdir.clone();
    let b = sb.path("project-b");
    std::fs::create_dir_all(&b).unwrap();
    write_config(
        &a.join(".mcp.json"),
        json!({ "s": sb.server(&["--tools", "echo"]) }),
    );
    write_config(
        &b.join(".mcp.json"),
        json!({ "s": sb.server(&["--tools", "echo"]) }),
    );
    sb.approve_project_in(&a);
    sb.approve_project_in(&b);

    let in_a = McpManager::new(options_for(&sb, &a));
    let in_b = McpManager::new(options_for(&sb, &b));
    in_a.connect("s").await.expect("connect s in A");
    in_b.connect("s").await.expect("connect s in B");
    in_a.cleanup().await;
    in_b.cleanup().await;

    // Same name, same config, two workdirs: two entries, two fingerprints.
    let s_a = entries_of(&sb.home, "s", &a);
    let s_b = entries_of(&sb.home, "s", &b);
    assert_eq!(
        (s_a.len(), s_b.len()),
        (1, 1),
        "{:?}",
        cache_entries(&sb.home)
    );
    assert_ne!(s_a[0]["fingerprint"], s_b[0]["fingerprint"]);

    // A drops "s" and adds "t".
    write_config(
        &a.join(".mcp.json"),
        json!({ "t": sb.server(&["--tools", "add"]) }),
    );
    sb.approve_project_in(&a);
    let in_a = McpManager::new(options_for(&sb, &a));
    assert_eq!(
        listed_names(&in_a),
        ["t"],
        "a removed server is listed from the cache"
    );
    in_a.connect("t").await.expect("connect t in A");
    assert_eq!(listed_names(&in_a), ["t"]);
    in_a.cleanup().await;
    assert_eq!(listed_names(&in_a), ["t"]);

    assert!(
        entries_of(&sb.home, "s", &a).is_empty(),
        "A's removed server kept: {:?}",
        cache_entries(&sb.home)
    );
    assert_eq!(
        entries_of(&sb.home, "s", &b),
        s_b,
        "B's snapshot was touched"
    );
    let t_a = entries_of(&sb.home, "t", &a);
    assert_eq!(t_a.len(), 1);
    assert_eq!(tool_names(&t_a[0]), ["add"]);

    // B still shows its snapshot; a fresh A still never lists "s".
    let in_b = McpManager::new(options_for(&sb, &b));
    let s = server(&in_b, "s");
    assert!(s.tools_from_cache);
    assert_eq!(snapshot_tool_names(&in_b, "s"), ["echo"]);
    assert_eq!(listed_names(&McpManager::new(options_for(&sb, &a))), ["t"]);
    assert!(sb.live_processes().is_empty());
}

// CACHE-6: a corrupt or unreadable cache file is an empty cache: creating a manager, listing and
// connecting all work, and nothing is reported as a config problem.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_6_corrupt_cache_file_is_treated_as_empty() {
    let variants: [(&str, &[u8]); 6] = [
        ("garbage", b"\x00\xff this is not json {{{"),
        ("empty file", b""),
        ("truncated", b"{\"version\": 1, \"entries\": {"),
        ("array", b"[1, 2, 3]"),
        ("unknown version", b"{\"version\": 99, \"entries\": {}}"),
        (
            "entries wrong shape",
            b"{\"version\": 1, \"entries\": [\"s\"]}",
        ),
    ];
    for (label, bytes) in variants {
        let sb = Sandbox::new();
        sb.write_project(json!({ "s": sb.server(&["--tools", "echo"]) }));
        std::fs::write(cache_file(&sb.home), bytes).unwrap();
        let manager = sb.manager();
        assert!(
            manager.config_problems().is_empty(),
            "{label}: {:?}",
            manager.config_problems()
        );
        let s = server(&manager, "s");
        assert_eq!(s.status, Status::Disconnected, "{label}");
        assert!(s.tools.is_empty() && !s.tools_from_cache, "{label}: {s:?}");
        manager
            .connect("s")
            .await
            .unwrap_or_else(|e| panic!("{label}: connect: {e}"));
        assert_eq!(manager.tools().len(), 1, "{label}");
        manager.cleanup().await;
        // The next write replaces the corrupt file with a valid one.
        let entries = entries_of(&sb.home, "s", &sb.workdir);
        assert_eq!(entries.len(), 1, "{label}: {entries:?}");
        assert!(sb.live_processes().is_empty(), "{label}");
    }
}

// CACHE-6: a directory where the file should be: unreadable and unwritable; never fatal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_6_directory_in_place_of_cache_file() {
    let sb = Sandbox::new();
    sb.write_project(json!({ "s": sb.server(&["--tools", "echo"]) }));
    std::fs::create_dir_all(cache_file(&sb.home)).unwrap();
    let manager = sb.manager();
    assert!(manager.config_problems().is_empty());
    let s = server(&manager, "s");
    assert_eq!(s.status, Status::Disconnected);
    assert!(s.tools.is_empty() && !s.tools_from_cache);
    manager
        .connect("s")
        .await
        .expect("connect despite an unwritable cache");
    assert_eq!(server(&manager, "s").status, Status::Connected);
    assert_eq!(manager.tools().len(), 1);
    manager.cleanup().await;
    assert!(cache_file(&sb.home).is_dir());
    assert!(sb.live_processes().is_empty());

    // The CLI lists silently too.
    let out = Command::new(wave_mcp())
        .args(["servers", "--workdir"])
        .arg(&sb.workdir)
        .env("HOME", &sb.home)
        .env_remove("WAVE_LOG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// CACHE-6: one malformed entry is skipped; the others still show.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_6_malformed_entry_is_skipped_rest_kept() {
    let sb = Sandbox::new();
    sb.write_project(json!({ "s": sb.server(&["--tools", "echo"]) }));
    let manager = sb.manager();
    manager.connect("s").await.expect("connect");
    manager.cleanup().await;

    let mut file = cache_json(&sb.home);
    let entries = file["entries"].as_object_mut().unwrap();
    entries.insert("junk@0000".into(), json!(42));
    entries.insert(
        "other@ffff".into(),
        json!({ "server": "other", "tools": "not a list" }),
    );
    std::fs::write(cache_file(&sb.home), serde_json::to_vec(&file).unwrap()).unwrap();

    let later = sb.manager();
    let s = server(&later, "s");
    assert!(s.tools_from_cache, "a good entry was lost to a bad sibling");
    assert_eq!(snapshot_tool_names(&later, "s"), ["echo"]);
}

// CACHE-7: cached tools are shown, never declared nor callable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_7_cached_tools_are_not_declared_or_callable() {
    let sb = Sandbox::new();
    sb.write_project(json!({ "s": sb.server(&["--tools", "echo,add"]) }));
    let first = sb.manager();
    first.connect("s").await.expect("connect");
    first.cleanup().await;

    let manager = sb.manager();
    assert_eq!(snapshot_tool_names(&manager, "s"), ["add", "echo"]);
    assert!(server(&manager, "s").tools_from_cache);
    assert!(
        manager.tools().is_empty(),
        "cached tools declared: {:?}",
        manager.tools()
    );
    let mut args = serde_json::Map::new();
    args.insert("text".into(), json!("hi"));
    let err = manager
        .call_tool("mcp__s__echo", Some(args))
        .await
        .expect_err("a cached tool was callable");
    assert!(matches!(err, Error::UnknownTool(_)), "{err:?}");
    assert_eq!(sb.count_events("call"), 0);

    manager.connect("s").await.expect("connect");
    let names: Vec<String> = manager.tools().into_iter().map(|t| t.full_name).collect();
    assert_eq!(names, ["mcp__s__add", "mcp__s__echo"]);
    manager.cleanup().await;
    assert!(sb.live_processes().is_empty());
}

fn spawn_tools(sandbox: &Sandbox, server: &str, workdir: &Path) -> Child {
    Command::new(wave_mcp())
        .args(["tools", server, "--workdir"])
        .arg(workdir)
        .env("HOME", &sandbox.home)
        .env_remove("WAVE_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn wave-mcp")
}

// CACHE-8: writers in separate processes at the same time lose nothing — neither the other
// server of the same workdir nor another project's snapshot.
#[test]
fn cache_8_concurrent_processes_keep_every_entry() {
    let sb = Sandbox::new();
    let other = sb.path("project-other");
    std::fs::create_dir_all(&other).unwrap();
    sb.write_project(json!({
        "a": sb.server(&["--tools", "echo"]),
        "b": sb.server(&["--tools", "add"]),
    }));
    write_config(
        &other.join(".mcp.json"),
        json!({ "a": sb.server(&["--tools", "pid"]) }),
    );
    sb.approve_project_in(&other);
    for round in 1..=3 {
        let _ = std::fs::remove_file(cache_file(&sb.home));
        let children = [
            spawn_tools(&sb, "a", &sb.workdir),
            spawn_tools(&sb, "b", &sb.workdir),
            spawn_tools(&sb, "a", &other),
        ];
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {:?} {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let a = entries_of(&sb.home, "a", &sb.workdir);
        let b = entries_of(&sb.home, "b", &sb.workdir);
        let a_other = entries_of(&sb.home, "a", &other);
        assert_eq!(
            (a.len(), b.len(), a_other.len()),
            (1, 1, 1),
            "round {round}: {:?}",
            cache_entries(&sb.home)
        );
        assert_eq!(tool_names(&a[0]), ["echo"]);
        assert_eq!(tool_names(&b[0]), ["add"]);
        assert_eq!(tool_names(&a_other[0]), ["pid"]);
        assert!(sb.live_processes().is_empty(), "round {round}");
    }
}

/// Waits (bounded) for a pushed snapshot in which server `s` lists exactly `want`.
async fn pushed_tools(
    updates: &mut tokio::sync::broadcast::Receiver<std::sync::Arc<wave_mcp_manager::Snapshot>>,
    want: &[&str],
) -> wave_mcp_manager::ServerSnapshot {
    let wait = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let snapshot = updates.recv().await.expect("updates end");
            let s = snapshot.servers.iter().find(|s| s.name == "s").unwrap();
            let names: Vec<&str> = s.tools.iter().map(|t| t.name.as_str()).collect();
            if names == want {
                return s.clone();
            }
        }
    });
    wait.await
        .unwrap_or_else(|_| panic!("no pushed snapshot with tools {want:?}"))
}

// CACHE-5: a `notifications/tools/list_changed` of a connected server refreshes its tools on the
// same connection: the snapshot, a pushed update and the cache file get the new list, and an
// empty list overwrites too. (The server's `set_tools` tool sends the notification.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_5_list_changed_overwrites_snapshot_push_and_cache_even_empty() {
    let sb = Sandbox::new();
    sb.write_project(json!({ "s": sb.server(&["--tools", "echo,set_tools"]) }));
    let manager = sb.manager();
    manager.connect("s").await.expect("connect");
    let before = server(&manager, "s");
    assert_eq!(snapshot_tool_names(&manager, "s"), ["echo", "set_tools"]);
    let cached = |want: &'static [&'static str]| {
        let (home, workdir) = (sb.home.clone(), sb.workdir.clone());
        move || {
            // The write runs after the snapshot changes: until it lands the file may be absent.
            if !cache_file(&home).exists() {
                return false;
            }
            let entries = entries_of(&home, "s", &workdir);
            entries.len() == 1 && tool_names(&entries[0]) == want
        }
    };
    assert!(
        eventually(Duration::from_secs(20), cached(&["echo", "set_tools"])).await,
        "the connect was not cached"
    );

    let mut updates = manager.subscribe();
    let set = |tools: &str| {
        let args = json!({ "tools": tools }).as_object().cloned();
        manager.call_tool("mcp__s__set_tools", args)
    };
    set("add,pid,set_tools").await.expect("set_tools");
    let pushed = pushed_tools(&mut updates, &["add", "pid", "set_tools"]).await;
    assert_eq!(pushed.status, Status::Connected);
    assert_eq!(
        pushed.connection_id, before.connection_id,
        "a refresh, not a reconnect"
    );
    assert!(!pushed.tools_from_cache);
    let declared: Vec<String> = manager.tools().into_iter().map(|t| t.full_name).collect();
    assert_eq!(
        declared,
        ["mcp__s__add", "mcp__s__pid", "mcp__s__set_tools"]
    );
    assert!(
        eventually(
            Duration::from_secs(20),
            cached(&["add", "pid", "set_tools"])
        )
        .await,
        "the cache file kept the old list: {:?}",
        entries_of(&sb.home, "s", &sb.workdir)
    );

    // The empty list overwrites as well (it also removes `set_tools` itself).
    set("none").await.expect("set_tools none");
    let pushed = pushed_tools(&mut updates, &[]).await;
    assert_eq!(pushed.status, Status::Connected);
    assert!(manager.tools().is_empty(), "{:?}", manager.tools());
    assert!(
        eventually(Duration::from_secs(20), cached(&[])).await,
        "the cache file kept a non-empty list: {:?}",
        entries_of(&sb.home, "s", &sb.workdir)
    );
    assert_eq!(sb.count_events("list-changed"), 2);
    manager.cleanup().await;

    // A later manager shows the empty snapshot as this server's cached tools.
    let later = sb.manager();
    let shown = server(&later, "s");
    assert_eq!(shown.status, Status::Disconnected);
    assert!(shown.tools.is_empty(), "{:?}", shown.tools);
}

// SEC-1, CACHE-8 (no credentials in the cache): neither an expanded secret nor a literal one in
// the server's env reaches the cache file or the serialized listing (`servers --json`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sec_1_cache_8_no_secret_in_cache_file() {
    const DEFAULT_SECRET: &str = "hunter2-secret";
    const LITERAL_SECRET: &str = "literal-s3cr3t-value-8d41";
    let sb = Sandbox::new();
    let mut config = sb.server(&["--tools", "echo"]);
    config["env"] = json!({
        "SECRET": format!("${{WAVE_TEST_SECRET_SEC1_UNSET_7Q2:-{DEFAULT_SECRET}}}"),
        "API_TOKEN": LITERAL_SECRET,
    });
    sb.write_project(json!({ "s": config }));
    let manager = sb.manager();
    manager.connect("s").await.expect("connect");
    manager.cleanup().await;
    assert_eq!(
        entries_of(&sb.home, "s", &sb.workdir).len(),
        1,
        "nothing was cached"
    );

    let bytes = std::fs::read(cache_file(&sb.home)).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    for secret in [
        DEFAULT_SECRET,
        LITERAL_SECRET,
        "WAVE_TEST_SECRET_SEC1",
        "API_TOKEN",
    ] {
        assert!(
            !text.contains(secret),
            "{secret:?} in the cache file:\n{text}"
        );
    }
    let out = Command::new(wave_mcp())
        .args(["servers", "--json", "--workdir"])
        .arg(&sb.workdir)
        .env("HOME", &sb.home)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    for secret in [DEFAULT_SECRET, LITERAL_SECRET] {
        assert!(
            !stdout.contains(secret),
            "{secret:?} in `servers --json`:\n{stdout}"
        );
    }
}

// CACHE-4: a server removed from the config leaves the cache file at the reload that sees it
// go (the sidecar's watcher calls `reload`), without waiting for a connect; the servers that
// stay keep their entries, and nothing is left running or pending.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_4_reload_prunes_a_removed_servers_entry() {
    let sb = Sandbox::new();
    sb.write_project(json!({
        "keep": sb.server(&["--tools", "echo"]),
        "gone": sb.server(&["--tools", "add"]),
    }));
    let manager = sb.manager();
    manager.connect("keep").await.expect("connect keep");
    manager.connect("gone").await.expect("connect gone");
    manager.disconnect("keep").await.expect("disconnect keep");
    manager.disconnect("gone").await.expect("disconnect gone");
    assert!(
        eventually(Duration::from_secs(20), || {
            cache_file(&sb.home).exists()
                && entries_of(&sb.home, "keep", &sb.workdir).len() == 1
                && entries_of(&sb.home, "gone", &sb.workdir).len() == 1
        })
        .await,
        "both entries written"
    );
    let kept = entries_of(&sb.home, "keep", &sb.workdir);

    sb.write_project(json!({ "keep": sb.server(&["--tools", "echo"]) }));
    manager.reload().await;
    assert_eq!(listed_names(&manager), ["keep"]);
    assert!(
        entries_of(&sb.home, "gone", &sb.workdir).is_empty(),
        "the removed server's entry is still cached: {:?}",
        cache_entries(&sb.home)
    );
    assert_eq!(entries_of(&sb.home, "keep", &sb.workdir), kept);
    manager.cleanup().await;
    assert!(sb.live_processes().is_empty());
}
