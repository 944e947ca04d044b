//! Row 4, the price of the MCP machinery in a turn of a session that has no MCP server (LAZY-9:
//! such a session must behave as if the mechanism did not exist).
//!
//! Counted in instructions with `valgrind --tool=callgrind`, which is repeatable whatever else
//! the machine does. A child process of this binary (under callgrind) creates an agent with no
//! MCP config, warms up with two turns against the fake model (served by the parent process, so
//! its work is not counted), then runs two regions, each a separate function so that callgrind's
//! `--toggle-collect` counts exactly one of them per run:
//!
//! - `bench_turns`: `TURNS` complete turns through `Agent::send_message` (turn preparation,
//!   announcement planning, the model request over HTTP, the answer, the transcript);
//! - `bench_mcp_calls`: everything the turn does because MCP exists, done on its own with the
//!   same inputs: `start_turn_dials()` (the synchronous "nothing to dial" decision), `tools()`,
//!   `snapshot()`, and the announcement plan's work on that turn's history (the markers of the
//!   `isMeta` messages, the configured-name set).
//!
//! "Bypassed" = the turn minus that work. The ratio turn / bypassed is the overhead. The turn's
//! own profile is also searched for the manager's functions (their inclusive cost inside the
//! turn) as a cross-check; the larger of the two estimates is used.

use std::collections::HashSet;
use std::path::Path;
use std::process::Stdio;

use anyhow::{Context, Result, bail};
use wave_mcp_agent::announce;
use wave_mcp_testkit::FakeModel;

use crate::util::{self, Scratch};

pub const TURNS: usize = 20;

/// Functions of the manager and the agent that a no-MCP turn runs because MCP exists, as they
/// appear (demangled) in the callgrind profile.
const MCP_FUNCTIONS: &[&str] = &[
    "wave_mcp_manager::manager::McpManager::start_turn_dials",
    "wave_mcp_manager::manager::McpManager::tools",
    "wave_mcp_manager::manager::McpManager::snapshot",
    "wave_mcp_agent::announce::plan",
    "wave_mcp_agent::pool::Pool::new",
    "wave_mcp_agent::pool::Pool::declarations",
];

pub enum TurnResult {
    Counted {
        turn_ir: u64,
        replicated_ir: u64,
        in_turn_ir: u64,
        /// Reading the tool-permission settings files (per turn; used by MCP tools only, but
        /// not part of the MCP manager).
        permissions_ir: u64,
        found: Vec<String>,
    },
    Skipped(String),
}

impl TurnResult {
    /// Instructions of the MCP work per turn (the larger estimate).
    pub fn mcp_ir(&self) -> u64 {
        match self {
            TurnResult::Counted {
                replicated_ir,
                in_turn_ir,
                ..
            } => (*replicated_ir).max(*in_turn_ir),
            TurnResult::Skipped(_) => 0,
        }
    }
}

pub async fn run() -> Result<TurnResult> {
    if let Err(reason) = valgrind_available() {
        return Ok(TurnResult::Skipped(reason));
    }
    let scratch = Scratch::new()?;
    let model = FakeModel::saying("done").await;
    let turns_out = scratch.root.join("turns.callgrind");
    let calls_out = scratch.root.join("calls.callgrind");
    callgrind(&scratch, &model, "bench_turns", &turns_out).await?;
    callgrind(&scratch, &model, "bench_mcp_calls", &calls_out).await?;
    let turns = annotate(&turns_out)?;
    let calls = annotate(&calls_out)?;
    let turn_ir = inclusive(&turns, "wave_mcp_bench::turn::bench_turns")
        .context("bench_turns is not in the profile")?;
    let replicated_ir = inclusive(&calls, "wave_mcp_bench::turn::bench_mcp_calls")
        .context("bench_mcp_calls is not in the profile")?;
    let mut found = Vec::new();
    let mut in_turn_ir = 0;
    for function in MCP_FUNCTIONS {
        if let Some(ir) = inclusive(&turns, function) {
            found.push(function.rsplit("::").take(2).collect::<Vec<_>>().join("<"));
            in_turn_ir += ir;
        }
    }
    // The per-turn check of the settings files (permissions and tool search settings).
    let permissions_ir = inclusive(
        &turns,
        "wave_mcp_agent::permissions::PermissionSource::check",
    )
    .context("PermissionSource::check is not in the profile (renamed?)")?;
    let per_turn = |ir: u64| ir / TURNS as u64;
    Ok(TurnResult::Counted {
        turn_ir: per_turn(turn_ir),
        replicated_ir: per_turn(replicated_ir),
        in_turn_ir: per_turn(in_turn_ir),
        permissions_ir: per_turn(permissions_ir),
        found,
    })
}

