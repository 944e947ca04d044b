//! Row 7, live turns (LONG-1, LONG-3), through the real sidecar (`wave-mcp lsp`, this build)
//! over its stdio:
//!
//! - 7a: from the model's first SSE chunk leaving the model (a raw-TCP Chat Completions server in
//!   this process, which timestamps the write) to the first `wave/session/delta` arriving at the
//!   client, against a bare relay of the same stream: a child process (`--relay-url`) that POSTs
//!   to the same model with reqwest and copies every chunk to its stdout, read by this process.
//!   Both paths are model → HTTP → another process → a pipe → here; interleaved, medians.
//! - 7b: from `wave/session/cancel` leaving the client to our test server's `progress` tool
//!   seeing its request cancelled (`notifications/cancelled` processed; the server stamps the
//!   moment, µs since the epoch), against one `tools/call` round trip to the same server binary
//!   (`McpManager::call_tool` of `echo`, median).

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;
use wave_mcp_testkit::read_lsp_frame;

use crate::util::{self, Scratch};

pub struct LiveResult {
    pub delta_sidecar: f64,
    pub delta_relay: f64,
    pub cancel: f64,
    pub round_trip: f64,
    pub samples: usize,
}

pub async fn run(samples: usize) -> Result<LiveResult> {
    let (delta_sidecar, delta_relay) = first_delta(samples).await?;
    let (cancel, round_trip) = cancel_latency(samples / 4 + 5).await?;
    Ok(LiveResult {
        delta_sidecar,
        delta_relay,
        cancel,
        round_trip,
        samples,
    })
}

/// 7a: medians of (sidecar, relay) first-chunk latencies.
async fn first_delta(samples: usize) -> Result<(f64, f64)> {
    let model = RawModel::start(Answer::Text).await?;
    let scratch = Scratch::new()?;
    let sidecar = Sidecar::start(&scratch, &model.base_url).await?;
    let mut relay = Relay::start(&model.base_url).await?;
    let (mut ours, mut bare) = (Vec::new(), Vec::new());
    for round in 0..samples + 5 {
        let before = sidecar.received();
        sidecar
            .request(
                "wave/session/send",
                json!({ "sessionId": "default", "text": "hi" }),
            )
            .await?;
        let delta = sidecar.wait(before, "wave/session/delta").await?;
        sidecar.wait(before, "wave/session/turnEnded").await?;
        let written = model.last_first_chunk()?;
        let through_relay = relay.first_chunk().await?;
        let relay_written = model.last_first_chunk()?;
        if round < 5 {
            continue; // warm-up
        }
        ours.push(util::secs(delta.saturating_duration_since(written)));
        bare.push(util::secs(
            through_relay.saturating_duration_since(relay_written),
        ));
    }
    sidecar.stop().await?;
    relay.stop().await;
    Ok((util::median(&ours), util::median(&bare)))
}

/// 7b: medians of (cancel → server sees it, one echo round trip).
async fn cancel_latency(samples: usize) -> Result<(f64, f64)> {
    let model = RawModel::start(Answer::CallProgress).await?;
    let scratch = Scratch::new()?;
    let events = scratch.root.join("events.log");
    let server = json!({
        "command": util::test_server(),
        "args": ["--tools", "progress,echo", "--event-log", events],
    });
    let mut servers = serde_json::Map::new();
    servers.insert("w".into(), server);
    scratch.write_project(&servers)?;
    let sidecar = Sidecar::start(&scratch, &model.base_url).await?;
    let mut latencies = Vec::new();
    for round in 0..samples + 2 {
        let before = sidecar.received();
        sidecar
            .request(
                "wave/session/send",
                json!({ "sessionId": "default", "text": "work" }),
            )
            .await?;
        let id = wait_line(&events, "progress-started", round).await?[2].clone();
        let sent = SystemTime::now();
        sidecar
            .request("wave/session/cancel", json!({ "sessionId": "default" }))
            .await?;
        let cancelled = wait_line(&events, "progress-cancelled", round).await?;
        if cancelled[2] != id {
            bail!("cancelled {} instead of {id}", cancelled[2]);
        }
        let at: u128 = cancelled[3].parse().context("the cancel stamp")?;
        let sent = sent.duration_since(UNIX_EPOCH)?.as_micros();
        sidecar.wait(before, "wave/session/turnEnded").await?;
        if round >= 2 {
            latencies.push(at.saturating_sub(sent) as f64 / 1e6);
        }
    }
    sidecar.stop().await?;

    // One tool round trip to the same server binary.
    let manager = wave_mcp_manager::McpManager::new(wave_mcp_manager::ManagerOptions {
        workdir: scratch.workdir.clone(),
        home: Some(scratch.home.clone()),
        ..wave_mcp_manager::ManagerOptions::default()
    });
    manager.connect("w").await?;
    let mut trips = Vec::new();
    for i in 0..samples * 4 + 20 {
        let start = Instant::now();
        let mut arguments = serde_json::Map::new();
        arguments.insert("text".into(), json!("x"));
        manager.call_tool("mcp__w__echo", Some(arguments)).await?;
        if i >= 20 {
            trips.push(util::secs(start.elapsed()));
        }
    }
    manager.cleanup().await;
    Ok((util::median(&latencies), util::median(&trips)))
}

