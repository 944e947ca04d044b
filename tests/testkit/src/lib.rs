//! Helpers shared by the integration test binaries of every crate: locating our binaries,
//! checking processes through `/proc`, bounded polling (never a wall-clock assertion), a
//! suite's sandbox ([`SandboxDirs`], [`suite_sandbox!`]), our test MCP server over HTTP with its
//! `/control/*` API, the scripted fake model ([`FakeModel`]), the LSP client for the sidecar
//! ([`lsp::Sidecar`]), a manager's listed rows ([`manager::row`]) and the recorded tool catalogs with
//! their queries ([`catalog`], BUD-7).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

pub mod catalog;
pub mod lsp;
pub mod manager;
mod model;
pub use model::{FakeModel, Step, after, call, declared, exec, paced, say, stall};

/// A binary of this workspace (`wave-mcp`, `wave-mcp-test-server`) from the target directory of
/// the running test. Test runs of the whole workspace (`cargo nextest run --workspace`,
/// `scripts/test-all.sh`) have built it already; otherwise it is built once, with the same
/// workspace-wide features so nothing else gets rebuilt.
pub fn binary(name: &str) -> PathBuf {
    let path = profile_dir().join(name);
    if path.exists() {
        return path;
    }
    build_workspace_binaries();
    assert!(
        path.exists(),
        "{} is missing; run `cargo build --workspace --bins`",
        path.display()
    );
    path
}

/// `target/<profile>`, from this test executable's path (`target/<profile>/deps/all-...`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let deps = exe.parent().expect("deps dir");
    deps.parent().expect("profile dir").to_path_buf()
}

fn build_workspace_binaries() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut command = Command::new(cargo);
        command.args(["build", "--workspace", "--bins"]);
        if profile_dir().file_name().is_some_and(|n| n == "release") {
            command.arg("--release");
        }
        let status = command.status().expect("run cargo build");
        assert!(status.success(), "cargo build --workspace --bins failed");
    });
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

/// Live processes whose command line contains `marker`.
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

/// Waits until the pid file of a server holds `count` pids.
pub async fn wait_for_pids(path: &Path, count: usize) -> Vec<u32> {
    let ready = eventually(Duration::from_secs(10), || read_pids(path).len() >= count).await;
    assert!(ready, "pid file {} never had {count} pids", path.display());
    read_pids(path)
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
    let gone = eventually(Duration::from_secs(10), || pids.iter().all(|&p| !alive(p))).await;
    let survivors: Vec<u32> = pids.iter().copied().filter(|&p| alive(p)).collect();
    assert!(gone, "processes still alive: {survivors:?}");
}

/// Sends the in-process warnings of wave-mcp's crates (a cleanup that waits, a lost server) to
/// the test's stderr, which nextest shows when the test fails or is ended for hanging. Set
/// once per process, and only under nextest (one test per process): under `cargo test` the
/// tests share a process, and one that captures the log needs the only subscriber. A test that
/// installs a subscriber of its own first keeps it.
pub fn log_warnings() {
    if std::env::var_os("NEXTEST").is_none() {
        return;
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("warn"))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// Makes the process `command` starts die with the test that starts it (Linux: SIGKILL when the
/// spawning thread, the test's, ends). For helpers in a process group of their own, which
/// nextest's kill of a hung test's group does not reach.
#[cfg(unix)]
pub fn dies_with_test(command: &mut std::process::Command) -> &mut std::process::Command {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: the closure runs between fork and exec and only makes one system call.
        unsafe {
            command.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                    .map_err(std::io::Error::from)
            });
        }
    }
    command
}

/// A private home and workdir under one temporary root, removed on drop. Every server config a
/// test makes carries the root in its arguments, so its processes can be found in `/proc` by
/// that marker. The test binaries wrap it in a `Sandbox` of their own ([`suite_sandbox!`]).
pub struct SandboxDirs {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub workdir: PathBuf,
}

