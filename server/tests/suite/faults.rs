//! The fault and bad-input suite (issue 8): random lifecycles over stubborn process trees,
//! broken config and cache files, malformed JSON-RPC to the sidecar, and secrets that must not
//! leak. Everything random is seeded (a tiny xorshift) and prints its seed on failure;
//! `WAVE_FAULTS_SEED=<n>` replays a run and `WAVE_FAULTS_SEQUENCES=<n>` changes how many
//! lifecycle sequences run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use wave_mcp_manager::{Error, ManagerOptions, McpManager, ReconnectPolicy, Status, Timeouts};

use super::lsp_client::*;
use super::support::*;

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
// Lifecycle fuzz

/// Servers per sequence; each runs `sh -c 'exec test-server ...'` so its pid file is named after
/// its own pid (one file per spawned tree), ignores SIGTERM and spawns descendants.
const FUZZ_SERVERS: usize = 3;

/// An action of the user, a turn or the host, as the model of expected statuses knows it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    /// `connect(s)`.
    Connect(usize),
    /// `disconnect(s)`.
    Disconnect(usize),
    /// `start_turn_dials()`, settled.
    TurnDial,
    /// `cleanup()`: the agent is destroyed.
    Destroy,
}

#[derive(Debug, Clone, Copy)]
enum Action {
    /// One operation, awaited; its result is checked exactly.
    Do(Op),
    /// `start_turn_dials()` left running while the next action happens, and only then awaited.
    TurnDialRacingNext,
    /// Two operations at once (`join!`); afterwards the statuses must be those of one of the
    /// two orders.
    Race(Op, Op),
    /// SIGKILL to a connected server's main process (a crash).
    Kill(usize),
    /// SIGKILL to the deepest descendant of a connected server (the server itself lives on).
    KillDescendant(usize),
}

fn random_op(rng: &mut Rng) -> Op {
    let s = rng.below(FUZZ_SERVERS);
    match rng.below(100) {
        0..=34 => Op::Connect(s),
        35..=64 => Op::Disconnect(s),
        65..=92 => Op::TurnDial,
        _ => Op::Destroy,
    }
}

fn random_sequence(rng: &mut Rng) -> Vec<Action> {
    let len = 1 + rng.below(8);
    (0..len)
        .map(|_| match rng.below(100) {
            0..=44 => Action::Do(random_op(rng)),
            45..=56 => Action::TurnDialRacingNext,
            57..=71 => Action::Race(random_op(rng), random_op(rng)),
            72..=88 => Action::Kill(rng.below(FUZZ_SERVERS)),
            _ => Action::KillDescendant(rng.below(FUZZ_SERVERS)),
        })
        .collect()
}

/// What a server's status must be once the actions so far have settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Expected {
    status: Status,
    /// Dialed this session (LAZY-10).
    dialed: bool,
    /// Disconnected by the user (LAZY-6).
    user_disconnected: bool,
}

/// The expected state of every server, and whether the manager was destroyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Model {
    servers: [Expected; FUZZ_SERVERS],
    destroyed: bool,
}

impl Model {
    fn new() -> Model {
        let fresh = Expected {
            status: Status::Disconnected,
            dialed: false,
            user_disconnected: false,
        };
        Model {
            servers: [fresh; FUZZ_SERVERS],
            destroyed: false,
        }
    }

    /// Servers a turn dials: never dialed, never disconnected by the user (LAZY-10, LAZY-6).
    fn due(&self) -> Vec<usize> {
        (0..FUZZ_SERVERS)
            .filter(|&s| {
                let e = &self.servers[s];
                !self.destroyed
                    && !e.dialed
                    && !e.user_disconnected
                    && e.status == Status::Disconnected
            })
            .collect()
    }

    /// The state after `op` (every server here connects fine when asked).
    fn after(mut self, op: Op) -> Model {
        if self.destroyed {
            return self;
        }
        match op {
            Op::Connect(s) => {
                self.servers[s] = Expected {
                    status: Status::Connected,
                    dialed: true,
                    user_disconnected: false,
                };
            }
            Op::Disconnect(s) => {
                self.servers[s] = Expected {
                    status: Status::Disconnected,
                    dialed: true,
                    user_disconnected: true,
                };
            }
            Op::TurnDial => {
                for s in self.due() {
                    self.servers[s].status = Status::Connected;
                    self.servers[s].dialed = true;
                }
            }
            Op::Destroy => {
                self.destroyed = true;
                for e in &mut self.servers {
                    e.status = Status::Disconnected;
                }
            }
        }
        self
    }

    fn statuses(&self) -> Vec<Status> {
        self.servers.iter().map(|e| e.status).collect()
    }
}

struct Lane {
    /// A directory per sequence: pid files and the marker every process of it carries.
    root: PathBuf,
    sandbox: Sandbox,
    stats: Arc<Stats>,
}

/// What the sequences did, summed over all lanes (printed, so a run shows it exercised things).
#[derive(Default)]
struct Stats {
    actions: std::sync::atomic::AtomicUsize,
    trees: std::sync::atomic::AtomicUsize,
    kills: std::sync::atomic::AtomicUsize,
    descendant_kills: std::sync::atomic::AtomicUsize,
    raced: std::sync::atomic::AtomicUsize,
}

impl Stats {
    fn add(counter: &std::sync::atomic::AtomicUsize, n: usize) {
        counter.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }

