//! [`Root`]: the pinned root descriptor and the one beneath-root resolver all operations use.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use crate::error::{FsError, from_errno};
use crate::path::WorkspacePath;

/// How many times a lookup is retried when openat2 reports `EAGAIN` (a concurrent rename
/// or mount changed the tree during a `..`-free lookup; the kernel asks us to try again).
const EAGAIN_RETRIES: usize = 32;

/// The resolution flags for every lookup: stay beneath the starting directory and refuse
/// every symlink (which implies refusing magic links; named too, for the reader).
const RESOLVE: ResolveFlags =
    ResolveFlags::BENEATH.union(ResolveFlags::NO_SYMLINKS).union(ResolveFlags::NO_MAGICLINKS);

/// How lookups beneath the root are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resolver {
    /// One atomic `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`.
    Openat2,
    /// Kernels (or seccomp profiles) without openat2: one `openat(O_NOFOLLOW)` per component,
    /// each relative to the descriptor of the previous one. Paths never contain `..`, so
    /// this cannot climb, and no step follows a link.
    PerComponent,
}

/// An open workspace root. Every operation resolves beneath its descriptor.
///
/// The descriptor is `O_PATH | O_DIRECTORY | O_CLOEXEC` on the canonicalised root, taken
/// once in [`Root::open`]: renaming or replacing the root path afterwards does not move
/// operations elsewhere. `Root` is `Send + Sync`; share it behind an `Arc`.
#[derive(Debug)]
pub struct Root {
    fd: OwnedFd,
    path: PathBuf,
    resolver: Resolver,
}

impl Root {
    /// Opens the workspace root at the absolute `path`.
    ///
    /// The root itself is the trust anchor and may be (or sit below) a symlink: it is
    /// canonicalised first, and the canonical path is then opened with no symlinks at all,
    /// so the descriptor is the directory [`Root::path`] names.
    #[expect(
        clippy::disallowed_methods,
        reason = "the registered path is resolved once, here, to the directory the descriptor then pins"
    )]
    pub fn open(path: &Path) -> Result<Root, FsError> {
        let fail = |source: io::Error| FsError::RootUnavailable { root: path.to_owned(), source };
        if !path.is_absolute() {
            return Err(fail(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the workspace root must be an absolute path",
            )));
        }
        let canonical = std::fs::canonicalize(path).map_err(fail)?;
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        let (fd, resolver) = match retry(|| openat2(CWD, &canonical, flags, Mode::empty(), resolve))
        {
            Ok(fd) => (fd, Resolver::Openat2),
            Err(errno) if openat2_missing(errno) => {
                let fd = rustix::fs::openat(CWD, &canonical, flags, Mode::empty())
                    .map_err(|errno| fail(errno.into()))?;
                (fd, Resolver::PerComponent)
            }
            Err(errno) => return Err(fail(errno.into())),
        };
        Ok(Root { fd, path: canonical, resolver })
    }

    /// Opens `path` forcing the per-component resolver, to test the fallback on kernels
    /// that have openat2.
    #[cfg(test)]
    pub(crate) fn open_per_component(path: &Path) -> Result<Root, FsError> {
        let mut root = Self::open(path)?;
        root.resolver = Resolver::PerComponent;
        Ok(root)
    }

    /// The canonical root path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Opens `rel` beneath `dir` without following any symlink.
    ///
    /// `rel` is `.` or a `/`-joined list of plain names (a [`WorkspacePath`] or a part of
    /// one), so it never contains `..` or an empty component. With
    /// [`Resolver::PerComponent`], a symlink leaf opened with `O_PATH` yields a descriptor
    /// of the link itself (as `O_PATH | O_NOFOLLOW` does); callers `fstat` what they get.
    pub(crate) fn open_beneath(
        &self,
        dir: BorrowedFd<'_>,
        rel: &str,
        flags: OFlags,
        mode: Mode,
    ) -> Result<OwnedFd, Errno> {
        let flags = flags | OFlags::CLOEXEC;
        match self.resolver {
            Resolver::Openat2 => retry(|| openat2(dir, rel, flags, mode, RESOLVE)),
            Resolver::PerComponent => open_per_component(dir, rel, flags, mode),
        }
    }

    /// Opens the parent directory of `p` beneath the root (the root itself for a
    /// top-level path) with `flags | O_DIRECTORY`.
    pub(crate) fn open_parent(&self, p: &WorkspacePath, flags: OFlags) -> Result<OwnedFd, FsError> {
        let parent = p.parent().unwrap_or(".");
        self.open_beneath(self.fd(), parent, flags | OFlags::DIRECTORY, Mode::empty())
            .map_err(|errno| from_errno(errno, p.as_str(), "open parent directory"))
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "codespace-fs is where workspace paths are opened: beneath the root, no symlink followed"
)]
fn openat2(
    dir: impl AsFd,
    path: impl rustix::path::Arg,
    flags: OFlags,
    mode: Mode,
    resolve: ResolveFlags,
) -> Result<OwnedFd, Errno> {
    rustix::fs::openat2(dir, path, flags, mode, resolve)
}

/// ENOSYS: the kernel predates openat2 (5.6). EPERM: some seccomp profiles deny unknown
/// syscalls with it; a no-symlink open of a canonical directory cannot otherwise be EPERM.
fn openat2_missing(errno: Errno) -> bool {
    errno == Errno::NOSYS || errno == Errno::PERM
}

/// Retries `EAGAIN` (and `EINTR`) a bounded number of times, then reports the last error.
fn retry(mut open: impl FnMut() -> Result<OwnedFd, Errno>) -> Result<OwnedFd, Errno> {
    let mut last = Errno::AGAIN;
    for _ in 0..EAGAIN_RETRIES {
        match open() {
            Err(errno @ (Errno::AGAIN | Errno::INTR)) => last = errno,
            done => return done,
        }
    }
    Err(last)
}

#[expect(
    clippy::disallowed_methods,
    reason = "codespace-fs is where workspace paths are opened: one component at a time, no symlink followed"
)]
fn open_per_component(
    dir: BorrowedFd<'_>,
    rel: &str,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    let mut held: Option<OwnedFd> = None;
    let mut components = rel.split('/').peekable();
    while let Some(name) = components.next() {
        let at = held.as_ref().map_or(dir, AsFd::as_fd);
        let last = components.peek().is_none();
        let step_flags = if last {
            flags | OFlags::NOFOLLOW
        } else {
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
        };
        match rustix::fs::openat(at, name, step_flags, if last { mode } else { Mode::empty() }) {
            Ok(fd) if last => return Ok(fd),
            Ok(fd) => held = Some(fd),
            // O_NOFOLLOW | O_DIRECTORY on a symlink says ENOTDIR; report it as openat2 would.
            Err(Errno::NOTDIR) => return Err(symlink_or(at, name, Errno::NOTDIR)),
            Err(errno) => return Err(errno),
        }
    }
    // `rel` is never empty, so the loop always returns; keep the compiler honest anyway.
    Err(Errno::INVAL)
}

/// `ELOOP` if `name` in `dir` is a symlink, else `otherwise`.
fn symlink_or(dir: BorrowedFd<'_>, name: &str, otherwise: Errno) -> Errno {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => Errno::LOOP,
        _ => otherwise,
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and inspect results on the host filesystem"
)]
mod tests;
