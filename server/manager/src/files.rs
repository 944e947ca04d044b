//! Small files in `~/.wave` shared between processes: an advisory lock beside a file and an
//! atomic replace (temp file + rename), used by the tool cache, the credential store and the
//! spawn registry.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Creates the directory that holds `path`; with `private`, one only the user may enter (0700).
pub(crate) fn ensure_parent(path: &Path, private: bool) -> io::Result<()> {
    let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(());
    };
    fs::create_dir_all(dir)?;
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    #[cfg(not(unix))]
    let _ = private;
    Ok(())
}

/// `path` with `suffix` appended to its file name.
pub(crate) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Held while alive: an exclusive advisory lock on a lock file.
#[cfg(unix)]
pub(crate) struct Lock {
    _flock: nix::fcntl::Flock<fs::File>,
}

/// Takes the exclusive lock on `lock_path` (created if missing), blocking until it is free.
#[cfg(unix)]
pub(crate) fn lock(lock_path: &Path) -> io::Result<Lock> {
    use nix::errno::Errno;
    use nix::fcntl::{Flock, FlockArg};

    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock_path)?;
    loop {
        match Flock::lock(file, FlockArg::LockExclusive) {
            Ok(flock) => return Ok(Lock { _flock: flock }),
            Err((f, Errno::EINTR)) => file = f,
            Err((_, errno)) => return Err(io::Error::from(errno)),
        }
    }
}

/// No advisory lock on non-unix platforms; writes are still atomic.
#[cfg(not(unix))]
pub(crate) struct Lock;

#[cfg(not(unix))]
pub(crate) fn lock(_lock_path: &Path) -> io::Result<Lock> {
    Ok(Lock)
}

/// Writes `bytes` to a temp file in the same directory, then renames it over `path`. With
/// `private`, the file is readable by the user only (0600) from its first byte.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], private: bool) -> io::Result<()> {
    replace(path, bytes, private, true)
}

/// [`write_atomic`] without the fsync: atomic for readers and across a crash of this process
/// (the page cache survives it), not across a crash of the machine. For the spawn registry,
/// whose records matter only while the machine runs (REAP-1).
pub(crate) fn write_atomic_volatile(path: &Path, bytes: &[u8], private: bool) -> io::Result<()> {
    replace(path, bytes, private, false)
}

fn replace(path: &Path, bytes: &[u8], private: bool, sync: bool) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);

    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = sibling(path, &format!(".tmp-{}-{n}", std::process::id()));
    let result = write_new(&tmp, bytes, private, sync).and_then(|()| fs::rename(&tmp, path));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn write_new(path: &Path, bytes: &[u8], private: bool, sync: bool) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let mut f = options.open(path)?;
    f.write_all(bytes)?;
    if sync { f.sync_all() } else { Ok(()) }
}

/// What identifies one version of a file on disk (length, modification time, inode): a cache of
/// its content is valid while the stamp is the same. One `stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
}

impl Stamp {
    /// The stamp of `path` now; `None` when it does not exist (or cannot be read).
    pub fn of(path: &Path) -> Option<Stamp> {
        let metadata = fs::metadata(path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&metadata);
        #[cfg(not(unix))]
        let inode = 0;
        Some(Stamp {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            inode,
        })
    }
}

/// A JSON file of ours that carries a `version` field: `Ok(None)` when it does not exist; an
/// error naming the file (and what to do, `remedy`) when it cannot be read, is not valid, or has
/// another format version. Such a file is never discarded or overwritten.
pub(crate) fn read_versioned<T: serde::de::DeserializeOwned>(
    path: &Path,
    version: u32,
    kind: &str,
    remedy: &str,
) -> Result<Option<T>, String> {
    #[derive(serde::Deserialize)]
    struct Versioned {
        version: u32,
    }
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let invalid =
        |e: serde_json::Error| format!("{} is not a valid {kind} ({e}); {remedy}", path.display());
    let found: Versioned = serde_json::from_slice(&bytes).map_err(invalid)?;
    if found.version != version {
        return Err(format!(
            "{} has format version {}, this wave-mcp reads version {version}",
            path.display(),
            found.version
        ));
    }
    serde_json::from_slice(&bytes).map(Some).map_err(invalid)
}
