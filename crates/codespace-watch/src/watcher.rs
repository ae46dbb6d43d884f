//! [`WorkspaceWatch`]: one inotify watcher per workspace root (a watch per directory, see
//! `tree`), started lazily and best effort, with its epoch and sequence numbers, the
//! journal, the caches and the subscribers it feeds, and the cookie synchronisation point.
//!
//! Lock order: the state mutex is never held while starting a watcher (the walk that adds
//! the watches is long) or stopping one; the event thread (`reader`) takes it once per
//! record, in `handler`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use codespace_fs::Root;
use codespace_types::{RootStatus, WatchState};

use crate::cache::{CacheStats, Caches};
use crate::event::EventKind;
use crate::journal::Journal;
use crate::subscribe;
use crate::tree::Tree;

/// How long after a failure the next use tries a new watcher.
pub const RETRY_AFTER: Duration = Duration::from_secs(60);

/// What `workspace_info` shows of a watcher.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WatchReport {
    pub state: WatchState,
    /// Why it failed, for [`WatchState::Failed`].
    pub reason: Option<String>,
    pub epoch: u64,
    pub seq: u64,
    pub stats: CacheStats,
}

/// Why a watcher could not be (re)started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the workspace watcher could not start: {reason}")]
pub struct WatchError {
    pub reason: String,
}

#[derive(Debug)]
pub(crate) enum Status {
    NotStarted,
    Starting,
    Running,
    Failed { reason: String, retry_at: Instant },
}

pub(crate) struct Inner {
    pub(crate) status: Status,
    /// Which watcher is current: records of an older one are dropped.
    generation: u64,
    watcher: Option<reader::Stopper>,
    pub(crate) epoch: u64,
    pub(crate) seq: u64,
    pub(crate) journal: Journal,
    pub(crate) caches: Caches,
    subscribers: Vec<Weak<subscribe::Shared>>,
    /// Cookies waited for, and whether each has been seen.
    pub(crate) cookies: HashMap<String, bool>,
    pub(crate) next_cookie: u64,
    fail_next_spawn: bool,
    /// Test hook: how long the handler waits before handling each event.
    event_delay: Duration,
    /// Records the kernel delivered, for tests of what is watched.
    pub(crate) raw_events: u64,
}

impl Inner {
    /// The epoch, while the watcher runs.
    pub(crate) fn running_epoch(&self) -> Option<u64> {
        matches!(self.status, Status::Running).then_some(self.epoch)
    }
}

pub(crate) struct Shared {
    pub(crate) root: Arc<Root>,
    root_path: PathBuf,
    pub(crate) inner: Mutex<Inner>,
    /// Signalled on every status change and every cookie seen.
    pub(crate) changed: Condvar,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The watcher of one workspace, and everything it feeds. Dropping it stops the watcher.
pub struct WorkspaceWatch {
    pub(crate) shared: Arc<Shared>,
    /// Names this server instance in cursors, so a cursor from an earlier run never matches.
    pub(crate) instance: u64,
}

impl WorkspaceWatch {
    /// A watcher for `root`, not started yet.
    pub fn new(root: Arc<Root>) -> WorkspaceWatch {
        let root_path = root.path().to_path_buf();
        let inner = Inner {
            status: Status::NotStarted,
            generation: 0,
            watcher: None,
            epoch: 1,
            seq: 0,
            journal: Journal::default(),
            caches: Caches::default(),
            subscribers: Vec::new(),
            cookies: HashMap::new(),
            next_cookie: 0,
            fail_next_spawn: false,
            event_delay: Duration::ZERO,
            raw_events: 0,
        };
        let shared =
            Arc::new(Shared { root, root_path, inner: Mutex::new(inner), changed: Condvar::new() });
        WorkspaceWatch { shared, instance: rand::random::<u64>() }
    }

    /// Starts the watcher in the background if it has not started, or if it failed more
    /// than [`RETRY_AFTER`] ago (an overflow retries at once). Never fails and never waits:
    /// until it runs, callers get uncached answers.
    pub fn ensure_started(&self) {
        let mut inner = self.shared.lock();
        let restart = match &inner.status {
            Status::NotStarted => false,
            Status::Failed { retry_at, .. } if Instant::now() >= *retry_at => true,
            Status::Starting | Status::Running | Status::Failed { .. } => return,
        };
        inner.status = Status::Starting;
        inner.generation += 1;
        let generation = inner.generation;
        let old = inner.watcher.take();
        drop(inner);
        drop(old);
        let shared = Arc::clone(&self.shared);
        let spawned =
            std::thread::Builder::new().name("codespace-watch-start".to_owned()).spawn(move || {
                let result = spawn_watcher(&shared, generation);
                finish_start(&shared, generation, result, restart);
            });
        if let Err(e) = spawned {
            let reason = format!("no thread to start the watcher: {e}");
            finish_start(&self.shared, generation, Err(reason), restart);
        }
    }