impl SandboxDirs {
    /// `<tmp>/<prefix>XXXX/{home/.wave, project}`.
    pub fn new(prefix: &str) -> SandboxDirs {
        log_warnings();
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .expect("temp dir");
        let root = dir.path().to_path_buf();
        let home = root.join("home");
        let workdir = root.join("project");
        std::fs::create_dir_all(home.join(".wave")).unwrap();
        std::fs::create_dir_all(&workdir).unwrap();
        SandboxDirs {
            _dir: dir,
            root,
            home,
            workdir,
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Where a server started with `--pid-file` of this name writes its tree's pids.
    pub fn pid_file(&self, name: &str) -> PathBuf {
        self.root.join(format!("{name}.pids"))
    }

    /// Pids of live (non-zombie) processes whose command line mentions this sandbox.
    pub fn live_processes(&self) -> Vec<u32> {
        processes_mentioning(&self.root.display().to_string())
    }

    /// Approves every server of the workdir's `.mcp.json` as a user does: `wave-mcp approve NAME
    /// --workdir <workdir>` with this sandbox's home (TRUST-1). Tests that need a project server
    /// to run call it after writing the file; trust tests leave it out.
    pub fn approve_project(&self) {
        self.approve_project_in(&self.workdir);
    }

    /// [`SandboxDirs::approve_project`] for the project in `workdir`.
    pub fn approve_project_in(&self, workdir: &Path) {
        let path = workdir.join(".mcp.json");
        let text = std::fs::read_to_string(&path).expect("the project's .mcp.json");
        let config: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        let names = config["mcpServers"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for name in names.keys() {
            let output = std::process::Command::new(binary("wave-mcp"))
                .args(["approve", name, "--workdir"])
                .arg(workdir)
                .env("HOME", &self.home)
                .output()
                .expect("wave-mcp approve");
            assert!(
                output.status.success(),
                "wave-mcp approve {name}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }

    /// Waits (bounded) until no process of this sandbox is alive; panics naming the survivors.
    pub async fn assert_no_process_left(&self) {
        let gone = eventually(Duration::from_secs(10), || self.live_processes().is_empty()).await;
        assert!(gone, "left running: {:?}", self.live_processes());
    }
}

/// Declares a suite's `Sandbox`: a [`SandboxDirs`] under this temp-dir prefix, which it derefs
/// to, so the suite can give it methods of its own (`impl Sandbox { ... }`).
#[macro_export]
macro_rules! suite_sandbox {
    ($prefix:literal) => {
        /// A private home and workdir ([`wave_mcp_testkit::SandboxDirs`]) with this suite's
        /// server configs, every one marked with the sandbox path.
        pub struct Sandbox($crate::SandboxDirs);

        impl std::ops::Deref for Sandbox {
            type Target = $crate::SandboxDirs;

            fn deref(&self) -> &$crate::SandboxDirs {
                &self.0
            }
        }

        impl Sandbox {
            pub fn new() -> Sandbox {
                Sandbox($crate::SandboxDirs::new($prefix))
            }
        }
    };
}

/// A TCP port on 127.0.0.1 that was free a moment ago (for a server that takes a fixed port).
/// Hidden characters the test server's `--hostile-text` sends (tags spelling "IGNORE",
/// zero-width, word joiner, BOM, bidi override and isolates).
pub const HIDDEN_CHARS: &[char] = &[
    '\u{E0049}',
    '\u{E0047}',
    '\u{E004E}',
    '\u{E004F}',
    '\u{E0052}',
    '\u{E0045}',
    '\u{200B}',
    '\u{200C}',
    '\u{200D}',
    '\u{2060}',
    '\u{FEFF}',
    '\u{202E}',
    '\u{2066}',
    '\u{2069}',
    '\u{202A}',
];

pub fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// How long [`output_within`] lets one command-line run take: far above any run's real time
/// (seconds), well below nextest's limit for the whole test, so a hung run is diagnosed.
pub const COMMAND_LIMIT: Duration = Duration::from_secs(120);

/// Runs `command` to its end with stdout and stderr captured, like `Command::output`, but a run
/// still going after `limit` is not waited for forever: its threads' backtraces (gdb, where
/// installed) are taken, it is killed, and the test panics with all of it and what it printed.
pub fn output_within(command: &mut Command, limit: Duration) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {:?}: {e}", command.get_program()));
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        let backtraces = backtraces_of(child.id());
        let _ = child.kill();
        let _ = child.wait();
        let printed = |t: std::thread::JoinHandle<Vec<u8>>| {
            String::from_utf8_lossy(&t.join().unwrap_or_default()).into_owned()
        };
        panic!(
            "{:?} {:?} still ran after {} s; killed.\n--- its threads ---\n{backtraces}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            command.get_program(),
            command.get_args().collect::<Vec<_>>(),
            limit.as_secs(),
            printed(stdout),
            printed(stderr),
        );
    };
    Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// Every thread's backtrace of the process `pid`, by gdb in batch mode; a sentence where gdb is
/// not installed or cannot attach.
pub fn backtraces_of(pid: u32) -> String {
    let attached = Command::new("gdb")
        .args([
            "-batch",
            "-nx",
            "-p",
            &pid.to_string(),
            "-ex",
            "thread apply all bt",
        ])
        .stdin(Stdio::null())
        .output();
    match attached {
        Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
        Err(e) => format!("(no backtraces: gdb: {e})"),
    }
}

/// Runs `command` with its stdio piped: writes `input` to its stdin, closes it, and waits (on a
/// blocking thread) for the process to end; its output.
pub async fn run_with_input(mut command: Command, input: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {:?}: {e}", command.get_program()));
    child.stdin.take().unwrap().write_all(input).unwrap();
    tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap()
}

/// Reads one LSP frame (`Content-Length` header, other headers, blank line, body) and returns
/// its body; `None` at the end of the stream, on a read error or without a `Content-Length`.
pub async fn read_lsp_frame<R>(reader: &mut R) -> Option<Vec<u8>>
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).await.ok()?;
    Some(body)
}

/// xorshift64*: small, fast, reproducible randomness for the fault suites. Never seeded with 0.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Asserts that each of `lines` occurs in `text`, in this order (other text may come between).
pub fn assert_in_order(text: &str, lines: &[&str]) {
    let mut rest = text;
    for line in lines {
        let at = rest
            .find(line)
            .unwrap_or_else(|| panic!("{line:?} missing or out of order in:\n{text}"));
        rest = &rest[at + line.len()..];
    }
}

/// The fault suites' seed: `WAVE_FAULTS_SEED`, else a fixed one (so CI runs are reproducible).
pub fn faults_seed() -> u64 {
    std::env::var("WAVE_FAULTS_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0x5EED_2026_0008)
}

/// One plain HTTP/1.1 request without a body to `base` (`http://HOST:PORT`); returns the status
/// code and the body. For control endpoints of our test servers, nothing an HTTP client library
/// would add (redirects, pooling) gets in the way.
pub fn http_request(base: &str, method: &str, path: &str) -> (u16, String) {
    let host = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(host).unwrap_or_else(|e| panic!("connect to {host}: {e}"));
    // A server that never answers fails the test with a reason instead of holding it.
    stream.set_read_timeout(Some(COMMAND_LIMIT)).unwrap();
    stream.set_write_timeout(Some(COMMAND_LIMIT)).unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .unwrap_or_else(|e| panic!("{method} {base}{path}: no answer: {e}"));
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

/// The recorded MCP Registry answers the local registry serves (USE-3).
pub fn registry_fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../test-server/registry")
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
        let mut child = Command::new(binary("wave-mcp-test-server"))
            .args(["--transport", transport, "--port", "0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the http test server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("read the listening line");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_string();
        let base = url
            .rsplit_once('/')
            .map(|(base, _)| base.to_string())
            .expect("url with a path");
        HttpServer { child, url, base }
    }

    /// A local MCP Registry with the official API's shape, answering from the recorded
    /// `server.json` documents in `tests/test-server/registry` (USE-3); `base` is the
    /// registry's base URL (`WAVE_REGISTRY_URL`).
    pub fn start_registry() -> HttpServer {
        let dir = registry_fixtures();
        HttpServer::start_with("http", &["--registry", &dir.to_string_lossy()])
    }

    /// One plain HTTP/1.1 request to this server; returns the status code and the body.
    pub fn request(&self, method: &str, path: &str) -> (u16, String) {
        http_request(&self.base, method, path)
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
