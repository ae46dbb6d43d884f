//! The answers the watcher makes cheap: [`WorkspaceWatch::read_window`],
//! [`WorkspaceWatch::listing`] and [`WorkspaceWatch::changes`], each falling back to the
//! disk whenever the watcher cannot vouch for the cache, and the cookie synchronisation
//! point ([`WorkspaceWatch::sync`]) that makes a cached answer reflect every change that
//! completed before the call began.

use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use codespace_fs::{FsError, OpenedFile, Root, Walk, WalkLimits, Window, WorkspacePath};

use crate::cache::Identity;
use crate::event::{COOKIE_PREFIX, is_cookie, is_server_temp};
use crate::journal::{BadCursor, Changes, Cursor};
use crate::watcher::{Status, WorkspaceWatch};

/// How long a cookie may take to come back before the call walks the disk instead.
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(1);
/// The caps of the walk that seeds the paths `changes` knows to exist (see `journal`).
pub(crate) const SEED_MAX_DIRS: usize = 20_000;
/// See [`SEED_MAX_DIRS`].
pub(crate) const SEED_MAX_ENTRIES: usize = 200_000;
/// See [`SEED_MAX_DIRS`].
pub(crate) const SEED_DEADLINE: Duration = Duration::from_secs(5);
/// How long `changes` waits for a watcher that is starting.
pub const START_WAIT: Duration = Duration::from_secs(10);

/// Why a synchronisation point could not be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncFailure {
    /// The watcher is not running.
    NotRunning,
    /// The cookie could not be created (a read-only filesystem, a full disk...).
    Cookie(String),
    /// The cookie's event did not arrive within [`SYNC_TIMEOUT`].
    Timeout,
}

impl WorkspaceWatch {
    /// The running epoch, or `None` when the caches must not answer.
    pub(crate) fn running_epoch(&self) -> Option<u64> {
        self.shared.lock().running_epoch()
    }

    /// Creates a cookie in the root and waits for its own event: once it arrives, every
    /// event queued before it (every change completed before this call) has been handled.
    /// Returns the epoch the point was reached in.
    pub fn sync(&self) -> Result<u64, SyncFailure> {
        self.sync_within(SYNC_TIMEOUT)
    }

