//! The spawn registry (REAP-1) and the reaper of orphaned trees (REAP-2).
//!
//! Every process group this process spawns is recorded — leader pid/pgid and the leader's start
//! time — in one small file per owner, `<run dir>/<owner pid>-<owner start>.json`, rewritten
//! atomically on every change and removed when the owner has no group left. The run directory is
//! `$XDG_RUNTIME_DIR/wave-mcp/`, else `<home>/.wave/run/` (the manager's `home` option).
//!
//! A `wave-mcp` process that may spawn servers calls [`reap_orphans`] when it starts: in a thread
//! of its own, it reads every owner file whose owner is gone (no process with that pid, or one
//! with another start time, or a zombie), sends SIGTERM to each recorded group whose leader still
//! has the recorded start time (or, its leader gone, to the members left in the group: see
//! [`signal`]), waits up to the grace period, sends SIGKILL to what is left, and removes the
//! file. A live owner's file is never touched; a process whose start time differs
//! from the record (pid reuse) is never signalled. Files that are not owner records, or cannot be
//! parsed, are skipped with a warning naming the file.
//!
//! The run directory and the owner files are trusted only when they are the user's own
//! (TRUST-8): the directory is made 0700 and used only while it is a directory (not a symbolic
//! link) owned by the user with no access for anyone else; an owner file only when it is a
//! regular file (opened without following a symbolic link) owned by the user. Anything else is
//! skipped with a warning, and nothing it names is signalled.
//!
//! The files are replaced by rename without an fsync: a record only has to outlive its owner's
//! crash (the page cache survives it), not the machine's (no process does).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::files;

/// Format version of an owner file.
const VERSION: u32 = 1;
/// Owner files larger than this are not ours: skipped unread.
const MAX_FILE: u64 = 256 * 1024;
/// How long the reaper waits for SIGKILLed groups to be gone.
const KILL_SETTLE: Duration = Duration::from_secs(1);
/// The reaper's lock file in the run directory (two starting processes reap one at a time).
const LOCK_FILE: &str = "reap.lock";

/// A process as the registry identifies it: pid plus start time (pid reuse changes the latter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessId {
    pub pid: u32,
    /// `/proc/<pid>/stat` field 22 (clock ticks since boot) on Linux; microseconds since the
    /// epoch on macOS.
    pub start: u64,
}

/// One recorded process group: its leader (pid = pgid) and the leader's start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    pub pgid: u32,
    pub pid: u32,
    pub start: u64,
}

/// The file of one owner.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OwnerFile {
    pub version: u32,
    pub owner: ProcessId,
    pub groups: Vec<Group>,
}

/// `$XDG_RUNTIME_DIR/wave-mcp` when that variable holds an absolute path, else
/// `<home>/.wave/run`.
pub fn run_dir(home: &Path) -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir.join("wave-mcp"),
        _ => home.join(".wave").join("run"),
    }
}

/// This process: pid and start time (`None` where the start time cannot be read).
pub fn current_owner() -> Option<ProcessId> {
    static ME: OnceLock<Option<ProcessId>> = OnceLock::new();
    *ME.get_or_init(|| {
        let pid = std::process::id();
        let stat = proc_info(pid)?;
        Some(ProcessId {
            pid,
            start: stat.start,
        })
    })
}

/// The file name of `owner`'s records.
fn owner_file_name(owner: ProcessId) -> String {
    format!("{}-{}.json", owner.pid, owner.start)
}

/// Groups of this process that are still recorded, per run directory.
fn open_groups() -> &'static Mutex<HashMap<PathBuf, Vec<Group>>> {
    static OPEN: OnceLock<Mutex<HashMap<PathBuf, Vec<Group>>>> = OnceLock::new();
    OPEN.get_or_init(Mutex::default)
}

/// A recorded group; [`Record::release`] removes it once the group is gone. Dropped without a
/// release (a task torn down mid-teardown), the record stays, for a later reaper to check.
#[derive(Debug)]
pub struct Record {
    dir: PathBuf,
    group: Group,
}