    fn get(counter: &std::sync::atomic::AtomicUsize) -> usize {
        counter.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// The entry of fuzz server `i` of a sequence whose processes all carry `marker` in their
/// environment and write `<pids>/<pid>.pids`.
fn fuzz_server(i: usize, pids: &Path, marker: &str) -> Value {
    // The descendants are one chain (server → d2 → d1); every server ignores SIGTERM; f1 takes
    // its time to initialize, so actions often meet its dial in flight.
    let descendants = if i.is_multiple_of(2) { "2" } else { "1" };
    let initialize_ms = if i == 1 { "150" } else { "0" };
    json!({
        "command": "/bin/sh",
        "args": [
            "-c",
            "exec \"$0\" \"$@\" --pid-file \"$WAVE_FUZZ_PIDS/$$.pids\"",
            test_server(),
            "--ignore-sigterm",
            "--spawn-descendants", descendants,
            "--tools", "echo,pid",
            "--slow-initialize-ms", initialize_ms,
        ],
        "env": { "WAVE_FUZZ_PIDS": pids, "WAVE_FUZZ_MARK": marker },
    })
}

/// Live (non-zombie) processes whose environment holds `WAVE_FUZZ_MARK=<marker>`: every process
/// of a sequence's trees, descendants included, whether or not it wrote its pid file.
fn marked_processes(marker: &str) -> Vec<u32> {
    let needle = format!("WAVE_FUZZ_MARK={marker}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == needle.as_bytes()))
        })
        .filter(|&pid| alive(pid))
        .collect()
}

/// Every pid written to the pid files of a sequence.
fn all_pids(dir: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".pids"))
        .flat_map(|e| read_pids(&e.path()))
        .collect()
}

fn sigkill(pid: u32) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// One failed check, with everything needed to replay it.
fn fail(seed: u64, sequence: &[Action], step: usize, what: String) -> String {
    format!(
        "lifecycle sequence failed (replay: WAVE_FAULTS_SEED={seed} WAVE_FAULTS_SEQUENCES=1)\n\
         sequence: {sequence:?}\nat step {step}: {what}"
    )
}

impl Lane {
    fn new(root: PathBuf, stats: Arc<Stats>) -> Lane {
        std::fs::create_dir_all(&root).unwrap();
        Lane {
            root,
            sandbox: Sandbox::new(),
            stats,
        }
    }

    /// Runs one sequence and its final teardown; `Err` describes the first broken rule.
    async fn run(&self, seed: u64) -> Result<(), String> {
        let mut rng = Rng::new(seed);
        let sequence = random_sequence(&mut rng);
        let marker = format!("{}-{seed}", std::process::id());
        let pids = self.root.join(format!("seq-{seed}"));
        std::fs::create_dir_all(&pids).unwrap();
        let servers: Map<String, Value> = (0..FUZZ_SERVERS)
            .map(|i| (format!("f{i}"), fuzz_server(i, &pids, &marker)))
            .collect();
        let manager = McpManager::new(ManagerOptions {
            workdir: self.sandbox.workdir.clone(),
            home: Some(self.sandbox.home.clone()),
            servers,
            timeouts: Timeouts {
                connect: Duration::from_secs(30),
                tool_call: Duration::from_secs(30),
                shutdown_grace: Duration::from_millis(50),
            },
            reconnect: ReconnectPolicy::default(),
        });
        let result = self.steps(&manager, seed, &sequence, &pids, &marker).await;
        // Whatever happened: the teardown must leave nothing running.
        manager.cleanup().await;
        Stats::add(&self.stats.actions, sequence.len());
        Stats::add(
            &self.stats.trees,
            std::fs::read_dir(&pids).map_or(0, |d| d.count()),
        );
        result?;
        let step = sequence.len();
        for i in 0..FUZZ_SERVERS {
            let name = format!("f{i}");
            if status(&manager, &name) != Status::Disconnected {
                let what = format!(
                    "after the final destroy {name} is {:?}",
                    status(&manager, &name)
                );
                return Err(fail(seed, &sequence, step, what));
            }
        }
        self.check_no_process(seed, &sequence, step, &pids, &marker)
            .await
    }

    async fn check_no_process(
        &self,
        seed: u64,
        sequence: &[Action],
        step: usize,
        pids: &Path,
        marker: &str,
    ) -> Result<(), String> {
        let written = all_pids(pids);
        let gone = eventually(Duration::from_secs(10), || {
            written.iter().all(|&p| !alive(p)) && marked_processes(marker).is_empty()
        })
        .await;
        if gone {
            return Ok(());
        }
        let alive_written: Vec<u32> = written.into_iter().filter(|&p| alive(p)).collect();
        let what = format!(
            "processes alive after destroy: from pid files {alive_written:?}, by marker {:?}",
            marked_processes(marker)
        );
        Err(fail(seed, sequence, step, what))
    }