/// The `round`-th line of `kind` in the event log, split on spaces.
async fn wait_line(path: &std::path::Path, kind: &str, round: usize) -> Result<Vec<String>> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let found = text
            .lines()
            .filter(|l| l.split(' ').next() == Some(kind))
            .nth(round)
            .map(|l| l.split(' ').map(str::to_string).collect());
        if let Some(found) = found {
            return Ok(found);
        }
        if Instant::now() > deadline {
            bail!("no {kind} line {round} in {}", path.display());
        }
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
}

#[derive(Clone, Copy)]
enum Answer {
    /// One text chunk, then `[DONE]`.
    Text,
    /// A tool call of `mcp__w__progress` (a job of many seconds).
    CallProgress,
}

/// A Chat Completions endpoint on raw TCP (HTTP/1.1, keep-alive, chunked), so the moment the
/// first SSE chunk is written is known exactly.
struct RawModel {
    base_url: String,
    first_chunks: Arc<Mutex<Vec<Instant>>>,
    task: tokio::task::JoinHandle<()>,
}

impl RawModel {
    async fn start(answer: Answer) -> Result<RawModel> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let first_chunks: Arc<Mutex<Vec<Instant>>> = Arc::default();
        let stamps = first_chunks.clone();
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let _ = socket.set_nodelay(true);
                tokio::spawn(serve(socket, answer, stamps.clone()));
            }
        });
        Ok(RawModel {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            first_chunks,
            task,
        })
    }

    fn last_first_chunk(&self) -> Result<Instant> {
        self.first_chunks
            .lock()
            .unwrap()
            .last()
            .copied()
            .context("no answer streamed yet")
    }
}

impl Drop for RawModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(socket: TcpStream, answer: Answer, stamps: Arc<Mutex<Vec<Instant>>>) {
    let mut reader = BufReader::new(socket);
    loop {
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        let first = match answer {
            Answer::Text => json!({ "choices": [{ "index": 0, "delta": { "content": "hi" } }] }),
            Answer::CallProgress => json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [{
                "index": 0, "id": "call_p", "type": "function",
                "function": { "name": "mcp__w__progress", "arguments": "{\"steps\":100000,\"ms\":1000}" },
            }]}}]}),
        };
        let socket = reader.get_mut();
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        if socket.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let _ = socket.flush().await;
        // The first chunk leaves on its own, after the head.
        tokio::time::sleep(Duration::from_millis(2)).await;
        let chunk = |data: &str| format!("{:x}\r\n{data}\r\n", data.len());
        let first = chunk(&format!("data: {first}\n\n"));
        if socket.write_all(first.as_bytes()).await.is_err() {
            return;
        }
        let _ = socket.flush().await;
        stamps.lock().unwrap().push(Instant::now());
        let rest = format!("{}0\r\n\r\n", chunk("data: [DONE]\n\n"));
        if socket.write_all(rest.as_bytes()).await.is_err() {
            return;
        }
        let _ = socket.flush().await;
    }
}

/// The hidden `--relay-url URL` mode: for each line on stdin, one streaming request to the
/// model; every chunk of the answer is copied to stdout as it arrives.
pub fn relay_main(url: &str) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let http = reqwest::Client::new();
        let endpoint = format!("{url}/chat/completions");
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        let mut stdout = tokio::io::stdout();
        while lines.next_line().await?.is_some() {
            let mut response = http
                .post(&endpoint)
                .header("content-type", "application/json")
                .body(r#"{"model":"m","stream":true,"messages":[]}"#)
                .send()
                .await?;
            while let Some(chunk) = response.chunk().await? {
                stdout.write_all(&chunk).await?;
                stdout.flush().await?;
            }
        }
        Ok(())
    })
}