/// Records the group led by `pid` (spawned with `process_group(0)`) in `dir`. A failure is
/// logged and yields `None`: the registry is a safety net, never a reason not to start a server.
pub fn record(dir: &Path, pid: u32) -> Option<Record> {
    let owner = current_owner()?;
    let Some(info) = proc_info(pid) else {
        tracing::debug!(pid, "no start time for a spawned server; not recorded");
        return None;
    };
    let group = Group {
        pgid: pid,
        pid,
        start: info.start,
    };
    let mut open = open_groups().lock().unwrap_or_else(|e| e.into_inner());
    let groups = open.entry(dir.to_path_buf()).or_default();
    groups.push(group);
    if let Err(e) = write_owner(dir, owner, groups) {
        tracing::warn!("cannot record server pid {pid} in {}: {e}", dir.display());
    }
    Some(Record {
        dir: dir.to_path_buf(),
        group,
    })
}

impl Record {
    pub fn group(&self) -> Group {
        self.group
    }

    /// The group is gone: drop its record (and the owner's file with its last record).
    pub fn release(self) {
        let Some(owner) = current_owner() else {
            return;
        };
        let mut open = open_groups().lock().unwrap_or_else(|e| e.into_inner());
        let Some(groups) = open.get_mut(&self.dir) else {
            return;
        };
        groups.retain(|g| *g != self.group);
        let result = if groups.is_empty() {
            open.remove(&self.dir);
            match std::fs::remove_file(self.dir.join(owner_file_name(owner))) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            }
        } else {
            write_owner(&self.dir, owner, groups)
        };
        if let Err(e) = result {
            tracing::warn!(
                "cannot update the server records in {}: {e}",
                self.dir.display()
            );
        }
    }
}

fn write_owner(dir: &Path, owner: ProcessId, groups: &[Group]) -> std::io::Result<()> {
    let path = dir.join(owner_file_name(owner));
    let file = OwnerFile {
        version: VERSION,
        owner,
        groups: groups.to_vec(),
    };
    let bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
    prepare_dir(dir)?;
    files::write_atomic_volatile(&path, &bytes, true)
}

/// Makes the run directory (0700) when it is missing; an existing one must be trusted
/// ([`distrust`]). One `lstat` per write, no mkdir or chmod on every dial.
fn prepare_dir(dir: &Path) -> std::io::Result<()> {
    let meta = match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            create_private_dir(dir)?;
            std::fs::symlink_metadata(dir)?
        }
        result => result?,
    };
    match distrust_metadata(&meta) {
        Some(reason) => Err(std::io::Error::other(format!(
            "the run directory {} is not trusted: {reason}",
            dir.display()
        ))),
        None => Ok(()),
    }
}

/// Creates `dir` with mode 0700 from the start (its parents as usual); an existing one is
/// left as it is, for [`distrust`] to judge.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

/// Why the run directory `dir` must not be used, if it must not (TRUST-8): it is a symbolic
/// link, not a directory, owned by someone else, or open to others (mode not 0700).
fn distrust(dir: &Path) -> Option<String> {
    match std::fs::symlink_metadata(dir) {
        Ok(meta) => distrust_metadata(&meta),
        Err(e) => Some(format!("cannot read it: {e}")),
    }
}

/// [`distrust`] of a directory's `lstat`.
#[cfg(unix)]
fn distrust_metadata(meta: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if meta.file_type().is_symlink() {
        return Some("it is a symbolic link".into());
    }
    if !meta.is_dir() {
        return Some("it is not a directory".into());
    }
    if let Some(reason) = foreign(meta.uid()) {
        return Some(reason);
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Some(format!("its mode is {mode:04o}, not 0700"));
    }
    None
}

#[cfg(not(unix))]
fn distrust_metadata(_meta: &std::fs::Metadata) -> Option<String> {
    None
}

/// Why a file owned by `uid` is not ours, if it is not.
#[cfg(unix)]
fn foreign(uid: u32) -> Option<String> {
    let me = nix::unistd::geteuid().as_raw();
    (uid != me).then(|| format!("it is owned by uid {uid}, not by this user (uid {me})"))
}

/// What a reaper pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReapReport {
    /// Owner files of dead owners that were handled and removed.
    pub dead_owners: usize,
    /// Groups that were signalled (leader start time matched).
    pub signalled: usize,
    /// Recorded groups left alone: leader gone or its pid now belongs to another process.
    pub not_ours: usize,
    /// Files skipped with a warning (corrupt, foreign).
    pub skipped: Vec<PathBuf>,
}

/// A running reaper pass (a thread of its own).
pub struct Reaper(Option<std::thread::JoinHandle<ReapReport>>);