    async fn steps(
        &self,
        manager: &McpManager,
        seed: u64,
        sequence: &[Action],
        pids: &Path,
        marker: &str,
    ) -> Result<(), String> {
        let mut model = Model::new();
        let mut pending: Option<wave_mcp_manager::PendingDials> = None;
        for (step, action) in sequence.iter().copied().enumerate() {
            let err = |what: String| fail(seed, sequence, step, what);
            let name = |s: usize| format!("f{s}");
            let mut left_running = None;
            // The models the statuses may match after this action (two for a race).
            let mut allowed = Vec::new();
            match action {
                Action::Do(op) => {
                    let due = model.due();
                    let answer = perform(manager, op).await;
                    let expected_answer = match (op, model.destroyed) {
                        (Op::Connect(_) | Op::Disconnect(_), true) => "destroyed".to_string(),
                        (Op::TurnDial, _) => format!("dialed {}", due.len()),
                        _ => "ok".to_string(),
                    };
                    if answer != expected_answer {
                        return Err(err(format!(
                            "{op:?} answered {answer}, expected {expected_answer} (LAZY-4/6/10)"
                        )));
                    }
                    allowed.push(model.after(op));
                    if op == Op::Destroy {
                        // LIFE-8, LAZY-7: nothing of this sequence is left once destroy returns
                        // (bar the kernel finishing the SIGKILLs).
                        self.check_no_process(seed, sequence, step, pids, marker)
                            .await?;
                    }
                }
                Action::TurnDialRacingNext => {
                    let due = model.due();
                    let dials = manager.start_turn_dials();
                    let started = dials.as_ref().map_or(0, |d| d.len());
                    if started != due.len() {
                        return Err(err(format!(
                            "turn dialed {started} servers, expected {due:?} (LAZY-4/6/10)"
                        )));
                    }
                    left_running = dials;
                    allowed.push(model.after(Op::TurnDial));
                }
                Action::Race(a, b) => {
                    Stats::add(&self.stats.raced, 1);
                    tokio::join!(perform(manager, a), perform(manager, b));
                    allowed.push(model.after(a).after(b));
                    allowed.push(model.after(b).after(a));
                }
                Action::Kill(s) => {
                    // A pid is only there to kill once the racing dials have ended.
                    if let Some(dials) = pending.take() {
                        dials.settled().await;
                    }
                    let mut next = model;
                    if !model.destroyed && model.servers[s].status == Status::Connected {
                        let pid = server_pid(manager, &name(s))
                            .await
                            .map_err(|e| err(format!("pid of {}: {e}", name(s))))?;
                        let tree = read_pids(&pids.join(format!("{pid}.pids")));
                        sigkill(pid);
                        Stats::add(&self.stats.kills, 1);
                        // LIFE-3: `error`; LAZY-4: no turn dials it again.
                        next.servers[s].status = Status::Error;
                        // LAZY-8: the crash is noticed and the rest of its tree swept.
                        let swept =
                            eventually(Duration::from_secs(10), || tree.iter().all(|&p| !alive(p)))
                                .await;
                        if !swept {
                            let left: Vec<u32> = tree.into_iter().filter(|&p| alive(p)).collect();
                            return Err(err(format!(
                                "after a crash of {pid} its descendants live on: {left:?}"
                            )));
                        }
                    }
                    allowed.push(next);
                }
                Action::KillDescendant(s) => {
                    if let Some(dials) = pending.take() {
                        dials.settled().await;
                    }
                    if !model.destroyed && model.servers[s].status == Status::Connected {
                        let pid = server_pid(manager, &name(s))
                            .await
                            .map_err(|e| err(format!("pid of {}: {e}", name(s))))?;
                        let tree = read_pids(&pids.join(format!("{pid}.pids")));
                        if let Some(&deepest) = tree.last().filter(|&&p| p != pid) {
                            sigkill(deepest);
                            Stats::add(&self.stats.descendant_kills, 1);
                        }
                    }
                    allowed.push(model);
                }
            }
            // Dials left running by the previous action have raced with this one; now they end.
            if let Some(dials) = pending.take() {
                Stats::add(&self.stats.raced, 1);
                tokio::time::timeout(Duration::from_secs(60), dials.settled())
                    .await
                    .map_err(|_| err("dials never settled".into()))?;
            }
            pending = left_running;
            if pending.is_some() {
                model = allowed[0];
                continue;
            }
            let actual = || -> Vec<Status> {
                (0..FUZZ_SERVERS)
                    .map(|s| status(manager, &name(s)))
                    .collect()
            };
            let matched =
                |actual: &[Status]| allowed.iter().find(|m| m.statuses() == actual).copied();
            let consistent =
                eventually(Duration::from_secs(15), || matched(&actual()).is_some()).await;
            let Some(next) = matched(&actual()).filter(|_| consistent) else {
                let snapshot = manager.snapshot();
                let errors: Vec<_> = snapshot.servers.iter().map(|s| &s.error).collect();
                let expected: Vec<Vec<Status>> = allowed.iter().map(Model::statuses).collect();
                return Err(err(format!(
                    "statuses {:?}, expected one of {expected:?} (errors: {errors:?})",
                    actual()
                )));
            };
            model = next;
        }
        if let Some(dials) = pending.take() {
            dials.settled().await;
        }
        Ok(())
    }
}

/// Runs one operation; what it answered, in the words of [`Lane::steps`].
async fn perform(manager: &McpManager, op: Op) -> String {
    let answer = |result: Result<(), Error>| match result {
        Ok(()) => "ok".to_string(),
        Err(Error::Destroyed) => "destroyed".to_string(),
        Err(e) => format!("error: {e}"),
    };
    match op {
        Op::Connect(s) => answer(manager.connect(&format!("f{s}")).await),
        Op::Disconnect(s) => answer(manager.disconnect(&format!("f{s}")).await),
        Op::TurnDial => match manager.start_turn_dials() {
            Some(dials) => {
                let n = dials.len();
                dials.settled().await;
                format!("dialed {n}")
            }
            None => "dialed 0".to_string(),
        },
        Op::Destroy => {
            manager.cleanup().await;
            "ok".to_string()
        }
    }
}

