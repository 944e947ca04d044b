//! Shared helpers: a sandbox home/workdir per test, configs for our test server, process checks
//! through `/proc`, and bounded polling (never a wall-clock assertion).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tempfile::TempDir;
use wave_mcp_manager::{
    ManagerOptions, McpManager, ReconnectPolicy, ServerSnapshot, Status, Timeouts,
};

/// Our rmcp test server, built with this package.
pub fn test_server() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_wave-mcp-test-server"))
}

/// The `wave-mcp` command-line tool.
pub fn wave_mcp() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_wave-mcp"))
}

/// A private HOME and workdir. Every server config made through it carries the sandbox path in
/// its arguments, so its processes can be found in `/proc` by that marker.
pub struct Sandbox {
    _dir: TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub workdir: PathBuf,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("wave-mcp-test-")
            .tempdir()
            .expect("temp dir");
        let root = dir.path().to_path_buf();
        let home = root.join("home");
        let workdir = root.join("project");
        std::fs::create_dir_all(home.join(".wave")).unwrap();
        std::fs::create_dir_all(&workdir).unwrap();
        Sandbox {
            _dir: dir,
            root,
            home,
            workdir,
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

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

    pub fn pid_file(&self, name: &str) -> PathBuf {
        self.root.join(format!("{name}.pids"))
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

    pub fn write_project(&self, servers: Value) {
        write_config(&self.workdir.join(".mcp.json"), servers);
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
        }
    }

    pub fn manager(&self) -> McpManager {
        McpManager::new(self.options(Value::Null))
    }

    /// Pids of live (non-zombie) processes whose command line mentions this sandbox.
    pub fn live_processes(&self) -> Vec<u32> {
        processes_mentioning(&self.root.display().to_string())
    }
}

pub fn write_config(path: &Path, servers: Value) {
    let text = serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A process exists and is not a zombie (a zombie has exited; only its parent has not reaped it).
pub fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the parenthesised command name.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    !matches!(state, Some("Z") | Some("X") | None)
}

pub fn processes_mentioning(marker: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(marker))
                .unwrap_or(false)
        })
        .filter(|&pid| alive(pid))
        .collect()
}

/// Pids written by a test server's `--pid-file` (the server first, then its descendants).
pub fn read_pids(path: &Path) -> Vec<u32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Polls `check` until it holds or `limit` passes; returns whether it held. A bounded wait for
/// something asynchronous (a signal being delivered), not a speed assertion.
pub async fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if check() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Asserts that every pid is gone (allowing the kernel a moment to deliver SIGKILL).
pub async fn assert_all_dead(pids: &[u32]) {
    assert!(!pids.is_empty(), "no pids to check");
    let gone = eventually(Duration::from_secs(5), || pids.iter().all(|&p| !alive(p))).await;
    let survivors: Vec<u32> = pids.iter().copied().filter(|&p| alive(p)).collect();
    assert!(gone, "processes still alive: {survivors:?}");
}

pub fn server(manager: &McpManager, name: &str) -> ServerSnapshot {
    manager
        .snapshot()
        .servers
        .iter()
        .find(|s| s.name == name)
        .cloned()
        .unwrap_or_else(|| panic!("server {name} not listed"))
}

pub fn status(manager: &McpManager, name: &str) -> Status {
    server(manager, name).status
}

/// Waits until the pid file of a server holds `count` pids.
pub async fn wait_for_pids(path: &Path, count: usize) -> Vec<u32> {
    let ready = eventually(Duration::from_secs(10), || read_pids(path).len() >= count).await;
    assert!(ready, "pid file {} never had {count} pids", path.display());
    read_pids(path)
}

/// Our test server over HTTP on 127.0.0.1 (Streamable HTTP on `/mcp` or legacy SSE on `/sse`),
/// with its `/control/*` API; killed when dropped.
pub struct HttpServer {
    child: Child,
    /// The MCP URL: `http://127.0.0.1:PORT/mcp` or `.../sse`.
    pub url: String,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl HttpServer {
    /// Streamable HTTP (`--transport http`).
    pub fn start(args: &[&str]) -> HttpServer {
        HttpServer::start_with("http", args)
    }

    /// Legacy HTTP+SSE (`--transport sse`).
    pub fn start_sse(args: &[&str]) -> HttpServer {
        HttpServer::start_with("sse", args)
    }

    pub fn start_with(transport: &str, args: &[&str]) -> HttpServer {
        let mut child = Command::new(test_server())
            .args(["--transport", transport, "--port", "0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the http test server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_string();
        let base = url
            .rsplit_once('/')
            .map(|(base, _)| base.to_string())
            .unwrap();
        HttpServer { child, url, base }
    }

    /// One plain HTTP/1.1 request to this server; returns the status code and the body.
    pub fn request(&self, method: &str, path: &str) -> (u16, String) {
        let host = self.base.trim_start_matches("http://");
        let mut stream = TcpStream::connect(host).expect("connect to the test server");
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status = response
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("not an http response: {response:?}"));
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, body)| body.to_string())
            .unwrap_or_default();
        (status, body)
    }

    /// `POST /control/<what>` (`drop`, `refuse?count=N`); panics unless it answers 200.
    pub fn control(&self, what: &str) {
        let (status, body) = self.request("POST", &format!("/control/{what}"));
        assert_eq!(status, 200, "control/{what}: {body}");
    }

    /// `GET /control/stats`: `sseConnections`, `refused`, `open`, `sseRequests`, `mcpRequests`.
    pub fn stats(&self) -> Value {
        let (status, body) = self.request("GET", "/control/stats");
        assert_eq!(status, 200, "control/stats: {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("stats {body:?}: {e}"))
    }

    /// One counter of [`HttpServer::stats`].
    pub fn stat(&self, name: &str) -> u64 {
        self.stats()[name]
            .as_u64()
            .unwrap_or_else(|| panic!("no stat {name}"))
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