impl Reaper {
    /// Waits for the pass to end (bounded by grace + settle per pass).
    pub fn finish(mut self) -> ReapReport {
        self.0
            .take()
            .and_then(|thread| thread.join().ok())
            .unwrap_or_default()
    }
}

/// Starts a reaper pass over `dir` in the background (REAP-2); the caller need not wait.
pub fn reap_orphans(dir: PathBuf, grace: Duration) -> Reaper {
    let thread = std::thread::Builder::new()
        .name("wave-mcp-reaper".into())
        .spawn(move || reap_now(&dir, grace));
    match thread {
        Ok(thread) => Reaper(Some(thread)),
        Err(e) => {
            tracing::warn!("cannot start the reaper of orphaned MCP servers: {e}");
            Reaper(None)
        }
    }
}

/// [`reap_orphans`] over the run directory of `home` (`None`: the user's home), with the
/// manager's default shutdown grace. What `wave-mcp lsp/chat/tools/call` call when they start.
pub fn reap_orphans_at_start(home: Option<PathBuf>) -> Reaper {
    let home = home
        .or_else(dirs::home_dir)
        .unwrap_or_else(|| PathBuf::from("."));
    reap_orphans(run_dir(&home), crate::DEFAULT_SHUTDOWN_GRACE)
}

/// One reaper pass over `dir`, in the calling thread.
pub fn reap_now(dir: &Path, grace: Duration) -> ReapReport {
    let mut report = ReapReport::default();
    if std::fs::symlink_metadata(dir).is_err() {
        return report;
    }
    // Someone else's directory, or a link to one, may hold records planted to get a process
    // of theirs or ours signalled: not a single one is read (TRUST-8).
    if let Some(reason) = distrust(dir) {
        tracing::warn!(
            "skipping the run directory {}: {reason}; nothing in it is signalled",
            dir.display()
        );
        report.skipped.push(dir.to_path_buf());
        return report;
    }
    // One reaper at a time per directory; a second one then finds nothing left to do.
    let _lock = match files::lock(&dir.join(LOCK_FILE)) {
        Ok(lock) => lock,
        Err(e) => {
            tracing::warn!("cannot lock {}: {e}", dir.join(LOCK_FILE).display());
            return report;
        }
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            tracing::warn!("cannot read {}: {e}", dir.display());
            return report;
        }
    };
    let mut dead = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == LOCK_FILE || name.contains(".json.tmp-") {
            continue;
        }
        match read_owner_file(&path, &name) {
            Ok(file) if owner_alive(file.owner) => {}
            Ok(file) => dead.push((path, file)),
            Err(reason) => {
                tracing::warn!("skipping {}: {reason}", path.display());
                report.skipped.push(path);
            }
        }
    }
    let groups: Vec<Group> = dead.iter().flat_map(|(_, f)| f.groups.clone()).collect();
    let mut targets: Vec<Group> = Vec::new();
    for group in groups {
        if signal(group, Sig::Term) {
            report.signalled += 1;
            targets.push(group);
        } else {
            report.not_ours += 1;
        }
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline && targets.iter().any(|&g| still_running(g)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for &group in &targets {
        signal(group, Sig::Kill);
    }
    let deadline = Instant::now() + KILL_SETTLE;
    while Instant::now() < deadline && targets.iter().any(|&g| still_running(g)) {
        std::thread::sleep(Duration::from_millis(10));
    }
    for (path, file) in dead {
        tracing::info!(
            owner = file.owner.pid,
            groups = file.groups.len(),
            "reaped the MCP servers of a dead wave-mcp process"
        );
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                tracing::warn!("cannot remove {}: {e}", path.display());
            }
            _ => report.dead_owners += 1,
        }
    }
    report
}

