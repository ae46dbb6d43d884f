//! The caches the watcher makes safe, and their counters. Pure bookkeeping: the checks that
//! touch the disk (the identity re-check, the cookie) are in `watcher`.
//!
//! Version cache: keyed by path, each entry the version of one inode with its identity
//! (device, inode, size, mtime, ctime) and the epoch it was taken in. An entry answers only
//! while its epoch is the watcher's and the path's identity, re-checked on every hit, is
//! unchanged. An entry is taken only when the file's ctime is older than the read's start by
//! more than any filesystem's timestamp granularity ([`RACY_MARGIN`]), so any later write
//! moves the ctime even when it lands within the same clock tick (git's "racy clean" rule);
//! events only free the memory early.
//!
//! Listing cache: the complete walk (with and without ignored files), dropped by any event
//! that can change a listing and whole on `ResyncRequired`. A walk is kept only when no such
//! event arrived while it ran, and not within [`SETTLE`] of a directory appearing: the
//! watcher adds the new directory's watch when it reads its event, and files created before
//! that have no events of their own.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use codespace_fs::{FileKind, FileMeta, Version, Walk};

use crate::held::HeldDirs;

/// Entries kept per workspace; past it the oldest-named entries give way.
pub const MAX_VERSION_ENTRIES: usize = 50_000;
/// A file whose ctime is closer than this to the start of its read is not cached: a write
/// in the same timestamp tick would leave its identity unchanged (2 s covers FAT; ext4,
/// XFS, btrfs and tmpfs tick in milliseconds).
pub const RACY_MARGIN: Duration = Duration::from_secs(2);
/// Values derived from the cached listings kept at once (glob matches, say).
pub const MAX_DERIVED: usize = 16;
/// How long after a directory appears a walk is not kept (see the module text).
pub const SETTLE: Duration = Duration::from_millis(250);

/// The identity a version is trusted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: SystemTime,
    ctime: SystemTime,
}

impl Identity {
    /// The identity of a regular file; `None` for anything else.
    pub(crate) fn of(meta: &FileMeta) -> Option<Identity> {
        (meta.kind == FileKind::Regular).then_some(Identity {
            dev: meta.dev,
            ino: meta.ino,
            size: meta.size,
            mtime: meta.mtime,
            ctime: meta.ctime,
        })
    }

    /// Old enough, relative to a read that started at `started`, to be cached.
    pub(crate) fn settled_before(&self, started: SystemTime) -> bool {
        started.checked_sub(RACY_MARGIN).is_some_and(|edge| self.ctime < edge && self.mtime < edge)
    }
}

#[derive(Debug, Clone)]
struct VersionEntry {
    epoch: u64,
    identity: Identity,
    version: Version,
}

/// Hit and miss counts, since the server started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CacheStats {
    pub version_hits: u64,
    pub version_misses: u64,
    pub listing_hits: u64,
    pub listing_misses: u64,
    /// Cookies that did not come back in time (the call walked instead).
    pub sync_timeouts: u64,
    /// Resyncs (an overflow, an error, an unclassifiable event, a lagging subscriber): each
    /// dropped both caches.
    pub resyncs: u64,
    pub version_entries: u64,
    pub listing_entries: u64,
}

/// Both caches of one workspace.
#[derive(Debug, Default)]
pub(crate) struct Caches {
    versions: BTreeMap<String, VersionEntry>,
    /// Index 0: ignore rules applied; 1: everything.
    listings: [Option<Arc<Walk>>; 2],
    /// Bumped by every event that may change a listing.
    listing_generation: u64,
    /// Values computed from a cached listing (a glob's matches, say), each with the walk
    /// it was computed from; dropped with the listings.
    derived: Vec<(Arc<Walk>, String, Arc<dyn std::any::Any + Send + Sync>)>,
    /// When a directory last appeared (see [`SETTLE`]).
    last_new_directory: Option<Instant>,
    /// Directories held open for the identity checks (see `held`): they go as the
    /// versions beneath them do.
    pub(crate) held: HeldDirs,
    pub(crate) stats: CacheStats,
}

