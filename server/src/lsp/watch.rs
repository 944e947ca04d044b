//! Watching the config files (`<workdir>/.mcp.json`, `~/.wave/mcp.json`, the plugins'
//! `~/.wave/plugins/<plugin>/.mcp.json`) with `notify`, so an edit by hand or by the AI (or a
//! plugin installed or removed) reloads the servers of every session that reads the file.
//!
//! Directories are watched, not files: editors save by writing a new file and renaming it over
//! the old one. Events are gathered until the directory has been quiet for a moment, so a save
//! that takes several writes reloads once, from the finished file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;

/// Quiet time that ends a burst of events.
const SETTLE: Duration = Duration::from_millis(150);

/// A directory watcher that reports the changed paths, in bursts.
pub struct ConfigWatcher {
    watcher: Mutex<Option<RecommendedWatcher>>,
    watched: Mutex<HashSet<PathBuf>>,
}

impl ConfigWatcher {
    /// Starts watching nothing yet; `on_change` gets every burst of changed paths. Must run
    /// inside the tokio runtime. A watcher that cannot start is logged: the sidecar works
    /// without live reload.
    pub fn start(on_change: impl Fn(Vec<PathBuf>) + Send + 'static) -> ConfigWatcher {
        let (tx, rx) = mpsc::unbounded_channel::<PathBuf>();
        let handler = move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else {
                return;
            };
            if matches!(event.kind, EventKind::Access(_)) {
                return;
            }
            for path in event.paths {
                let _ = tx.send(path);
            }
        };
        let watcher = match notify::recommended_watcher(handler) {
            Ok(watcher) => Some(watcher),
            Err(e) => {
                tracing::warn!("config files will not be watched: {e}");
                None
            }
        };
        tokio::spawn(settle(rx, on_change));
        ConfigWatcher {
            watcher: Mutex::new(watcher),
            watched: Mutex::new(HashSet::new()),
        }
    }

    /// Watches `dir` (not its subdirectories) if it exists and is not watched yet.
    pub fn watch_dir(&self, dir: &Path) {
        if !dir.is_dir() {
            return;
        }
        let mut watched = self.watched.lock().unwrap_or_else(|e| e.into_inner());
        if watched.contains(dir) {
            return;
        }
        let mut watcher = self.watcher.lock().unwrap_or_else(|e| e.into_inner());
        let Some(watcher) = watcher.as_mut() else {
            return;
        };
        match watcher.watch(dir, RecursiveMode::NonRecursive) {
            Ok(()) => {
                watched.insert(dir.to_path_buf());
            }
            Err(e) => tracing::warn!("cannot watch {}: {e}", dir.display()),
        }
    }

    /// Stops watching (and reporting) for good.
    pub fn stop(&self) {
        let watcher = self
            .watcher
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        drop(watcher);
    }
}

/// Gathers paths until `SETTLE` passes without a new one, then reports them once.
async fn settle(
    mut rx: mpsc::UnboundedReceiver<PathBuf>,
    on_change: impl Fn(Vec<PathBuf>) + Send + 'static,
) {
    while let Some(first) = rx.recv().await {
        let mut paths = vec![first];
        loop {
            match tokio::time::timeout(SETTLE, rx.recv()).await {
                Ok(Some(path)) => paths.push(path),
                Ok(None) => return,
                Err(_) => break,
            }
        }
        paths.sort();
        paths.dedup();
        on_change(paths);
    }
}
