//! Server logs (SRV-2) against the official Python SDK: `tests/peers/py_logging.py` writes to
//! stderr at start and logs at four levels from its tool. The manager keeps both, in order, per
//! server; `wave-mcp logs` prints them.

use std::path::{Path, PathBuf};

use serde_json::json;
use wave_mcp_manager::logs::LogSource;

use super::*;

fn py_logging() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/py_logging.py")
}

// SRV-2: a server's stderr lines and its log messages (level, logger, text) are kept in its log,
// each stream in the order it came (two pipes: they may interleave either way), and followers
// are told of each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_2_a_servers_messages_and_stderr_are_its_log() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let (var, value) = marker_env(&sandbox);
    let manager = sandbox_manager(
        &sandbox,
        json!({ "pl": { "command": python, "args": [py_logging()], "env": { var: value, "PYTHONWARNINGS": "ignore" }, "logLevel": "debug" } }),
    );
    let mut follower = manager.subscribe_logs();
    manager.connect("pl").await.unwrap();
    manager.call_tool("mcp__pl__work", None).await.unwrap();
    let wanted = 6;
    let complete = eventually(Duration::from_secs(20), || {
        manager.logs("pl").entries.len() >= wanted
    })
    .await;
    let log = manager.logs("pl");
    assert!(complete, "{log:#?}");
    let shown: Vec<String> = log
        .entries
        .iter()
        .map(|e| match e.source {
            LogSource::Stderr => format!("stderr {}", e.text),
            LogSource::Message => format!(
                "{} [{}] {}",
                e.level.as_deref().unwrap_or("?"),
                e.logger.as_deref().unwrap_or(""),
                e.text
            ),
        })
        .collect();
    let of = |prefix: bool| -> Vec<&str> {
        shown
            .iter()
            .filter(|line| line.starts_with("stderr ") == prefix)
            .map(String::as_str)
            .collect()
    };
    assert_eq!(
        of(false),
        [
            "debug [worker] debug detail",
            "info [worker] started the work",
            "warning [worker] the cache is cold",
            "error [worker] one item failed",
        ]
    );
    assert_eq!(
        of(true),
        [
            "stderr py-logging ready (stderr)",
            "stderr work done (stderr)"
        ]
    );
    assert_eq!(log.dropped, 0);
    let (server, first) = follower.recv().await.unwrap();
    assert_eq!(
        (server.as_str(), first.text.as_str()),
        ("pl", "py-logging ready (stderr)")
    );
    manager.cleanup().await;
    assert!(marked_processes(&sandbox).is_empty());
}

fn sandbox_manager(sandbox: &Sandbox, servers: serde_json::Value) -> wave_mcp_manager::McpManager {
    wave_mcp_manager::McpManager::new(sandbox.options(servers))
}

// SRV-2: `wave-mcp logs NAME` connects the server and prints its log, escaped for the terminal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_2_the_cli_prints_a_servers_log() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let (var, value) = marker_env(&sandbox);
    sandbox.write_user(json!({
        "pl": { "command": python, "args": [py_logging()], "env": { var: value, "PYTHONWARNINGS": "ignore" } },
    }));
    let out = cli(&sandbox, &["logs", "pl"], &[]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        shown
            .lines()
            .any(|l| l.ends_with(" stderr    py-logging ready (stderr)")),
        "{shown}"
    );
    assert!(marked_processes(&sandbox).is_empty());
}

// SRV-2 through the real sidecar: `wave/mcp/logs` reads a server's log and
// `wave/mcp/logAppended` brings each new entry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_2_the_sidecar_serves_and_pushes_a_servers_log() {
    let Some(python) = python() else { return };
    let sandbox = Sandbox::new();
    let (var, value) = marker_env(&sandbox);
    sandbox.write_user(json!({
        "pl": { "command": python, "args": [py_logging()], "env": { var: value, "PYTHONWARNINGS": "ignore" } },
    }));
    let sidecar = super::super::lsp_client::Sidecar::start(&sandbox, serde_json::Value::Null).await;
    let since = sidecar.received();
    sidecar
        .ok("wave/mcp/connect", json!({ "name": "pl" }))
        .await;
    let pushed = sidecar
        .wait_notification(since, "wave/mcp/logAppended", |p| {
            p["name"] == "pl" && p["entries"][0]["text"] == "py-logging ready (stderr)"
        })
        .await;
    assert_eq!(pushed["sessionId"], "default");
    assert_eq!(pushed["entries"][0]["source"], "stderr");
    let log = sidecar.ok("wave/mcp/logs", json!({ "name": "pl" })).await;
    assert_eq!(log["dropped"], 0);
    assert_eq!(log["entries"][0]["text"], "py-logging ready (stderr)");
    let unknown = sidecar
        .ok("wave/mcp/logs", json!({ "name": "nobody" }))
        .await;
    assert_eq!(unknown, json!({ "entries": [], "dropped": 0 }));
    sidecar.stop().await;
    assert!(marked_processes(&sandbox).is_empty());
}
