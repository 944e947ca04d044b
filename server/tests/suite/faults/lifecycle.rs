//! Lifecycle fuzz: seeded random sequences of connect, disconnect, turn dials, destroy, races
//! and SIGKILLs over stubborn process trees (servers that ignore SIGTERM and spawn descendants),
//! checked against a model of the expected statuses; no process is left after each sequence.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use wave_mcp_manager::{Error, ManagerOptions, McpManager, ReconnectPolicy, Status, Timeouts};

use super::env_count;
use crate::suite::support::*;

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
            project_untrusted: false,
            roots: None,
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
