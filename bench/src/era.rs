//! Row 10, the 2026-07-28 lifecycle's cost (SPEC-1): the first call on a fresh manager of one
//! stdio test server that speaks only 2026-07-28 (`--era modern`: `server/discover`) against the
//! same server limited to 2025-11-25 (`--era legacy`: `initialize` + `notifications/initialized`).
//! Each sample is spawn + opening + `tools/list` + one `echo` call, a fresh process every time;
//! the two are interleaved, each going first in every other pair (so neither always runs right
//! after the other's teardown), and their medians kept. Each era has its own home, so from the second
//! sample on the era remembered for the entry (SPEC-1) is used, as in any later process.

use std::time::Instant;

use anyhow::{Result, bail};
use serde_json::{Map, json};
use wave_mcp_manager::{ManagerOptions, McpManager, Timeouts};

use crate::util::{self, Scratch};

pub struct EraResult {
    pub modern: f64,
    pub legacy: f64,
}

/// `server_args`: extra test-server arguments, e.g. `--tools echo,set_tools` for a server that
/// declares `tools.listChanged` (row 10b: a 2026-07-28 dial also opens `subscriptions/listen`).
pub async fn run(repeats: usize, server_args: &[&str]) -> Result<EraResult> {
    let (modern_home, legacy_home) = (Scratch::new()?, Scratch::new()?);
    let (mut modern, mut legacy) = (Vec::new(), Vec::new());
    for round in 0..repeats {
        if round % 2 == 0 {
            modern.push(first_call(&modern_home, "modern", server_args).await?);
            legacy.push(first_call(&legacy_home, "legacy", server_args).await?);
        } else {
            legacy.push(first_call(&legacy_home, "legacy", server_args).await?);
            modern.push(first_call(&modern_home, "modern", server_args).await?);
        }
    }
    Ok(EraResult {
        modern: util::median(&modern),
        legacy: util::median(&legacy),
    })
}

/// Seconds from a fresh manager's connect of the server to the end of its first call.
async fn first_call(scratch: &Scratch, era: &str, server_args: &[&str]) -> Result<f64> {
    let mut args = vec!["--era", era];
    args.extend_from_slice(server_args);
    let servers = util::stdio_servers(1, &args);
    let manager = McpManager::new(ManagerOptions {
        workdir: scratch.workdir.clone(),
        home: Some(scratch.home.clone()),
        servers,
        timeouts: Timeouts::default(),
        ..ManagerOptions::default()
    });
    let mut arguments = Map::new();
    arguments.insert("text".into(), json!("hi"));
    let start = Instant::now();
    manager.connect("s0").await?;
    let result = manager.call_tool("mcp__s0__echo", Some(arguments)).await?;
    let took = start.elapsed();
    let negotiated = manager
        .snapshot()
        .server("s0")
        .and_then(|s| s.protocol_version.clone());
    manager.cleanup().await;
    let expected = if era == "modern" {
        "2026-07-28"
    } else {
        "2025-11-25"
    };
    if negotiated.as_deref() != Some(expected) {
        bail!("the {era} server negotiated {negotiated:?}, not {expected}");
    }
    if result.is_error == Some(true) {
        bail!("the echo call on the {era} server returned an error result");
    }
    Ok(util::secs(took))
}