    /// [`WorkspaceWatch::sync`], waiting at most `timeout` for the cookie.
    pub(crate) fn sync_within(&self, timeout: Duration) -> Result<u64, SyncFailure> {
        let name = {
            let mut inner = self.shared.lock();
            if !matches!(inner.status, Status::Running) {
                return Err(SyncFailure::NotRunning);
            }
            inner.next_cookie += 1;
            let name = format!(
                "{COOKIE_PREFIX}{}-{:x}-{}",
                std::process::id(),
                self.instance,
                inner.next_cookie
            );
            inner.cookies.insert(name.clone(), false);
            name
        };
        let created = self.shared.root.create_marker(&name);
        let made = created.is_ok();
        let mut inner = self.shared.lock();
        let outcome = match created {
            Err(e) => Err(SyncFailure::Cookie(e.to_string())),
            Ok(()) => {
                let end = Instant::now() + timeout;
                loop {
                    if inner.cookies.get(&name) == Some(&true) {
                        break match inner.status {
                            Status::Running => Ok(inner.epoch),
                            Status::NotStarted | Status::Starting | Status::Failed { .. } => {
                                Err(SyncFailure::NotRunning)
                            }
                        };
                    }
                    let left = end.saturating_duration_since(Instant::now());
                    if left.is_zero() || !matches!(inner.status, Status::Running) {
                        inner.caches.stats.sync_timeouts += 1;
                        break Err(SyncFailure::Timeout);
                    }
                    inner = self
                        .shared
                        .changed
                        .wait_timeout(inner, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            }
        };
        inner.cookies.remove(&name);
        drop(inner);
        if made {
            // Best effort: a cookie left behind is skipped by every listing.
            let _removed = self.shared.root.remove_marker(&name);
        }
        outcome
    }

    /// A window of `p` (`opened` by [`Root::open_regular`]) with the whole file's version:
    /// when the cache knows the version of the opened file's identity (same epoch, same
    /// device, inode, size, mtime and ctime), only the window is read; otherwise the whole
    /// file is hashed as it is read, and its version kept when it may be, as
    /// [`WorkspaceWatch::version`] keeps one.
    pub fn read_window(
        &self,
        opened: OpenedFile,
        p: &WorkspacePath,
        offset: u64,
        limit: usize,
    ) -> Result<Window, FsError> {
        let epoch = self.running_epoch();
        let started = SystemTime::now();
        let hit = std::cell::Cell::new(false);
        let (window, still) = Root::read_window_known(opened, p, offset, limit, |meta| {
            let (epoch, identity) = (epoch?, Identity::of(meta)?);
            let inner = self.shared.lock();
            let (cached, version) = inner.caches.version(p.as_str(), epoch)?;
            let valid = cached == identity
                && matches!(inner.status, Status::Running)
                && inner.epoch == epoch;
            hit.set(valid);
            valid.then_some(*version)
        })?;
        let mut inner = self.shared.lock();
        if hit.get() && still.is_none() {
            inner.caches.stats.version_hits += 1;
            return Ok(window);
        }
        inner.caches.stats.version_misses += 1;
        let identity =
            still.as_ref().and_then(Identity::of).filter(|id| id.settled_before(started));
        // A watcher that started while the file was hashed keeps its version too: the
        // identity held still and was settled before the read began, so any later change
        // shows in it, and the next window of an unchanged file never hashes it again.
        let epoch = epoch.or_else(|| inner.running_epoch());
        if let (Some(epoch), Some(identity)) = (epoch, identity)
            && matches!(inner.status, Status::Running)
            && inner.epoch == epoch
        {
            inner.caches.keep_version(p.as_str(), epoch, identity, window.version);
        }
        Ok(window)
    }

    /// The workspace's walk (`include_ignored` or not): the cached one when the watcher
    /// runs and a cookie proves every earlier event was handled, else `walk()`'s, kept for
    /// next time when nothing can have changed it meanwhile. The watcher's cookies are
    /// never listed.
    pub fn listing<E>(
        &self,
        include_ignored: bool,
        walk: impl FnOnce() -> Result<Walk, E>,
    ) -> Result<Arc<Walk>, E> {
        let fresh = |walk: Result<Walk, E>| {
            walk.map(|mut w| {
                w.files.retain(|p| !is_cookie(p));
                Arc::new(w)
            })
        };
        let Ok(epoch) = self.sync() else {
            self.shared.lock().caches.stats.listing_misses += 1;
            return fresh(walk());
        };
        let generation = {
            let mut inner = self.shared.lock();
            if let Some(hit) = inner.caches.listing(include_ignored) {
                inner.caches.stats.listing_hits += 1;
                return Ok(hit);
            }
            inner.caches.stats.listing_misses += 1;
            inner.caches.listing_generation()
        };
        let started = Instant::now();
        let out = fresh(walk())?;
        let mut inner = self.shared.lock();
        if matches!(inner.status, Status::Running) && inner.epoch == epoch {
            inner.caches.keep_listing(include_ignored, generation, started, Arc::clone(&out));
        }
        Ok(out)
    }

    /// A value computed by `make` from `walk` (a glob's matches, say), memoised while
    /// `walk` is the cached listing: it goes when the listing does.
    pub fn derived<T: Send + Sync + 'static>(
        &self,
        walk: &Arc<Walk>,
        key: &str,
        make: impl FnOnce() -> T,
    ) -> Arc<T> {
        let hit = self.shared.lock().caches.derived(walk, key);
        if let Some(v) = hit.and_then(|v| v.downcast::<T>().ok()) {
            return v;
        }
        let value = Arc::new(make());
        let erased: Arc<dyn std::any::Any + Send + Sync> = value.clone();
        self.shared.lock().caches.keep_derived(walk, key, erased);
        value
    }

    /// Seeds the journal's known paths with a walk, once per epoch (see `journal`): a walk
    /// over the caps or the deadline seeds nothing, and names that arrive by rename are
    /// then `created` as before.
    fn seed_known(&self) {
        let (epoch, from) = {
            let inner = self.shared.lock();
            if inner.journal.seeded() {
                return;
            }
            (inner.epoch, inner.seq)
        };
        let limits = WalkLimits {
            max_dirs: SEED_MAX_DIRS,
            max_entries: SEED_MAX_ENTRIES,
            deadline: Some(Instant::now() + SEED_DEADLINE),
            ..WalkLimits::default()
        };
        let Ok(mut walk) = self.shared.root.walk(&limits) else { return };
        if walk.incomplete {
            return;
        }
        walk.files.retain(|p| !is_cookie(p) && !is_server_temp(p));
        let mut inner = self.shared.lock();
        if matches!(inner.status, Status::Running)
            && inner.epoch == epoch
            && !inner.journal.seeded()
        {
            let now = inner.seq;
            inner.journal.seed(walk.files, from, now);
        }
    }

    /// What changed since `since` (a cursor an earlier call returned), or just the current
    /// cursor without one. `resync_required` whenever the watcher cannot vouch for the list:
    /// it is not running, the cursor is from another epoch or server run, events were lost,
    /// or the synchronisation point was not reached.
    pub fn changes(&self, since: Option<&str>) -> Result<Changes, BadCursor> {
        let since = since.map(Cursor::parse).transpose()?;
        self.ensure_started();
        let running = self.wait_running(START_WAIT);
        let synced = running && self.sync().is_ok();
        if synced {
            self.seed_known();
        }
        let inner = self.shared.lock();
        let now = Cursor { instance: self.instance, epoch: inner.epoch, seq: inner.seq };
        let mut out = match since {
            Some(since) => inner.journal.since(&since, now),
            None => Changes {
                cursor: now,
                changes: Vec::new(),
                resync_required: false,
                truncated: false,
            },
        };
        out.resync_required |= !synced;
        Ok(out)
    }
}