/// The pid of a connected server, asked through its `pid` tool.
async fn server_pid(manager: &McpManager, name: &str) -> Result<u32, String> {
    let result = manager
        .call_tool(&format!("mcp__{name}__pid"), None)
        .await
        .map_err(|e| e.to_string())?;
    let text = wave_mcp_manager::result_text(&result);
    text.trim()
        .parse()
        .map_err(|_| format!("pid tool said {text:?}"))
}

// LAZY-4, LAZY-6, LAZY-7, LAZY-8, LAZY-10, LIFE-3, LIFE-5, LIFE-7, LIFE-8: 1,000 random sequences
// of connect / disconnect / turn-start dial / destroy (one at a time, two at once, or a turn's
// dials racing the next action) and external kills of a server or of its deepest descendant,
// over servers that ignore SIGTERM and spawn descendants. After every action each status is
// what the action implies (after two at once: what one of the two orders implies):
// - connect → `connected` (after destroy: `Destroyed`, nothing changes);
// - disconnect → `disconnected`, and no later turn dials it again (LAZY-6);
// - turn-start dial → exactly the servers never dialed and never user-disconnected are dialed
//   (LAZY-10), and become `connected`; a failed or killed server is not redialed (LAZY-4);
// - kill of a connected server → `error`, and the rest of its tree is swept (LIFE-3, LAZY-8);
// - kill of a descendant → the server stays `connected`;
// - destroy → every server `disconnected`, every process of every tree gone (LAZY-7, LIFE-8).
// Every sequence ends with a destroy; then no pid from any pid file, and no process carrying
// the sequence's environment marker, is alive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_fuzz_random_sequences_leave_no_process_and_consistent_statuses() {
    const LANES: usize = 6;
    let seed = faults_seed();
    let total = env_count("WAVE_FAULTS_SEQUENCES", 1000);
    let sandbox = Sandbox::new();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let stats = Arc::new(Stats::default());
    let lanes = (0..LANES).map(|lane| {
        let root = sandbox.path(&format!("lane-{lane}"));
        let (next, stats) = (next.clone(), stats.clone());
        tokio::spawn(async move {
            let lane = Lane::new(root, stats);
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if i >= total {
                    return Ok(());
                }
                // With one sequence asked for, replay exactly the given seed.
                let sequence_seed = match total {
                    1 => seed,
                    _ => Rng::new(seed ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)).next_u64(),
                };
                lane.run(sequence_seed).await?;
            }
        })
    });
    let mut failures = Vec::new();
    for lane in futures::future::join_all(lanes).await {
        match lane {
            Ok(Ok(())) => {}
            Ok(Err(failure)) => failures.push(failure),
            Err(panic) => failures.push(format!("a lane panicked: {panic}")),
        }
    }
    eprintln!(
        "lifecycle fuzz: {total} sequences from seed {seed}: {} actions, {} process trees, \
         {} crashes, {} descendant kills, {} races",
        Stats::get(&stats.actions),
        Stats::get(&stats.trees),
        Stats::get(&stats.kills),
        Stats::get(&stats.descendant_kills),
        Stats::get(&stats.raced),
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ---------------------------------------------------------------------------------------------
// Config fuzz

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
        "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."] },
        "search": { "type": "http", "url": "https://example.com/mcp?k=${TOKEN}",
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

// ---------------------------------------------------------------------------------------------
// Protocol fuzz (the sidecar over its real stdio)

const WAVE_METHODS: &[&str] = &[
    "wave/mcp/servers",
    "wave/mcp/connect",
    "wave/mcp/disconnect",
    "wave/mcp/delete",
    "wave/mcp/configPaths",
    "wave/session/create",
    "wave/session/send",
    "wave/session/history",
    "wave/session/destroy",
];

/// Methods a client may send by mistake: server-to-client notifications, LSP methods the sidecar
/// does not implement, nonsense.
const OTHER_METHODS: &[&str] = &[
    "wave/mcp/serversChanged",
    "wave/session/message",
    "wave/session/turnEnded",
    "wave/mcp/nope",
    "wave/",
    "textDocument/hover",
    "workspace/executeCommand",
    "$/cancelRequest",
    "$/setTrace",
    "initialized",
    "initialize",
    "",
    "é字🙂",
];

fn random_string(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => String::new(),
        1 => "a".into(),
        2 => "default".into(),
        3 => "nope".into(),
        4 => (*rng.pick(&["project", "user", "plugin", "constructor"])).into(),
        5 => "x".repeat(10_000),
        6 => "é字🙂\u{0}\u{202e}".into(),
        7 => "../../etc/passwd".into(),
        8 => "${HOME}".into(),
        9 => format!("session-{}", rng.below(5)),
        _ => (0..rng.below(20))
            .map(|_| char::from(b' ' + rng.below(95) as u8))
            .collect(),
    }
}

