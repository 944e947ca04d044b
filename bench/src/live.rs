//! Row 9, live turns (LONG-1, LONG-3), through the real sidecar (`wave-mcp lsp`, this build)
//! over its stdio, driven by the testkit's LSP client (`lsp::Sidecar`, which stamps each
//! message's arrival):
//!
//! - 9a: from the model's first SSE chunk leaving the model (a raw-TCP Chat Completions server in
//!   this process, which timestamps the write: [`RawModel`]) to the first `wave/session/delta`
//!   arriving at the client, against a bare relay of the same stream: a child process
//!   (`--relay-url`) that POSTs to the same model with reqwest and copies every chunk to its
//!   stdout, read by this process; once with tokio's stdout (blocking pool), once with the
//!   non-blocking pipe writer the sidecar itself uses (`--nonblocking-stdout`). All paths are
//!   model → HTTP → another process → a pipe → here; interleaved, medians.
//! - 9b: from `wave/session/cancel` leaving the client to our test server's `progress` tool
//!   seeing its request cancelled (`notifications/cancelled` processed; the server stamps the
//!   moment, µs since the epoch), against one `tools/call` round trip to the same server binary
//!   (`McpManager::call_tool` of `echo`, median). The model is the testkit's `FakeModel`, whose
//!   answer to every turn is a call of `progress`.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, ChildStdin, Command};
use wave_mcp_testkit::lsp::Sidecar;
use wave_mcp_testkit::{FakeModel, call};

use crate::sidecar;
use crate::util::{self, Scratch};

pub struct LiveResult {
    pub delta_sidecar: f64,
    pub delta_relay: f64,
    /// The relay writing its stdout as the sidecar does (a non-blocking pipe).
    pub delta_relay_nonblocking: f64,
    pub cancel: f64,
    pub round_trip: f64,
    pub samples: usize,
}

pub async fn run(samples: usize) -> Result<LiveResult> {
    let [delta_sidecar, delta_relay, delta_relay_nonblocking] = first_delta(samples).await?;
    let (cancel, round_trip) = cancel_latency(samples / 4 + 5).await?;
    Ok(LiveResult {
        delta_sidecar,
        delta_relay,
        delta_relay_nonblocking,
        cancel,
        round_trip,
        samples,
    })
}

/// 9a: medians of the first-chunk latencies of (the sidecar, the relay with tokio's stdout, the
/// relay with a non-blocking stdout), interleaved.
async fn first_delta(samples: usize) -> Result<[f64; 3]> {
    let model = RawModel::start().await?;
    let scratch = Scratch::new()?;
    let sidecar = sidecar::start(&scratch, Some(&model.base_url)).await?;
    let mut relays = [
        Relay::start(&model.base_url, false).await?,
        Relay::start(&model.base_url, true).await?,
    ];
    let mut latencies = [Vec::new(), Vec::new(), Vec::new()];
    for round in 0..samples + 5 {
        let before = sidecar.received();
        sidecar.send_text("hi").await;
        turn_ended(&sidecar, before).await;
        let delta = sidecar
            .arrivals_since(before)
            .into_iter()
            .find(|arrival| arrival.message["method"] == "wave/session/delta")
            .context("a turn without a wave/session/delta")?
            .at;
        let mut spans = vec![delta.saturating_duration_since(model.last_first_chunk()?)];
        for relay in &mut relays {
            let arrived = relay.first_chunk().await?;
            spans.push(arrived.saturating_duration_since(model.last_first_chunk()?));
        }
        if round < 5 {
            continue; // warm-up
        }
        for (latency, span) in latencies.iter_mut().zip(spans) {
            latency.push(util::secs(span));
        }
    }
    sidecar.stop().await;
    for relay in &mut relays {
        relay.stop().await;
    }
    Ok(latencies.map(|latency| util::median(&latency)))
}

