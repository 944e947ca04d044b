//! The fault and bad-input suite (issue 8): random lifecycles over stubborn process trees,
//! broken config and cache files, malformed JSON-RPC to the sidecar, and secrets that must not
//! leak. Everything random is seeded (a tiny xorshift) and prints its seed on failure;
//! `WAVE_FAULTS_SEED=<n>` replays a run and `WAVE_FAULTS_SEQUENCES=<n>` changes how many
//! lifecycle sequences run.
//!
//! One file per theme: [`lifecycle`], [`config`] (config and cache files), [`load`] (100
//! sessions × 3 servers with streamed turns, CHAT-2), [`protocol`] (the
//! sidecar's JSON-RPC) and [`secrets`]; the helpers they share are here. Test paths keep the
//! `suite::faults::` prefix that `scripts/test-all.sh` selects the fault group by.

use std::path::Path;
use std::process::Stdio;

use serde_json::json;

use crate::suite::lsp_client::*;
use crate::suite::support::*;

mod config;
mod lifecycle;
mod load;
mod protocol;
mod secrets;

// ---------------------------------------------------------------------------------------------
// Randomness (`Rng`, `faults_seed` from the testkit)

/// `$name` as a positive count, `default` when unset. Zero or anything but a number fails the
/// test: a fault run that runs nothing must not pass.
fn env_count(name: &str, default: usize) -> usize {
    let Ok(text) = std::env::var(name) else {
        return default;
    };
    match text.trim().parse::<usize>() {
        Ok(0) => panic!("{name}=0 would run nothing: a fault run needs at least one round"),
        Ok(n) => n,
        Err(e) => panic!("{name}={text:?} is not a count: {e}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The sidecar with its log (protocol fuzz, secrets)

/// Spawns `wave-mcp lsp` with its stderr in `log` at `level`.
fn spawn_logged(sandbox: &Sandbox, log: &Path, level: &str, envs: &[(&str, &str)]) -> Sidecar {
    let file = std::fs::File::create(log).unwrap();
    let envs: Vec<(String, String)> = envs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Sidecar::spawn(&sandbox.root, move |command| {
        command.env("WAVE_LOG", level).stderr(Stdio::from(file));
        for (k, v) in envs {
            command.env(k, v);
        }
    })
}

async fn initialize(sidecar: &Sidecar, sandbox: &Sandbox) {
    sidecar
        .initialize(json!({ "initializationOptions": {
            "home": sandbox.home, "workdir": sandbox.workdir,
        }}))
        .await
        .expect("initialize");
}

/// Fails naming the panic lines when the sidecar's log `log` shows a panic.
fn assert_no_panic(log: &Path) {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    assert!(
        !text.contains("panicked"),
        "the sidecar panicked:\n{}",
        text.lines()
            .filter(|l| l.contains("panic"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
