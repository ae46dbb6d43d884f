//! Directories held open for the version cache's identity checks (see `versions`): the
//! `O_PATH` descriptor of a directory beneath the root ([`ParentDir`]), kept by its path so
//! that checking a cached path costs one stat relative to it, not a beneath-root open and
//! a stat. Pure bookkeeping, apart from the mount table's poll.
//!
//! A held directory is only as good as the watcher's word that its path still names it:
//! it goes with any event at or above its path, with everything on a resync, a restart or
//! a failure, and with every change of the mount table (the one change to what a path
//! names that inotify does not report: a mount over a directory beneath the root). How
//! many are held is bounded per process, by the descriptors the process may open.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use codespace_fs::ParentDir;
use rustix::event::{PollFd, PollFlags, Timespec};

/// Directories held at most by the whole process, whatever its descriptor limit.
pub const MAX_HELD_DIRS: usize = 4096;

/// Directories held now, across every workspace of the process.
static HELD: AtomicUsize = AtomicUsize::new(0);
/// Bumped on every change of the mount table seen (see [`mount_generation`]).
static MOUNTS_SEEN: AtomicU64 = AtomicU64::new(0);

/// How many directories the process may hold: an eighth of its descriptor limit, at most
/// [`MAX_HELD_DIRS`].
fn budget() -> usize {
    static BUDGET: OnceLock<usize> = OnceLock::new();
    *BUDGET.get_or_init(|| {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        let limit = limit.map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
        (limit / 8).min(MAX_HELD_DIRS)
    })
}

/// The mount table's generation now: bumped whenever a poll of `/proc/self/mountinfo` says
/// it changed since the last poll (a mount or unmount in this process's namespace). `None`
/// when the table cannot be polled: then nothing may be held or used. The poll and the bump
/// are one step under a lock, so no caller can see the table changed without the
/// generation having moved.
pub(crate) fn mount_generation() -> Option<u64> {
    static MOUNTINFO: OnceLock<Option<Mutex<OwnedFd>>> = OnceLock::new();
    let fd = MOUNTINFO.get_or_init(|| {
        #[expect(
            clippy::disallowed_methods,
            reason = "the process's mount table under /proc, not a workspace file"
        )]
        let opened = rustix::fs::open(
            "/proc/self/mountinfo",
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        );
        opened.ok().map(Mutex::new)
    });
    let fd = fd.as_ref()?.lock().unwrap_or_else(PoisonError::into_inner);
    let mut fds = [PollFd::new(&*fd, PollFlags::PRI)];
    let changed = match rustix::event::poll(&mut fds, Some(&Timespec { tv_sec: 0, tv_nsec: 0 })) {
        Ok(0) => false,
        Ok(_) => true,
        Err(_) => return None,
    };
    if changed {
        MOUNTS_SEEN.fetch_add(1, Ordering::SeqCst);
    }
    Some(MOUNTS_SEEN.load(Ordering::SeqCst))
}

/// One held directory, counted against the process's budget while it lives.
#[derive(Debug)]
pub(crate) struct Held {
    pub(crate) dir: ParentDir,
    epoch: u64,
    mounts: u64,
}

impl Drop for Held {
    fn drop(&mut self) {
        HELD.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One workspace's held directories, by path (`""`: the root).
#[derive(Debug, Default)]
pub(crate) struct HeldDirs {
    dirs: BTreeMap<String, Arc<Held>>,
}

impl HeldDirs {
    /// The directory held at `path`, if it was held in `epoch` under the mount table's
    /// generation `mounts`.
    pub(crate) fn get(&self, path: &str, epoch: u64, mounts: u64) -> Option<Arc<Held>> {
        self.dirs.get(path).filter(|h| h.epoch == epoch && h.mounts == mounts).cloned()
    }

    /// Holds `dir`, opened in `epoch` under the mount generation `mounts`, unless the
    /// process holds its budget already; true when held.
    pub(crate) fn hold(&mut self, dir: ParentDir, epoch: u64, mounts: u64) -> bool {
        if self.dirs.contains_key(dir.path()) {
            return false;
        }
        let budget = budget();
        let taken = HELD
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < budget).then_some(n + 1));
        if taken.is_err() {
            return false;
        }
        let path = dir.path().to_owned();
        self.dirs.insert(path, Arc::new(Held { dir, epoch, mounts }));
        true
    }

    /// Drops the directory at `path` and every one beneath it (`""`: all of them).
    pub(crate) fn forget(&mut self, path: &str) {
        if path.is_empty() {
            self.dirs.clear();
            return;
        }
        self.dirs.remove(path);
        // '0' follows '/' in byte order: the range is exactly the paths under `path/`.
        let doomed: Vec<String> = self
            .dirs
            .range(format!("{path}/")..format!("{path}0"))
            .map(|(k, _)| k.clone())
            .collect();
        for k in doomed {
            self.dirs.remove(&k);
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.dirs.len()
    }
}

#[cfg(test)]
#[expect(clippy::disallowed_methods, reason = "tests build their fixtures on the host filesystem")]
mod tests;
