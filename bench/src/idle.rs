//! Row 1, idle cost: 100 agents × 5 configured stdio servers in one process. Each policy runs in
//! a fresh child process of this binary (so one policy's heap never inflates another's RSS),
//! which creates the agents, lets them sit, and reports how many processes are below it and the
//! summed RSS of its process tree, read from `/proc`.
//!
//! - `on-demand`: ours. `Agent::create` only.
//! - `eager`: the policy the specification replaced, on the same code: `Agent::create` followed
//!   at once by `start_turn_dials()` (every server dialed at creation), awaited.
//! - `none`: the same 100 agents with no MCP config at all.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use wave_mcp_agent::{AgentOptions, ModelSettings, Status, Timeouts};

use crate::util::{self, Scratch};

pub const AGENTS: usize = 100;
pub const SERVERS: usize = 5;

pub struct Usage {
    pub processes: usize,
    pub rss_kib: u64,
}

pub struct IdleResult {
    pub on_demand: Usage,
    pub eager: Usage,
    pub none: Usage,
}

/// Runs each policy in its own child process; `repeats` runs of the cheap policies, the median
/// RSS is kept.
pub fn run(repeats: usize) -> Result<IdleResult> {
    let scratch = Scratch::new()?;
    scratch.write_project(&util::stdio_servers(SERVERS, &[]))?;
    let mut on_demand = Vec::new();
    let mut none = Vec::new();
    for _ in 0..repeats {
        on_demand.push(child(&scratch, "on-demand")?);
        none.push(child(&scratch, "none")?);
    }
    let eager = child(&scratch, "eager")?;
    Ok(IdleResult {
        on_demand: median_usage(on_demand),
        eager,
        none: median_usage(none),
    })
}

fn median_usage(mut runs: Vec<Usage>) -> Usage {
    runs.sort_by_key(|u| u.rss_kib);
    runs.swap_remove(runs.len() / 2)
}

fn child(scratch: &Scratch, case: &str) -> Result<Usage> {
    let output = Command::new(std::env::current_exe()?)
        .args(["--idle-case", case, "--dir"])
        .arg(&scratch.root)
        .output()
        .context("running an idle-cost child")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!(
            "idle case {case} failed: {}\n{stdout}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .context("no result line")?;
    let value: Value = serde_json::from_str(line)?;
    // A missing figure is an error, not 0: a 0 would read as "no MCP process" in row 1a.
    let field = |name: &str| {
        value[name]
            .as_u64()
            .with_context(|| format!("idle case {case}: no {name} in the result line {line}"))
    };
    Ok(Usage {
        processes: usize::try_from(field("processes")?)?,
        rss_kib: field("rssKib")?,
    })
}

/// The child: `case` is `on-demand`, `eager` or `none`; `dir` the parent's scratch root.
pub fn child_main(case: &str, dir: &Path) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let home = dir.join("home");
        // `none` reads a workdir without `.mcp.json`.
        let workdir = match case {
            "none" => dir.join("empty-project"),
            _ => dir.join("project"),
        };
        std::fs::create_dir_all(&workdir)?;
        let mut agents = Vec::with_capacity(AGENTS);
        for i in 0..AGENTS {
            let session = format!("idle-{case}-{i}");
            agents.push(util::agent(idle_options(&home, &workdir, &session))?);
        }
        if case == "eager" {
            let dials: Vec<_> = agents
                .iter()
                .filter_map(|a| a.manager().start_turn_dials())
                .collect();
            futures::future::join_all(dials.into_iter().map(|d| d.settled())).await;
            let connected = agents
                .iter()
                .flat_map(|a| a.get_mcp_servers().unwrap_or_default())
                .filter(|s| s.status == Status::Connected)
                .count();
            if connected != AGENTS * SERVERS {
                bail!("eager: only {connected} servers connected");
            }
        }
        // Let the dust settle (allocator, process start-up), then read /proc.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (processes, rss_kib) = util::tree_usage();
        println!("{}", json!({ "processes": processes, "rssKib": rss_kib }));
        for agent in &mut agents {
            agent.destroy().await;
        }
        Ok(())
    })
}

fn idle_options(home: &Path, workdir: &Path, session: &str) -> AgentOptions {
    AgentOptions {
        workdir: workdir.to_path_buf(),
        home: Some(home.to_path_buf()),
        model: ModelSettings {
            // Never contacted: nothing here runs a turn.
            base_url: Some("http://127.0.0.1:9/v1".into()),
            model: Some("bench-model".into()),
            ..ModelSettings::default()
        },
        session_id: Some(session.to_string()),
        mcp_timeouts: Timeouts {
            connect: Duration::from_secs(120),
            tool_call: Duration::from_secs(60),
            shutdown_grace: Duration::from_millis(500),
        },
        ..AgentOptions::default()
    }
}
