//! Fault suite, crash cleanup (issue 18): real sidecars and CLIs killed with SIGKILL, real
//! process trees (some ignoring SIGTERM, some with grandchildren), forged registry records for
//! pid reuse and corrupt files. Every process is identified by pid *and* start time
//! (`/proc/<pid>/stat` field 22), read here independently of the registry's own code.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::lsp_client::Sidecar;
use super::support::{Sandbox, alive, eventually, wait_for_pids, wave_mcp};

/// Bound for asynchronous outcomes (reaper passes, signal delivery): a limit, not a speed test.
const LIMIT: Duration = Duration::from_secs(30);

/// A process as pid plus start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Proc {
    pid: u32,
    start: u64,
}

/// `/proc/<pid>/stat` field 22.
fn start_of(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn proc_of(pid: u32) -> Proc {
    Proc {
        pid,
        start: start_of(pid).unwrap_or_else(|| panic!("no start time for pid {pid}")),
    }
}

/// Still the very same process, running (not a zombie).
fn survives(p: Proc) -> bool {
    alive(p.pid) && start_of(p.pid) == Some(p.start)
}

fn survivors(procs: &[Proc]) -> Vec<Proc> {
    procs.iter().copied().filter(|&p| survives(p)).collect()
}

async fn assert_gone(procs: &[Proc], what: &str) {
    assert!(!procs.is_empty(), "no processes to check ({what})");
    let gone = eventually(LIMIT, || survivors(procs).is_empty()).await;
    assert!(gone, "{what}: still running: {:?}", survivors(procs));
}

fn sigkill(pid: u32) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill -9");
}

fn read_pid(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

async fn wait_pid(path: &Path) -> u32 {
    let ready = eventually(LIMIT, || read_pid(path).is_some()).await;
    assert!(ready, "{} never written", path.display());
    read_pid(path).unwrap()
}

/// Owner files in the run directory (`<pid>-<start>.json`) whose owner pid is `pid`.
fn owner_files(run: &Path, pid: u32) -> Vec<PathBuf> {
    let prefix = format!("{pid}-");
    std::fs::read_dir(run)
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .filter(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.starts_with(&prefix) && name.ends_with(".json")
                })
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Starts `wave-mcp lsp` through `/bin/sh` running the script `body` (from `dir/lsp`), with
/// `XDG_RUNTIME_DIR=run`. `$WAVE` in the script is the sidecar binary.
fn scripted_sidecar(dir: &Path, run: &Path, body: &str) -> Sidecar {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("lsp"), body).unwrap();
    let run = run.to_path_buf();
    Sidecar::spawn_program(Path::new("/bin/sh"), dir, move |command| {
        command.env("XDG_RUNTIME_DIR", &run).env("WAVE", wave_mcp());
    })
}

/// A sidecar that writes its own pid to `dir/sidecar.pid` (the shell `exec`s into it).
async fn sidecar_at(dir: &Path, run: &Path) -> (Sidecar, u32) {
    let sidecar = scripted_sidecar(dir, run, "echo $$ > sidecar.pid\nexec \"$WAVE\" lsp\n");
    let pid = wait_pid(&dir.join("sidecar.pid")).await;
    (sidecar, pid)
}

async fn initialize(sidecar: &Sidecar, sandbox: &Sandbox, servers: Map<String, Value>) {
    sidecar
        .initialize(json!({ "initializationOptions": {
            "home": sandbox.home,
            "workdir": sandbox.workdir,
            "mcpServers": servers,
        }}))
        .await
        .expect("initialize");
}

/// `count` servers named `<prefix><i>`: a third ignore SIGTERM, a third have two grandchildren,
/// a third both (one grandchild). With the number of pids each tree writes.
fn stubborn_servers(
    sandbox: &Sandbox,
    prefix: &str,
    count: usize,
) -> (Map<String, Value>, Vec<(String, usize)>) {
    let mut servers = Map::new();
    let mut trees = Vec::new();
    for i in 0..count {
        let name = format!("{prefix}{i}");
        let (args, pids): (&[&str], usize) = match i % 3 {
            0 => (&["--ignore-sigterm"], 1),
            1 => (&["--spawn-descendants", "2"], 3),
            _ => (&["--ignore-sigterm", "--spawn-descendants", "1"], 2),
        };
        servers.insert(name.clone(), sandbox.server_with_pids(&name, args));
        trees.push((name, pids));
    }
    (servers, trees)
}