/// Reads and checks one owner file; the error says why it is skipped. The file is opened
/// without following a symbolic link, and what was opened must be a regular file of the user's
/// (TRUST-8), so a link or a planted file cannot get anything signalled.
fn read_owner_file(path: &Path, name: &str) -> Result<OwnerFile, String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if meta.file_type().is_symlink() {
        return Err("a symbolic link, not a server record".into());
    }
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let file = open_no_follow(path).map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    #[cfg(unix)]
    if let Some(reason) = foreign(std::os::unix::fs::MetadataExt::uid(&meta)) {
        return Err(reason);
    }
    if meta.len() > MAX_FILE {
        return Err(format!(
            "{} bytes is too large for a server record",
            meta.len()
        ));
    }
    let Some(stem) = name.strip_suffix(".json") else {
        return Err("not a wave-mcp server record (name is not <pid>-<start>.json)".into());
    };
    let named = stem
        .split_once('-')
        .and_then(|(pid, start)| Some((pid.parse::<u32>().ok()?, start.parse::<u64>().ok()?)));
    let Some((pid, start)) = named else {
        return Err("not a wave-mcp server record (name is not <pid>-<start>.json)".into());
    };
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_FILE + 1), &mut bytes)
        .map_err(|e| e.to_string())?;
    let file: OwnerFile = serde_json::from_slice(&bytes).map_err(|e| format!("invalid: {e}"))?;
    if file.version != VERSION {
        return Err(format!("unknown version {}", file.version));
    }
    if file.owner != (ProcessId { pid, start }) {
        return Err("owner does not match the file name".into());
    }
    Ok(file)
}

/// Opens `path` for reading without following a symbolic link (and without blocking on a
/// FIFO someone put there).
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK,
    );
    options.open(path)
}

/// The owner runs: a live (non-zombie) process with its pid and start time.
fn owner_alive(owner: ProcessId) -> bool {
    if current_owner() == Some(owner) {
        return true;
    }
    proc_info(owner.pid).is_some_and(|info| info.start == owner.start && !info.zombie)
}

#[derive(Clone, Copy)]
enum Sig {
    Term,
    Kill,
}

/// Signals what is left of `group`, if it still is ours; returns whether anything was signalled.
///
/// - Leader present with the recorded start time (a zombie leader too: it still holds the pid,
///   so the group cannot have been reused): SIGTERM/SIGKILL to the whole group.
/// - The pid now belongs to a process with another start time (pid reuse): nothing.
/// - Leader gone (it exited, e.g. on the end of its stdin, and was reaped) while members of its
///   group still run (grandchildren): the kernel does not hand out a pid that is still a live
///   group's id, so these are the group's own members; each whose start time is not before the
///   recorded one is signalled by pid (Linux; elsewhere such a group is left alone).
#[cfg(unix)]
fn signal(group: Group, sig: Sig) -> bool {
    use nix::sys::signal::{Signal, kill, killpg};
    use nix::unistd::{Pid, getpgrp};
    if group.pgid <= 1 || group.pid != group.pgid {
        return false;
    }
    let Ok(pgid) = i32::try_from(group.pgid) else {
        return false;
    };
    if pgid == getpgrp().as_raw() {
        return false;
    }
    let signal = match sig {
        Sig::Term => Signal::SIGTERM,
        Sig::Kill => Signal::SIGKILL,
    };
    match proc_info(group.pid) {
        Some(leader) if leader.start == group.start && leader.pgrp == group.pgid => {
            killpg(Pid::from_raw(pgid), signal).is_ok()
        }
        Some(_) => false,
        None => {
            let members = group_members(group);
            for &pid in &members {
                if let Ok(pid) = i32::try_from(pid) {
                    let _ = kill(Pid::from_raw(pid), signal);
                }
            }
            !members.is_empty()
        }
    }
}

/// Running members of `group` started no earlier than its recorded leader.
#[cfg(target_os = "linux")]
fn group_members(group: Group) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            proc_info(pid)
                .is_some_and(|i| i.pgrp == group.pgid && !i.zombie && i.start >= group.start)
        })
        .collect()
}

#[cfg(all(unix, not(target_os = "linux")))]
fn group_members(_group: Group) -> Vec<u32> {
    Vec::new()
}

#[cfg(not(unix))]
fn signal(_group: Group, _sig: Sig) -> bool {
    false
}

/// A signalled group still has a running member (its leader counts while it is not a zombie).
#[cfg(unix)]
fn still_running(group: Group) -> bool {
    let leader_runs = proc_info(group.pid).is_some_and(|i| i.start == group.start && !i.zombie);
    leader_runs || group_alive(group.pgid)
}

#[cfg(not(unix))]
fn still_running(_group: Group) -> bool {
    false
}

/// Whether a process of group `pgid` still runs. Zombies do not count: they have exited, and an
/// orphaned one waits for an init process that may never reap it.
#[cfg(target_os = "linux")]
pub(crate) fn group_alive(pgid: u32) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    let pgid = pgid.to_string();
    dir.filter_map(|entry| entry.ok())
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .any(|entry| {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                return false;
            };
            // After the parenthesised command name: state, ppid, pgrp.
            let mut fields = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest)
                .unwrap_or("")
                .split_whitespace();
            let state = fields.next();
            let pgrp = fields.nth(1);
            pgrp == Some(pgid.as_str()) && !matches!(state, Some("Z") | Some("X"))
        })
}

