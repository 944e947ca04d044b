//! Row 5, the sidecar: the real `wave-mcp lsp` (release build) driven over its stdio with
//! LSP framing, with 200 configured servers (in the project's `.mcp.json`).
//!
//! - `wave/mcp/servers` latency: sequential requests, median, against the same measurement on a
//!   sidecar with one configured server (same run);
//! - snapshot push rate: 200 `wave/mcp/connect` requests sent at once (400 status changes:
//!   `connecting`, then `connected`, per server). The sidecar pushes each change as a
//!   `wave/mcp/serversChanged` notification unless a reply has already shown a newer state
//!   (UI-11), so fewer than 400 arrive. Reported: notifications and bytes per second until the
//!   notification showing all 200 connected, and that moment against the last connect reply
//!   (pushes keep up with replies: about 1×).

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;

use crate::util::{self, Scratch};
use wave_mcp_testkit::read_lsp_frame;

pub const SERVERS: usize = 200;
const CHANGED: &str = "wave/mcp/serversChanged";

pub struct SidecarResult {
    pub latency_200: f64,
    pub latency_1: f64,
    pub latency_200_connected: f64,
    pub snapshot_bytes: usize,
    pub notifications: usize,
    /// From the first connect sent to the notification showing all 200 connected.
    pub push_seconds: f64,
    /// From the first connect sent to the last connect reply.
    pub last_reply_seconds: f64,
    pub push_bytes: usize,
}

