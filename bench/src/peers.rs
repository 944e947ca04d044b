//! Row 7, side by side with the MCP layer of the hosts users would pick instead: the official
//! TypeScript SDK client (`@modelcontextprotocol/sdk` `Client` + `StdioClientTransport`, which
//! Claude Code and VS Code run on) and the python SDK client (PyPI `mcp` `ClientSession` over
//! `stdio_client`), run by the scripts in `bench/clients/` with the machine's `node` and the
//! peers venv's python, against the same test server binary and arguments as ours:
//!
//! - 7a, tool-call round trip on one connected stdio server (`echo`): `Agent::execute_tool`
//!   (row 3a's funnel) against `Client.callTool` and `ClientSession.call_tool`, each timed in
//!   its own process with a high-resolution timer, warm-up excluded. The calls run in rounds
//!   (ours, TS, python, the order rotating per round); medians and p90 of all samples.
//! - 7b, 5 servers each answering `initialize` after 300 ms, listed: our first turn (row 2's
//!   measurement) against the TS SDK connecting them concurrently (`Promise.all` of connect +
//!   `tools/list`) and the python SDK doing the same with `asyncio.gather`; interleaved.
//! - 7c, RSS of one connected server's client side: each client process is started, loads its
//!   MCP layer (ours: an agent with the server configured, on demand, nothing spawned), and its
//!   `VmRSS` is read; then it connects the server (tools/list and one call) and `VmRSS` is read
//!   again. The difference is the cost of the connection; the raw figures, and the anonymous
//!   part of the difference (`RssAnon`), are shown too. The server process itself is not
//!   counted for any of them.
//!
//! The SDKs are found under `$WAVE_PEERS_DIR` (default `~/.cache/wave-mcp-peers`), installed by
//! `scripts/install-peers.sh`; when they are missing the row is skipped, saying so.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};
use wave_mcp_testkit::FakeModel;

use crate::util::{self, Scratch};
use crate::{readiness, roundtrip};

/// Rounds the tool calls of row 7a are split into (each client process makes one round's calls).
const ROUNDS: usize = 4;
/// How long a client sits in a state before its RSS is read (allocator, lazy start-up work).
const SETTLE: Duration = Duration::from_millis(500);

/// The two SDK clients' scripts and interpreters.
pub struct Peers {
    dir: PathBuf,
    python: PathBuf,
    clients: PathBuf,
}

#[derive(Clone, Copy)]
enum Sdk {
    TypeScript,
    Python,
}

impl Peers {
    /// Finds the installed SDKs, or says what is missing.
    pub fn locate() -> Result<Peers, String> {
        let dir = match std::env::var_os("WAVE_PEERS_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(std::env::var_os("HOME").ok_or("HOME is not set")?)
                .join(".cache/wave-mcp-peers"),
        };
        let missing = |what: &str| {
            format!(
                "{what} not found in {} (run scripts/install-peers.sh, or set WAVE_PEERS_DIR)",
                dir.display()
            )
        };
        let sdk = dir.join("sdk/node_modules/@modelcontextprotocol/sdk/package.json");
        if !sdk.is_file() {
            return Err(missing("@modelcontextprotocol/sdk"));
        }
        let python = dir.join("venv/bin/python");
        if !python.is_file() {
            return Err(missing("the python venv with `mcp`"));
        }
        let node = Command::new("node")
            .arg("--version")
            .stdout(Stdio::null())
            .status();
        if !node.is_ok_and(|s| s.success()) {
            return Err("`node` is not on PATH".into());
        }
        Ok(Peers {
            dir,
            python,
            clients: Path::new(env!("CARGO_MANIFEST_DIR")).join("clients"),
        })
    }

    /// `mode` of one SDK's client script against our test server with `server_args`.
    fn command(&self, sdk: Sdk, mode: &str, options: &[String], server_args: &[&str]) -> Command {
        let mut command = match sdk {
            Sdk::TypeScript => {
                let mut c = Command::new("node");
                c.arg(self.clients.join("ts-sdk-client.mjs"));
                c
            }
            Sdk::Python => {
                let mut c = Command::new(&self.python);
                c.arg(self.clients.join("python_sdk_client.py"));
                c
            }
        };
        command
            .arg(mode)
            .args(options)
            .arg("--")
            .arg(util::test_server())
            .args(server_args)
            .env("WAVE_PEERS_DIR", &self.dir)
            .stderr(Stdio::inherit());
        command
    }