impl Caches {
    /// Forgets everything (a resync, a restart, a failure).
    pub(crate) fn clear(&mut self) {
        self.versions.clear();
        self.held.forget("");
        self.invalidate_listings();
    }

    pub(crate) fn invalidate_listings(&mut self) {
        self.listings = [None, None];
        self.derived.clear();
        self.listing_generation += 1;
    }

    pub(crate) fn directory_appeared(&mut self, at: Instant) {
        self.last_new_directory = Some(at);
        self.invalidate_listings();
    }

    /// Drops the entries of `path` and of everything beneath it, and the directories held
    /// there.
    pub(crate) fn forget(&mut self, path: &str) {
        self.held.forget(path);
        self.versions.remove(path);
        let below = format!("{path}/");
        // '0' follows '/' in byte order: the range is exactly the paths under `path/`.
        let end = format!("{path}0");
        let doomed: Vec<String> = self.versions.range(below..end).map(|(k, _)| k.clone()).collect();
        for k in doomed {
            self.versions.remove(&k);
        }
    }

    /// The cached version of `path` if it was taken in `epoch` from this identity.
    pub(crate) fn version(&self, path: &str, epoch: u64) -> Option<(Identity, &Version)> {
        self.versions.get(path).filter(|e| e.epoch == epoch).map(|e| (e.identity, &e.version))
    }

    pub(crate) fn keep_version(
        &mut self,
        path: &str,
        epoch: u64,
        identity: Identity,
        version: Version,
    ) {
        if self.versions.len() >= MAX_VERSION_ENTRIES && !self.versions.contains_key(path) {
            // Bounded: give way at the end opposite to the newcomer, so one hot subtree
            // cannot be evicted by its own walk.
            let last = self.versions.keys().next_back().cloned();
            if let Some(k) = last {
                self.versions.remove(&k);
            }
        }
        self.versions.insert(path.to_owned(), VersionEntry { epoch, identity, version });
    }

    pub(crate) fn listing(&self, include_ignored: bool) -> Option<Arc<Walk>> {
        self.listings[usize::from(include_ignored)].clone()
    }

    /// The value derived from `walk` under `key`, if `walk` is still a cached listing.
    pub(crate) fn derived(
        &self,
        walk: &Arc<Walk>,
        key: &str,
    ) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        self.derived
            .iter()
            .find(|(w, k, _)| Arc::ptr_eq(w, walk) && k == key)
            .map(|(_, _, v)| Arc::clone(v))
    }

    /// Keeps a value derived from `walk` while `walk` is a cached listing; bounded.
    pub(crate) fn keep_derived(
        &mut self,
        walk: &Arc<Walk>,
        key: &str,
        value: Arc<dyn std::any::Any + Send + Sync>,
    ) {
        let cached = self.listings.iter().flatten().any(|w| Arc::ptr_eq(w, walk));
        if !cached {
            return;
        }
        if self.derived.len() >= MAX_DERIVED {
            self.derived.remove(0);
        }
        self.derived.push((Arc::clone(walk), key.to_owned(), value));
    }

    pub(crate) fn listing_generation(&self) -> u64 {
        self.listing_generation
    }

    /// Keeps a walk that started at `started` with the generation `generation`, if nothing
    /// since can have changed it.
    pub(crate) fn keep_listing(
        &mut self,
        include_ignored: bool,
        generation: u64,
        started: Instant,
        walk: Arc<Walk>,
    ) -> bool {
        let settled =
            self.last_new_directory.is_none_or(|at| started.saturating_duration_since(at) > SETTLE);
        if generation != self.listing_generation || !settled || walk.incomplete {
            return false;
        }
        self.listings[usize::from(include_ignored)] = Some(walk);
        true
    }

    pub(crate) fn stats(&self) -> CacheStats {
        CacheStats {
            version_entries: self.versions.len() as u64,
            listing_entries: self.listings.iter().flatten().map(|w| w.files.len() as u64).sum(),
            ..self.stats
        }
    }
}

#[cfg(test)]
mod tests;
