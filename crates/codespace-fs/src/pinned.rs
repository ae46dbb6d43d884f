//! What the pinned root descriptor offers beyond file operations: whether the registered
//! path still names it, its identity, and a duplicate of it for a command's working
//! directory.

use std::os::fd::OwnedFd;

use codespace_types::RootStatus;

use crate::error::{FsError, from_errno};
use crate::root::Root;

impl Root {
    /// Compares the pinned directory with what [`Root::path`] resolves to now (following
    /// symlinks, as the operator's path would be read) by device and inode.
    pub fn status(&self) -> RootStatus {
        let Ok(pinned) = rustix::fs::fstat(self.fd()) else { return RootStatus::Removed };
        if pinned.st_nlink == 0 {
            return RootStatus::Removed;
        }
        match rustix::fs::stat(self.path()) {
            Ok(now) if now.st_dev == pinned.st_dev && now.st_ino == pinned.st_ino => {
                RootStatus::Current
            }
            _ => RootStatus::Replaced,
        }
    }

    /// The pinned directory's identity: its device and inode, as opened. A hold records it,
    /// and runs only where the workspace's root is still that directory.
    pub fn identity(&self) -> Result<(u64, u64), FsError> {
        let st =
            rustix::fs::fstat(self.fd()).map_err(|errno| from_errno(errno, ".", "stat root"))?;
        Ok((st.st_dev, st.st_ino))
    }

    /// A close-on-exec duplicate of the pinned `O_PATH` descriptor, for a process
    /// started in it: a process's working directory is the one thing entered outside this
    /// crate, and it is entered through this descriptor (`fchdir`), never by path.
    pub fn dir_handle(&self) -> Result<OwnedFd, FsError> {
        rustix::io::fcntl_dupfd_cloexec(self.fd(), 0)
            .map_err(|errno| from_errno(errno, ".", "duplicate root descriptor"))
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and inspect results on the host filesystem"
)]
mod tests {
    use super::*;

    #[test]
    fn status_follows_moves_replacements_and_removal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ws");
        std::fs::create_dir(&path).unwrap();
        let root = Root::open(&path).unwrap();
        assert_eq!(root.status(), RootStatus::Current);
        let st = rustix::fs::stat(&path).unwrap();
        assert_eq!(root.identity().unwrap(), (st.st_dev, st.st_ino));
        let handle = root.dir_handle().unwrap();
        let moved = dir.path().join("ws.moved");
        std::fs::rename(&path, &moved).unwrap();
        assert_eq!(root.status(), RootStatus::Replaced);
        std::os::unix::fs::symlink(dir.path(), &path).unwrap();
        assert_eq!(root.status(), RootStatus::Replaced);
        // The handle is still the pinned directory.
        let at = rustix::fs::fstat(&handle).unwrap();
        let want = rustix::fs::stat(&moved).unwrap();
        assert_eq!((at.st_dev, at.st_ino), (want.st_dev, want.st_ino));
        std::fs::remove_dir(&moved).unwrap();
        assert_eq!(root.status(), RootStatus::Removed);
    }
}