    /// Waits up to `wait` for a start in progress to finish; true when running.
    pub fn wait_running(&self, wait: Duration) -> bool {
        let end = Instant::now() + wait;
        let mut inner = self.shared.lock();
        loop {
            match inner.status {
                Status::Running => return true,
                Status::Starting => {}
                Status::NotStarted | Status::Failed { .. } => return false,
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            inner = self
                .shared
                .changed
                .wait_timeout(inner, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Replaces the watcher now: on success the epoch goes up by one, `seq` starts again
    /// and the new epoch's first event is `ResyncRequired`; on failure a `ResyncRequired`
    /// is emitted in the old epoch, the caches are off, and the error says why.
    pub fn restart(&self) -> Result<(), WatchError> {
        let mut inner = self.shared.lock();
        inner.generation += 1;
        let generation = inner.generation;
        inner.status = Status::Starting;
        let old = inner.watcher.take();
        drop(inner);
        drop(old);
        let result = spawn_watcher(&self.shared, generation);
        let failed = result.as_ref().err().cloned();
        finish_start(&self.shared, generation, result, true);
        match failed {
            Some(reason) => Err(WatchError { reason }),
            None => Ok(()),
        }
    }

    /// A new subscriber to every event from now on.
    pub fn subscribe(&self) -> subscribe::Subscription {
        let shared = Arc::new(subscribe::Shared::default());
        let mut inner = self.shared.lock();
        inner.subscribers.retain(|s| s.strong_count() > 0);
        inner.subscribers.push(Arc::downgrade(&shared));
        subscribe::Subscription { shared }
    }

    /// The watcher's state and the caches' counters.
    pub fn report(&self) -> WatchReport {
        let inner = self.shared.lock();
        let (state, reason) = match &inner.status {
            Status::NotStarted => (WatchState::NotStarted, None),
            Status::Starting => (WatchState::Starting, None),
            Status::Running => (WatchState::Running, None),
            Status::Failed { reason, .. } => (WatchState::Failed, Some(reason.clone())),
        };
        WatchReport {
            state,
            reason,
            epoch: inner.epoch,
            seq: inner.seq,
            stats: inner.caches.stats(),
        }
    }

    /// Makes the next start or restart fail, as a watch limit would.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn fail_next_spawn(&self) {
        self.shared.lock().fail_next_spawn = true;
    }

    /// Delays the handling of every event by `delay`, as a loaded machine may.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn delay_events_for_tests(&self, delay: Duration) {
        self.shared.lock().event_delay = delay;
    }

    /// How many records the kernel has delivered to this workspace's handler.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn raw_events_for_tests(&self) -> u64 {
        self.shared.lock().raw_events
    }

    /// Emits `ResyncRequired` as a record that cannot be named would, without stopping the
    /// watcher.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn force_resync(&self) {
        let mut inner = self.shared.lock();
        emit(&mut inner, EventKind::ResyncRequired);
    }

    /// Delivers an overflow (`Q_OVERFLOW`) to the handler, as the kernel would.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn overflow_for_tests(&self) {
        let generation = self.shared.lock().generation;
        let overflow = crate::event::Classified {
            kinds: vec![EventKind::ResyncRequired],
            lost: Some(crate::event::Lost::Overflow),
            ..crate::event::Classified::default()
        };
        handler::deliver(&self.shared, generation, overflow);
    }
}

impl std::fmt::Debug for WorkspaceWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceWatch")
            .field("root", &self.shared.root_path)
            .field("report", &self.report())
            .finish()
    }
}

impl Drop for WorkspaceWatch {
    fn drop(&mut self) {
        let mut inner = self.shared.lock();
        inner.generation += 1;
        let old = inner.watcher.take();
        for s in inner.subscribers.drain(..).filter_map(|s| s.upgrade()) {
            s.close();
        }
        drop(inner);
        drop(old);
    }
}

/// A watcher on the root and every directory beneath it (see `tree`) whose records reach
/// the handler tagged with `generation`.
fn spawn_watcher(shared: &Arc<Shared>, generation: u64) -> Result<reader::Stopper, String> {
    if std::mem::take(&mut shared.lock().fail_next_spawn) {
        return Err("start failed (test hook)".to_owned());
    }
    // The root descriptor is what is watched; a root path that names another directory
    // now is reported as such rather than watched.
    match shared.root.status() {
        RootStatus::Current => {}
        RootStatus::Replaced => {
            return Err("the root path no longer names the workspace directory".to_owned());
        }
        RootStatus::Removed => return Err("the workspace directory was removed".to_owned()),
    }
    let tree = Tree::start(&shared.root)?;
    reader::spawn(shared, generation, tree)
}

/// Installs a started watcher (or records its failure) if it is still the current one.
fn finish_start(
    shared: &Shared,
    generation: u64,
    result: Result<reader::Stopper, String>,
    new_epoch: bool,
) {
    let mut inner = shared.lock();
    if inner.generation != generation {
        drop(inner);
        drop(result);
        return;
    }
    match result {
        Ok(watcher) => {
            inner.watcher = Some(watcher);
            inner.status = Status::Running;
            if new_epoch {
                inner.epoch += 1;
                inner.seq = 0;
                inner.journal.clear();
                emit(&mut inner, EventKind::ResyncRequired);
            }
            tracing::debug!(root = %shared.root_path.display(), epoch = inner.epoch, "workspace watcher running");
        }
        Err(reason) => {
            tracing::warn!(root = %shared.root_path.display(), %reason, "workspace watcher failed; caches are off");
            if new_epoch {
                emit(&mut inner, EventKind::ResyncRequired);
            }
            inner.caches.clear();
            inner.status = Status::Failed { reason, retry_at: Instant::now() + RETRY_AFTER };
        }
    }
    drop(inner);
    shared.changed.notify_all();
}

pub(crate) mod handler;
mod reader;

pub(crate) use handler::emit;

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and change them on the host filesystem"
)]
mod tests;
