//! The manager's background tasks (dials, connection watchers, stderr readers, refreshes), each
//! spawned with a name: cleanup waits for all of them, and when that takes long it can say which
//! ones it still waits for.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;
use tokio_util::task::TaskTracker;

/// A [`TaskTracker`] that also knows what each running task is.
#[derive(Debug, Clone, Default)]
pub(crate) struct Background {
    tracker: TaskTracker,
    running: Arc<Running>,
}

#[derive(Debug, Default)]
struct Running {
    next: AtomicU64,
    names: Mutex<BTreeMap<u64, String>>,
}

impl Running {
    fn names(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, String>> {
        self.names.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Removes its task's name when the task ends (or is aborted, or panics).
struct NameGuard {
    id: u64,
    running: Arc<Running>,
}

impl Drop for NameGuard {
    fn drop(&mut self) {
        self.running.names().remove(&self.id);
    }
}

impl Background {
    fn name(&self, what: String) -> NameGuard {
        let id = self.running.next.fetch_add(1, Ordering::Relaxed);
        self.running.names().insert(id, what);
        NameGuard {
            id,
            running: self.running.clone(),
        }
    }

    /// Spawns `future` as the task `what` (a few words: "stderr reader of pid 42").
    pub fn spawn<F>(&self, what: impl Into<String>, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let guard = self.name(what.into());
        self.tracker.spawn(async move {
            let _guard = guard;
            future.await
        })
    }

    /// Runs `work` on the blocking pool as the task `what`.
    pub fn spawn_blocking<F, T>(&self, what: impl Into<String>, work: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let guard = self.name(what.into());
        self.tracker.spawn_blocking(move || {
            let _guard = guard;
            work()
        })
    }

    /// What is running now, oldest first.
    pub fn running(&self) -> Vec<String> {
        self.running.names().values().cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.tracker.len()
    }

    /// No task may be spawned after this without [`Background::wait`] seeing it end too.
    pub fn close(&self) {
        self.tracker.close();
    }

    /// Resolves once closed and every task has ended.
    pub async fn wait(&self) {
        self.tracker.wait().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn names_last_as_long_as_their_tasks() {
        let tasks = Background::default();
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        tasks.spawn("waits for release", async move {
            let _ = released.await;
        });
        tasks.spawn("ends at once", async {}).await.unwrap();
        assert_eq!(tasks.running(), ["waits for release"]);
        let aborted = tasks.spawn("aborted", std::future::pending::<()>());
        aborted.abort();
        let _ = aborted.await;
        assert_eq!(tasks.running(), ["waits for release"]);
        release.send(()).unwrap();
        tasks.close();
        tasks.wait().await;
        assert!(tasks.running().is_empty());
        assert_eq!(tasks.len(), 0);
    }
}
