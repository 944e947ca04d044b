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

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde_json::{Value, json};

use crate::util::{self, Scratch};
use wave_mcp_testkit::lsp::{Arrival, Sidecar};

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

    let small = start(&one, None).await?;
    let big = start(&many, None).await?;
    // Interleaved, so both see the same machine.
    let (mut lat_1, mut lat_200) = (Vec::new(), Vec::new());
    for _ in 0..requests / 10 {
        request(&small, "wave/mcp/servers", json!({})).await?;
        request(&big, "wave/mcp/servers", json!({})).await?;
    }
    let mut snapshot_bytes = 0;
    for _ in 0..requests {
        lat_1.push(timed(&small, "wave/mcp/servers").await?.0);
        let (took, bytes) = timed(&big, "wave/mcp/servers").await?;
        lat_200.push(took);
        snapshot_bytes = bytes;
    }
    small.stop().await;

    // The storm: every server connected at once.
    let before = notifications(&big).len();
    let start = Instant::now();
    let connects =
        (0..SERVERS).map(|i| call(&big, "wave/mcp/connect", json!({ "name": format!("s{i}") })));
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
        let pushed = notifications(&big);
        if pushed[before..].iter().any(|(_, _, n)| all_connected(n)) {
            break;
        }
        if Instant::now() > deadline {
            bail!("never saw every server connected in a notification");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let pushed = notifications(&big);
    let storm = &pushed[before..];
    let final_push = storm
        .iter()
        .find(|(_, _, n)| all_connected(n))
        .map_or(start, |(at, _, _)| *at);
    let push_seconds = util::secs(final_push.duration_since(start));
    let push_bytes = storm.iter().map(|(_, bytes, _)| bytes).sum();

    let mut lat_connected = Vec::new();
    for _ in 0..requests / 4 {
        lat_connected.push(timed(&big, "wave/mcp/servers").await?.0);
    }
    big.stop().await;
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

/// The real sidecar of this profile over the testkit's LSP client, for one scratch directory;
/// its sessions talk to the model at `model_url`, if any.
pub async fn start(scratch: &Scratch, model_url: Option<&str>) -> Result<Sidecar> {
    let sidecar = Sidecar::spawn_program(&util::wave_mcp(), &scratch.root, |command| {
        command.env("WAVE_LOG", "error");
    });
    let mut options = json!({
        "home": scratch.home,
        "workdir": scratch.workdir,
    });
    if let Some(url) = model_url {
        options["model"] = json!({ "baseUrl": url, "model": "bench" });
    }
    if let Err(error) = sidecar
        .initialize(json!({ "initializationOptions": options }))
        .await
    {
        bail!("initialize failed: {error:?}");
    }
    Ok(sidecar)
}

/// Sends a request; its reply's arrival time, body size and result.
async fn call(sidecar: &Sidecar, method: &str, params: Value) -> Result<(Instant, usize, Value)> {
    let Arrival { at, size, message } = sidecar.call(method, params).await;
    if let Some(error) = message.get("error") {
        bail!("{method} failed: {error}");
    }
    Ok((at, size, message["result"].clone()))
}

async fn request(sidecar: &Sidecar, method: &str, params: Value) -> Result<Value> {
    Ok(call(sidecar, method, params).await?.2)
}

/// Seconds from sending to the reply's arrival, and the reply's size.
async fn timed(sidecar: &Sidecar, method: &str) -> Result<(f64, usize)> {
    let start = Instant::now();
    let (at, size, _) = call(sidecar, method, json!({})).await?;
    Ok((util::secs(at.duration_since(start)), size))
}

/// `serversChanged` notifications so far: arrival, body size, params.
fn notifications(sidecar: &Sidecar) -> Vec<(Instant, usize, Value)> {
    sidecar
        .arrivals()
        .into_iter()
        .filter(|arrival| arrival.message["method"] == CHANGED)
        .map(|arrival| (arrival.at, arrival.size, arrival.message["params"].clone()))
        .collect()
}
