//! [`WorkspaceWatch`]: one workspace as the [`Watcher`](crate::Watcher) serves it (a watch
//! per directory, see `tree`), started lazily and best effort, with its epoch and sequence
//! numbers, the journal, the caches and the subscribers it feeds, and the cookie
//! synchronisation point.
//!
//! Lock order: the state mutex is never held while a start is queued or built (the walk
//! that adds the watches is long) or while the workspace's table is given back; the hub
//! takes it, under its own lock, once per record, in `handler`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use codespace_fs::Root;
use codespace_types::{RootStatus, WatchState};

use crate::cache::{CacheStats, Caches};
use crate::event::EventKind;
use crate::hub::Core;
use crate::journal::Journal;
use crate::subscribe;

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
    /// Which start is current: records of an older one are dropped.
    pub(crate) generation: u64,
    /// Given back to the hub ([`Watcher::remove_root`](crate::Watcher::remove_root)): never started again.
    removed: bool,
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

/// One workspace as the [`Watcher`](crate::Watcher) serves it, and everything it feeds. Dropping it gives
/// its watches back.
pub struct WorkspaceWatch {
    pub(crate) shared: Arc<Shared>,
    /// Names this server instance in cursors, so a cursor from an earlier run never matches.
    pub(crate) instance: u64,
    pub(crate) hub: Arc<Core>,
    pub(crate) key: u64,
}

impl WorkspaceWatch {
    /// `root` on a [`Watcher`](crate::Watcher) of its own, not started yet (tests of one workspace; the
    /// runner adds every root to its one watcher with [`Watcher::add_root`](crate::Watcher::add_root)).
    #[cfg(test)]
    pub(crate) fn new(root: Arc<Root>) -> WorkspaceWatch {
        crate::Watcher::new().add_root(root)
    }

    /// `root` as workspace `key` of `hub`, not started yet.
    pub(crate) fn registered(root: Arc<Root>, hub: Arc<Core>, key: u64) -> WorkspaceWatch {
        let root_path = root.path().to_path_buf();
        let inner = Inner {
            status: Status::NotStarted,
            generation: 0,
            removed: false,
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
        WorkspaceWatch { shared, instance: rand::random::<u64>(), hub, key }
    }

    /// Queues the watcher's start (see `hub`) if it has not started, or if it failed more
    /// than [`RETRY_AFTER`] ago (an overflow retries at once). Never fails and never waits:
    /// until it runs, callers get uncached answers.
    pub fn ensure_started(&self) {
        let mut inner = self.shared.lock();
        let restart = match &inner.status {
            _ if inner.removed => return,
            Status::NotStarted => false,
            Status::Failed { retry_at, .. } if Instant::now() >= *retry_at => true,
            Status::Starting | Status::Running | Status::Failed { .. } => return,
        };
        inner.status = Status::Starting;
        inner.generation += 1;
        let generation = inner.generation;
        drop(inner);
        if let Err(reason) = self.hub.queue(self.key, generation, restart) {
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
        if inner.removed {
            return Err(WatchError { reason: "the workspace is no longer watched".to_owned() });
        }
        inner.generation += 1;
        let generation = inner.generation;
        inner.status = Status::Starting;
        drop(inner);
        self.hub
            .build(self.key, &self.shared, generation, true)
            .map_err(|reason| WatchError { reason })
    }

    /// Gives the workspace's watches back to the hub for good (see [`Watcher::remove_root`](crate::Watcher::remove_root)).
    pub(crate) fn remove(&self) {
        let mut inner = self.shared.lock();
        if inner.removed {
            return;
        }
        inner.removed = true;
        inner.generation += 1;
        inner.caches.clear();
        let reason = "the workspace is no longer watched (removed from the watcher)".to_owned();
        inner.status = Status::Failed { reason, retry_at: Instant::now() };
        for s in inner.subscribers.drain(..).filter_map(|s| s.upgrade()) {
            s.close();
        }
        drop(inner);
        self.shared.changed.notify_all();
        self.hub.remove(self.key);
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
        self.remove();
    }
}

/// Whether the workspace may be watched now: the test hook, and a root path that still
/// names the opened root (the root descriptor is what is watched; a root path that names
/// another directory now is reported as such rather than watched).
pub(crate) fn precheck(shared: &Shared) -> Result<(), String> {
    if std::mem::take(&mut shared.lock().fail_next_spawn) {
        return Err("start failed (test hook)".to_owned());
    }
    match shared.root.status() {
        RootStatus::Current => Ok(()),
        RootStatus::Replaced => {
            Err("the root path no longer names the workspace directory".to_owned())
        }
        RootStatus::Removed => Err("the workspace directory was removed".to_owned()),
    }
}

/// Records a start's outcome if it is still the current one; true when the watcher now
/// runs.
pub(crate) fn finish_start(
    shared: &Shared,
    generation: u64,
    result: Result<(), String>,
    new_epoch: bool,
) -> bool {
    let mut inner = shared.lock();
    if inner.generation != generation || inner.removed {
        return false;
    }
    let running = result.is_ok();
    match result {
        Ok(()) => {
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
    running
}

pub(crate) mod handler;

pub(crate) use handler::emit;

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and change them on the host filesystem"
)]
mod tests;
