//! Roots (SRV-1) against npm `@modelcontextprotocol/server-filesystem`, started with no
//! directory arguments: it asks the client's `roots/list` and may then touch only those
//! directories. Through the manager (the roots given, then changed) and through the real sidecar
//! (the IDE's workspace folders at `initialize`, then `workspace/didChangeWorkspaceFolders`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use wave_mcp_manager::{ManagerOptions, McpManager, result_text};
use wave_mcp_testkit::{FakeModel, call, say};

use super::super::lsp_client::Sidecar;
use super::*;

fn filesystem_bin() -> Option<PathBuf> {
    peer_path(
        "npm @modelcontextprotocol/server-filesystem",
        "npm/node_modules/.bin/mcp-server-filesystem",
    )
}

fn filesystem_entry(sandbox: &Sandbox, bin: &Path) -> Value {
    let (var, value) = marker_env(sandbox);
    json!({ "command": bin, "env": { var: value } })
}

fn folder(sandbox: &Sandbox, name: &str) -> PathBuf {
    let dir = sandbox.root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.txt")), name).unwrap();
    dir.canonicalize().unwrap()
}

async fn allowed(manager: &McpManager) -> String {
    let result = manager
        .call_tool("mcp__fs__list_allowed_directories", None)
        .await
        .unwrap();
    result_text(&result)
}

/// Polls `list_allowed_directories` until it names every one of `present` and none of
/// `absent` (the server asks `roots/list` in the background after `initialized` and after
/// `notifications/roots/list_changed`).
async fn until_allowed(manager: &McpManager, present: &[&Path], absent: &[&Path]) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let shown = allowed(manager).await;
        let has = |dir: &&Path| shown.contains(&*dir.to_string_lossy());
        if present.iter().all(has) && !absent.iter().any(has) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server's directories never became {present:?} (without {absent:?}): {shown}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

// SRV-1: the server learns the roots the manager was given, and their change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_1_server_filesystem_works_in_the_roots_and_follows_their_change() {
    let Some(bin) = filesystem_bin() else { return };
    let sandbox = Sandbox::new();
    let (a, b, c) = (
        folder(&sandbox, "a"),
        folder(&sandbox, "b"),
        folder(&sandbox, "c"),
    );
    let manager = McpManager::new(ManagerOptions {
        roots: Some(vec![a.clone(), b.clone()]),
        ..sandbox.options(json!({ "fs": filesystem_entry(&sandbox, &bin) }))
    });
    manager.connect("fs").await.unwrap();
    until_allowed(&manager, &[&a, &b], &[&c]).await;
    let read = manager
        .call_tool(
            "mcp__fs__read_text_file",
            json!({ "path": b.join("b.txt") }).as_object().cloned(),
        )
        .await
        .unwrap();
    assert_eq!(result_text(&read), "b");

    manager.set_roots(vec![a.clone(), c.clone()]);
    until_allowed(&manager, &[&a, &c], &[&b]).await;
    manager.cleanup().await;
    assert!(marked_processes(&sandbox).is_empty());
}

/// A chat turn of the sidecar in which the model lists the server's directories: the tool
/// result the model got.
async fn listed_in_a_turn(sidecar: &Sidecar, model: &FakeModel, turn: u64) -> String {
    let since = sidecar.received();
    assert_eq!(sidecar.send_text("where may you work?").await, turn);
    sidecar
        .wait_notification(since, "wave/session/turnEnded", |p| p["turn"] == turn)
        .await;
    let request = model.requests().last().cloned().unwrap();
    let results: Vec<String> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    results.last().cloned().unwrap_or_default()
}

// SRV-1 through the real sidecar: the IDE's workspace folders (at `initialize`) are the
// server's roots; `workspace/didChangeWorkspaceFolders` changes them for the running server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_1_the_ides_workspace_folders_are_the_roots() {
    let Some(bin) = filesystem_bin() else { return };
    let sandbox = Sandbox::new();
    let (a, b, c) = (
        folder(&sandbox, "a"),
        folder(&sandbox, "b"),
        folder(&sandbox, "c"),
    );
    sandbox.write_user(json!({ "fs": filesystem_entry(&sandbox, &bin) }));
    sandbox.allow_tool_calls();
    let list = || call("mcp__fs__list_allowed_directories", json!({}));
    // One turn to see the first roots, then up to `TURNS` more while the server takes the new.
    const TURNS: u64 = 30;
    let steps = (0..=TURNS).flat_map(|_| [list(), say("listed")]).collect();
    let model = FakeModel::start(steps).await;
    let sidecar = Sidecar::spawn(&sandbox.root, |_| {});
    let uri = |dir: &Path| format!("file://{}/", dir.display());
    let folders = |dirs: &[&Path]| -> Value {
        dirs.iter()
            .map(|d| json!({ "uri": uri(d), "name": d.file_name().unwrap().to_string_lossy() }))
            .collect()
    };
    sidecar
        .initialize(json!({
            "workspaceFolders": folders(&[&a, &b]),
            "initializationOptions": {
                "home": sandbox.home,
                "model": { "baseUrl": model.base_url, "model": "fake" },
            },
        }))
        .await
        .expect("initialize");
    let shown = listed_in_a_turn(&sidecar, &model, 1).await;
    assert!(
        shown.contains(&*a.to_string_lossy()) && shown.contains(&*b.to_string_lossy()),
        "{shown}"
    );
    sidecar
        .notify(
            "workspace/didChangeWorkspaceFolders",
            json!({ "event": { "added": folders(&[&c]), "removed": folders(&[&b]) } }),
        )
        .await;
    // The server asks `roots/list` again in the background once told: turn after turn until
    // it lists the new folders.
    let mut shown = String::new();
    for turn in 2..=TURNS + 1 {
        shown = listed_in_a_turn(&sidecar, &model, turn).await;
        if shown.contains(&*c.to_string_lossy()) && !shown.contains(&*b.to_string_lossy()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        shown.contains(&*a.to_string_lossy())
            && shown.contains(&*c.to_string_lossy())
            && !shown.contains(&*b.to_string_lossy()),
        "{shown}"
    );
    sidecar.stop().await;
    assert!(marked_processes(&sandbox).is_empty());
}