const KEYS: &[&str] = &[
    "name",
    "sessionId",
    "source",
    "text",
    "mcpServers",
    "workdir",
    "model",
    "home",
    "baseUrl",
    "id",
    "command",
    "args",
    "url",
    "type",
];

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth == 0 { 6 } else { 9 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(50)),
        2 => json!(*rng.pick(&[0i64, -1, 1, 7, i64::MAX, i64::MIN])),
        3 => json!(*rng.pick(&[u64::MAX, 1u64 << 53])),
        4 => json!(*rng.pick(&[1.5f64, -0.0, 1e308, -1e-308])),
        5 => Value::String(random_string(rng)),
        6 | 7 => Value::Array(
            (0..rng.below(4))
                .map(|_| random_value(rng, depth - 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..rng.below(5))
                .map(|_| {
                    let key = match rng.chance(80) {
                        true => (*rng.pick(KEYS)).to_string(),
                        false => random_string(rng),
                    };
                    (key, random_value(rng, depth - 1))
                })
                .collect(),
        ),
    }
}

/// A request id: numbers across the i64 range and strings, unique by `n`.
fn random_id(rng: &mut Rng, n: usize) -> Value {
    match rng.below(6) {
        0 => json!(i64::MAX - n as i64),
        1 => json!(i64::MIN + n as i64),
        2 => json!(-(n as i64) - 1),
        3 => json!(format!("{n}")),
        4 => json!(format!("{}-{n}", "é字🙂".repeat(rng.below(200)))),
        _ => json!(1_000_000 + n as i64),
    }
}

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

/// Waits for the reply whose id is `id` (any JSON value); panics after [`LIMIT`].
async fn reply_to(sidecar: &Sidecar, id: &Value, what: &str) -> Value {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let found = sidecar
            .messages()
            .into_iter()
            .find(|m| m.get("method").is_none() && m.get("id") == Some(id));
        if let Some(reply) = found {
            return reply;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no reply to {what} within {LIMIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

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

// Protocol fuzz: 600 seeded random JSON-RPC messages — every wave method, server-to-client and
// unknown methods, notifications sent with ids, requests without params, random params of every
// JSON type (huge strings, deep objects, numbers at the i64 edges), ids across the whole i64
// range and as unicode strings, sent in bursts without waiting. Every request gets exactly one
// reply carrying its id (a result or a JSON-RPC error), the sidecar never panics, keeps answering
// `wave/mcp/servers`, and after `shutdown`/`exit` no process is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_fuzz_random_messages_get_replies_and_the_sidecar_keeps_answering() {
    let seed = faults_seed();
    let mut rng = Rng::new(seed);
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&[]), "b": sandbox.server(&[]) }));
    let log = sandbox.path("sidecar.log");
    let mut sidecar = spawn_logged(&sandbox, &log, "info", &[]);
    initialize(&sidecar, &sandbox).await;
    sidecar.ok("wave/mcp/connect", json!({ "name": "b" })).await;

    let mut sent = 0;
    for burst in 0..env_count("WAVE_FAULTS_PROTOCOL_BURSTS", 30) {
        let mut waiting = Vec::new();
        for _ in 0..20 {
            sent += 1;
            let method = match rng.below(10) {
                0..=5 => *rng.pick(WAVE_METHODS),
                _ => *rng.pick(OTHER_METHODS),
            };
            let mut message = json!({ "jsonrpc": "2.0", "method": method });
            match rng.below(10) {
                0 => {}
                1 => message["params"] = Value::Null,
                _ => message["params"] = random_value(&mut rng, 3),
            }
            // A notification (no id) now and then, whatever the method.
            if rng.chance(85) {
                let id = random_id(&mut rng, sent);
                message["id"] = id.clone();
                waiting.push((id, message.clone()));
            }
            let body = serde_json::to_vec(&message).unwrap();
            sidecar.write_raw(&body).await;
        }
        for (id, message) in waiting {
            let what = format!("burst {burst} (seed {seed}): {message}");
            let reply = reply_to(&sidecar, &id, &what).await;
            assert!(
                reply.get("result").is_some() != reply.get("error").is_some(),
                "{what}: {reply}"
            );
            if let Some(error) = reply.get("error") {
                assert!(
                    error["code"].is_i64() && error["message"].is_string(),
                    "{what}: {reply}"
                );
            }
        }
        assert!(
            sidecar.running(),
            "the sidecar died in burst {burst} (seed {seed})"
        );
        // Still answering (the default session may have been destroyed by a random request).
        match sidecar.request("wave/mcp/servers", json!({})).await {
            Ok(snapshot) => assert!(snapshot["servers"].is_array(), "{snapshot}"),
            Err(e) => assert_eq!(e.kind(), "unknownSession", "{e:?}"),
        }
    }
    // Exactly one reply per id.
    let mut replies: HashMap<String, usize> = HashMap::new();
    for message in sidecar.messages() {
        if message.get("method").is_none() {
            *replies.entry(message["id"].to_string()).or_default() += 1;
        }
    }
    let repeated: Vec<_> = replies.iter().filter(|&(_, &n)| n > 1).collect();
    assert!(repeated.is_empty(), "ids answered twice: {repeated:?}");
    eprintln!("protocol fuzz: {sent} messages from seed {seed}");
    sidecar.stop().await;
    assert_no_panic(&log);
    sandbox.assert_no_process_left().await;
}