/// Connects every tree and returns all their processes (servers and descendants).
async fn connect_all(sidecar: &Sidecar, sandbox: &Sandbox, trees: &[(String, usize)]) -> Vec<Proc> {
    let connects = trees
        .iter()
        .map(|(name, _)| sidecar.ok("wave/mcp/connect", json!({ "name": name })));
    futures::future::join_all(connects).await;
    let mut procs = Vec::new();
    for (name, count) in trees {
        for pid in wait_for_pids(&sandbox.pid_file(name), *count).await {
            procs.push(proc_of(pid));
        }
    }
    procs
}

// REAP-1, REAP-2: a sidecar holding 10 connected trees (some ignoring SIGTERM, some with
// grandchildren) is killed with SIGKILL; a new sidecar starting on the same run directory
// reaps every one of those processes (by pid and start time: 0 survivors) and removes the dead
// owner's record, while a second live sidecar's trees are untouched (same pid, same start time).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reap_2_kill_9_of_a_sidecar_with_10_trees_leaves_no_survivor_after_the_next_start() {
    let sandbox = Sandbox::new();
    let run = sandbox.path("run");

    let (victim, victim_pid) = sidecar_at(&sandbox.path("victim"), &run).await;
    let (servers, trees) = stubborn_servers(&sandbox, "v", 10);
    initialize(&victim, &sandbox, servers).await;
    let doomed = connect_all(&victim, &sandbox, &trees).await;
    assert_eq!(doomed.len(), 4 + 3 * 3 + 3 * 2, "10 trees' processes");
    // REAP-1: the victim's record lists all 10 groups while they run.
    let files = owner_files(&run.join("wave-mcp"), victim_pid);
    assert_eq!(files.len(), 1, "one record file per owner: {files:?}");
    let record: Value = serde_json::from_slice(&std::fs::read(&files[0]).unwrap()).unwrap();
    let groups = record["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 10, "{record}");
    assert_eq!(record["owner"]["start"], proc_of(victim_pid).start);
    for (name, _) in &trees {
        let leader = proc_of(super::support::read_pids(&sandbox.pid_file(name))[0]);
        assert!(
            groups.iter().any(|g| g["pid"] == leader.pid
                && g["pgid"] == leader.pid
                && g["start"] == leader.start),
            "{name} ({leader:?}) not recorded: {record}"
        );
    }

    let (bystander, bystander_pid) = sidecar_at(&sandbox.path("bystander"), &run).await;
    let (servers, live_trees) = stubborn_servers(&sandbox, "b", 3);
    initialize(&bystander, &sandbox, servers).await;
    let kept = connect_all(&bystander, &sandbox, &live_trees).await;

    sigkill(victim_pid);
    let victim_gone = eventually(LIMIT, || !alive(victim_pid)).await;
    assert!(victim_gone, "the sidecar survived SIGKILL");
    // The crash left orphans: the grandchildren (and servers that ignore the end of stdin) sit in
    // process groups of their own, out of reach of anything but the registry.
    let leaders: Vec<u32> = trees
        .iter()
        .map(|(name, _)| super::support::read_pids(&sandbox.pid_file(name))[0])
        .collect();
    let grandchildren: Vec<Proc> = doomed
        .iter()
        .copied()
        .filter(|p| !leaders.contains(&p.pid))
        .collect();
    assert_eq!(grandchildren.len(), 3 * 2 + 3);
    assert_eq!(
        survivors(&grandchildren),
        grandchildren,
        "orphans expected after the crash"
    );

    let (next, _) = sidecar_at(&sandbox.path("next"), &run).await;
    initialize(&next, &sandbox, Map::new()).await;
    assert_gone(&doomed, "the crashed sidecar's trees after the next start").await;
    let record_gone = eventually(LIMIT, || {
        owner_files(&run.join("wave-mcp"), victim_pid).is_empty()
    })
    .await;
    assert!(record_gone, "the dead owner's record was not removed");
    // The pass that removed the dead owner's file has read the bystander's too, and left it.
    assert_eq!(
        survivors(&kept),
        kept,
        "a live sidecar's trees were touched"
    );
    assert_eq!(owner_files(&run.join("wave-mcp"), bystander_pid).len(), 1);

    bystander.stop().await;
    next.stop().await;
    assert_gone(&kept, "the bystander's trees after its shutdown").await;
    // REAP-1: every group reaped in order, so the bystander's record went with its last group.
    assert!(owner_files(&run.join("wave-mcp"), bystander_pid).is_empty());
    drop(victim);
}

