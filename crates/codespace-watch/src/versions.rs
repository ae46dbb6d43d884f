//! [`WorkspaceWatch::versions`]: the versions of many paths in one pass, each cached one
//! checked by identity with one no-follow stat relative to its directory, the directory
//! opened once per call (or held across calls, see `held`) rather than once per path.
//!
//! Why a cached answer is exact (a cache never answers for a change that completed before
//! the call began):
//! - An entry is the version of one inode, kept only when its identity (device, inode,
//!   size, mtime, ctime) held still while it was hashed and its ctime was
//!   [`RACY_MARGIN`](crate::RACY_MARGIN)
//!   older than the hash's start: any later change to the inode's content moves its ctime
//!   (git's racy-clean rule).
//! - Every hit is stat'ed: the identity of what the path names now must be the entry's.
//!   The watcher's word does not replace the stat, because inotify tells a directory's
//!   watch only about changes made through a name in that directory: a write through a
//!   hard link made later (outside the workspace, even: `link(2)` tells only the inode's own
//!   watchers) or through a shared mapping reaches no watch, but moves the inode's times.
//! - The stat looks up one name relative to the descriptor of the path's directory, with
//!   no symlink followed. That descriptor is opened in this call beneath the root, as for
//!   [`codespace_fs::Root::metadata`], or it is held from an earlier call. A held one is
//!   kept only if, at that moment, the watcher ran, had handled no event since before the
//!   directory was opened, and watched every directory above it (where any rename,
//!   removal or replacement of it, or of one above it, is reported); it goes with any
//!   event at or above its path, with every resync, restart or failure of the watcher, and
//!   with any change of the mount table (which inotify does not report). It is used only
//!   after this call's cookie came back and the mount table was polled, so every change
//!   to what its path names that completed before the call began has been handled and has
//!   dropped it: a held directory still there names the directory its path names.

use std::time::{Duration, SystemTime};

use codespace_fs::{FsError, ParentDir, Version, WorkspacePath};

use crate::cache::Identity;
use crate::held::{Held, mount_generation};
use crate::hub::HoldPoint;
use crate::watcher::{Status, WorkspaceWatch};

/// Cache hits in one call from which held directories are used: below it, opening each
/// directory costs less than the cookie that makes a held one trustworthy.
pub const HOLD_FROM_HITS: usize = 32;
/// How long a call waits for the cookie that lets it use held directories before it opens
/// each directory instead (a few milliseconds for a thousand): a queue of events behind
/// a large checkout delays the answer by at most this.
pub const HOLD_SYNC_TIMEOUT: Duration = Duration::from_millis(50);

/// The directory a group of hits is stat'ed in.
enum Dir {
    Held(std::sync::Arc<Held>),
    Opened(ParentDir, Option<HoldPoint>),
    Missing,
}

impl WorkspaceWatch {
    /// The version of `p` (see [`WorkspaceWatch::versions`]).
    pub fn version(&self, p: &WorkspacePath) -> Result<Version, FsError> {
        match self.versions(std::slice::from_ref(p)).pop() {
            Some(found) => found,
            None => self.shared.root.version(p),
        }
    }

    /// The version of each of `paths`, in order: from the cache when the watcher runs, the
    /// entry's epoch is the current one and a no-follow stat shows the same identity;
    /// otherwise hashed from the disk (and cached when it may be).
    pub fn versions(&self, paths: &[WorkspacePath]) -> Vec<Result<Version, FsError>> {
        let epoch = self.running_epoch();
        let cached: Vec<Option<(Identity, Version)>> = match epoch {
            Some(epoch) => {
                let inner = self.shared.lock();
                paths
                    .iter()
                    .map(|p| inner.caches.version(p.as_str(), epoch).map(|(id, v)| (id, *v)))
                    .collect()
            }
            None => vec![None; paths.len()],
        };
        let mut hits: Vec<usize> = (0..paths.len()).filter(|&i| cached[i].is_some()).collect();
        let many = hits.len() >= HOLD_FROM_HITS;
        // The point after which a held directory may answer: this call's cookie came back
        // and the mount table was polled.
        let vouched = if many {
            self.sync_within(HOLD_SYNC_TIMEOUT).ok().zip(mount_generation())
        } else {
            None
        };
        let parents: Vec<&str> = paths.iter().map(|p| p.parent().unwrap_or_default()).collect();
        hits.sort_by_key(|&i| parents[i]);
        let mut out: Vec<Option<Result<Version, FsError>>> = paths.iter().map(|_| None).collect();
        for group in hits.chunk_by(|&a, &b| parents[a] == parents[b]) {
            let dir = self.dir_of(&paths[group[0]], vouched, many);
            let parent = match &dir {
                Dir::Held(held) => Some(&held.dir),
                Dir::Opened(dir, _) => Some(dir),
                Dir::Missing => None,
            };
            for &i in group {
                let now = parent.and_then(|d| d.metadata(&paths[i]).ok().flatten());
                if let (Some((identity, version)), Some(now)) = (cached[i], now)
                    && Identity::of(&now) == Some(identity)
                {
                    out[i] = Some(Ok(version));
                }
            }
            if let (Dir::Opened(dir, Some(at)), Some(_)) = (dir, epoch) {
                self.hub.hold(self.key, &self.shared, at, dir);
            }
        }
        let answered = out.iter().filter(|v| v.is_some()).count() as u64;
        if answered > 0 {
            let mut inner = self.shared.lock();
            if matches!(inner.status, Status::Running) && Some(inner.epoch) == epoch {
                inner.caches.stats.version_hits += answered;
            } else {
                // The watcher stopped or restarted meanwhile: answer from the disk.
                out.iter_mut().for_each(|v| *v = None);
            }
        }
        out.into_iter()
            .zip(paths)
            .map(|(hit, p)| hit.unwrap_or_else(|| self.hashed(p, epoch)))
            .collect()
    }

    /// The directory holding `p` for this call: held, when the call is vouched for and one
    /// is; else opened now (with the point it may be held from, when `hold`).
    fn dir_of(&self, p: &WorkspacePath, vouched: Option<(u64, u64)>, hold: bool) -> Dir {
        let parent = p.parent().unwrap_or_default();
        let mut at = None;
        {
            let inner = self.shared.lock();
            if let Some((epoch, mounts)) = vouched
                && matches!(inner.status, Status::Running)
                && inner.epoch == epoch
            {
                if let Some(held) = inner.caches.held.get(parent, epoch, mounts) {
                    return Dir::Held(held);
                }
                at = hold.then_some(HoldPoint { epoch, seq: inner.seq, mounts });
            }
        }
        match self.shared.root.open_parent_of(p) {
            Ok(Some(dir)) => Dir::Opened(dir, at),
            Ok(None) | Err(_) => Dir::Missing,
        }
    }

    /// `p` hashed from the disk, its version kept when it may be.
    fn hashed(&self, p: &WorkspacePath, epoch: Option<u64>) -> Result<Version, FsError> {
        let started = SystemTime::now();
        let (version, meta) = self.shared.root.version_stamped(p)?;
        let mut inner = self.shared.lock();
        inner.caches.stats.version_misses += 1;
        let identity = meta.as_ref().and_then(Identity::of).filter(|id| id.settled_before(started));
        let epoch = epoch.or_else(|| inner.running_epoch());
        if let (Some(epoch), Some(identity)) = (epoch, identity)
            && matches!(inner.status, Status::Running)
            && inner.epoch == epoch
        {
            inner.caches.keep_version(p.as_str(), epoch, identity, version);
        }
        Ok(version)
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and change them on the host filesystem"
)]
mod tests;
