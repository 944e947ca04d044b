// The parser harnesses, shared word for word by the cargo-fuzz targets (`fuzz_targets/*.rs`)
// and by the corpus run in CI (`server/tests/suite/faults/config.rs`), which `include!` this
// file.
// Each takes arbitrary bytes and must return without panicking, whatever they hold.

use std::path::{Path, PathBuf};

use serde_json::Value;
use wave_mcp_manager::{cache, config};

/// Variables the harnesses' `${VAR}` lookups know; any other is unset.
fn lookup(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/fuzz".into()),
        "TOKEN" => Some("secret-token".into()),
        "EMPTY" => Some(String::new()),
        "WAVE_PLUGIN_ROOT" => Some("/plugins/p".into()),
        _ => None,
    }
}

/// A `.mcp.json` / `~/.wave/mcp.json` file: `parse_file`, then every server through
/// `parse_server` and, when it parses, `resolve` (which expands `${VAR}`).
pub fn parse_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(servers) = config::parse_file(text) else {
        return;
    };
    for (name, value) in servers {
        resolve_one(&name, &value);
    }
}

/// One server object (any JSON value): `parse_server`, then `resolve`.
pub fn parse_server(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    resolve_one("fuzz", &value);
}

fn resolve_one(name: &str, value: &Value) {
    let config = config::parse_server(value, &format!("mcpServers.{name}"));
    let entry = config::ServerEntry {
        name: name.to_string(),
        source: config::Source::Project,
        config_path: Some(PathBuf::from("/fuzz/.mcp.json")),
        plugin_root: Some(PathBuf::from("/plugins/p")),
        base_dir: PathBuf::from("/fuzz"),
        config,
        raw: value.clone(),
        replaced: None,
    };
    let _ = config::resolve(&entry, Path::new("/fuzz"), &lookup);
}

/// `${VAR}` / `${VAR:-default}` expansion of arbitrary text.
pub fn expand(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = config::expand(&text, &lookup);
}

/// The tool cache file: written to a scratch file, read back with `cache::read`, then looked up.
pub fn cache_read(data: &[u8]) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "wave-mcp-fuzz-cache-{}-{n}.json",
        std::process::id()
    ));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let file = cache::read(&path);
    let _ = std::fs::remove_file(&path);
    for entry in file.entries.values() {
        let _ = file.lookup(&entry.server, &entry.fingerprint);
        let _ = entry.key();
    }
}

/// The harness of a corpus directory's name (`fuzz/corpus/<target>/`).
pub fn harness(target: &str) -> Option<fn(&[u8])> {
    match target {
        "parse_file" => Some(parse_file),
        "parse_server" => Some(parse_server),
        "expand" => Some(expand),
        "cache_read" => Some(cache_read),
        _ => None,
    }
}