// REAP-3: the sidecar's parent process is killed with SIGKILL while the sidecar holds trees
// (and its stdin stays open: the test holds the pipe); the sidecar notices, reaps every tree
// and exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reap_3_kill_9_of_the_sidecars_parent_ends_the_sidecar_and_its_trees() {
    let sandbox = Sandbox::new();
    let run = sandbox.path("run");
    let dir = sandbox.path("parent");
    // A POSIX shell gives an asynchronous list /dev/null as stdin: keep ours on fd 3 for it.
    let sidecar = scripted_sidecar(
        &dir,
        &run,
        "echo $$ > parent.pid\nexec 3<&0\n\"$WAVE\" lsp <&3 3<&- &\necho $! > sidecar.pid\nwait\n",
    );
    let parent = proc_of(wait_pid(&dir.join("parent.pid")).await);
    let sidecar_proc = proc_of(wait_pid(&dir.join("sidecar.pid")).await);
    let (servers, trees) = stubborn_servers(&sandbox, "t", 4);
    initialize(&sidecar, &sandbox, servers).await;
    let procs = connect_all(&sidecar, &sandbox, &trees).await;

    sigkill(parent.pid);
    assert_gone(&[parent], "the parent").await;
    assert_gone(&[sidecar_proc], "the orphaned sidecar").await;
    assert_gone(&procs, "the orphaned sidecar's trees").await;
    assert!(
        owner_files(&run.join("wave-mcp"), sidecar_proc.pid).is_empty(),
        "the sidecar's record outlived its orderly teardown"
    );
    sandbox.assert_no_process_left().await;
}

// REAP-3: the end of stdin without `shutdown` ends the sidecar and every tree, and the
// sidecar's records go with the trees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reap_3_end_of_stdin_ends_the_sidecar_and_its_trees() {
    let sandbox = Sandbox::new();
    let run = sandbox.path("run");
    let (mut sidecar, pid) = sidecar_at(&sandbox.path("s"), &run).await;
    let (servers, trees) = stubborn_servers(&sandbox, "s", 3);
    initialize(&sidecar, &sandbox, servers).await;
    let procs = connect_all(&sidecar, &sandbox, &trees).await;
    assert_eq!(owner_files(&run.join("wave-mcp"), pid).len(), 1);
    sidecar.close_stdin().await;
    sidecar.wait_exit(LIMIT).await;
    assert_gone(&procs, "trees after the end of stdin").await;
    assert!(owner_files(&run.join("wave-mcp"), pid).is_empty());
}

/// `sleep 600` as the leader of a process group of its own.
fn sleeper() -> (std::process::Child, Proc) {
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new("sleep");
    let child = wave_mcp_testkit::dies_with_test(&mut command)
        .arg("600")
        .process_group(0)
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn sleep");
    let p = proc_of(child.id());
    (child, p)
}

/// A pid that no longer runs (a reaped `true`), and a start time it never had.
fn dead_owner() -> Proc {
    let mut child = std::process::Command::new("true").spawn().expect("true");
    let pid = child.id();
    child.wait().unwrap();
    Proc { pid, start: 1 }
}

/// `dir` as the registry makes a run directory: 0700 (its parents as usual).
fn private_dir(dir: &Path) {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    if !dir.exists() {
        std::fs::DirBuilder::new().mode(0o700).create(dir).unwrap();
    }
}

fn forge(run: &Path, owner: Proc, groups: &[Proc]) -> PathBuf {
    private_dir(run);
    let path = run.join(format!("{}-{}.json", owner.pid, owner.start));
    let groups: Vec<Value> = groups
        .iter()
        .map(|g| json!({ "pgid": g.pid, "pid": g.pid, "start": g.start }))
        .collect();
    let body = json!({
        "version": 1,
        "owner": { "pid": owner.pid, "start": owner.start },
        "groups": groups,
    });
    std::fs::write(&path, serde_json::to_vec(&body).unwrap()).unwrap();
    path
}

