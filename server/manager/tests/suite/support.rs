//! Shared helpers: a sandbox per test (testkit's [`SandboxDirs`]), stdio entries for our test
//! server, and a manager over them.
//!
//! The test server is another package's binary (`tests/test-server`), and Cargo sets
//! `CARGO_BIN_EXE_*` only for binaries of the package under test, so it is found in the target
//! directory through [`wave_mcp_testkit::binary`] (workspace test runs build it).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value, json};
use wave_mcp_manager::{ManagerOptions, McpManager, ReconnectPolicy, ServerSnapshot, Timeouts};
pub use wave_mcp_testkit::manager::{row, status};
pub use wave_mcp_testkit::{
    SandboxDirs, alive, assert_all_dead, binary, eventually, read_pids, wait_for_pids,
};

pub fn sandbox() -> SandboxDirs {
    SandboxDirs::new("wave-mcp-manager-test-")
}

/// A stdio entry for our test server with `args` that writes its own pid and its descendants'
/// pids to the sandbox's `<name>.pids` and logs `start <pid>` (and more) to `events.log`. Its
/// arguments carry the sandbox path, so its processes are found by that marker.
pub fn server(sandbox: &SandboxDirs, name: &str, args: &[&str]) -> Value {
    let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    for (flag, path) in [
        ("--pid-file", sandbox.pid_file(name)),
        ("--event-log", sandbox.path("events.log")),
    ] {
        all.extend([flag.to_string(), path.display().to_string()]);
    }
    json!({ "command": binary("wave-mcp-test-server"), "args": all })
}

/// How many servers have started (`start` lines in the event log).
pub fn starts(sandbox: &SandboxDirs) -> usize {
    events_of(sandbox, None)
        .iter()
        .filter(|event| *event == "start")
        .count()
}

/// The events of the event log, in order: every server's, or only process `pid`'s.
pub fn events_of(sandbox: &SandboxDirs, pid: Option<u32>) -> Vec<String> {
    std::fs::read_to_string(sandbox.path("events.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let event = words.next()?;
            let logged: u32 = words.next()?.parse().ok()?;
            pid.is_none_or(|pid| pid == logged)
                .then(|| event.to_string())
        })
        .collect()
}

/// `servers` as the project's `.mcp.json`.
/// Writes the project's `.mcp.json` and approves its servers as a user does (the CLI).
pub fn write_project(sandbox: &SandboxDirs, servers: Value) {
    write_project_unapproved(sandbox, servers);
    sandbox.approve_project();
}

/// Writes the project's `.mcp.json` as a cloned repository brings it: nothing approved.
pub fn write_project_unapproved(sandbox: &SandboxDirs, servers: Value) {
    let text = serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap();
    std::fs::write(sandbox.workdir.join(".mcp.json"), text).unwrap();
}

/// A manager for the sandbox's home and workdir (bounded timeouts, a short SIGTERM grace).
pub fn manager(sandbox: &SandboxDirs) -> McpManager {
    manager_with_grace(sandbox, Duration::from_millis(300))
}

/// [`manager`] with `grace` for a server to exit on its own after the end of its input, and
/// again after SIGTERM.
pub fn manager_with_grace(sandbox: &SandboxDirs, grace: Duration) -> McpManager {
    McpManager::new(ManagerOptions {
        workdir: sandbox.workdir.clone(),
        home: Some(sandbox.home.clone()),
        servers: Map::new(),
        timeouts: Timeouts {
            connect: Duration::from_secs(20),
            tool_call: Duration::from_secs(20),
            shutdown_grace: grace,
        },
        reconnect: ReconnectPolicy {
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(400),
            attempts: 3,
        },
        project_untrusted: false,
        roots: None,
    })
}

pub fn tool_names(server: &ServerSnapshot) -> Vec<String> {
    let mut names: Vec<String> = server.tools.iter().map(|t| t.name.clone()).collect();
    names.sort();
    names
}

/// `~/.wave/mcp-tools-cache.json` of the sandbox.
pub fn cache_file(sandbox: &SandboxDirs) -> PathBuf {
    sandbox.home.join(".wave").join("mcp-tools-cache.json")
}