pub async fn run(requests: usize) -> Result<SidecarResult> {
    let one = Scratch::new()?;
    one.write_project(&util::stdio_servers(1, &["--tools", "echo,add"]))?;
    let many = Scratch::new()?;
    many.write_project(&util::stdio_servers(SERVERS, &["--tools", "echo,add"]))?;

    let small = Sidecar::start(&one).await?;
    let big = Sidecar::start(&many).await?;
    // Interleaved, so both see the same machine.
    let (mut lat_1, mut lat_200) = (Vec::new(), Vec::new());
    for _ in 0..requests / 10 {
        small.request("wave/mcp/servers", json!({})).await?;
        big.request("wave/mcp/servers", json!({})).await?;
    }
    let mut snapshot_bytes = 0;
    for _ in 0..requests {
        lat_1.push(small.timed("wave/mcp/servers").await?.0);
        let (took, bytes) = big.timed("wave/mcp/servers").await?;
        lat_200.push(took);
        snapshot_bytes = bytes;
    }
    small.stop().await?;

    // The storm: every server connected at once.
    let before = big.notifications().len();
    let start = Instant::now();
    let connects =
        (0..SERVERS).map(|i| big.call("wave/mcp/connect", json!({ "name": format!("s{i}") })));
    let replies = futures::future::join_all(connects).await;
    let mut last_reply = start;
    for reply in replies {
        last_reply = last_reply.max(reply?.0);
    }
    // Every change is pushed before a later reply; wait for the last `connected` to arrive.
    let deadline = Instant::now() + Duration::from_secs(60);
    let all_connected = |n: &Value| {
        n["servers"]
            .as_array()
            .is_some_and(|s| s.iter().all(|s| s["status"] == "connected"))
    };
    loop {
        let pushed = big.notifications();
        if pushed[before..].iter().any(|(_, _, n)| all_connected(n)) {
            break;
        }
        if Instant::now() > deadline {
            bail!("never saw every server connected in a notification");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let pushed = big.notifications();
    let storm = &pushed[before..];
    let final_push = storm
        .iter()
        .find(|(_, _, n)| all_connected(n))
        .map_or(start, |(at, _, _)| *at);
    let push_seconds = util::secs(final_push.duration_since(start));
    let push_bytes = storm.iter().map(|(_, bytes, _)| bytes).sum();

    let mut lat_connected = Vec::new();
    for _ in 0..requests / 4 {
        lat_connected.push(big.timed("wave/mcp/servers").await?.0);
    }
    big.stop().await?;
    Ok(SidecarResult {
        latency_200: util::median(&lat_200),
        latency_1: util::median(&lat_1),
        latency_200_connected: util::median(&lat_connected),
        snapshot_bytes,
        notifications: storm.len(),
        push_seconds,
        last_reply_seconds: util::secs(last_reply.duration_since(start)),
        push_bytes,
    })
}

type Pending = Mutex<HashMap<i64, oneshot::Sender<(Instant, usize, Value)>>>;

/// The sidecar process, with a reader that matches replies and records notifications.
struct Sidecar {
    child: Child,
    stdin: tokio::sync::Mutex<ChildStdin>,
    next_id: AtomicI64,
    pending: Arc<Pending>,
    /// `serversChanged` notifications: arrival, body size, params.
    notifications: Arc<Mutex<Vec<(Instant, usize, Value)>>>,
}

impl Sidecar {
    async fn start(scratch: &Scratch) -> Result<Sidecar> {
        let mut child = Command::new(util::wave_mcp())
            .arg("lsp")
            .current_dir(&scratch.root)
            .env("WAVE_LOG", "error")
            .env_remove("WAVE_MODEL")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .context("spawning wave-mcp lsp")?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = child.stdout.take().context("stdout")?;
        let pending: Arc<Pending> = Arc::default();
        let notifications: Arc<Mutex<Vec<(Instant, usize, Value)>>> = Arc::default();
        tokio::spawn(read_loop(stdout, pending.clone(), notifications.clone()));
        let sidecar = Sidecar {
            child,
            stdin: tokio::sync::Mutex::new(stdin),
            next_id: AtomicI64::new(1),
            pending,
            notifications,
        };
        let options = json!({
            "home": scratch.home,
            "workdir": scratch.workdir,
        });
        sidecar
            .request(
                "initialize",
                json!({ "processId": null, "capabilities": {}, "initializationOptions": options }),
            )
            .await?;
        sidecar.notify("initialized", json!({})).await?;
        Ok(sidecar)
    }

    async fn write(&self, message: &Value) -> Result<()> {
        let body = serde_json::to_vec(message)?;
        let mut stdin = self.stdin.lock().await;
        stdin
            .write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes())
            .await?;
        stdin.write_all(&body).await?;
        stdin.flush().await?;
        Ok(())
    }

    async fn notify(&self, method: &str, params: Value) -> Result<()> {
        self.write(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
            .await
    }

    /// Sends a request; its reply's arrival time, body size and result.
    async fn call(&self, method: &str, params: Value) -> Result<(Instant, usize, Value)> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(id, tx);
        self.write(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await?;
        let (at, size, reply) = tokio::time::timeout(Duration::from_secs(120), rx)
            .await
            .with_context(|| format!("no reply to {method}"))?
            .context("the sidecar closed its stdout")?;
        if let Some(error) = reply.get("error") {
            bail!("{method} failed: {error}");
        }
        Ok((at, size, reply["result"].clone()))
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value> {
        Ok(self.call(method, params).await?.2)
    }

    /// Seconds from sending to the reply's arrival, and the reply's size.
    async fn timed(&self, method: &str) -> Result<(f64, usize)> {
        let start = Instant::now();
        let (at, size, _) = self.call(method, json!({})).await?;
        Ok((util::secs(at.duration_since(start)), size))
    }

    fn notifications(&self) -> Vec<(Instant, usize, Value)> {
        self.notifications.lock().unwrap().clone()
    }

    async fn stop(mut self) -> Result<()> {
        self.request("shutdown", Value::Null).await?;
        self.notify("exit", Value::Null).await?;
        let status = tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .context("the sidecar did not exit")??;
        if !status.success() {
            bail!("the sidecar exited with {status}");
        }
        Ok(())
    }
}

async fn read_loop(
    stdout: tokio::process::ChildStdout,
    pending: Arc<Pending>,
    notifications: Arc<Mutex<Vec<(Instant, usize, Value)>>>,
) {
    let mut reader = BufReader::new(stdout);
    loop {
        let Some(body) = read_lsp_frame(&mut reader).await else {
            return;
        };
        let length = body.len();
        let at = Instant::now();
        let Ok(message) = serde_json::from_slice::<Value>(&body) else {
            continue;
        };
        if message["method"] == CHANGED {
            let params = message["params"].clone();
            notifications.lock().unwrap().push((at, length, params));
        } else if message.get("method").is_none()
            && let Some(id) = message["id"].as_i64()
            && let Some(tx) = pending.lock().unwrap().remove(&id)
        {
            let _ = tx.send((at, length, message));
        }
    }
}
