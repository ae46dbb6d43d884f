//! Spill files: where a process's output goes once it outgrows the in-memory ring, so a
//! client that keeps reading loses nothing of the newest `cap` bytes.
//!
//! Layout: `<spill dir>/<server>/<n>`, every level 0700 and every file 0600. `<spill dir>`
//! is given by the caller (a directory in the server's state directory, which sandboxed
//! commands never see). `<server>` belongs to one supervisor, which holds an exclusive
//! `flock` on it for its whole life; at start, every sibling nobody holds a lock on is
//! the leftover of a supervisor that died, and is removed ([`sweep`]). Each file is a
//! ring on disk: absolute offset `o` lives at `o % cap`, so it never grows past `cap`, and
//! it is unlinked when its handle is dropped (the completed process was evicted).

use std::fs::File;
use std::io;
use std::os::fd::{AsFd as _, OwnedFd};
use std::os::unix::fs::{DirBuilderExt as _, FileExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags};

/// Removes every server directory under `parent` that no live supervisor holds, and any
/// stray entry that is not a directory. Best effort: an entry that cannot be removed stays.
#[expect(
    clippy::disallowed_methods,
    reason = "removes dead supervisors' spill directories under the state directory"
)]
pub(crate) fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if !meta.is_dir() {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let Ok(dir) = rustix::fs::open(&path, flags, Mode::empty()) else { continue };
        // Held by a live supervisor: not ours to touch.
        if rustix::fs::flock(&dir, FlockOperation::NonBlockingLockExclusive).is_err() {
            continue;
        }
        let _ = std::fs::remove_dir_all(&path);
    }
}

/// One supervisor's spill directory, locked for its whole life and removed when dropped.
#[derive(Debug)]
pub(crate) struct SpillDir {
    path: PathBuf,
    /// The directory, opened and `flock`ed: the lock says "alive" to a sweeping start.
    dir: OwnedFd,
    next: AtomicU64,
    /// Bytes written to this directory's files since it was made (the metrics' count).
    written: AtomicU64,
}

