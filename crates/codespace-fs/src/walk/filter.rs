//! [`WalkFilter`], the per-entry hook of [`Root::walk_filtered`](crate::Root::walk_filtered),
//! and [`DirFiles`], the no-follow reader of small files inside the directory being entered.
//!
//! The hook keeps rule languages (gitignore) out of this crate: the walk only asks "skip this
//! entry?", and the filter reads its rule files through [`DirFiles`], relative to the
//! directory descriptor the walk already holds, so no path is ever resolved again.

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

/// Decides which entries a walk leaves out. A skipped directory is never opened, so
/// nothing beneath it is read or counted against the directory cap.
pub trait WalkFilter {
    /// What the filter keeps for one open directory (typically its rules plus a link to
    /// its parent's); it lives as long as the walk holds the directory open.
    type Dir;

    /// Called once per opened directory, before its entries are read. `parent` is the
    /// parent directory's state (`None` for the root), `path` the directory's
    /// workspace-relative path (`""` for the root), and `files` reads small files in it.
    fn enter(&mut self, parent: Option<&Self::Dir>, path: &str, files: &DirFiles<'_>) -> Self::Dir;

    /// True to leave out the entry at the workspace-relative `path`, found in the
    /// directory whose state is `dir`: a regular file, or a directory when `is_dir`.
    /// Symlinks and special files are never offered (the walk drops them anyway).
    fn skip(&self, dir: &Self::Dir, path: &str, is_dir: bool) -> bool;
}

/// The filter of [`Root::walk`](crate::Root::walk): keeps every entry.
pub(crate) struct KeepAll;

impl WalkFilter for KeepAll {
    type Dir = ();

    fn enter(&mut self, _: Option<&()>, _: &str, _: &DirFiles<'_>) {}

    fn skip(&self, _: &(), _: &str, _: bool) -> bool {
        false
    }
}

/// The first bytes of a small file read through [`DirFiles::read`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmallFile {
    /// At most the cap asked for.
    pub bytes: Vec<u8>,
    /// The file is longer than the cap; `bytes` is its beginning.
    pub truncated: bool,
}

/// Reads files inside one directory the walk holds open, never following a symlink.
#[derive(Debug)]
pub struct DirFiles<'a> {
    dir: BorrowedFd<'a>,
}

impl<'a> DirFiles<'a> {
    pub(crate) fn new(dir: BorrowedFd<'a>) -> Self {
        Self { dir }
    }

    /// At most `cap` bytes of the regular file at `rel`, a `/`-separated path of plain
    /// names inside this directory (`.gitignore`, `.git/info/exclude`).
    ///
    /// `None` when it is missing or unreadable, when a component is `.`, `..` or empty,
    /// or when any component is a symlink or the leaf is not a regular file: each step is
    /// an `openat(O_NOFOLLOW)` relative to the previous one, and the leaf is type-checked on
    /// an `O_PATH` descriptor before it is opened for reading (so a FIFO is never waited on
    /// and a device never opened), then reopened and checked to be the same inode.
    pub fn read(&self, rel: &str, cap: usize) -> Option<SmallFile> {
        let mut parts = rel.split('/');
        let leaf = parts.next_back().filter(|p| plain(p))?;
        let mut parent: Option<OwnedFd> = None;
        for part in parts {
            if !plain(part) {
                return None;
            }
            let at = parent.as_ref().map_or(self.dir, AsFd::as_fd);
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            parent = Some(openat(at, part, flags).ok()?);
        }
        let at = parent.as_ref().map_or(self.dir, AsFd::as_fd);
        let probe = openat(at, leaf, OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC).ok()?;
        let expected = rustix::fs::fstat(&probe).ok()?;
        if FileType::from_raw_mode(expected.st_mode) != FileType::RegularFile {
            return None;
        }
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = openat(at, leaf, flags).ok()?;
        let opened = rustix::fs::fstat(&fd).ok()?;
        if (opened.st_dev, opened.st_ino) != (expected.st_dev, expected.st_ino) {
            return None;
        }
        let mut bytes = Vec::new();
        let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
        File::from(fd).take(limit).read_to_end(&mut bytes).ok()?;
        let truncated = bytes.len() > cap;
        bytes.truncate(cap);
        Some(SmallFile { bytes, truncated })
    }
}

/// A name that stays in its directory.
fn plain(name: &str) -> bool {
    !matches!(name, "" | "." | "..")
}

#[expect(
    clippy::disallowed_methods,
    reason = "codespace-fs is where workspace trees are walked: relative to the directory's descriptor"
)]
fn openat(at: BorrowedFd<'_>, name: &str, flags: OFlags) -> Result<OwnedFd, Errno> {
    loop {
        match rustix::fs::openat(at, name, flags, Mode::empty()) {
            Err(Errno::INTR) => continue,
            done => return done,
        }
    }
}
