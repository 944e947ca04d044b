//! Config fuzz: the cargo-fuzz corpus through the same harnesses, broken and unreadable config
//! files (each named, the other sources still load), seeded random mutations, and broken tool
//! cache files (treated as empty, never fatal).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value, json};
use wave_mcp_manager::{McpManager, Status};

use super::env_count;
use crate::suite::support::*;

/// The cargo-fuzz harnesses, the very same code (`fuzz/harness.rs`).
mod harness {
    include!(concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/harness.rs"));
}

fn fuzz_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz"))
}

/// Runs `f`, turning a panic into an error that names what it was fed.
fn no_panic(what: &str, f: impl FnOnce() + std::panic::UnwindSafe) -> Result<(), String> {
    std::panic::catch_unwind(f).map_err(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("{what}: panicked: {message}")
    })
}

// CFG-4, CACHE-6: every file of the committed seed corpus (`fuzz/corpus/<target>/`) goes
// through the cargo-fuzz harness of its target without a panic.
#[test]
fn config_fuzz_corpus_runs_through_the_fuzz_harnesses_without_panic() {
    let corpus = fuzz_dir().join("corpus");
    let mut fed = 0;
    let mut failures = Vec::new();
    let mut targets: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .expect("fuzz/corpus")
        .map(|e| e.unwrap().path())
        .collect();
    targets.sort();
    for dir in targets {
        let target = dir.file_name().unwrap().to_string_lossy().into_owned();
        let harness = harness::harness(&target)
            .unwrap_or_else(|| panic!("fuzz/corpus/{target}: no harness of that name"));
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let what = format!("{target}/{}", path.file_name().unwrap().to_string_lossy());
            if let Err(failure) = no_panic(&what, || harness(&data)) {
                failures.push(failure);
            }
            fed += 1;
        }
    }
    assert!(fed >= 60, "only {fed} corpus files");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A valid config with several kinds of server, the base of the mutations below.
fn valid_config_text() -> String {
    serde_json::to_string_pretty(&json!({ "mcpServers": {
        "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
                   "disabledTools": ["write_file", "move_file"], "alwaysLoad": true },
        "search": { "type": "http", "url": "https://example.com/mcp?k=${TOKEN}", "enabledTools": ["search"],
                    "headers": { "Authorization": "Bearer ${TOKEN:-none}" } },
        "signed": { "type": "http", "url": "https://example.com/mcp",
                    "oauth": { "clientId": "${CID:-wave}", "clientSecret": "s", "scopes": ["read", "write"],
                               "callbackPort": 8765 } },
        "legacy": { "type": "sse", "url": "http://127.0.0.1:3001/sse" },
        "env": { "command": "./bin/srv", "env": { "A": "${UNSET:-d}" }, "connectTimeoutMs": 5000 },
    }}))
    .unwrap()
}

/// How a broken source must show up.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shows {
    /// The file is skipped as a whole: one config problem naming it (CFG-4).
    FileProblem,
    /// The file loads; the server `bad` is `error`, naming the file and the field.
    ServerError(&'static str),
    /// The file loads and lists `count` servers.
    Loads(usize),
}

