//! [`Instance`]: a running server's lock beside the ledger, held for its whole life, so any
//! process on the machine can tell whether the owner of a piece of work is still alive.
//!
//! The locks live in a directory beside the ledger file (`<ledger>.owners/`, mode 0700), one
//! empty file per instance named by its id. The instance opens its file (`O_CREAT|O_EXCL`,
//! close-on-exec, so no command it starts inherits it) and takes an exclusive `flock` on it
//! before its ledger row exists, and keeps both until it exits: the kernel drops the lock
//! when the process dies, however it dies. Another process asks with a shared, non-blocking
//! `flock` on the same file: refused means alive; granted, or no file, means gone. A file is
//! removed only by its own instance as it ends, or by a process holding its exclusive lock
//! after finding it free (the instance is dead: its row was written after its lock was
//! taken), so a lock file never vanishes under a live instance.
//!
//! An in-memory ledger has no directory: its one instance is the process itself.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, Mode, OFlags};
use uuid::Uuid;

use crate::error::StoreError;

/// The directory of instance locks beside the ledger file `ledger`: `<ledger>.owners`.
pub(crate) fn beside(ledger: &Path) -> PathBuf {
    let mut dir = ledger.as_os_str().to_owned();
    dir.push(".owners");
    PathBuf::from(dir)
}

/// This process's instance: its id and, for a file ledger, its held lock.
#[derive(Debug)]
pub(crate) struct Instance {
    pub(crate) id: String,
    /// The lock file and its descriptor, `flock`ed exclusively; `None` in memory.
    lock: Option<(PathBuf, OwnedFd)>,
}

impl Instance {
    /// A new instance `inst-<uuid v4>`, its lock taken under `dir` (created 0700 when
    /// missing); in memory (`None`), just the id.
    #[expect(
        clippy::disallowed_methods,
        reason = "creates and locks this instance's file in the ledger's own owners directory"
    )]
    pub(crate) fn claim(dir: Option<&Path>) -> Result<Instance, StoreError> {
        let id = format!("inst-{}", Uuid::new_v4());
        let Some(dir) = dir else { return Ok(Instance { id, lock: None }) };
        let failed =
            |path: &Path, source: io::Error| StoreError::Open { path: path.to_owned(), source };
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(failed(dir, e)),
        }
        let meta = std::fs::symlink_metadata(dir).map_err(|e| failed(dir, e))?;
        if !meta.is_dir() {
            return Err(failed(dir, io::Error::other("not a directory (a symlink is refused)")));
        }
        let path = dir.join(&id);
        let flags =
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::open(&path, flags, Mode::from_raw_mode(0o600))
            .map_err(|e| failed(&path, e.into()))?;
        rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive)
            .map_err(|e| failed(&path, e.into()))?;
        Ok(Instance { id, lock: Some((path, fd)) })
    }
}

impl Drop for Instance {
    #[expect(
        clippy::disallowed_methods,
        reason = "removes this instance's own lock file, while still holding its lock"
    )]
    fn drop(&mut self) {
        if let Some((path, _fd)) = &self.lock {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Whether instance `id` holds its lock under `dir`. Anything but a granted lock or a
/// missing file counts as alive: a live owner's work is never taken by mistake.
pub(crate) fn alive(dir: &Path, id: &str) -> bool {
    let Some(fd) = open_lock(dir, id) else { return false };
    match fd {
        Err(()) => true,
        Ok(fd) => rustix::fs::flock(&fd, FlockOperation::NonBlockingLockShared).is_err(),
    }
}

/// Removes the lock file of instance `id` when it is free (the instance is gone), holding
/// its exclusive lock while it does. True when the instance is gone.
#[expect(
    clippy::disallowed_methods,
    reason = "removes a dead instance's lock file from the ledger's own owners directory"
)]
pub(crate) fn reap(dir: &Path, id: &str) -> bool {
    let Some(fd) = open_lock(dir, id) else { return true };
    let Ok(fd) = fd else { return false };
    if rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive).is_err() {
        return false;
    }
    let _ = std::fs::remove_file(dir.join(id));
    true
}

/// The lock file of `id`, opened read-only: `None` when it does not exist, `Err` when it
/// could not be opened (or `id` is no file name).
#[expect(
    clippy::disallowed_methods,
    reason = "opens a lock file of the ledger's own owners directory"
)]
fn open_lock(dir: &Path, id: &str) -> Option<Result<OwnedFd, ()>> {
    if id.is_empty() || id.contains('/') || id.starts_with('.') {
        return Some(Err(()));
    }
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::open(dir.join(id), flags, Mode::empty()) {
        Ok(fd) => Some(Ok(fd)),
        Err(rustix::io::Errno::NOENT) => None,
        Err(_) => Some(Err(())),
    }
}

#[cfg(test)]
mod tests;