// tower-lsp-server 0.23 (`LspService::call`) turns every MethodNotFound of a `$/` method into
// "no response", which LSP allows for notifications only ("a request starting with '$/' must be
// errored with MethodNotFound"). The sidecar answers such requests itself (its `EmptyParams`
// layer), so a client never waits forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_fuzz_requests_to_dollar_methods_get_method_not_found() {
    let sandbox = Sandbox::new();
    let sidecar = Sidecar::start(&sandbox, Value::Null).await;
    for method in ["$/setTrace", "$/progress", "$/nope"] {
        let id = json!(format!("dollar-{method}"));
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": {} });
        sidecar
            .write_raw(&serde_json::to_vec(&message).unwrap())
            .await;
        let answered = eventually(Duration::from_secs(5), || {
            sidecar.messages().iter().any(|m| m["id"] == id)
        })
        .await;
        assert!(answered, "no reply to the request {message}");
        let reply = reply_to(&sidecar, &id, method).await;
        assert_eq!(reply["error"]["code"], -32601, "{reply}");
    }
    sidecar.stop().await;
}

// Requests before `initialize` are refused (-32002) and notifications ignored; `initialize`
// afterwards works as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_fuzz_requests_before_initialize_are_refused() {
    let mut rng = Rng::new(faults_seed());
    let sandbox = Sandbox::new();
    sandbox.write_project(json!({ "a": sandbox.server(&[]) }));
    let log = sandbox.path("sidecar.log");
    let sidecar = spawn_logged(&sandbox, &log, "info", &[]);
    for (n, method) in WAVE_METHODS.iter().enumerate() {
        sidecar.notify(method, random_value(&mut rng, 2)).await;
        let id = random_id(&mut rng, n);
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method,
                              "params": random_value(&mut rng, 2) });
        sidecar
            .write_raw(&serde_json::to_vec(&message).unwrap())
            .await;
        let reply = reply_to(&sidecar, &id, method).await;
        assert_eq!(reply["error"]["code"], -32002, "{method}: {reply}");
    }
    initialize(&sidecar, &sandbox).await;
    let snapshot = sidecar.ok("wave/mcp/servers", Value::Null).await;
    assert!(lists(&snapshot, "a"));
    assert!(sandbox.live_processes().is_empty());
    sidecar.stop().await;
    assert_no_panic(&log);
}

/// What became of one broken frame.
struct FrameOutcome {
    label: &'static str,
    /// Error codes of the replies it got.
    errors: Vec<i64>,
    /// The sidecar ended the connection and exited (cleanly).
    exited: bool,
    /// What docs/protocol.md says it gets.
    want_errors: &'static [i64],
    want_exit: bool,
}

/// docs/protocol.md: a body that is not JSON (or no readable frame at all) is `-32700` and ends
/// the connection.
const PARSE: &[i64] = &[-32700];
/// JSON that is no JSON-RPC request (JSON-RPC 2.0 §5.1 Invalid Request): `-32600`, and the
/// connection ends like for a parse error.
const INVALID: &[i64] = &[-32600];
/// A message with an id but no method: `-32601` (MethodNotFound), and the sidecar goes on.
const NOT_FOUND: &[i64] = &[-32601];
/// A well-formed request that cannot be carried out: `-32803` (RequestFailed).
const FAILED: &[i64] = &[-32803];
/// No reply. Only for a zero-length body (tower-lsp-server skips it as an empty frame) and for
/// `exit` sent as a request (it exits, as the notification would); see docs/performance.md.
const NONE: &[i64] = &[];