    /// Runs a client script to its end; its last JSON line.
    async fn run_json(
        &self,
        sdk: Sdk,
        mode: &str,
        options: &[String],
        server_args: &[&str],
    ) -> Result<Value> {
        let output = tokio::process::Command::from(self.command(sdk, mode, options, server_args))
            .stdin(Stdio::null())
            .output()
            .await
            .with_context(|| format!("running the {} client", sdk.name()))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            bail!(
                "the {} client ({mode}) failed: {}",
                sdk.name(),
                output.status
            );
        }
        let line = stdout
            .lines()
            .rev()
            .find(|l| l.starts_with('{'))
            .with_context(|| format!("the {} client ({mode}) printed no result", sdk.name()))?;
        Ok(serde_json::from_str(line)?)
    }
}

impl Sdk {
    fn name(self) -> &'static str {
        match self {
            Sdk::TypeScript => "TypeScript SDK",
            Sdk::Python => "python SDK",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 7a: tool-call round trip

pub struct Latency {
    pub median: f64,
    pub p90: f64,
}

impl Latency {
    fn of(samples: &[f64]) -> Latency {
        Latency {
            median: util::median(samples),
            p90: util::percentile(samples, 0.9),
        }
    }
}

pub struct RoundTripResult {
    pub ours: Latency,
    pub typescript: Latency,
    pub python: Latency,
    pub calls: usize,
}

pub async fn round_trip(peers: &Peers, calls: usize) -> Result<RoundTripResult> {
    let scratch = Scratch::new()?;
    let model = FakeModel::saying("done").await;
    let server_args = ["--tools", "echo"];
    let mut servers = Map::new();
    servers.insert("stdio".into(), util::stdio_server(&server_args));
    let options = util::agent_options(
        &scratch,
        &scratch.workdir,
        servers,
        &model.base_url,
        "peer-calls",
    );
    let mut agent = util::agent(options)?;
    agent.connect_mcp_server("stdio").await?;
    let full_name = "mcp__stdio__echo";
    let per_round = calls / ROUNDS;
    let warmup = (per_round / 10).to_string();
    let script_options = [
        "--calls".into(),
        per_round.to_string(),
        "--warmup".into(),
        warmup,
    ];
    for i in 0..calls / 10 {
        roundtrip::funnel_call(&agent, full_name, i).await?;
    }
    let (mut ours, mut typescript, mut python) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        for k in 0..3 {
            match (round + k) % 3 {
                0 => {
                    for i in 0..per_round {
                        ours.push(roundtrip::funnel_call(&agent, full_name, i).await?);
                    }
                }
                1 => typescript
                    .extend(samples(peers, Sdk::TypeScript, &script_options, &server_args).await?),
                _ => {
                    python.extend(samples(peers, Sdk::Python, &script_options, &server_args).await?)
                }
            }
        }
    }
    agent.destroy().await;
    Ok(RoundTripResult {
        ours: Latency::of(&ours),
        typescript: Latency::of(&typescript),
        python: Latency::of(&python),
        calls: ours.len(),
    })
}

async fn samples(
    peers: &Peers,
    sdk: Sdk,
    options: &[String],
    server_args: &[&str],
) -> Result<Vec<f64>> {
    let result = peers
        .run_json(sdk, "roundtrip", options, server_args)
        .await?;
    let samples: Vec<f64> = result["samples"]
        .as_array()
        .context("no samples")?
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    if samples.is_empty() {
        bail!("the {} client timed no call", sdk.name());
    }
    Ok(samples)
}

// ---------------------------------------------------------------------------------------------
// 7b: 5 slow servers listed

pub struct ReadinessResult {
    pub ours: f64,
    pub typescript: f64,
    pub python: f64,
}

pub async fn readiness(peers: &Peers, repeats: usize) -> Result<ReadinessResult> {
    let scratch = Scratch::new()?;
    let model = FakeModel::saying("done").await;
    let server_args = ["--slow-initialize-ms", readiness::INIT_MS];
    let options = ["--servers".to_string(), readiness::SERVERS.to_string()];
    let (mut ours, mut typescript, mut python) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..repeats {
        ours.push(readiness::first_turn(&scratch, &model, rep).await?);
        for (sdk, times) in [
            (Sdk::TypeScript, &mut typescript),
            (Sdk::Python, &mut python),
        ] {
            let result = peers.run_json(sdk, "ready", &options, &server_args).await?;
            let tools = result["tools"].as_u64().unwrap_or(0) as usize;
            if tools == 0 || !tools.is_multiple_of(readiness::SERVERS) {
                bail!("the {} client listed {tools} tools", sdk.name());
            }
            times.push(result["seconds"].as_f64().context("no seconds")?);
        }
    }
    Ok(ReadinessResult {
        ours: util::median(&ours),
        typescript: util::median(&typescript),
        python: util::median(&python),
    })
}

// ---------------------------------------------------------------------------------------------
// 7c: RSS of one connection's client side

/// `VmRSS` of a client process with its MCP layer loaded, and with one server connected; and
/// the anonymous part of the difference (`RssAnon`: heap and stacks, without the file-backed
/// pages of code run for the first time).
pub struct Memory {
    pub loaded_kib: u64,
    pub connected_kib: u64,
    pub anon_delta_kib: i64,
}

impl Memory {
    pub fn delta_kib(&self) -> i64 {
        self.connected_kib as i64 - self.loaded_kib as i64
    }
}

pub struct RssResult {
    pub ours: Memory,
    pub typescript: Memory,
    pub python: Memory,
}

pub async fn rss(peers: &Peers, repeats: usize) -> Result<RssResult> {
    let server_args = ["--tools", "echo"];
    let (mut ours, mut typescript, mut python) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..repeats {
        let mut child = Command::new(std::env::current_exe()?);
        child.arg("--rss-child").stderr(Stdio::inherit());
        ours.push(memory("ours", child).await?);
        typescript.push(
            memory(
                "TypeScript SDK",
                peers.command(Sdk::TypeScript, "rss", &[], &server_args),
            )
            .await?,
        );
        python.push(
            memory(
                "python SDK",
                peers.command(Sdk::Python, "rss", &[], &server_args),
            )
            .await?,
        );
    }
    Ok(RssResult {
        ours: median_memory(ours),
        typescript: median_memory(typescript),
        python: median_memory(python),
    })
}

/// The run with the median connection cost.
fn median_memory(mut runs: Vec<Memory>) -> Memory {
    runs.sort_by_key(Memory::delta_kib);
    runs.swap_remove(runs.len() / 2)
}

/// Drives one client through `loaded` and `connected`, reading its RSS in each.
async fn memory(name: &'static str, command: Command) -> Result<Memory> {
    tokio::task::spawn_blocking(move || memory_blocking(name, command)).await?
}

fn memory_blocking(name: &str, mut command: Command) -> Result<Memory> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting the {name} client"))?;
    let result = drive(name, &mut child);
    drop(child.stdin.take());
    let status = child.wait()?;
    let memory = result?;
    if !status.success() {
        bail!("the {name} client exited with {status}");
    }
    Ok(memory)
}

