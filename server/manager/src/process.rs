//! A stdio MCP server's process tree: spawn in its own process group, keep a stderr tail, notice
//! an unexpected exit, and tear the whole tree down (LAZY-8).
//!
//! Teardown order (the MCP lifecycle's stdio shutdown): stdin is closed by the caller (dropping
//! the rmcp transport), up to `grace` for the server to exit on its own, then SIGTERM to the
//! group, up to `grace` for the group to empty, SIGKILL to the group, reap. On Windows the tree is
//! killed with `taskkill /PID <pid> /T /F`. Each group is recorded in the spawn registry
//! ([`crate::registry`]) from spawn until it is reaped, so a crash of ours leaves a trace.

use crate::logs::LogSink;
use std::collections::VecDeque;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::background::Background;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::{oneshot, watch};

use crate::registry::{self, Record};

/// How many stderr lines are kept per server.
const STDERR_LINES: usize = 200;
/// Longest stderr line kept (longer lines are cut).
const STDERR_LINE_LEN: usize = 2000;
/// How long an ended server's last stderr lines are waited for.
const STDERR_DRAIN: Duration = Duration::from_millis(500);
/// How long teardown waits for SIGKILLed group members to be gone.
const KILL_SETTLE: Duration = Duration::from_secs(1);
/// How many trailing stderr lines an error reason quotes.
pub const STDERR_TAIL_IN_REASON: usize = 10;

/// The last lines a server wrote to stderr, bounded; each line also goes to the server's log
/// once one is attached (SRV-2).
#[derive(Clone, Default)]
pub struct StderrTail(Arc<Mutex<Tail>>);

#[derive(Default)]
struct Tail {
    lines: VecDeque<String>,
    log: Option<LogSink>,
}

impl StderrTail {
    /// Sends every line to `log` from now on, the lines already kept first, so none is missed.
    pub(crate) fn attach_log(&self, log: LogSink) {
        let mut tail = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for line in &tail.lines {
            log.stderr(line);
        }
        tail.log = Some(log);
    }

    fn push(&self, mut line: String) {
        if line.len() > STDERR_LINE_LEN {
            let mut cut = STDERR_LINE_LEN;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        let mut tail = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(log) = &tail.log {
            log.stderr(&line);
        }
        if tail.lines.len() == STDERR_LINES {
            tail.lines.pop_front();
        }
        tail.lines.push_back(line);
    }

    /// The last `n` lines joined with newlines.
    pub fn last(&self, n: usize) -> String {
        let tail = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let skip = tail.lines.len().saturating_sub(n);
        tail.lines
            .iter()
            .skip(skip)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Why a server process ended without being asked to.
#[derive(Debug, Clone)]
pub struct UnexpectedExit {
    pub status: Option<ExitStatus>,
}

impl std::fmt::Display for UnexpectedExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.status {
            Some(status) => write!(f, "server process exited unexpectedly ({status})"),
            None => write!(f, "server process exited unexpectedly"),
        }
    }
}

/// Owner of a running server process tree. Dropping it without [`ServerProcess::terminate`]
/// kills the tree at once (SIGKILL to the group), so no path leaves an orphan.
pub struct ServerProcess {
    pid: u32,
    stderr: StderrTail,
    shutdown: Option<oneshot::Sender<Duration>>,
    finished: watch::Receiver<bool>,
    exited: Option<oneshot::Receiver<UnexpectedExit>>,
}

/// What [`spawn`] hands back: the process owner and the pipes for the rmcp transport.
pub struct Spawned {
    pub process: ServerProcess,
    pub stdout: ChildStdout,
    pub stdin: ChildStdin,
}

/// Starts `command` in its own process group with piped stdio; with `run_dir`, the group is
/// recorded in the spawn registry there until it is reaped (REAP-1). Its supervisor and stderr
/// reader run under `tasks` (the manager's cleanup awaits them).
pub fn spawn(
    command: &Path,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
    run_dir: Option<&Path>,
    tasks: &Background,
) -> std::io::Result<Spawned> {
    let mut cmd = Command::new(command);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    cmd.process_group(0);
    #[cfg(windows)]
    {
        const CREATE_NO_WINDOW: u32 = 0x0800_0000;
        cmd.creation_flags(CREATE_NO_WINDOW);
    }
    let mut child = cmd.spawn()?;
    let pid = child.id().unwrap_or_default();
    tracing::debug!(pid, command = %command.display(), "spawned MCP server");
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        kill_tree_now(pid);
        return Err(std::io::Error::other("child stdio was not piped"));
    };
    let record = run_dir.and_then(|dir| registry::record(dir, pid));
    let tail = StderrTail::default();
    let stderr_done = tasks.spawn(
        format!("stderr reader of pid {pid}"),
        collect_stderr(stderr, tail.clone(), pid),
    );
    let (shutdown_tx, shutdown_rx) = oneshot::channel();
    let (finished_tx, finished_rx) = watch::channel(false);
    let (exited_tx, exited_rx) = oneshot::channel();
    tasks.spawn(
        format!("supervisor of pid {pid}"),
        supervise(Supervised {
            child,
            pid,
            shutdown: shutdown_rx,
            finished: finished_tx,
            exited: exited_tx,
            stderr_done,
            record,
        }),
    );
    Ok(Spawned {
        process: ServerProcess {
            pid,
            stderr: tail,
            shutdown: Some(shutdown_tx),
            finished: finished_rx,
            exited: Some(exited_rx),
        },
        stdout,
        stdin,
    })
}