/// Broken file contents: (label, bytes, how it must show up).
fn broken_files() -> Vec<(String, Vec<u8>, Shows)> {
    let valid = valid_config_text();
    let mut cases: Vec<(String, Vec<u8>, Shows)> = vec![
        ("empty".into(), b"".to_vec(), Shows::FileProblem),
        ("whitespace".into(), b" \n\t ".to_vec(), Shows::FileProblem),
        ("not json".into(), b"mcpServers = {}".to_vec(), Shows::FileProblem),
        ("top-level array".into(), b"[]".to_vec(), Shows::FileProblem),
        ("top-level null".into(), b"null".to_vec(), Shows::FileProblem),
        ("top-level string".into(), b"\"x\"".to_vec(), Shows::FileProblem),
        ("mcpServers array".into(), br#"{"mcpServers": []}"#.to_vec(), Shows::FileProblem),
        ("mcpServers number".into(), br#"{"mcpServers": 5}"#.to_vec(), Shows::FileProblem),
        ("missing value".into(), br#"{"mcpServers": {"bad": }}"#.to_vec(), Shows::FileProblem),
        ("trailing comma".into(), br#"{"mcpServers": {"bad": {"command": "x"},}}"#.to_vec(), Shows::FileProblem),
        ("comments".into(), b"// hi\n{\"mcpServers\": {}}".to_vec(), Shows::FileProblem),
        ("byte order mark".into(), [b"\xEF\xBB\xBF".as_slice(), valid.as_bytes()].concat(), Shows::FileProblem),
        ("invalid utf-8".into(), b"{\"mcpServers\": {\"bad\": {\"command\": \"\xff\"}}}".to_vec(), Shows::FileProblem),
        ("raw nul".into(), b"{\"mcpServers\": {\"bad\": {\"command\": \"a\x00b\"}}}".to_vec(), Shows::FileProblem),
        ("deep nesting".into(), format!("{{\"mcpServers\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(), Shows::FileProblem),
        ("deep unclosed".into(), "{".repeat(1_000_000).into_bytes(), Shows::FileProblem),
        ("huge junk (20 MB)".into(), vec![b'x'; 20 << 20], Shows::FileProblem),
        ("args a string".into(), br#"{"mcpServers": {"bad": {"command": "x", "args": "x"}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.args")),
        ("args with a number".into(), br#"{"mcpServers": {"bad": {"command": "x", "args": ["a", 1]}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.args[1]")),
        ("command a number".into(), br#"{"mcpServers": {"bad": {"command": 5}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.command")),
        ("env value a number".into(), br#"{"mcpServers": {"bad": {"command": "x", "env": {"K": 1}}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.env.K")),
        ("headers an array".into(), br#"{"mcpServers": {"bad": {"url": "http://x", "headers": []}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.headers")),
        ("type a number".into(), br#"{"mcpServers": {"bad": {"type": 7, "command": "x"}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.type")),
        ("negative timeout".into(), br#"{"mcpServers": {"bad": {"command": "x", "connectTimeoutMs": -1}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.connectTimeoutMs")),
        ("timeout beyond u64".into(), br#"{"mcpServers": {"bad": {"command": "x", "toolTimeoutMs": 1e400}}}"#.to_vec(), Shows::FileProblem),
        // LONG-4: the seconds keys.
        ("negative startupTimeoutSec".into(), br#"{"mcpServers": {"bad": {"command": "x", "startupTimeoutSec": -1}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.startupTimeoutSec")),
        ("zero toolTimeoutSec".into(), br#"{"mcpServers": {"bad": {"command": "x", "toolTimeoutSec": 0}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.toolTimeoutSec")),
        ("toolTimeoutSec a string".into(), br#"{"mcpServers": {"bad": {"command": "x", "toolTimeoutSec": "600"}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.toolTimeoutSec")),
        ("toolTimeoutSec beyond Duration".into(), br#"{"mcpServers": {"bad": {"command": "x", "toolTimeoutSec": 1e300}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.toolTimeoutSec")),
        ("oauth a string".into(), br#"{"mcpServers": {"bad": {"url": "http://x", "oauth": "yes"}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.oauth")),
        ("oauth callbackPort 0".into(), br#"{"mcpServers": {"bad": {"url": "http://x", "oauth": {"callbackPort": 0}}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.oauth.callbackPort")),
        ("oauth callbackPort beyond u16".into(), br#"{"mcpServers": {"bad": {"url": "http://x", "oauth": {"callbackPort": 70000}}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.oauth.callbackPort")),
        ("oauth callbackPort a string".into(), br#"{"mcpServers": {"bad": {"url": "http://x", "oauth": {"callbackPort": "80"}}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.oauth.callbackPort")),
        ("oauth scopes a string".into(), br#"{"mcpServers": {"bad": {"url": "http://x", "oauth": {"scopes": "read"}}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.oauth.scopes")),
        ("oauth scopes with a number".into(), br#"{"mcpServers": {"bad": {"url": "http://x", "oauth": {"scopes": ["a", 2]}}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.oauth.scopes[1]")),
        ("oauth clientId a number".into(), br#"{"mcpServers": {"bad": {"url": "http://x", "oauth": {"clientId": 5}}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.oauth.clientId")),
        // BUD-1, BUD-5: the tool switch keys.
        ("disabledTools a string".into(), br#"{"mcpServers": {"bad": {"command": "x", "disabledTools": "a"}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.disabledTools")),
        ("enabledTools with a number".into(), br#"{"mcpServers": {"bad": {"command": "x", "enabledTools": ["a", 1]}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.enabledTools[1]")),
        ("both tool lists".into(), br#"{"mcpServers": {"bad": {"command": "x", "enabledTools": ["a"], "disabledTools": []}}}"#.to_vec(), Shows::ServerError("mcpServers.bad")),
        ("alwaysLoad a string".into(), br#"{"mcpServers": {"bad": {"command": "x", "alwaysLoad": "yes"}}}"#.to_vec(), Shows::ServerError("mcpServers.bad.alwaysLoad")),
        ("huge disabledTools".into(), serde_json::to_vec(&json!({"mcpServers": {"big": {"command": "x", "disabledTools": vec!["t".repeat(50); 100_000]}}})).unwrap(), Shows::Loads(1)),
        ("server a string".into(), br#"{"mcpServers": {"bad": "npx server"}}"#.to_vec(), Shows::ServerError("mcpServers.bad")),
        ("server empty".into(), br#"{"mcpServers": {"bad": {}}}"#.to_vec(), Shows::ServerError("mcpServers.bad")),
        ("huge args (10 MB)".into(), serde_json::to_vec(&json!({"mcpServers": {"big": {"command": "x", "args": vec!["y".repeat(100); 100_000]}}})).unwrap(), Shows::Loads(1)),
        ("many servers".into(), serde_json::to_vec(&json!({"mcpServers": (0..5000).map(|i| (format!("s{i}"), json!({"command": "x"}))).collect::<Map<String, Value>>()})).unwrap(), Shows::Loads(5000)),
    ];
    // Truncated: every 7th prefix of a valid file (none of them is valid JSON).
    let end = valid.trim_end().len() - 1;
    for cut in (0..end).step_by(7) {
        cases.push((
            format!("truncated at {cut}"),
            valid.as_bytes()[..cut].to_vec(),
            Shows::FileProblem,
        ));
    }
    cases
}

/// The other sources' servers, which must load whatever happens to the broken one.
fn good_sources(sandbox: &Sandbox, broken: &str) {
    let entry = json!({ "command": "good-server" });
    if broken != "user" {
        sandbox.write_user(json!({ "good-user": entry }));
    }
    if broken != "project" {
        sandbox.write_project(json!({ "good-project": entry }));
    }
    if broken != "plugin" {
        sandbox.write_plugin("good", json!({ "good-plugin": entry }));
    }
}

fn broken_path(sandbox: &Sandbox, source: &str) -> PathBuf {
    match source {
        "user" => sandbox.home.join(".wave").join("mcp.json"),
        "project" => sandbox.workdir.join(".mcp.json"),
        _ => {
            let root = sandbox.home.join(".wave").join("plugins").join("broken");
            std::fs::create_dir_all(&root).unwrap();
            root.join(".mcp.json")
        }
    }
}

/// Checks one broken file in one source; `Err` says what went wrong.
fn check_broken(source: &str, label: &str, bytes: &[u8], shows: Shows) -> Result<(), String> {
    let sandbox = Sandbox::new();
    good_sources(&sandbox, source);
    let path = broken_path(&sandbox, source);
    std::fs::write(&path, bytes).unwrap();
    let what = format!("{source} file, {label}");
    let options = sandbox.options(json!({ "good-constructor": { "command": "good-server" } }));
    let manager = std::panic::catch_unwind(|| McpManager::new(options))
        .map_err(|_| format!("{what}: McpManager::new panicked"))?;
    let snapshot = manager.snapshot();
    // CFG-4: the other sources still load.
    for good in [
        "good-user",
        "good-project",
        "good-plugin",
        "good-constructor",
    ] {
        if good == format!("good-{source}") {
            continue;
        }
        let row = snapshot.servers.iter().find(|s| s.name == good);
        if row.is_none_or(|r| r.status != Status::Disconnected) {
            return Err(format!("{what}: {good} is {row:?}"));
        }
    }
    let problems = manager.config_problems();
    let shown = path.display().to_string();
    match shows {
        Shows::FileProblem => {
            let [problem] = problems else {
                return Err(format!("{what}: problems {problems:?}"));
            };
            if problem.path != path || !problem.to_string().contains(&shown) {
                return Err(format!("{what}: problem does not name the file: {problem}"));
            }
            if problem.message.len() > 1000 {
                return Err(format!(
                    "{what}: an unreadable message: {} bytes",
                    problem.message.len()
                ));
            }
        }
        Shows::ServerError(field) => {
            if !problems.is_empty() {
                return Err(format!("{what}: problems {problems:?}"));
            }
            let bad = snapshot.servers.iter().find(|s| s.name == "bad");
            let Some(bad) = bad else {
                return Err(format!("{what}: server bad not listed"));
            };
            let error = bad.error.clone().unwrap_or_default();
            let names_field =
                error.contains(&format!("{field}:")) || error.contains(&format!("{field} "));
            if bad.status != Status::Error || !error.contains(&shown) || !names_field {
                return Err(format!("{what}: bad is {:?}: {error}", bad.status));
            }
        }
        Shows::Loads(count) => {
            let from_file = snapshot
                .servers
                .iter()
                .filter(|s| s.config_path.as_deref() == Some(path.as_path()))
                .count();
            if !problems.is_empty() || from_file != count {
                return Err(format!(
                    "{what}: {from_file} servers, problems {problems:?}"
                ));
            }
        }
    }
    Ok(())
}

// CFG-4, CFG-3, AUTH-2: malformed, truncated, wrong-typed and huge `.mcp.json`, `~/.wave/mcp.json`
// and plugin `.mcp.json` files (wrong-typed `oauth` keys included): no panic; a file that cannot
// be read is one problem naming the file (and skipped), a wrong-typed field makes that one
// server `error` naming the file and the field; every other source still loads.
#[test]
fn config_fuzz_broken_config_files_are_named_and_other_sources_load() {
    let cases = broken_files();
    let mut failures = Vec::new();
    for source in ["project", "user", "plugin"] {
        for (label, bytes, shows) in &cases {
            if let Err(failure) = check_broken(source, label, bytes, *shows) {
                failures.push(failure);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// CFG-4: a config path that is a directory, or a file that cannot be read, is a problem naming
// it; the rest loads.
#[test]
fn config_fuzz_unreadable_config_paths_are_named() {
    let sandbox = Sandbox::new();
    good_sources(&sandbox, "project");
    std::fs::create_dir_all(sandbox.workdir.join(".mcp.json")).unwrap();
    let manager = McpManager::new(sandbox.options(Value::Null));
    let [problem] = manager.config_problems() else {
        panic!("{:?}", manager.config_problems());
    };
    assert_eq!(problem.path, sandbox.workdir.join(".mcp.json"));
    assert!(problem.to_string().contains(".mcp.json"), "{problem}");
    assert!(
        manager
            .snapshot()
            .servers
            .iter()
            .any(|s| s.name == "good-user")
    );
}

/// One random mutation of `bytes`: flip, delete, insert or duplicate a span.
fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) {
    const TOKENS: &[&[u8]] = &[
        b"{",
        b"}",
        b"[",
        b"]",
        b",",
        b":",
        b"\"",
        b"null",
        b"1e999",
        b"-1",
        b"\\u0000",
        b"${",
        b"${X}",
        b"\xff",
        b"\"mcpServers\"",
        b"\"args\"",
        b"\"env\"",
        b"\"type\"",
        b"0",
    ];
    let len = bytes.len().max(1);
    match rng.below(5) {
        0 => {
            let at = rng.below(len).min(bytes.len().saturating_sub(1));
            if let Some(b) = bytes.get_mut(at) {
                *b ^= 1 << rng.below(8);
            }
        }
        1 => {
            let at = rng.below(len).min(bytes.len());
            let n = rng.below(16).min(bytes.len() - at);
            bytes.drain(at..at + n);
        }
        2 => {
            let at = rng.below(len).min(bytes.len());
            let token = rng.pick(TOKENS);
            bytes.splice(at..at, token.iter().copied());
        }
        3 => {
            let at = rng.below(len).min(bytes.len());
            let n = rng.below(64).min(bytes.len() - at);
            let span = bytes[at..at + n].to_vec();
            bytes.splice(at..at, span);
        }
        _ => {
            let at = rng.below(len).min(bytes.len());
            bytes.truncate(at);
        }
    }
}

// CFG-4: 2,000 seeded random mutations of a valid config, as the project file, through the
// manager (load, merge, snapshot), the parse functions and `resolve`: never a panic; every
// problem and every server error names the file; the file is reported as a problem exactly when
// `config::parse_file` rejects it, and then none of its servers is listed while the user source
// still is; when it parses, every server it names is listed from the project source.
#[test]
fn config_fuzz_random_mutations_never_panic_and_always_name_the_file() {
    let seed = faults_seed();
    let mut rng = Rng::new(seed);
    let valid = valid_config_text().into_bytes();
    let sandbox = Sandbox::new();
    sandbox.write_user(json!({ "good-user": { "command": "good-server" } }));
    let path = sandbox.workdir.join(".mcp.json");
    let shown = path.display().to_string();
    for round in 0..env_count("WAVE_FAULTS_MUTATIONS", 2000) {
        let mut bytes = valid.clone();
        for _ in 0..1 + rng.below(4) {
            mutate(&mut rng, &mut bytes);
        }
        std::fs::write(&path, &bytes).unwrap();
        let replay = || {
            format!(
                "round {round} (seed {seed}): {}",
                String::from_utf8_lossy(&bytes)
            )
        };
        let data = bytes.clone();
        if let Err(failure) = no_panic("harness", || harness::parse_file(&data)) {
            panic!("{failure} on {}", replay());
        }
        let options = sandbox.options(Value::Null);
        let manager = match std::panic::catch_unwind(|| McpManager::new(options)) {
            Ok(manager) => manager,
            Err(_) => panic!("McpManager::new panicked on {}", replay()),
        };
        for problem in manager.config_problems() {
            assert!(
                problem.to_string().contains(&shown),
                "{problem} on {}",
                replay()
            );
        }
        let snapshot = manager.snapshot();
        let file_problem = manager.config_problems().iter().any(|p| p.path == path);
        let from_project: Vec<&str> = snapshot
            .servers
            .iter()
            .filter(|s| s.source == wave_mcp_manager::Source::Project)
            .map(|s| s.name.as_str())
            .collect();
        let parsed = std::str::from_utf8(&bytes)
            .map_err(|e| e.to_string())
            .and_then(wave_mcp_manager::config::parse_file);
        match parsed {
            Ok(servers) => {
                assert!(
                    !file_problem,
                    "a file parse_file accepts is a problem: {:?} on {}",
                    manager.config_problems(),
                    replay()
                );
                for name in servers.keys() {
                    assert!(
                        from_project.contains(&name.as_str()),
                        "{name:?} is not listed from the project file on {}",
                        replay()
                    );
                }
            }
            Err(reason) => {
                assert!(
                    file_problem,
                    "parse_file rejects the file ({reason}) but no problem names it on {}",
                    replay()
                );
                assert_eq!(from_project, Vec::<&str>::new(), "on {}", replay());
            }
        }
        assert!(
            snapshot.servers.iter().any(|s| s.name == "good-user"),
            "the user source did not load on {}",
            replay()
        );
        for server in &snapshot.servers {
            if let Some(error) = &server.error {
                assert!(error.contains(&shown), "{error} on {}", replay());
            }
        }
    }
}

// CACHE-6, CACHE-2: a corrupt, truncated, wrong-typed, wrong-version or huge tool cache file is
// treated as empty (or its broken entries are skipped), silently: no panic, no config problem,
// every server listed; a valid entry next to broken ones still shows its tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_fuzz_broken_cache_files_are_empty_and_never_fatal() {
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&["--tools", "echo,add"]) }));
    let manager = sandbox.manager();
    manager.connect("a").await.unwrap();
    manager.cleanup().await;
    let cache_path = sandbox.home.join(".wave").join("mcp-tools-cache.json");
    // The cache is written in the background: wait for the entry.
    assert!(
        eventually(Duration::from_secs(10), || std::fs::read_to_string(
            &cache_path
        )
        .is_ok_and(|t| t.contains("\"echo\"")))
        .await
    );
    let valid: Value =
        serde_json::from_str(&std::fs::read_to_string(&cache_path).unwrap()).unwrap();
    let good = sandbox.manager();
    assert!(
        server(&good, "a").tools_from_cache,
        "the valid cache is read"
    );

    let mut with_broken_entries = valid.clone();
    let entries = with_broken_entries["entries"].as_object_mut().unwrap();
    entries.insert("x@y".into(), json!({ "server": 5 }));
    entries.insert("z@w".into(), Value::Null);
    entries.insert(
        "k@mismatch".into(),
        entries.values().next().unwrap().clone(),
    );
    let text = valid.to_string();
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        ("empty", b"".to_vec(), false),
        ("garbage", b"\x00\xff garbage".to_vec(), false),
        (
            "truncated",
            text.as_bytes()[..text.len() / 2].to_vec(),
            false,
        ),
        ("top-level array", b"[1, 2]".to_vec(), false),
        (
            "wrong version",
            text.replace("\"version\":1", "\"version\":99").into_bytes(),
            false,
        ),
        (
            "entries an array",
            br#"{"version": 1, "entries": []}"#.to_vec(),
            false,
        ),
        (
            "deep nesting",
            format!(
                "{{\"version\": 1, \"entries\": {}{}}}",
                "[".repeat(100_000),
                "]".repeat(100_000)
            )
            .into_bytes(),
            false,
        ),
        ("huge junk (20 MB)", vec![b'{'; 20 << 20], false),
        (
            "broken entries beside a valid one",
            with_broken_entries.to_string().into_bytes(),
            true,
        ),
    ];
    for (label, bytes, keeps_valid) in cases {
        std::fs::write(&cache_path, &bytes).unwrap();
        let options = sandbox.options(Value::Null);
        let manager = std::panic::catch_unwind(|| McpManager::new(options))
            .unwrap_or_else(|_| panic!("{label}: McpManager::new panicked"));
        assert!(
            manager.config_problems().is_empty(),
            "{label}: {:?}",
            manager.config_problems()
        );
        let a = server(&manager, "a");
        assert_eq!(a.status, Status::Disconnected, "{label}");
        assert_eq!(a.tools_from_cache, keeps_valid, "{label}: {a:?}");
        if keeps_valid {
            assert_eq!(a.tools.len(), 2, "{label}");
        }
    }
    // A cache path that is a directory is empty too, and a connect still works (its write fails
    // quietly).
    std::fs::remove_file(&cache_path).unwrap();
    std::fs::create_dir_all(&cache_path).unwrap();
    let manager = sandbox.manager();
    assert!(!server(&manager, "a").tools_from_cache);
    manager.connect("a").await.unwrap();
    assert_eq!(status(&manager, "a"), Status::Connected);
    manager.cleanup().await;
}
