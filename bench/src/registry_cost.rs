//! Row 2c, the spawn registry's cost on the dial path (REAP-1): one record and its release (two
//! atomic rewrites of the owner file) against one stdio dial of our test server
//! (`McpManager::connect`: spawn + initialize + tools/list), measured side by side.

use std::time::Instant;

use anyhow::{Context, Result};
use wave_mcp_manager::registry;
use wave_mcp_manager::{ManagerOptions, McpManager};

use crate::util::{self, Scratch};

pub struct RegistryCost {
    /// Median seconds of one record + release.
    pub write: f64,
    /// Median seconds of one stdio dial (which includes one record).
    pub dial: f64,
    pub writes: usize,
}

pub async fn run(writes: usize, dials: usize) -> Result<RegistryCost> {
    let scratch = Scratch::new()?;
    let dir = registry::run_dir(&scratch.home);
    // Our own pid stands in for a spawned group: only its start time is read.
    let pid = std::process::id();
    let mut write = Vec::with_capacity(writes);
    for _ in 0..writes {
        let start = Instant::now();
        let record = registry::record(&dir, pid).context("recording in the run directory")?;
        record.release();
        write.push(util::secs(start.elapsed()));
    }
    let mut dial = Vec::with_capacity(dials);
    for _ in 0..dials {
        let manager = McpManager::new(ManagerOptions {
            workdir: scratch.workdir.clone(),
            home: Some(scratch.home.clone()),
            servers: util::stdio_servers(1, &[]),
            ..ManagerOptions::default()
        });
        let start = Instant::now();
        manager.connect("s0").await?;
        dial.push(util::secs(start.elapsed()));
        manager.cleanup().await;
    }
    Ok(RegistryCost {
        write: util::median(&write),
        dial: util::median(&dial),
        writes,
    })
}