impl ServerProcess {
    pub fn stderr(&self) -> &StderrTail {
        &self.stderr
    }

    /// Resolves when the process ends on its own (crash, exit); never resolves after a requested
    /// teardown. Can be taken once.
    pub fn take_exit_signal(&mut self) -> Option<oneshot::Receiver<UnexpectedExit>> {
        self.exited.take()
    }

    /// `grace` to exit on its own, SIGTERM to the group, `grace` to exit, SIGKILL, reap. Close
    /// stdin before calling this.
    /// Returns when the direct child is reaped and the group has been killed.
    pub async fn terminate(mut self, grace: Duration) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(grace);
        }
        let mut finished = self.finished.clone();
        let _ = finished.wait_for(|done| *done).await;
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if self.shutdown.is_some() && !*self.finished.borrow() {
            kill_tree_now(self.pid);
        }
    }
}

struct Supervised {
    child: Child,
    pid: u32,
    shutdown: oneshot::Receiver<Duration>,
    finished: watch::Sender<bool>,
    exited: oneshot::Sender<UnexpectedExit>,
    stderr_done: tokio::task::JoinHandle<()>,
    record: Option<Record>,
}

async fn supervise(mut s: Supervised) {
    tokio::select! {
        status = s.child.wait() => {
            // The leader is gone: sweep descendants still in its group, then report.
            kill_tree_now(s.pid);
            drain_stderr(s.stderr_done).await;
            let _ = s.exited.send(UnexpectedExit { status: status.ok() });
        }
        grace = &mut s.shutdown => {
            // A dropped sender (owner dropped) means "now", with no grace.
            let grace = grace.unwrap_or(Duration::ZERO);
            terminate_tree(&mut s.child, s.pid, grace).await;
            // Every writer is dead: the pipe ends, and the tail holds the last lines.
            drain_stderr(s.stderr_done).await;
        }
    }
    // The group has been killed (and, after a requested teardown, is gone): drop its record.
    if let Some(record) = s.record.take() {
        record.release();
    }
    let _ = s.finished.send(true);
}

/// Waits up to [`STDERR_DRAIN`] for the stderr reader to reach the end of the pipe, then stops
/// it: a process outside the group (escaped with its own group, LIFE-7) may hold the pipe open
/// for ever, and the reader must not outlive the server it reads.
async fn drain_stderr(mut reader: tokio::task::JoinHandle<()>) {
    if tokio::time::timeout(STDERR_DRAIN, &mut reader)
        .await
        .is_err()
    {
        reader.abort();
    }
}

async fn collect_stderr(stderr: ChildStderr, tail: StderrTail, pid: u32) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(target: "wave_mcp_manager::server_stderr", pid, "{line}");
        tail.push(line);
    }
}

/// The MCP lifecycle's stdio shutdown (2025-06-18, "Shutdown"): with stdin closed, wait for the
/// server to exit; SIGTERM if it does not within `grace`; SIGKILL if it has not within `grace`
/// after that. Whatever the leader did, the group gets SIGTERM and its own grace, so descendants
/// that outlive a leader which exited on end of input are ended the same way.
#[cfg(unix)]
async fn terminate_tree(child: &mut Child, pid: u32, grace: Duration) {
    use nix::sys::signal::Signal;
    // What the server already read (a `notifications/cancelled` sent just before the close,
    // say) is handled before it sees the end of its input; a signal now could cut that short.
    let _ = tokio::time::timeout(grace, child.wait()).await;
    if !registry::group_alive(pid) {
        let _ = child.wait().await;
        return;
    }
    signal_group(pid, Signal::SIGTERM);
    let deadline = tokio::time::Instant::now() + grace;
    let exited_in_grace = tokio::time::timeout_at(deadline, child.wait())
        .await
        .is_ok();
    if exited_in_grace {
        // Descendants may still be shutting down; give them the rest of the grace period.
        while registry::group_alive(pid) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    signal_group(pid, Signal::SIGKILL);
    let _ = child.wait().await;
    // SIGKILL is delivered asynchronously: return once no member of the group still runs.
    let deadline = tokio::time::Instant::now() + KILL_SETTLE;
    while registry::group_alive(pid) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[cfg(windows)]
async fn terminate_tree(child: &mut Child, pid: u32, grace: Duration) {
    // Windows has no SIGTERM for console programs: stdin is already closed, wait, then kill.
    if tokio::time::timeout(grace, child.wait()).await.is_err() {
        kill_tree_now(pid);
    }
    let _ = child.kill().await;
}

/// Kills the whole tree immediately (SIGKILL to the group / `taskkill /T /F`). Synchronous, so it
/// can run in `Drop`.
pub fn kill_tree_now(pid: u32) {
    #[cfg(unix)]
    signal_group(pid, nix::sys::signal::Signal::SIGKILL);
    #[cfg(windows)]
    {
        let _ = std::process::Command::new("taskkill")
            .args(["/PID", &pid.to_string(), "/T", "/F"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

#[cfg(unix)]
fn signal_group(pid: u32, signal: nix::sys::signal::Signal) {
    let Ok(pgid) = i32::try_from(pid) else {
        return;
    };
    if pgid <= 1 {
        return;
    }
    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), signal);
}
