//! [`Root::metadata`]: no-follow stat beneath the root, and the [`FileKind`] / [`FileMeta`] types;
//! [`ParentDir`]: the directory holding a path, opened once to stat many names in it.

use std::fmt;
use std::io;
use std::os::fd::OwnedFd;
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, FileType, Stat};
use rustix::io::Errno;

use crate::error::{FsError, from_errno};
use crate::path::WorkspacePath;
use crate::root::Root;

/// The type of a directory entry, as `lstat` sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum FileKind {
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// A symbolic link (never followed).
    Symlink,
    /// A named pipe.
    Fifo,
    /// A unix-domain socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Not known (for example `ENXIO` from an open whose target was not stat'ed).
    Unknown,
}

impl FileKind {
    pub(crate) fn from_mode(st_mode: u32) -> Self {
        Self::from_file_type(FileType::from_raw_mode(st_mode))
    }

    pub(crate) fn from_file_type(file_type: FileType) -> Self {
        match file_type {
            FileType::RegularFile => Self::Regular,
            FileType::Directory => Self::Directory,
            FileType::Symlink => Self::Symlink,
            FileType::Fifo => Self::Fifo,
            FileType::Socket => Self::Socket,
            FileType::CharacterDevice => Self::CharDevice,
            FileType::BlockDevice => Self::BlockDevice,
            FileType::Unknown => Self::Unknown,
        }
    }

    /// A short lowercase name, e.g. `"fifo"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Regular => "regular file",
            Self::Directory => "directory",
            Self::Symlink => "symlink",
            Self::Fifo => "fifo",
            Self::Socket => "socket",
            Self::CharDevice => "character device",
            Self::BlockDevice => "block device",
            Self::Unknown => "special file",
        }
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What `lstat` says about a path: enough to tell a file's identity and type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileMeta {
    pub kind: FileKind,
    pub size: u64,
    /// Permission bits, including setuid/setgid/sticky (`st_mode & 0o7777`).
    pub mode: u32,
    pub nlink: u64,
    pub dev: u64,
    pub ino: u64,
    pub mtime: SystemTime,
    pub ctime: SystemTime,
}

impl FileMeta {
    #[allow(clippy::useless_conversion, reason = "the widths of st_* differ between architectures")]
    pub(crate) fn from_stat(st: &Stat) -> Self {
        Self {
            kind: FileKind::from_mode(st.st_mode),
            size: u64::try_from(st.st_size).unwrap_or(0),
            mode: st.st_mode & 0o7777,
            nlink: u64::from(st.st_nlink),
            dev: u64::from(st.st_dev),
            ino: u64::from(st.st_ino),
            mtime: system_time(st.st_mtime.into(), st.st_mtime_nsec.try_into().unwrap_or(0)),
            ctime: system_time(st.st_ctime.into(), st.st_ctime_nsec.try_into().unwrap_or(0)),
        }
    }
}

fn system_time(sec: i64, nsec: u32) -> SystemTime {
    let since = Duration::new(sec.unsigned_abs(), 0);
    let base = if sec >= 0 {
        SystemTime::UNIX_EPOCH.checked_add(since)
    } else {
        SystemTime::UNIX_EPOCH.checked_sub(since)
    };
    base.and_then(|t| t.checked_add(Duration::from_nanos(u64::from(nsec))))
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// Refuses anything but a regular file, naming what it is.
pub(crate) fn require_regular(st: &Stat, path: &str) -> Result<(), FsError> {
    let path = path.to_owned();
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => Ok(()),
        FileType::Directory => Err(FsError::IsDirectory { path }),
        // Only a no-follow stat (or the per-component resolver) sees a link itself;
        // openat2 refuses it earlier with ELOOP.
        FileType::Symlink => Err(FsError::SymlinkRejected { path }),
        other => Err(FsError::SpecialFileRejected { path, kind: FileKind::from_file_type(other) }),
    }
}

impl Root {
    /// No-follow metadata of `p`: `None` when the leaf or an ancestor is missing.
    ///
    /// A symlink leaf is reported (kind [`FileKind::Symlink`]), not followed; a symlink
    /// ancestor is refused with [`FsError::SymlinkRejected`].
    pub fn metadata(&self, p: &WorkspacePath) -> Result<Option<FileMeta>, FsError> {
        match self.open_parent_of(p)? {
            Some(parent) => parent.metadata(p),
            None => Ok(None),
        }
    }

    /// The directory holding `p` (the root for a top-level path), opened beneath the root
    /// with no symlink followed (`O_PATH`): `None` when it or an ancestor is missing. Its
    /// [`ParentDir::metadata`] is [`Root::metadata`] for every path in it, one open for many.
    pub fn open_parent_of(&self, p: &WorkspacePath) -> Result<Option<ParentDir>, FsError> {
        match self.open_parent(p, rustix::fs::OFlags::PATH) {
            Ok(fd) => Ok(Some(ParentDir { fd, path: p.parent().unwrap_or_default().to_owned() })),
            Err(FsError::NotFound { .. }) => Ok(None),
            Err(err) => Err(err),
        }
    }
}

/// A directory beneath the root, held by an `O_PATH` descriptor taken with no symlink
/// followed: the names in it are stat'ed relative to the descriptor, each a single
/// component looked up with `AT_SYMLINK_NOFOLLOW`, so nothing can lead such a stat out of
/// the directory. The descriptor names the directory that was at [`ParentDir::path`] when
/// it was opened; whoever keeps it longer answers for that path still naming it.
#[derive(Debug)]
pub struct ParentDir {
    fd: OwnedFd,
    path: String,
}

impl ParentDir {
    /// The workspace-relative path it was opened at (`""`: the root).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// No-follow metadata of `p`, a path directly in this directory, as [`Root::metadata`]
    /// reports it; `None` when nothing is there. A path in another directory is refused.
    pub fn metadata(&self, p: &WorkspacePath) -> Result<Option<FileMeta>, FsError> {
        if p.parent().unwrap_or_default() != self.path {
            let wrong = io::Error::other("the path is not in the directory opened for it");
            return Err(FsError::io(p.as_str(), "stat", wrong));
        }
        match rustix::fs::statat(&self.fd, p.file_name(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(FileMeta::from_stat(&st))),
            Err(Errno::NOENT) => Ok(None),
            Err(errno) => Err(from_errno(errno, p.as_str(), "stat")),
        }
    }
}

#[cfg(test)]
mod tests;