// Broken framing and messages that are not JSON-RPC requests: a missing, non-numeric or
// overflowing Content-Length, garbage before the header, a wrong charset, a body that is not
// UTF-8 or not JSON, JSON that is no message, a batch, ids that are no JSON-RPC id (beyond i64,
// fractional, objects), a body cut short by the end of input, `exit` sent as a request. For
// each, a fresh sidecar with a connected server: it never panics or dies from a signal; either
// it answers with an error and goes on (then still answers `wave/mcp/servers`), or it answers
// with an error, ends the connection and exits with status 0 (docs/protocol.md) — and in both
// cases no process of it is left afterwards. Each frame gets exactly the reply (error code) and
// outcome listed with it (docs/protocol.md, "Errors").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_fuzz_broken_frames_never_crash_and_leave_no_process() {
    let frame = |body: &[u8]| {
        [
            format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes(),
            body,
        ]
        .concat()
    };
    let huge = frame(
        &serde_json::to_vec(
            &json!({ "jsonrpc": "2.0", "id": 99, "method": "wave/mcp/servers",
                                      "params": { "sessionId": "x".repeat(30 << 20) } }),
        )
        .unwrap(),
    );
    // (label, bytes, close stdin afterwards, expected error codes, expected to end the connection)
    type Case = (&'static str, Vec<u8>, bool, &'static [i64], bool);
    let cases: Vec<Case> =
        vec![
        ("not json", frame(b"{not json"), false, PARSE, true),
        (
            "invalid utf-8",
            frame(b"{\"jsonrpc\": \"2.0\", \"method\": \"\xff\"}"),
            false, PARSE, true,
        ),
        ("json array", frame(b"[]"), false, INVALID, true),
        ("json number", frame(b"42"), false, INVALID, true),
        ("empty object", frame(b"{}"), false, INVALID, true),
        ("no method", frame(br#"{"jsonrpc": "2.0", "id": 5}"#), false, NOT_FOUND, false),
        (
            "jsonrpc 1.0",
            frame(br#"{"jsonrpc": "1.0", "id": 5, "method": "wave/mcp/servers"}"#),
            false, INVALID, true,
        ),
        (
            "batch",
            frame(br#"[{"jsonrpc": "2.0", "id": 5, "method": "wave/mcp/servers"}]"#),
            false, INVALID, true,
        ),
        (
            "id beyond i64",
            frame(
                br#"{"jsonrpc": "2.0", "id": 18446744073709551615, "method": "wave/mcp/servers"}"#,
            ),
            false, INVALID, true,
        ),
        (
            "fractional id",
            frame(br#"{"jsonrpc": "2.0", "id": 1.5, "method": "wave/mcp/servers"}"#),
            false, INVALID, true,
        ),
        (
            "object id",
            frame(br#"{"jsonrpc": "2.0", "id": {}, "method": "wave/mcp/servers"}"#),
            false, INVALID, true,
        ),
        (
            "no content-length",
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}".to_vec(),
            false, PARSE, true,
        ),
        (
            "content-length not a number",
            b"Content-Length: ten\r\n\r\n{}".to_vec(),
            false, PARSE, true,
        ),
        (
            "content-length overflow",
            b"Content-Length: 99999999999999999999999\r\n\r\n{}".to_vec(),
            false, PARSE, true,
        ),
        (
            "garbage before the header",
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            false, PARSE, true,
        ),
        (
            "latin-1 charset",
            b"Content-Length: 2\r\nContent-Type: application/json; charset=latin1\r\n\r\n{}"
                .to_vec(),
            false, PARSE, true,
        ),
        ("zero length", b"Content-Length: 0\r\n\r\n".to_vec(), false, NONE, false),
        (
            "body cut short by end of input",
            b"Content-Length: 100\r\n\r\n{\"jsonrpc\"".to_vec(),
            true, PARSE, true,
        ),
        (
            "exit as a request",
            frame(br#"{"jsonrpc": "2.0", "id": 5, "method": "exit"}"#),
            false, NONE, true,
        ),
        ("30 MB request", huge, false, FAILED, false),
    ];
    let mut outcomes = Vec::new();
    for (label, bytes, close_stdin, want_errors, want_exit) in cases {
        let sandbox = Sandbox::new();
        sandbox.write_project(
            json!({ "a": sandbox.server_with_pids("a", &["--spawn-descendants", "1"]) }),
        );
        let log = sandbox.path("sidecar.log");
        let stderr = std::fs::File::create(&log).unwrap();
        let mut sidecar = Sidecar::spawn(&sandbox.root, |command| {
            command.env("WAVE_LOG", "info").stderr(Stdio::from(stderr));
        });
        sidecar
            .initialize(json!({ "initializationOptions": {
                "home": sandbox.home,
                "workdir": sandbox.workdir,
            }}))
            .await
            .expect("initialize");
        let connected = sidecar.ok("wave/mcp/connect", json!({ "name": "a" })).await;
        assert_eq!(status_of(&connected, "a").as_deref(), Some("connected"));
        let pids = wait_for_pids(&sandbox.pid_file("a"), 2).await;
        let before = sidecar.received();
        sidecar.write_bytes(&bytes).await;
        if close_stdin {
            sidecar.close_stdin().await;
        }
        // Either it exits, or it is still there and answering.
        let exited = eventually(Duration::from_secs(3), || !sidecar.running()).await;
        if !exited {
            let snapshot = sidecar.ok("wave/mcp/servers", json!({})).await;
            assert!(lists(&snapshot, "a"), "{label}: {snapshot}");
        }
        let errors: Vec<i64> = sidecar.messages()[before..]
            .iter()
            .filter_map(|m| m["error"]["code"].as_i64())
            .collect();
        if !exited {
            sidecar.ok("shutdown", Value::Null).await;
            sidecar.notify("exit", Value::Null).await;
        }
        let status = sidecar
            .exited_within(Duration::from_secs(20))
            .await
            .unwrap_or_else(|| panic!("{label}: the sidecar did not exit"));
        assert!(
            status.success(),
            "{label}: the sidecar exited with {status}"
        );
        assert_no_panic(&log);
        assert_all_dead(&pids).await;
        assert!(
            eventually(Duration::from_secs(10), || sandbox
                .live_processes()
                .is_empty())
            .await,
            "{label}: left running {:?}",
            sandbox.live_processes()
        );
        outcomes.push(FrameOutcome {
            label,
            errors,
            exited,
            want_errors,
            want_exit,
        });
    }
    let describe = |errors: &[i64], exited: bool| {
        let what = if exited {
            "ended the connection, exit 0"
        } else {
            "went on"
        };
        format!("error replies {errors:?}, {what}")
    };
    let wrong: Vec<String> = outcomes
        .iter()
        .filter(|o| o.errors != o.want_errors || o.exited != o.want_exit)
        .map(|o| {
            format!(
                "{:<32} {} (expected {})",
                o.label,
                describe(&o.errors, o.exited),
                describe(o.want_errors, o.want_exit)
            )
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "unexpected outcomes:\n{}",
        wrong.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Secrets

/// Fails with the places where any of `secrets` shows up in `text`.
fn assert_secret_free(place: &str, text: &str, secrets: &[&str]) {
    let found: Vec<&&str> = secrets.iter().filter(|s| text.contains(**s)).collect();
    assert!(found.is_empty(), "{place} shows secrets {found:?}");
}

// SEC-1, CACHE-8: env values and header values — literal ones, and `${VAR}`s expanded from the
// sidecar's environment — reach the server (the stdio server's environment has them; the HTTP
// server requires the header) but never appear in the cache file, in any reply or
// `wave/mcp/serversChanged` snapshot of the sidecar (which is all the webview ever receives),
// in the sidecar's info-level log, in a failing connect's reason, or in the CLI's output and
// info-level log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_reach_the_cache_snapshots_logs_or_cli() {
    let nonce = Rng::new(std::process::id() as u64 ^ 0xABCD).next_u64();
    let env_secret = format!("env-secret-{nonce:x}");
    let env_literal = format!("env-literal-{nonce:x}");
    let header_secret = format!("header-secret-{nonce:x}");
    let header_literal = format!("header-literal-{nonce:x}");
    let url_secret = format!("url-secret-{nonce:x}");
    let secrets = [
        env_secret.as_str(),
        env_literal.as_str(),
        header_secret.as_str(),
        header_literal.as_str(),
        url_secret.as_str(),
    ];
    let http = HttpServer::start(&["--require-header", &format!("X-Api-Key:{header_secret}")]);
    let sandbox = Sandbox::new();
    let mut stdio = sandbox.server_with_pids("stdio", &["--tools", "echo"]);
    stdio["env"] = json!({ "API_TOKEN": "${WAVE_TEST_ENV_SECRET}", "LITERAL": env_literal });
    let remote = |key: &str| {
        json!({
            "type": "http",
            "url": format!("{}?token=${{WAVE_TEST_URL_SECRET}}", http.url),
            "headers": { "X-Api-Key": key, "X-Literal": header_literal },
        })
    };
    sandbox.write_project(json!({
        "stdio": stdio,
        "remote": remote("${WAVE_TEST_HEADER_SECRET}"),
        "wrong": remote("${WAVE_TEST_URL_SECRET}"),
    }));
    let envs = [
        ("WAVE_TEST_ENV_SECRET", env_secret.as_str()),
        ("WAVE_TEST_HEADER_SECRET", header_secret.as_str()),
        ("WAVE_TEST_URL_SECRET", url_secret.as_str()),
    ];

    let log = sandbox.path("sidecar.log");
    let sidecar = spawn_logged(&sandbox, &log, "info", &envs);
    initialize(&sidecar, &sandbox).await;
    let connected = sidecar
        .ok("wave/mcp/connect", json!({ "name": "stdio" }))
        .await;
    assert_eq!(status_of(&connected, "stdio").as_deref(), Some("connected"));
    let connected = sidecar
        .ok("wave/mcp/connect", json!({ "name": "remote" }))
        .await;
    assert_eq!(
        status_of(&connected, "remote").as_deref(),
        Some("connected"),
        "{connected:#}"
    );
    let failed = sidecar
        .ok("wave/mcp/connect", json!({ "name": "wrong" }))
        .await;
    assert_eq!(
        status_of(&failed, "wrong").as_deref(),
        Some("error"),
        "{failed:#}"
    );
    // The values did reach the server.
    let pid = wait_for_pids(&sandbox.pid_file("stdio"), 1).await[0];
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    assert!(environ.contains(&format!("API_TOKEN={env_secret}")));
    assert!(environ.contains(&format!("LITERAL={env_literal}")));
    // As written: `${VAR}` in the row's url, no env or headers at all.
    assert!(
        row(&connected, "remote")["url"]
            .as_str()
            .unwrap()
            .contains("${WAVE_TEST_URL_SECRET}")
    );
    sidecar
        .ok("wave/mcp/disconnect", json!({ "name": "stdio" }))
        .await;
    sidecar
        .ok("wave/mcp/connect", json!({ "name": "stdio" }))
        .await;
    sidecar.ok("wave/mcp/configPaths", json!({})).await;
    sidecar.ok("wave/mcp/servers", json!({})).await;
    let wire: Vec<String> = sidecar.messages().iter().map(Value::to_string).collect();
    sidecar.stop().await;

    assert!(wire.iter().any(|m| m.contains("wave/mcp/serversChanged")));
    assert_secret_free(
        "the sidecar's replies and notifications",
        &wire.join("\n"),
        &secrets,
    );
    let cache = std::fs::read_to_string(sandbox.home.join(".wave").join("mcp-tools-cache.json"))
        .expect("the cache file was written");
    assert!(
        cache.contains("\"stdio@") && cache.contains("\"remote@"),
        "{cache}"
    );
    assert_secret_free("the cache file", &cache, &secrets);
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(
        stderr.contains("INFO"),
        "no info-level log was written:\n{stderr}"
    );
    assert_secret_free("the sidecar's info log", &stderr, &secrets);

    // The CLI: `servers`, `tools`, `call`, with info-level logs.
    for args in [
        vec!["servers", "--json"],
        vec!["tools", "stdio", "--json"],
        vec!["tools", "remote", "--json"],
        vec!["call", "remote", "echo", r#"{"text": "hi"}"#, "--json"],
        vec!["tools", "wrong"],
    ] {
        let output = std::process::Command::new(wave_mcp())
            .args(&args)
            .arg("--workdir")
            .arg(&sandbox.workdir)
            .env("HOME", &sandbox.home)
            .env("WAVE_LOG", "info")
            .envs(envs)
            .output()
            .unwrap();
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_secret_free(&format!("wave-mcp {}", args.join(" ")), &text, &secrets);
    }
    let cache =
        std::fs::read_to_string(sandbox.home.join(".wave").join("mcp-tools-cache.json")).unwrap();
    assert_secret_free("the cache file after the CLI", &cache, &secrets);
}
