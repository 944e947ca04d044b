//! Shared pieces: the binaries under test, scratch directories, `/proc` readings and
//! statistics. The fake model and the LSP client are the testkit's (`wave_mcp_testkit`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};
use wave_mcp_agent::{Agent, AgentOptions, ModelSettings, ReconnectPolicy, Timeouts};

/// `target/release` (or whichever profile this binary was built with).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.parent().expect("profile dir").to_path_buf()
}

/// Builds `wave-mcp` and `wave-mcp-test-server` in this binary's profile, so they match the
/// sources (a no-op when they are fresh).
pub fn build_binaries() -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command.args([
        "build",
        "-p",
        "wave-mcp",
        "-p",
        "wave-mcp-test-server",
        "--bins",
    ]);
    if profile_dir().file_name().is_some_and(|n| n == "release") {
        command.arg("--release");
    }
    let status = command.status().context("running cargo build")?;
    if !status.success() {
        bail!("building the wave-mcp binaries failed");
    }
    Ok(())
}

pub fn test_server() -> PathBuf {
    profile_dir().join("wave-mcp-test-server")
}

pub fn wave_mcp() -> PathBuf {
    profile_dir().join("wave-mcp")
}

/// A scratch directory with a `home` (with `.wave`) and a `project`.
pub struct Scratch {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub workdir: PathBuf,
}

impl Scratch {
    pub fn new() -> Result<Scratch> {
        let dir = tempfile::Builder::new()
            .prefix("wave-mcp-bench-")
            .tempdir()?;
        let root = dir.path().to_path_buf();
        let home = root.join("home");
        let workdir = root.join("project");
        std::fs::create_dir_all(home.join(".wave"))?;
        std::fs::create_dir_all(&workdir)?;
        Ok(Scratch {
            _dir: dir,
            root,
            home,
            workdir,
        })
    }

    /// Writes `<project>/.mcp.json` with these servers.
    pub fn write_project(&self, servers: &Map<String, Value>) -> Result<()> {
        let text = serde_json::to_string_pretty(&json!({ "mcpServers": servers }))?;
        std::fs::write(self.workdir.join(".mcp.json"), text)?;
        Ok(())
    }
}

/// A stdio entry for our test server.
pub fn stdio_server(args: &[&str]) -> Value {
    json!({ "command": test_server(), "args": args })
}

/// `count` stdio servers named `s0`, `s1`, ... with the same arguments.
pub fn stdio_servers(count: usize, args: &[&str]) -> Map<String, Value> {
    (0..count)
        .map(|i| (format!("s{i}"), stdio_server(args)))
        .collect()
}

/// Agent options for a benchmark: `servers` as constructor servers, a model at `base_url`.
pub fn agent_options(
    scratch: &Scratch,
    workdir: &Path,
    servers: Map<String, Value>,
    base_url: &str,
    session: &str,
) -> AgentOptions {
    AgentOptions {
        workdir: workdir.to_path_buf(),
        mcp_servers: servers,
        model: ModelSettings {
            base_url: Some(base_url.to_string()),
            api_key: None,
            model: Some("bench-model".into()),
            vision: false,
            timeout: Some(Duration::from_secs(60)),
        },
        home: Some(scratch.home.clone()),
        session_id: Some(session.to_string()),
        mcp_timeouts: Timeouts {
            connect: Duration::from_secs(60),
            tool_call: Duration::from_secs(60),
            shutdown_grace: Duration::from_millis(500),
        },
        mcp_reconnect: ReconnectPolicy::default(),
        // The host pre-approves the calls (TRUST-5); row 3c measures a remembered permission.
        permissions: wave_mcp_agent::PermissionRules {
            default_mode: Some(wave_mcp_agent::DefaultMode::Allow),
            ..wave_mcp_agent::PermissionRules::default()
        },
        ..AgentOptions::default()
    }
}

pub fn agent(options: AgentOptions) -> Result<Agent> {
    Agent::create(options).map_err(|e| anyhow::anyhow!("creating an agent: {e}"))
}

// ---------------------------------------------------------------------------------------------
// /proc

/// `pid` and every process below it (by parent pid), alive or zombie.
pub fn process_tree(root: u32) -> Vec<u32> {
    let mut parent_of: HashMap<u32, u32> = HashMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            if let Some(ppid) = parent_pid(pid) {
                parent_of.insert(pid, ppid);
            }
        }
    }
    let mut tree = vec![root];
    let mut seen: HashSet<u32> = HashSet::from([root]);
    let mut grew = true;
    while grew {
        grew = false;
        for (&pid, &ppid) in &parent_of {
            if seen.contains(&ppid) && seen.insert(pid) {
                tree.push(pid);
                grew = true;
            }
        }
    }
    tree
}

fn parent_pid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// `VmRSS` of one process in KiB (0 for a zombie or a vanished process).
pub fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS")
}

/// A KiB field of `/proc/<pid>/status` (`VmRSS`, `RssAnon`, ...; 0 when absent).
pub fn status_kib(pid: u32, field: &str) -> u64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return 0;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Processes below this one (not counting itself) and the summed RSS of the whole tree.
pub fn tree_usage() -> (usize, u64) {
    let tree = process_tree(std::process::id());
    let rss = tree.iter().map(|&pid| rss_kib(pid)).sum();
    (tree.len() - 1, rss)
}

// ---------------------------------------------------------------------------------------------
// Statistics and formatting

pub fn median(values: &[f64]) -> f64 {
    percentile(values, 0.5)
}

pub fn percentile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let at = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[at]
}

pub fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// A duration in seconds, in the unit that suits it.
pub fn fmt_time(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.2} s")
    } else if seconds >= 1e-3 {
        format!("{:.1} ms", seconds * 1e3)
    } else {
        format!("{:.0} µs", seconds * 1e6)
    }
}

pub fn fmt_kib(kib: u64) -> String {
    let kib = kib as f64;
    if kib >= 1024.0 * 1024.0 {
        format!("{:.2} GiB", kib / 1024.0 / 1024.0)
    } else {
        format!("{:.1} MiB", kib / 1024.0)
    }
}

pub fn fmt_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn fmt_ratio(ratio: f64) -> String {
    if !ratio.is_finite() {
        return "-".into();
    }
    if ratio >= 100.0 {
        format!("{ratio:.0}×")
    } else if ratio >= 10.0 {
        format!("{ratio:.1}×")
    } else if (ratio - 1.0).abs() < 0.1 {
        format!("{ratio:.3}×")
    } else if ratio < 0.1 {
        format!("{ratio:.4}×")
    } else {
        format!("{ratio:.2}×")
    }
}