impl SpillDir {
    /// Creates (0700) and locks a fresh directory for this supervisor under `parent`,
    /// creating `parent` (0700) when missing.
    #[expect(
        clippy::disallowed_methods,
        reason = "makes and locks this supervisor's spill directory"
    )]
    pub(crate) fn create(parent: &Path) -> io::Result<Arc<SpillDir>> {
        match std::fs::DirBuilder::new().mode(0o700).create(parent) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        if !std::fs::symlink_metadata(parent)?.is_dir() {
            return Err(io::Error::other(format!("{} is not a directory", parent.display())));
        }
        // A sweeping start may remove a directory between its mkdir and its lock: retry
        // with a new name when the locked directory is no longer the one at the path.
        for _ in 0..8 {
            let name = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4().simple());
            let path = parent.join(name);
            std::fs::DirBuilder::new().mode(0o700).create(&path)?;
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let dir = rustix::fs::open(&path, flags, Mode::empty())?;
            if rustix::fs::flock(&dir, FlockOperation::NonBlockingLockExclusive).is_err() {
                continue;
            }
            let held = rustix::fs::fstat(&dir)?;
            match rustix::fs::lstat(&path) {
                Ok(now) if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino) => {
                    return Ok(Arc::new(SpillDir {
                        path,
                        dir,
                        next: AtomicU64::new(0),
                        written: AtomicU64::new(0),
                    }));
                }
                _ => continue,
            }
        }
        Err(io::Error::other("could not create a spill directory"))
    }

    /// Bytes written to spill files so far.
    pub(crate) fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// The directory's path.
    #[cfg(test)]
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SpillDir {
    #[expect(clippy::disallowed_methods, reason = "removes this supervisor's spill directory")]
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// One process's spill file: a ring of `cap` bytes on disk, unlinked when dropped.
#[derive(Debug)]
pub(crate) struct SpillFile {
    dir: Arc<SpillDir>,
    name: String,
    file: File,
    cap: u64,
}

impl SpillFile {
    /// A new, empty spill file of at most `cap` bytes (at least 1) in `dir`.
    #[expect(
        clippy::disallowed_methods,
        reason = "makes a spill file in the supervisor's own directory"
    )]
    pub(crate) fn create(dir: &Arc<SpillDir>, cap: u64) -> io::Result<SpillFile> {
        let name = dir.next.fetch_add(1, Ordering::Relaxed).to_string();
        let flags =
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&dir.dir, name.as_str(), flags, Mode::from_raw_mode(0o600))?;
        Ok(SpillFile { dir: Arc::clone(dir), name, file: File::from(fd), cap: cap.max(1) })
    }

    /// Bytes kept at most.
    pub(crate) fn cap(&self) -> u64 {
        self.cap
    }

    /// Writes `data` as the bytes at absolute offset `at` (only the last `cap` of them
    /// when `data` is longer).
    pub(crate) fn write(&self, at: u64, data: &[u8]) -> io::Result<()> {
        let skip = (data.len() as u64).saturating_sub(self.cap) as usize;
        let (mut at, mut data) = (at + skip as u64, &data[skip..]);
        while !data.is_empty() {
            let (pos, room) = self.place(at);
            let n = room.min(data.len());
            self.file.write_all_at(&data[..n], pos)?;
            self.dir.written.fetch_add(n as u64, Ordering::Relaxed);
            at += n as u64;
            data = &data[n..];
        }
        Ok(())
    }

    /// Appends the bytes of absolute range `from..to` (which must be among the last `cap`
    /// written) to `out`.
    pub(crate) fn read(&self, from: u64, to: u64, out: &mut Vec<u8>) -> io::Result<()> {
        let mut at = from;
        while at < to {
            let (pos, room) = self.place(at);
            let n = room.min((to - at) as usize);
            let start = out.len();
            out.resize(start + n, 0);
            self.file.read_exact_at(&mut out[start..], pos)?;
            at += n as u64;
        }
        Ok(())
    }

    /// The file position of offset `at`, and how many bytes fit before the ring wraps.
    fn place(&self, at: u64) -> (u64, usize) {
        let pos = at % self.cap;
        (pos, usize::try_from(self.cap - pos).unwrap_or(usize::MAX))
    }
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        let _ = rustix::fs::unlinkat(self.dir.dir.as_fd(), self.name.as_str(), AtFlags::empty());
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests inspect spill directories on the host filesystem"
)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_file_is_a_ring_on_disk_and_goes_when_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = SpillDir::create(&tmp.path().join("spill")).unwrap();
        let file = SpillFile::create(&dir, 10).unwrap();
        file.write(0, b"0123456").unwrap();
        file.write(7, b"789abcd").unwrap();
        let mut out = Vec::new();
        file.read(4, 14, &mut out).unwrap();
        assert_eq!(out, b"456789abcd");
        // Longer than the cap: only its last `cap` bytes are kept.
        file.write(14, b"ABCDEFGHIJKLMNOP").unwrap();
        out.clear();
        file.read(20, 30, &mut out).unwrap();
        assert_eq!(out, b"GHIJKLMNOP");
        assert_eq!(std::fs::metadata(dir.path().join("0")).unwrap().len(), 10);
        drop(file);
        assert!(names(dir.path()).is_empty());
        let path = dir.path().to_owned();
        drop(dir);
        assert!(!path.exists());
    }

    #[test]
    fn sweep_removes_only_what_no_live_supervisor_holds() {
        let tmp = tempfile::tempdir().unwrap();
        let parent = tmp.path().join("spill");
        let live = SpillDir::create(&parent).unwrap();
        let kept = SpillFile::create(&live, 100).unwrap();
        kept.write(0, b"live").unwrap();
        std::fs::create_dir(parent.join("stale")).unwrap();
        std::fs::write(parent.join("stale").join("0"), b"old output").unwrap();
        std::fs::write(parent.join("stray"), b"x").unwrap();
        sweep(&parent);
        let live_name = live.path().file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(names(&parent), vec![live_name]);
        assert_eq!(names(live.path()), vec!["0".to_owned()]);
    }
}