/// The relay child and our end of its pipes.
struct Relay {
    child: Child,
    stdin: ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Relay {
    async fn start(url: &str) -> Result<Relay> {
        let mut child = Command::new(std::env::current_exe()?)
            .args(["--relay-url", url])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("spawning the relay")?;
        let stdin = child.stdin.take().context("stdin")?;
        let lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
        Ok(Relay {
            child,
            stdin,
            lines,
        })
    }

    /// Asks for one answer; when its first chunk arrived here.
    async fn first_chunk(&mut self) -> Result<Instant> {
        self.stdin.write_all(b"go\n").await?;
        self.stdin.flush().await?;
        let mut first = None;
        loop {
            let line = self.lines.next_line().await?.context("the relay ended")?;
            if first.is_none() && line.starts_with("data: {") {
                first = Some(Instant::now());
            }
            if line == "data: [DONE]" {
                return first.context("no chunk before [DONE]");
            }
        }
    }

    async fn stop(&mut self) {
        let _ = self.child.kill().await;
    }
}

type Pending = Mutex<HashMap<i64, oneshot::Sender<Value>>>;
/// Every notification with its arrival, and a wake-up for waiters.
type Log = Arc<(Mutex<Vec<(Instant, Value)>>, tokio::sync::Notify)>;

/// The sidecar with a model; every notification is kept with its arrival time.
struct Sidecar {
    child: Child,
    stdin: tokio::sync::Mutex<ChildStdin>,
    next_id: AtomicI64,
    pending: Arc<Pending>,
    notifications: Log,
}

impl Sidecar {
    async fn start(scratch: &Scratch, model: &str) -> Result<Sidecar> {
        let mut child = Command::new(util::wave_mcp())
            .arg("lsp")
            .current_dir(&scratch.root)
            .env("WAVE_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .context("spawning wave-mcp lsp")?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = child.stdout.take().context("stdout")?;
        let pending: Arc<Pending> = Arc::default();
        let notifications: Log = Arc::default();
        let (replies, log) = (pending.clone(), notifications.clone());
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            while let Some(body) = read_lsp_frame(&mut reader).await {
                let at = Instant::now();
                let Ok(message) = serde_json::from_slice::<Value>(&body) else {
                    continue;
                };
                if message.get("method").is_some() {
                    log.0.lock().unwrap().push((at, message));
                    log.1.notify_waiters();
                } else if let Some(id) = message["id"].as_i64()
                    && let Some(tx) = replies.lock().unwrap().remove(&id)
                {
                    let _ = tx.send(message);
                }
            }
        });
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
            "model": { "baseUrl": model, "model": "bench" },
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
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(&body);
        let mut stdin = self.stdin.lock().await;
        stdin.write_all(&frame).await?;
        stdin.flush().await?;
        Ok(())
    }

    async fn notify(&self, method: &str, params: Value) -> Result<()> {
        self.write(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
            .await
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(id, tx);
        self.write(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await?;
        let reply = tokio::time::timeout(Duration::from_secs(120), rx)
            .await
            .with_context(|| format!("no reply to {method}"))??;
        if let Some(error) = reply.get("error") {
            bail!("{method} failed: {error}");
        }
        Ok(reply["result"].clone())
    }

    fn received(&self) -> usize {
        self.notifications.0.lock().unwrap().len()
    }

    /// When the first `method` notification at or after position `since` arrived.
    async fn wait(&self, since: usize, method: &str) -> Result<Instant> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let arrived = self.notifications.1.notified();
            let found = self.notifications.0.lock().unwrap()[since..]
                .iter()
                .find(|(_, m)| m["method"] == method)
                .map(|(at, _)| *at);
            if let Some(at) = found {
                return Ok(at);
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                bail!("no {method} within 60 s");
            }
        }
    }

    async fn stop(mut self) -> Result<()> {
        self.request("shutdown", Value::Null).await?;
        self.notify("exit", Value::Null).await?;
        tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .context("the sidecar did not exit")??;
        Ok(())
    }
}
