//! Typed errors for every refusal and I/O failure, and the one errno-to-error mapping.
//!
//! Messages name the workspace-relative path only (never an absolute host path other than
//! the root), so they can be shown to a client as they are.

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::path::PathBuf;

use rustix::io::Errno;
use serde::{Deserialize, Serialize};

use crate::meta::FileKind;

/// Why a path was refused before or during resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PathEscapeReason {
    /// The path string is empty.
    Empty,
    /// The path normalises to the root itself (`.`, `a/..`).
    Root,
    /// The path starts with `/`.
    Absolute,
    /// The path contains a NUL byte (it would be truncated by the kernel).
    Nul,
    /// A `..` component would climb above the root.
    ParentEscape,
    /// A component is longer than 255 bytes.
    ComponentTooLong,
    /// The path is longer than 4096 bytes.
    TooLong,
    /// The kernel refused the resolution as leaving the root (`EXDEV` under `RESOLVE_BENEATH`).
    Beneath,
}

impl PathEscapeReason {
    /// True for malformed input (as opposed to a well-formed path that points outside the
    /// root), so callers can report "invalid params" rather than "outside the workspace".
    pub fn is_malformed(self) -> bool {
        match self {
            Self::Empty | Self::Nul | Self::ComponentTooLong | Self::TooLong => true,
            Self::Root | Self::Absolute | Self::ParentEscape | Self::Beneath => false,
        }
    }
}

impl fmt::Display for PathEscapeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Empty => "the path is empty",
            Self::Root => "the path names the workspace root itself",
            Self::Absolute => "absolute paths are not allowed",
            Self::Nul => "the path contains a NUL byte",
            Self::ParentEscape => "'..' would leave the workspace root",
            Self::ComponentTooLong => "a path component is longer than 255 bytes",
            Self::TooLong => "the path is longer than 4096 bytes",
            Self::Beneath => "the path resolves outside the workspace root",
        })
    }
}

/// Every way a `codespace-fs` operation can fail.
///
/// `path` fields hold the workspace-relative path as requested (normalised when it was
/// valid), with `{:?}` quoting in messages so control characters cannot forge output.
#[derive(Debug, thiserror::Error, Serialize, Deserialize)]
pub enum FsError {
    /// The path is malformed or leaves the root.
    #[error("path outside the workspace: {path:?}: {reason}")]
    PathEscape { path: String, reason: PathEscapeReason },
    /// A symlink was met as the leaf or as an ancestor below the root.
    #[error("symlink rejected: {path:?} (symlinks are never followed, as a leaf or an ancestor)")]
    SymlinkRejected { path: String },
    /// The leaf is a FIFO, socket or device (or, for writes, not a regular file).
    #[error("special file rejected: {path:?} is a {kind}")]
    SpecialFileRejected { path: String, kind: FileKind },
    /// The leaf or an ancestor does not exist.
    #[error("not found: {path:?}")]
    NotFound { path: String },
    /// A component of the path (other than the leaf) is not a directory.
    #[error("not a directory: a component of {path:?} is not a directory")]
    NotDirectory { path: String },
    /// A file was asked for and the path names a directory.
    #[error("is a directory: {path:?}")]
    IsDirectory { path: String },
    /// The workspace root could not be opened, or is gone.
    #[error("workspace root unavailable: {}: {source}", root.display())]
    RootUnavailable {
        root: PathBuf,
        #[serde(with = "os_error")]
        source: io::Error,
    },
    /// Any other I/O failure; `op` names the operation that failed.
    #[error("{op} failed for {path:?}: {source}")]
    Io {
        path: String,
        op: Cow<'static, str>,
        #[serde(with = "os_error")]
        source: io::Error,
    },
}

impl FsError {
    /// The workspace-relative path the error is about, if it is about one.
    pub fn path(&self) -> Option<&str> {
        match self {
            Self::PathEscape { path, .. }
            | Self::SymlinkRejected { path }
            | Self::SpecialFileRejected { path, .. }
            | Self::NotFound { path }
            | Self::NotDirectory { path }
            | Self::IsDirectory { path }
            | Self::Io { path, .. } => Some(path),
            Self::RootUnavailable { .. } => None,
        }
    }

    /// True for [`FsError::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound { .. })
    }

    pub(crate) fn io(path: &str, op: &'static str, source: io::Error) -> Self {
        Self::Io { path: path.to_owned(), op: Cow::Borrowed(op), source }
    }
}

/// Maps an errno from a beneath-root lookup or a `*at` call on `path`.
///
/// `EAGAIN` is retried by the resolver before it gets here; if it still arrives it is
/// plain I/O.
pub(crate) fn from_errno(errno: Errno, path: &str, op: &'static str) -> FsError {
    let path = path.to_owned();
    match errno {
        Errno::XDEV => FsError::PathEscape { path, reason: PathEscapeReason::Beneath },
        Errno::LOOP => FsError::SymlinkRejected { path },
        Errno::NOENT => FsError::NotFound { path },
        Errno::NOTDIR => FsError::NotDirectory { path },
        Errno::ISDIR => FsError::IsDirectory { path },
        // ENXIO: opening a socket (or a device with no driver); the type is not known here.
        Errno::NXIO => FsError::SpecialFileRejected { path, kind: FileKind::Unknown },
        other => FsError::Io { path, op: Cow::Borrowed(op), source: other.into() },
    }
}

/// An `io::Error` as it crosses the runner's socket: its OS error number when it has one
/// (so it reads back as the same error, message and all), else its kind and message.
mod os_error {
    use std::io;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Wire {
        errno: Option<i32>,
        message: String,
    }

    pub(super) fn serialize<S: Serializer>(e: &io::Error, s: S) -> Result<S::Ok, S::Error> {
        Wire { errno: e.raw_os_error(), message: e.to_string() }.serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<io::Error, D::Error> {
        let w = Wire::deserialize(d)?;
        Ok(match w.errno {
            Some(errno) => io::Error::from_raw_os_error(errno),
            None => io::Error::other(w.message),
        })
    }
}

#[cfg(test)]
mod tests;