/// 9b: medians of (cancel → server sees it, one echo round trip).
async fn cancel_latency(samples: usize) -> Result<(f64, f64)> {
    let rounds = samples + 2;
    // Each round is one turn of one model request, which the cancel ends.
    let job = call("mcp__w__progress", json!({ "steps": 100000, "ms": 1000 }));
    let model = FakeModel::start(vec![job; rounds]).await;
    let scratch = Scratch::new()?;
    let events = scratch.root.join("events.log");
    let server = json!({
        "command": util::test_server(),
        "args": ["--tools", "progress,echo", "--event-log", events],
    });
    let mut servers = serde_json::Map::new();
    servers.insert("w".into(), server);
    scratch.write_project(&servers)?;
    let sidecar = sidecar::start(&scratch, Some(&model.base_url)).await?;
    let mut latencies = Vec::new();
    for round in 0..rounds {
        let before = sidecar.received();
        sidecar.send_text("work").await;
        let id = wait_line(&events, "progress-started", round).await?[2].clone();
        let sent = SystemTime::now();
        sidecar
            .ok("wave/session/cancel", json!({ "sessionId": "default" }))
            .await;
        let cancelled = wait_line(&events, "progress-cancelled", round).await?;
        if cancelled[2] != id {
            bail!("cancelled {} instead of {id}", cancelled[2]);
        }
        let at: u128 = cancelled[3].parse().context("the cancel stamp")?;
        let sent = sent.duration_since(UNIX_EPOCH)?.as_micros();
        turn_ended(&sidecar, before).await;
        if round >= 2 {
            latencies.push(at.saturating_sub(sent) as f64 / 1e6);
        }
    }
    sidecar.stop().await;

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

/// Waits for the `wave/session/turnEnded` of the turn sent after message `before`.
async fn turn_ended(sidecar: &Sidecar, before: usize) {
    sidecar
        .wait_notification(before, "wave/session/turnEnded", |_| true)
        .await;
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

/// A Chat Completions endpoint on raw TCP (HTTP/1.1, keep-alive, chunked) that streams one
/// text chunk and `[DONE]`, so the moment the first SSE chunk leaves is known exactly: the
/// response head is flushed first, the first chunk is written on its own 2 ms later, and the
/// stamp is taken once that write is flushed to the socket (`TCP_NODELAY`). This is not the
/// testkit's `FakeModel` on purpose: behind axum our code only hands a chunk to hyper, which
/// writes it later from its own task (and may put it in one write with the response head), so
/// a stamp there is taken before the chunk leaves, by an amount that varies, and the client's
/// reading of the head falls inside the measured span; either would blur a figure of about
/// 100 µs.
struct RawModel {
    base_url: String,
    first_chunks: Arc<Mutex<Vec<Instant>>>,
    task: tokio::task::JoinHandle<()>,
}

impl RawModel {
    async fn start() -> Result<RawModel> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let first_chunks: Arc<Mutex<Vec<Instant>>> = Arc::default();
        let stamps = first_chunks.clone();
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let _ = socket.set_nodelay(true);
                tokio::spawn(serve(socket, stamps.clone()));
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

async fn serve(socket: TcpStream, stamps: Arc<Mutex<Vec<Instant>>>) {
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
        let first = json!({ "choices": [{ "index": 0, "delta": { "content": "hi" } }] });
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
pub fn relay_main(url: &str, nonblocking: bool) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let http = reqwest::Client::new();
        let endpoint = format!("{url}/chat/completions");
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        let mut stdout: Box<dyn tokio::io::AsyncWrite + Unpin> = match nonblocking {
            // As the sidecar writes its stdout when it is a pipe (server/src/lsp/stdout.rs).
            true => {
                use std::os::fd::AsFd;
                let fd = std::io::stdout().as_fd().try_clone_to_owned()?;
                let pipe = tokio::net::unix::pipe::Sender::from_file(std::fs::File::from(fd))?;
                Box::new(pipe)
            }
            false => Box::new(tokio::io::stdout()),
        };
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
    async fn start(url: &str, nonblocking: bool) -> Result<Relay> {
        let mut child = Command::new(std::env::current_exe()?)
            .args(["--relay-url", url])
            .args(nonblocking.then_some("--nonblocking-stdout"))
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