/// `wave-mcp tools <missing server>` with the sandbox as HOME and no `XDG_RUNTIME_DIR`, so the
/// run directory is `~/.wave/run`. The CLI waits for its reaper pass before exiting; returns
/// its stderr.
fn cli_start(sandbox: &Sandbox) -> String {
    let output = std::process::Command::new(wave_mcp())
        .args(["tools", "no-such-server", "--workdir"])
        .arg(&sandbox.workdir)
        .env("HOME", &sandbox.home)
        .env_remove("XDG_RUNTIME_DIR")
        .env("WAVE_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .expect("run wave-mcp tools");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

fn reap_all(children: &mut [std::process::Child]) {
    for child in children {
        let _ = child.kill();
        let _ = child.wait();
    }
}

// REAP-2: pid reuse and live owners. A dead owner's record naming a live process with another
// start time (the pid was reused) does not get it signalled; a record of a live owner is not
// touched at all; a dead owner's record that does match is reaped (so the pass did run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reap_2_pid_reuse_and_live_owners_are_never_signalled() {
    let sandbox = Sandbox::new();
    let run = sandbox.home.join(".wave").join("run");
    let (c1, reused) = sleeper();
    let (c2, orphan) = sleeper();
    let (c3, live_owner) = sleeper();
    let (c4, live_group) = sleeper();
    let mut children = vec![c1, c2, c3, c4];
    let mismatched = Proc {
        pid: reused.pid,
        start: reused.start + 1,
    };
    let dead = forge(&run, dead_owner(), &[mismatched, orphan]);
    let live = forge(&run, live_owner, &[live_group]);

    let stderr = cli_start(&sandbox);
    // The CLI waited for its pass: the orphan got SIGTERM (sleep dies of it) ...
    let orphan_gone = eventually(LIMIT, || !survives(orphan)).await;
    assert!(
        orphan_gone,
        "the matching orphan survived the pass: {stderr}"
    );
    assert!(!dead.exists(), "the dead owner's record was not removed");
    // ... and nothing else was signalled.
    assert!(survives(reused), "a reused pid was signalled");
    assert!(
        survives(live_owner) && survives(live_group),
        "a live owner's group was signalled"
    );
    assert!(live.exists(), "a live owner's record was removed");
    reap_all(&mut children);
}

// REAP-2: corrupt and foreign files in the run directory — garbage, truncated JSON, a record
// whose owner does not match its name, an unknown version, a huge file, a directory, another
// program's file — are each skipped with a warning naming the file; a valid dead owner's record
// next to them is still reaped, and the CLI ends normally.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reap_2_corrupt_and_foreign_registry_files_are_named_and_skipped() {
    let sandbox = Sandbox::new();
    let run = sandbox.home.join(".wave").join("run");
    private_dir(&run);
    let (child, orphan) = sleeper();
    let mut children = vec![child];
    let dead = forge(&run, dead_owner(), &[orphan]);
    let mut bad = Vec::new();
    let mut put = |name: &str, bytes: &[u8]| {
        let path = run.join(name);
        std::fs::write(&path, bytes).unwrap();
        bad.push(path);
    };
    put("11-22.json", b"{\"version\": 1, \"owner\": {\"pid\"");
    put("12-23.json", &[0xff, 0xfe, 0x00, 0x7b, 0x80]);
    put(
        "13-24.json",
        br#"{"version":1,"owner":{"pid":99,"start":24},"groups":[]}"#,
    );
    put(
        "14-25.json",
        br#"{"version":7,"owner":{"pid":14,"start":25},"groups":[]}"#,
    );
    put(
        "15-26.json",
        br#"{"version":1,"owner":{"pid":15,"start":26},"groups":[{"pgid":"x"}]}"#,
    );
    put("16-27.json", &vec![b' '; 300 * 1024]);
    put("notes.txt", b"not ours");
    put("garbage.json", b"{}");
    let dir = run.join("17-28.json");
    std::fs::create_dir(&dir).unwrap();
    bad.push(dir);

    let stderr = cli_start(&sandbox);
    for path in &bad {
        let named = stderr
            .lines()
            .any(|l| l.contains("skipping") && l.contains(&path.display().to_string()));
        assert!(named, "no warning naming {}:\n{stderr}", path.display());
        assert!(path.exists(), "{} was removed", path.display());
    }
    let orphan_gone = eventually(LIMIT, || !survives(orphan)).await;
    assert!(
        orphan_gone,
        "the valid record beside corrupt ones was not reaped: {stderr}"
    );
    assert!(!dead.exists());
    reap_all(&mut children);
}

