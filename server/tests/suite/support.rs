//! Shared helpers: a sandbox home/workdir per test, configs for our test server, process checks
//! through `/proc`, and bounded polling (never a wall-clock assertion).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Map, Value, json};
use wave_mcp_manager::{ManagerOptions, McpManager, ReconnectPolicy, Timeouts};
// `server(&manager, name)` is the manager's row: `row` is the sidecar's (`lsp_client::row`).
pub use wave_mcp_testkit::manager::{row as server, status};
pub use wave_mcp_testkit::{
    HIDDEN_CHARS, HttpServer, Rng, alive, assert_all_dead, binary, eventually, faults_seed,
    free_port, read_pids, wait_for_pids,
};

/// Our rmcp test server (the `wave-mcp-test-server` crate under `tests/test-server`). Another
/// package's binary has no `CARGO_BIN_EXE_*`, so it comes from the target directory
/// ([`wave_mcp_testkit::binary`]); workspace test runs build it (the crate's own test needs it).
pub fn test_server() -> PathBuf {
    binary("wave-mcp-test-server")
}

/// The `wave-mcp` command-line tool.
pub fn wave_mcp() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_wave-mcp"))
}

// A private HOME and workdir. Every server config made through it carries the sandbox path in
// its arguments, so its processes can be found in `/proc` by that marker.
wave_mcp_testkit::suite_sandbox!("wave-mcp-test-");

impl Sandbox {
    /// A stdio entry for our test server with `args`, marked with this sandbox's path.
    pub fn server(&self, args: &[&str]) -> Value {
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        all.extend([
            "--event-log".into(),
            self.events_path().display().to_string(),
        ]);
        json!({ "command": test_server(), "args": all })
    }

    /// A stdio entry that also writes its pid and its descendants' pids to `<name>.pids`.
    pub fn server_with_pids(&self, name: &str, args: &[&str]) -> Value {
        let pid_file = self.pid_file(name).display().to_string();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--pid-file", &pid_file]);
        self.server(&all)
    }

    pub fn events_path(&self) -> PathBuf {
        self.root.join("events.log")
    }

    /// The lines of the shared event log (`start <pid>`, `init-begin <pid>`, ...).
    pub fn events(&self) -> Vec<String> {
        std::fs::read_to_string(self.events_path())
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    pub fn count_events(&self, kind: &str) -> usize {
        self.events()
            .iter()
            .filter(|l| l.split_whitespace().next() == Some(kind))
            .count()
    }

    /// Writes the project's `.mcp.json` and approves its servers as a user does (the CLI).
    pub fn write_project(&self, servers: Value) {
        self.write_project_unapproved(servers);
        self.approve_project();
    }

    /// Writes the project's `.mcp.json` as a cloned repository brings it: nothing approved.
    pub fn write_project_unapproved(&self, servers: Value) {
        write_config(&self.workdir.join(".mcp.json"), servers);
    }

    /// The host's rules for agents of tests that are not about consent: tool calls run without
    /// asking (TRUST-5's `defaultMode: "allow"`).
    pub fn pre_approved() -> wave_mcp_agent::PermissionRules {
        wave_mcp_agent::PermissionRules {
            default_mode: Some(wave_mcp_agent::DefaultMode::Allow),
            ..wave_mcp_agent::PermissionRules::default()
        }
    }

    /// The user's `~/.wave/settings.json` lets tool calls run without asking (TRUST-5's
    /// `defaultMode: "allow"`), for tests that are not about consent.
    pub fn allow_tool_calls(&self) {
        let dir = self.home.join(".wave");
        std::fs::create_dir_all(&dir).unwrap();
        let settings = json!({ "permissions": { "defaultMode": "allow" } });
        std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    }

    pub fn write_user(&self, servers: Value) {
        write_config(&self.home.join(".wave").join("mcp.json"), servers);
    }

    pub fn write_plugin(&self, plugin: &str, servers: Value) -> PathBuf {
        let root = self.home.join(".wave").join("plugins").join(plugin);
        std::fs::create_dir_all(&root).unwrap();
        write_config(&root.join(".mcp.json"), servers);
        root
    }

    pub fn options(&self, constructor: Value) -> ManagerOptions {
        let servers: Map<String, Value> = match constructor {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        ManagerOptions {
            workdir: self.workdir.clone(),
            home: Some(self.home.clone()),
            servers,
            timeouts: Timeouts {
                connect: Duration::from_secs(20),
                tool_call: Duration::from_secs(20),
                shutdown_grace: Duration::from_millis(500),
            },
            reconnect: ReconnectPolicy {
                initial_delay: Duration::from_millis(100),
                max_delay: Duration::from_millis(400),
                attempts: 5,
            },
            project_untrusted: false,
            roots: None,
        }
    }

    pub fn manager(&self) -> McpManager {
        McpManager::new(self.options(Value::Null))
    }
}

pub fn write_config(path: &Path, servers: Value) {
    let text = serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap();
    std::fs::write(path, text).unwrap();
}

// ---- sign-in (suite::auth, suite::auth_faults) ------------------------------------------------

/// A `$BROWSER` that logs each URL to `browser.log` and, with `follow`, fetches it following
/// redirects (our authorization server approves at once and redirects to the callback).
pub fn browser(sandbox: &Sandbox, follow: bool) -> String {
    let script = sandbox.path(if follow { "browser.sh" } else { "idle.sh" });
    let log = sandbox.path("browser.log");
    let fetch = if follow {
        "exec curl -sS -L -o /dev/null \"$1\""
    } else {
        "exit 0"
    };
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$1\" >> '{}'\n{fetch}\n", log.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script.display().to_string()
}

pub fn browser_runs(sandbox: &Sandbox) -> usize {
    std::fs::read_to_string(sandbox.path("browser.log"))
        .map(|log| log.lines().count())
        .unwrap_or(0)
}

pub fn command(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(wave_mcp());
    command
        .args(args)
        .arg("--workdir")
        .arg(&sandbox.workdir)
        .env("HOME", &sandbox.home)
        .env_remove("BROWSER")
        .env_remove("WAVE_LOG")
        .env_remove("WAVE_LOGIN_TIMEOUT_SECS")
        .stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    command
}

pub fn cli(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Output {
    wave_mcp_testkit::output_within(
        &mut command(sandbox, args, env),
        wave_mcp_testkit::COMMAND_LIMIT,
    )
}

pub fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

pub fn credentials_file(sandbox: &Sandbox) -> PathBuf {
    sandbox.home.join(".wave/mcp-credentials.json")
}