fn valgrind_available() -> Result<(), String> {
    // `callgrind_annotate --version` exits non-zero: only whether it starts counts.
    let ok = |program: &str| {
        std::process::Command::new(program)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
    };
    if !ok("valgrind") {
        return Err("valgrind not found".into());
    }
    if !ok("callgrind_annotate") {
        return Err("callgrind_annotate not found".into());
    }
    Ok(())
}

async fn callgrind(scratch: &Scratch, model: &FakeModel, region: &str, out: &Path) -> Result<()> {
    let output = tokio::process::Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg("--collect-atstart=no")
        .arg(format!("--toggle-collect=*{region}*"))
        .arg(std::env::current_exe()?)
        .args(["--turn-callgrind", "--model-url", &model.base_url, "--dir"])
        .arg(&scratch.root)
        .output()
        .await
        .context("running valgrind")?;
    if !output.status.success() {
        bail!(
            "callgrind run of {region} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

/// `callgrind_annotate --inclusive=yes` as (inclusive Ir, function) pairs.
fn annotate(file: &Path) -> Result<Vec<(u64, String)>> {
    let output = std::process::Command::new("callgrind_annotate")
        .args(["--inclusive=yes", "--threshold=100"])
        .arg(file)
        .output()
        .context("running callgrind_annotate")?;
    let text = String::from_utf8_lossy(&output.stdout);
    let rows = text
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let (number, rest) = line.split_once(' ')?;
            let ir: u64 = number.replace(',', "").parse().ok()?;
            let function = rest.split_once(':').map_or(rest, |(_, f)| f);
            Some((ir, function.trim().to_string()))
        })
        .collect();
    Ok(rows)
}

/// The inclusive cost of `function` (its first, i.e. largest, entry).
fn inclusive(rows: &[(u64, String)], function: &str) -> Option<u64> {
    rows.iter()
        .filter(|(_, name)| {
            name.starts_with(function)
                && name[function.len()..]
                    .chars()
                    .next()
                    .is_none_or(|c| c == ' ' || c == '(')
        })
        .map(|(ir, _)| *ir)
        .max()
}

/// The child under callgrind: `--turn-callgrind --model-url URL --dir DIR`.
pub fn child_main(model_url: &str, dir: &Path) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let scratch = Scratch::new()?;
    let workdir = dir.join("no-mcp-project");
    std::fs::create_dir_all(&workdir)?;
    let options = util::agent_options(
        &scratch,
        &workdir,
        serde_json::Map::new(),
        model_url,
        "no-mcp",
    );
    let mut agent = util::agent(options)?;
    for _ in 0..2 {
        runtime.block_on(agent.send_message("warm up"))?;
    }
    let before = agent.history().len();
    bench_turns(&runtime, &mut agent, TURNS)?;
    bench_mcp_calls(&agent, before, TURNS);
    runtime.block_on(agent.destroy());
    Ok(())
}

#[inline(never)]
fn bench_turns(
    runtime: &tokio::runtime::Runtime,
    agent: &mut wave_mcp_agent::Agent,
    turns: usize,
) -> Result<()> {
    for _ in 0..turns {
        let report = runtime.block_on(agent.send_message("what time is it?"))?;
        if report.dialed != 0 || report.rounds != 1 {
            bail!("a no-MCP turn dialed {} servers", report.dialed);
        }
    }
    Ok(())
}

/// What `turns` turns did because MCP exists, on the same histories.
#[inline(never)]
fn bench_mcp_calls(agent: &wave_mcp_agent::Agent, before: usize, turns: usize) {
    let manager = agent.manager();
    let history = agent.history();
    for turn in 0..turns {
        let dials = manager.start_turn_dials();
        assert!(dials.is_none(), "nothing to dial");
        let live = manager.tools();
        let snapshot = manager.snapshot();
        // That turn's history when its request was planned: every earlier turn (user message and
        // answer, two messages each) and its own user message.
        let seen = &history[..(before + 2 * turn + 1).min(history.len())];
        let markers = announce::markers(seen);
        let configured: HashSet<&str> = snapshot.servers.iter().map(|s| s.name.as_str()).collect();
        std::hint::black_box((live, &markers, configured));
    }
}