/// Children killed and reaped when dropped, also when an assertion fails first.
struct Victims(Vec<std::process::Child>);

impl Drop for Victims {
    fn drop(&mut self) {
        reap_all(&mut self.0);
    }
}

/// Whether `stderr` has a `skipping` warning naming `path`.
fn warned_about(stderr: &str, path: &Path) -> bool {
    stderr
        .lines()
        .any(|l| l.contains("skipping") && l.contains(&path.display().to_string()))
}

// TRUST-8 (attack): owner files in the run directory that are not the user's own — one chowned
// to `nobody`, one a symbolic link to a valid record elsewhere — name a live process group of
// a victim with a dead owner. The reaper run by `wave-mcp tools` skips both with a warning
// naming them and signals nothing: the victim still runs (by pid and start time) after the
// pass, while a genuine dead owner's orphan beside them is reaped (the pass did run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_8_foreign_and_symlinked_owner_files_get_nothing_signalled() {
    let sandbox = Sandbox::new();
    let run = sandbox.home.join(".wave").join("run");
    let (c1, victim) = sleeper();
    let (c2, orphan) = sleeper();
    let _children = Victims(vec![c1, c2]);
    let foreign = forge(&run, dead_owner(), &[victim]);
    std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).expect("chown to nobody");
    let elsewhere = forge(&sandbox.path("elsewhere"), dead_owner(), &[victim]);
    let link = run.join(elsewhere.file_name().unwrap());
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let genuine = forge(&run, dead_owner(), &[orphan]);

    let stderr = cli_start(&sandbox);
    let orphan_gone = eventually(LIMIT, || !survives(orphan)).await;
    assert!(orphan_gone, "the genuine record was not reaped: {stderr}");
    assert!(!genuine.exists());
    // The pass ends only once what it signalled is gone: a signalled victim would be dead now.
    assert!(
        survives(victim),
        "a planted record got the victim signalled: {stderr}"
    );
    assert!(
        warned_about(&stderr, &foreign),
        "no warning naming {foreign:?}: {stderr}"
    );
    assert!(
        warned_about(&stderr, &link),
        "no warning naming {link:?}: {stderr}"
    );
    assert!(foreign.exists() && link.symlink_metadata().is_ok() && elsewhere.exists());
}

// TRUST-8 (attack): a run directory open to others (mode 0777) and one that is a symbolic link
// (to a 0700 directory of the user's) are not used: a valid dead owner's record in either
// names a victim's live group, and after `wave-mcp tools` (whose reaper pass ends before it
// exits) the victim still runs, the record is still there, and a warning names the directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_8_a_run_dir_open_to_others_or_a_link_is_not_reaped() {
    use std::os::unix::fs::PermissionsExt;
    let (c1, open_victim) = sleeper();
    let (c2, linked_victim) = sleeper();
    let _children = Victims(vec![c1, c2]);

    let open = Sandbox::new();
    let run = open.home.join(".wave").join("run");
    let record = forge(&run, dead_owner(), &[open_victim]);
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o777)).unwrap();
    let stderr = cli_start(&open);
    assert!(
        survives(open_victim),
        "a 0777 run directory was reaped: {stderr}"
    );
    assert!(record.exists());
    assert!(
        warned_about(&stderr, &run),
        "no warning naming {run:?}: {stderr}"
    );
    assert!(stderr.contains("0777"), "{stderr}");

    let linked = Sandbox::new();
    let run = linked.home.join(".wave").join("run");
    let target = linked.path("real-run");
    let record = forge(&target, dead_owner(), &[linked_victim]);
    std::fs::create_dir_all(run.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&target, &run).unwrap();
    let stderr = cli_start(&linked);
    assert!(
        survives(linked_victim),
        "a linked run directory was reaped: {stderr}"
    );
    assert!(record.exists());
    assert!(
        warned_about(&stderr, &run),
        "no warning naming {run:?}: {stderr}"
    );
    assert!(stderr.contains("symbolic link"), "{stderr}");
}
