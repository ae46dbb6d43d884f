//! Markers: empty files the workspace watcher creates in the root and removes again, so
//! that seeing a marker's own event proves every earlier event was delivered (the "cookie"
//! synchronisation point). Neither call syncs: a marker has no content to keep.

use rustix::fs::{AtFlags, Mode, OFlags};

use crate::error::{FsError, from_errno};
use crate::root::Root;

impl Root {
    /// Creates the empty file `name` directly in the root (`O_CREAT | O_EXCL`, never
    /// through a link). `name` is a single component chosen by the caller, never a
    /// client's path.
    pub fn create_marker(&self, name: &str) -> Result<(), FsError> {
        check_name(name)?;
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        self.open_beneath(self.fd(), name, flags, Mode::from_raw_mode(0o600))
            .map(drop)
            .map_err(|errno| from_errno(errno, name, "create marker"))
    }

    /// Removes the marker `name` from the root; a marker already gone is not an error.
    pub fn remove_marker(&self, name: &str) -> Result<(), FsError> {
        check_name(name)?;
        let dir = self
            .open_beneath(self.fd(), ".", OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
            .map_err(|errno| from_errno(errno, name, "open root"))?;
        match rustix::fs::unlinkat(&dir, name, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(errno) => Err(from_errno(errno, name, "remove marker")),
        }
    }
}

/// A marker is one plain component: no separator, not `.` or `..`.
fn check_name(name: &str) -> Result<(), FsError> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(FsError::io(
            name,
            "marker",
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a single file name"),
        ));
    }
    Ok(())
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and inspect results on the host filesystem"
)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_is_created_once_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::open(dir.path()).unwrap();
        root.create_marker(".m1").unwrap();
        assert!(dir.path().join(".m1").is_file());
        assert!(root.create_marker(".m1").is_err(), "O_EXCL");
        root.remove_marker(".m1").unwrap();
        root.remove_marker(".m1").unwrap();
        assert!(!dir.path().join(".m1").exists());
        assert!(root.create_marker("a/b").is_err());
        assert!(root.create_marker("..").is_err());
    }

    #[test]
    fn a_marker_is_never_created_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path().join("x"), dir.path().join(".m")).unwrap();
        let root = Root::open(dir.path()).unwrap();
        assert!(root.create_marker(".m").is_err());
        assert!(!outside.path().join("x").exists());
    }
}