fn drive(name: &str, child: &mut Child) -> Result<Memory> {
    let pid = child.id();
    let mut stdout = BufReader::new(child.stdout.take().context("stdout")?);
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut expect = |state: &str| -> Result<(u64, u64)> {
        let mut line = String::new();
        stdout.read_line(&mut line)?;
        let value: Value = serde_json::from_str(line.trim())
            .with_context(|| format!("the {name} client printed {line:?}"))?;
        if value["state"] != state {
            bail!("the {name} client printed {line:?}, not the state {state}");
        }
        std::thread::sleep(SETTLE);
        Ok((util::rss_kib(pid), util::status_kib(pid, "RssAnon")))
    };
    let (loaded_kib, loaded_anon) = expect("loaded")?;
    stdin.write_all(b"connect\n")?;
    stdin.flush()?;
    let (connected_kib, connected_anon) = expect("connected")?;
    child.stdin = Some(stdin);
    Ok(Memory {
        loaded_kib,
        connected_kib,
        anon_delta_kib: connected_anon as i64 - loaded_anon as i64,
    })
}

/// The `--rss-child` process: ours in the role of the clients' `rss` mode. An agent with one
/// stdio server configured (nothing spawned until asked), then connected, one call made.
pub fn child_main() -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let scratch = Scratch::new()?;
    let mut servers = Map::new();
    servers.insert("stdio".into(), util::stdio_server(&["--tools", "echo"]));
    // Never contacted: nothing here runs a turn.
    let options = util::agent_options(
        &scratch,
        &scratch.workdir,
        servers,
        "http://127.0.0.1:9/v1",
        "rss",
    );
    let mut agent = runtime.block_on(async { util::agent(options) })?;
    let mut stdin = std::io::stdin().lock();
    let mut line = String::new();
    println!(r#"{{"state":"loaded"}}"#);
    stdin.read_line(&mut line)?;
    runtime.block_on(async {
        agent.connect_mcp_server("stdio").await?;
        roundtrip::funnel_call(&agent, "mcp__stdio__echo", 0).await?;
        anyhow::Ok(())
    })?;
    println!(r#"{{"state":"connected"}}"#);
    while stdin.read_line(&mut line)? > 0 {
        // Stay connected until stdin closes.
    }
    runtime.block_on(agent.destroy());
    Ok(())
}
