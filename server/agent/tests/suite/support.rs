//! Shared helpers: a sandbox home/workdir per test, configs for
//! our MCP test server, process checks through `/proc`, and bounded polling (never a wall-clock
//! assertion).
//!
//! Binaries: the MCP test server (`wave-mcp-test-server`, package `tests/test-server`) and the
//! `wave-mcp` command live in other packages, so Cargo gives this crate no `CARGO_BIN_EXE_*`
//! for them; the shared testkit finds them in this test's target directory. Process checks, polling, the HTTP test
//! server and the scripted fake model come from the testkit too.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};
use wave_mcp_agent::announce::Marker;
use wave_mcp_agent::{
    Agent, AgentOptions, DefaultMode, Message, ModelSettings, PermissionRules, ReconnectPolicy,
    Status, Timeouts, ToolPoolMode,
};
pub use wave_mcp_testkit::{
    FakeModel, HIDDEN_CHARS, HttpServer, Rng, Step, alive, assert_all_dead, binary, call, declared,
    eventually, exec, faults_seed, read_pids, say, wait_for_pids,
};

// ---------------------------------------------------------------------------------------------
// Binaries of the `wave-mcp` package

/// Our rmcp MCP test server.
pub fn test_server() -> PathBuf {
    binary("wave-mcp-test-server")
}

/// The `wave-mcp` command.
pub fn wave_mcp() -> PathBuf {
    binary("wave-mcp")
}

// ---------------------------------------------------------------------------------------------
// What requests and histories contain

/// The system prompt of a request.
pub fn system_prompt(request: &Value) -> String {
    let first = &request["messages"][0];
    assert_eq!(first["role"], "system");
    first["content"].as_str().unwrap().to_string()
}

/// Every message content of a request, as text (parts joined).
pub fn contents(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        })
        .collect()
}

/// How often `needle` appears in all of a request's messages.
pub fn occurrences(request: &Value, needle: &str) -> usize {
    contents(request)
        .iter()
        .map(|c| c.matches(needle).count())
        .sum()
}

/// The `tool` messages of a request: `(tool_call_id, content)`.
pub fn tool_results(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

/// The markers of the history's `isMeta` messages, in order.
pub fn meta_markers(history: &[Message]) -> Vec<Marker> {
    history
        .iter()
        .filter(|m| m.is_meta)
        .filter_map(|m| Marker::parse(&m.content))
        .collect()
}

pub fn announced(history: &[Message]) -> Vec<String> {
    meta_markers(history)
        .into_iter()
        .filter_map(|m| match m {
            Marker::Announce { server, .. } => Some(server),
            _ => None,
        })
        .collect()
}

pub fn offline(history: &[Message]) -> Vec<String> {
    meta_markers(history)
        .into_iter()
        .filter_map(|m| match m {
            Marker::Offline { server } => Some(server),
            _ => None,
        })
        .collect()
}

/// The number of `isMeta` messages.
pub fn meta_count(history: &[Message]) -> usize {
    history.iter().filter(|m| m.is_meta).count()
}

/// The JSONL transcript, one JSON value per line.
pub fn read_transcript(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Sandbox: a private home and workdir, and MCP server configs marked with its path

wave_mcp_testkit::suite_sandbox!("wave-agent-test-");

impl Sandbox {
    /// A stdio entry for our test server with `args`; it logs its events to `<name>.events`
    /// (the sandbox path in its arguments lets `/proc` find it).
    pub fn server(&self, name: &str, args: &[&str]) -> Value {
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        all.extend([
            "--event-log".into(),
            self.events_path(name).display().to_string(),
        ]);
        json!({ "command": test_server(), "args": all })
    }

    /// Like [`Sandbox::server`], also writing its pids to `<name>.pids`.
    pub fn server_with_pids(&self, name: &str, args: &[&str]) -> Value {
        let pid_file = self.pid_file(name).display().to_string();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--pid-file", &pid_file]);
        self.server(name, &all)
    }

    /// A server whose instructions are the content of `text` (kept verbatim, newlines included).
    pub fn server_with_instructions(&self, name: &str, text: &str, args: &[&str]) -> Value {
        let file = self.path(&format!("{name}.instructions"));
        std::fs::write(&file, text).unwrap();
        let file = file.display().to_string();
        let mut all: Vec<&str> = vec!["--instructions-file", &file];
        all.extend(args);
        self.server(name, &all)
    }

    pub fn events_path(&self, name: &str) -> PathBuf {
        self.root.join(format!("{name}.events"))
    }

    /// The tool names server `name` was called with, from its event log.
    pub fn calls(&self, name: &str) -> Vec<String> {
        std::fs::read_to_string(self.events_path(name))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let mut parts = l.split_whitespace();
                (parts.next() == Some("call")).then(|| parts.nth(1).unwrap_or("").to_string())
            })
            .collect()
    }

    /// How many processes of server `name` were started.
    pub fn starts(&self, name: &str) -> usize {
        std::fs::read_to_string(self.events_path(name))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with("start "))
            .count()
    }

    /// Options for an agent of this sandbox talking to `model`, with `servers` as constructor
    /// `mcpServers`.
    pub fn options(&self, servers: Value, model: &FakeModel) -> AgentOptions {
        let mcp_servers: Map<String, Value> = match servers {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        AgentOptions {
            workdir: self.workdir.clone(),
            mcp_servers,
            model: ModelSettings {
                base_url: Some(model.base_url.clone()),
                api_key: Some("test-key".into()),
                model: Some("fake-model".into()),
                vision: false,
                timeout: Some(Duration::from_secs(60)),
            },
            home: Some(self.home.clone()),
            session_id: Some("test-session".into()),
            mcp_timeouts: Timeouts {
                connect: Duration::from_secs(20),
                tool_call: Duration::from_secs(20),
                shutdown_grace: Duration::from_millis(500),
            },
            mcp_reconnect: ReconnectPolicy {
                initial_delay: Duration::from_millis(200),
                max_delay: Duration::from_millis(200),
                attempts: 20,
            },
            // The host pre-approves tool calls here; the consent tests (TRUST-5) set their own.
            permissions: PermissionRules {
                default_mode: Some(DefaultMode::Allow),
                ..PermissionRules::default()
            },
            ..AgentOptions::default()
        }
    }

    pub fn agent(&self, servers: Value, model: &FakeModel) -> Agent {
        Agent::create(self.options(servers, model)).expect("create the agent")
    }

    pub fn exec_agent(&self, servers: Value, model: &FakeModel) -> Agent {
        Agent::create(AgentOptions {
            tool_pool: ToolPoolMode::Exec,
            ..self.options(servers, model)
        })
        .expect("create the agent")
    }

    /// Writes `<home>/.wave/settings.json` (user) or `<workdir>/.wave/settings.json` (project).
    pub fn write_settings(&self, user: bool, settings: Value) {
        let dir = match user {
            true => self.home.join(".wave"),
            false => self.workdir.join(".wave"),
        };
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    }
}

/// The status of server `name` of `agent`.
pub fn status(agent: &Agent, name: &str) -> Status {
    agent
        .get_mcp_servers()
        .unwrap()
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("server {name} not listed"))
        .status
}

/// Waits until server `name` has `wanted` status.
pub async fn wait_for_status(agent: &Agent, name: &str, wanted: Status) {
    let reached = eventually(Duration::from_secs(20), || status(agent, name) == wanted).await;
    assert!(
        reached,
        "{name} never became {wanted:?}: {:?}",
        status(agent, name)
    );
}