#[cfg(all(unix, not(target_os = "linux")))]
pub(crate) fn group_alive(pgid: u32) -> bool {
    let Ok(pgid) = i32::try_from(pgid) else {
        return false;
    };
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None).is_ok()
}

/// What the registry reads about a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcInfo {
    pub start: u64,
    pub pgrp: u32,
    pub zombie: bool,
}

/// Start time, process group and zombie state of `pid`, if it exists.
#[cfg(target_os = "linux")]
pub fn proc_info(pid: u32) -> Option<ProcInfo> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat)
}

/// Parses `/proc/<pid>/stat`: after the parenthesised command name come field 3 (state), 4
/// (ppid), 5 (pgrp) ... 22 (starttime).
#[cfg(any(target_os = "linux", test))]
fn parse_stat(stat: &str) -> Option<ProcInfo> {
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = *fields.first()?;
    let pgrp = fields.get(2)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some(ProcInfo {
        start,
        pgrp,
        zombie: matches!(state, "Z" | "X"),
    })
}

/// Start time (µs since the epoch), process group and zombie state through `proc_pidinfo`
/// (`PROC_PIDTBSDINFO`, the same data as `kinfo_proc`).
#[cfg(target_os = "macos")]
pub fn proc_info(pid: u32) -> Option<ProcInfo> {
    use nix::libc;
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: `info` is a writable buffer of `size` bytes for the kernel to fill.
    let written = unsafe {
        libc::proc_pidinfo(
            i32::try_from(pid).ok()?,
            libc::PROC_PIDTBSDINFO,
            0,
            (&mut info as *mut libc::proc_bsdinfo).cast(),
            size,
        )
    };
    if written != size {
        return None;
    }
    Some(ProcInfo {
        start: info.pbi_start_tvsec * 1_000_000 + info.pbi_start_tvusec,
        pgrp: info.pbi_pgid,
        zombie: info.pbi_status == libc::SZOMB,
    })
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub fn proc_info(_pid: u32) -> Option<ProcInfo> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    // REAP-1: the start time is field 22 and the group field 5, also with spaces and parentheses
    // in the command name.
    #[test]
    fn stat_fields_are_read_after_the_command_name() {
        let stat = "4242 (a (b) c) S 1 4240 4240 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 \
                    1000 10 18446744073709551615";
        assert_eq!(
            parse_stat(stat),
            Some(ProcInfo {
                start: 987654,
                pgrp: 4240,
                zombie: false
            })
        );
        assert_eq!(parse_stat("1 (x) Z 0 1"), None);
    }

    // REAP-1: our own start time reads, and the record round-trips through the owner file.
    #[cfg(target_os = "linux")]
    #[test]
    fn records_are_written_and_removed_with_the_last_group() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("run");
        let me = current_owner().expect("own start time");
        let path = dir.join(owner_file_name(me));
        let record = record(&dir, std::process::id()).expect("recorded");
        // TRUST-8: the run directory is made 0700.
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let file = read_owner_file(&path, &owner_file_name(me)).expect("owner file");
        assert_eq!(file.owner, me);
        assert_eq!(file.groups, vec![record.group()]);
        assert_eq!(record.group().start, me.start);
        record.release();
        assert!(!path.exists(), "the owner file outlived its last record");
    }

    // TRUST-8: nothing is recorded in a run directory open to others or reached by a link.
    #[cfg(target_os = "linux")]
    #[test]
    fn trust_8_records_go_only_into_a_private_run_dir() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let me = current_owner().expect("own start time");
        let open = root.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let private = root.path().join("private");
        let link = root.path().join("link");
        create_private_dir(&private).unwrap();
        std::os::unix::fs::symlink(&private, &link).unwrap();
        for dir in [&open, &link] {
            assert!(distrust(dir).is_some(), "{dir:?}");
            let _kept = record(dir, std::process::id());
            assert!(
                !dir.join(owner_file_name(me)).exists(),
                "recorded in {dir:?}"
            );
        }
        assert_eq!(distrust(&private), None);
        assert!(std::fs::read_dir(&private).unwrap().next().is_none());
    }
}
