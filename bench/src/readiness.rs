//! Row 2, first-turn readiness: five stdio servers, each answering `initialize` after 300 ms.
//!
//! - one server: `McpManager::connect` of a single such server (spawn + initialize + tools/list);
//! - ours: `Agent::send_message` of a fresh agent with the five servers; readiness is the time
//!   from the call to the arrival of the turn's first model request at the fake model (the dials
//!   run concurrently, overlapped with turn preparation, and the request declares their tools);
//! - sequential: `McpManager::connect` of the same five, one after the other.
//!
//! The three are interleaved, `repeats` times each, fresh processes every time; medians kept.

use std::time::Instant;

use anyhow::{Result, bail};
use serde_json::Value;
use wave_mcp_manager::{ManagerOptions, McpManager, Timeouts};

use wave_mcp_testkit::{FakeModel, declared};

use crate::util::{self, Scratch};

pub const SERVERS: usize = 5;
pub const INIT_MS: &str = "300";

pub struct ReadinessResult {
    pub one: f64,
    pub ours: f64,
    pub sequential: f64,
}

pub async fn run(repeats: usize) -> Result<ReadinessResult> {
    let scratch = Scratch::new()?;
    let model = FakeModel::saying("done").await;
    let args = ["--slow-initialize-ms", INIT_MS];
    let (mut one, mut ours, mut sequential) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..repeats {
        one.push(connect_all(&scratch, util::stdio_servers(1, &args)).await?);
        ours.push(first_turn(&scratch, &model, rep).await?);
        sequential.push(connect_all(&scratch, util::stdio_servers(SERVERS, &args)).await?);
    }
    Ok(ReadinessResult {
        one: util::median(&one),
        ours: util::median(&ours),
        sequential: util::median(&sequential),
    })
}

/// Connects every server of a fresh manager, one after the other; seconds taken.
async fn connect_all(scratch: &Scratch, servers: serde_json::Map<String, Value>) -> Result<f64> {
    let names: Vec<String> = servers.keys().cloned().collect();
    let manager = McpManager::new(ManagerOptions {
        workdir: scratch.workdir.clone(),
        home: Some(scratch.home.clone()),
        servers,
        timeouts: Timeouts::default(),
        ..ManagerOptions::default()
    });
    let start = Instant::now();
    for name in &names {
        manager.connect(name).await?;
    }
    let took = start.elapsed();
    manager.cleanup().await;
    Ok(util::secs(took))
}

/// A fresh agent's first turn: seconds from `send_message` to its first model request.
pub async fn first_turn(scratch: &Scratch, model: &FakeModel, rep: usize) -> Result<f64> {
    let servers = util::stdio_servers(SERVERS, &["--slow-initialize-ms", INIT_MS]);
    let options = util::agent_options(
        scratch,
        &scratch.workdir,
        servers,
        &model.base_url,
        &format!("readiness-{rep}"),
    );
    let mut agent = util::agent(options)?;
    let before = model.received();
    let start = Instant::now();
    let report = agent.send_message("list your tools").await?;
    let requests = model.arrivals_since(before);
    agent.destroy().await;
    let Some((arrived, request)) = requests.first() else {
        bail!("the turn made no model request");
    };
    let declared = declared(request);
    let servers_declared = (0..SERVERS)
        .filter(|i| {
            declared
                .iter()
                .any(|t| t.starts_with(&format!("mcp__s{i}__")))
        })
        .count();
    if report.dialed != SERVERS || servers_declared != SERVERS {
        bail!(
            "first turn dialed {} servers and declared tools of {servers_declared}",
            report.dialed
        );
    }
    Ok(util::secs(arrived.duration_since(start)))
}
