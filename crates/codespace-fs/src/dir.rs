//! [`Root::open_dir`]: one directory beneath the root, opened without following any
//! symlink, with its identity and its entries: what the workspace watcher puts a watch on
//! (through the descriptor, never through a path a command can redirect).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::error::{FsError, from_errno};
use crate::path::WorkspacePath;
use crate::root::Root;

/// A directory opened beneath the root (`O_RDONLY | O_DIRECTORY`, no symlink followed on
/// the way or as the leaf), and the device and inode it had when opened.
#[derive(Debug)]
pub struct OpenedDir {
    fd: OwnedFd,
    dev: u64,
    ino: u64,
}

/// What one directory holds, by kind; symlinks, FIFOs, sockets and devices are left out,
/// as a walk leaves them out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirListing {
    /// Names of regular files.
    pub files: Vec<String>,
    /// Names of directories.
    pub dirs: Vec<String>,
    /// Entries whose name is not valid UTF-8: they cannot be named, so they are skipped.
    pub skipped_non_utf8: u64,
    /// The directory could not be read to its end (an I/O error, a cap).
    pub incomplete: bool,
}

impl Root {
    /// Opens the directory `p` beneath the root, or the root itself for `None`.
    ///
    /// A symlink anywhere on the way, or as `p` itself, is refused
    /// ([`FsError::SymlinkRejected`], or [`FsError::NotDirectory`] for a symlink leaf), as
    /// is anything that is not a directory.
    pub fn open_dir(&self, p: Option<&WorkspacePath>) -> Result<OpenedDir, FsError> {
        let rel = p.map_or(".", WorkspacePath::as_str);
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW;
        let fd = self
            .open_beneath(self.fd(), rel, flags, Mode::empty())
            .map_err(|errno| from_errno(errno, rel, "open directory"))?;
        let st = rustix::fs::fstat(&fd).map_err(|errno| from_errno(errno, rel, "stat"))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
            return Err(FsError::NotDirectory { path: rel.to_owned() });
        }
        #[allow(
            clippy::useless_conversion,
            reason = "the widths of st_* differ between architectures"
        )]
        Ok(OpenedDir { fd, dev: u64::from(st.st_dev), ino: u64::from(st.st_ino) })
    }
}

impl OpenedDir {
    /// The device and inode the directory had when it was opened.
    pub fn identity(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }

    /// The directory's entries, reading at most `max_entries` of them (more sets
    /// [`DirListing::incomplete`]). An entry gone since `readdir` is skipped.
    pub fn entries(&self, max_entries: usize) -> DirListing {
        let mut out = DirListing::default();
        let Ok(mut dir) = Dir::read_from(&self.fd) else {
            out.incomplete = true;
            return out;
        };
        let mut seen = 0usize;
        while let Some(entry) = dir.read() {
            let Ok(entry) = entry else {
                out.incomplete = true;
                break;
            };
            let bytes = entry.file_name().to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            seen += 1;
            if seen > max_entries {
                out.incomplete = true;
                break;
            }
            let Ok(name) = entry.file_name().to_str() else {
                out.skipped_non_utf8 += 1;
                continue;
            };
            let kind = match entry.file_type() {
                FileType::Unknown => {
                    match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(st) => FileType::from_raw_mode(st.st_mode),
                        Err(Errno::NOENT) => continue,
                        Err(_) => {
                            out.incomplete = true;
                            continue;
                        }
                    }
                }
                known => known,
            };
            match kind {
                FileType::RegularFile => out.files.push(name.to_owned()),
                FileType::Directory => out.dirs.push(name.to_owned()),
                _ => {}
            }
        }
        out
    }
}

impl AsFd for OpenedDir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and inspect results on the host filesystem"
)]
mod tests;
