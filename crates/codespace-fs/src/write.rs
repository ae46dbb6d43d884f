//! Writing: [`Root::create_dirs`], [`Root::write_atomic`] and [`Root::remove_file`].
//!
//! Every call works on a parent directory descriptor opened beneath the root with the
//! same no-symlink resolver as reads, and then only names a single entry in it, so no
//! later step can be redirected by a symlink swapped in mid-call.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{AtFlags, Gid, Mode, OFlags, Stat, Uid};
use rustix::io::Errno;

use crate::error::{FsError, from_errno};
use crate::meta::require_regular;
use crate::path::WorkspacePath;
use crate::root::Root;
use crate::writer::{temp_name, writer_alive};

/// How many temp names are tried before giving up (each collision means someone else
/// created that exact name; more than a couple means something is wrong).
const TEMP_ATTEMPTS: u32 = 16;
/// Names of temp files start with this; crash recovery removes leftovers by it, and the
/// watcher never lists them as changes.
pub const TEMP_PREFIX: &str = ".codespace-tmp.";

impl Root {
    /// Creates `p` and any missing ancestors, like `mkdir -p`, beneath the root.
    ///
    /// One `mkdirat` per component, each in the descriptor of the previous component,
    /// which is itself opened with the no-symlink resolver: an existing component that is
    /// a symlink is refused ([`FsError::SymlinkRejected`]), one that is a file gives
    /// [`FsError::NotDirectory`]. Existing directories are fine. New directories get
    /// mode `0o777` less the umask, and their parents are fsynced.
    pub fn create_dirs(&self, p: &WorkspacePath) -> Result<(), FsError> {
        let path = p.as_str();
        let err = |op| move |errno| from_errno(errno, path, op);
        let flags = OFlags::RDONLY | OFlags::DIRECTORY;
        let mut dir = self
            .open_beneath(self.fd(), ".", flags, Mode::empty())
            .map_err(err("open directory"))?;
        for name in p.components() {
            let created = match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o777)) {
                Ok(()) => true,
                Err(Errno::EXIST) => false,
                Err(errno) => return Err(err("create directory")(errno)),
            };
            if created {
                rustix::fs::fsync(&dir).map_err(err("sync directory"))?;
            }
            // Whatever is there now (ours, or an existing entry) must be a real directory.
            dir = match self.open_beneath(dir.as_fd(), name, flags, Mode::empty()) {
                Ok(child) => child,
                Err(Errno::NOTDIR) => return Err(FsError::NotDirectory { path: path.to_owned() }),
                Err(errno) => return Err(err("open directory")(errno)),
            };
        }
        Ok(())
    }

    /// Replaces the regular file `p` with `bytes` atomically (or creates it).
    ///
    /// A temp file is created `O_CREAT | O_EXCL` in the same directory (opened beneath the
    /// root), written, given its mode, fsynced and `renameat`'d over `p`; then the
    /// directory is fsynced. A reader sees the old content or the new, never a mix, and a
    /// hard link at `p` is replaced rather than written through (its other names keep the
    /// old content).
    ///
    /// `mode` sets the permission bits exactly (`& 0o7777`). With `None` an existing
    /// file's permission bits are kept (`& 0o777`: setuid/setgid are dropped, as a
    /// content write by a non-owner would drop them) and its owner is kept where the
    /// process may; a new file gets `0o666` less the umask. The parent directory must
    /// exist ([`Root::create_dirs`]). A symlink, directory or special file at `p` is
    /// refused, not replaced.
    pub fn write_atomic(
        &self,
        p: &WorkspacePath,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> Result<(), FsError> {
        let path = p.as_str();
        let name = p.file_name();
        let parent = self.open_parent(p, OFlags::RDONLY)?;
        let existing = match rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => {
                require_regular(&st, path)?;
                Some(st)
            }
            Err(Errno::NOENT) => None,
            Err(errno) => return Err(from_errno(errno, path, "stat")),
        };
        let final_mode = match (mode, &existing) {
            (Some(mode), _) => Some(mode & 0o7777),
            (None, Some(st)) => Some(st.st_mode & 0o777),
            (None, None) => None,
        };
        // Private while it is being written when the final mode is set afterwards.
        let create_mode = if final_mode.is_some() { 0o600 } else { 0o666 };
        let (temp_name, temp) = self.create_temp(&parent, create_mode, path)?;

        let finish = || -> Result<(), FsError> {
            let mut file = File::from(temp);
            file.write_all(bytes).map_err(|e| FsError::io(path, "write", e))?;
            // Owner before mode: chown clears setuid/setgid, so an explicit mode must come last.
            if let Some(st) = &existing {
                keep_owner(&file, st);
            }
            if let Some(mode) = final_mode {
                rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))
                    .map_err(|e| from_errno(e, path, "chmod"))?;
            }
            file.sync_all().map_err(|e| FsError::io(path, "sync", e))?;
            rustix::fs::renameat(&parent, temp_name.as_str(), &parent, name)
                .map_err(|e| from_errno(e, path, "rename"))
        };
        if let Err(err) = finish() {
            // Best effort: the temp name is ours alone (O_EXCL), so removing it is safe.
            let _ = rustix::fs::unlinkat(&parent, temp_name.as_str(), AtFlags::empty());
            return Err(err);
        }
        rustix::fs::fsync(&parent).map_err(|e| from_errno(e, path, "sync directory"))
    }

    /// Removes the regular file `p` (`unlinkat` in its parent opened beneath the root).
    ///
    /// Refuses a symlink, a directory or a special file. If the entry is swapped for a
    /// symlink after the check, `unlinkat` removes the link itself, never its target.
    pub fn remove_file(&self, p: &WorkspacePath) -> Result<(), FsError> {
        let path = p.as_str();
        let name = p.file_name();
        let parent = self.open_parent(p, OFlags::RDONLY)?;
        let st = rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| from_errno(e, path, "stat"))?;
        require_regular(&st, path)?;
        rustix::fs::unlinkat(&parent, name, AtFlags::empty())
            .map_err(|e| from_errno(e, path, "remove"))?;
        rustix::fs::fsync(&parent).map_err(|e| from_errno(e, path, "sync directory"))
    }

    /// Removes the empty directory `p` (`unlinkat(AT_REMOVEDIR)` in its parent opened
    /// beneath the root). Used to undo directories a failed patch created. Refuses a
    /// symlink or anything that is not a directory; a non-empty directory is an error.
    pub fn remove_empty_dir(&self, p: &WorkspacePath) -> Result<(), FsError> {
        let path = p.as_str();
        let name = p.file_name();
        let parent = self.open_parent(p, OFlags::RDONLY)?;
        let st = rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| from_errno(e, path, "stat"))?;
        if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::Directory {
            return Err(FsError::NotDirectory { path: path.to_owned() });
        }
        rustix::fs::unlinkat(&parent, name, AtFlags::REMOVEDIR)
            .map_err(|e| from_errno(e, path, "remove directory"))?;
        rustix::fs::fsync(&parent).map_err(|e| from_errno(e, path, "sync directory"))
    }

    /// Removes the temp files an interrupted [`Root::write_atomic`] left in the directory
    /// that holds `p` (crash recovery). Only regular files with the temp prefix are removed,
    /// and only when the process its name records (pid and start time) is gone: a live
    /// writer's temp file (another server's patch under way in the same directory) is left
    /// alone, and a reused pid is not mistaken for its writer. Returns how many were removed.
    pub fn remove_stale_temp_files(&self, p: &WorkspacePath) -> Result<usize, FsError> {
        let path = p.as_str();
        let parent = match self.open_parent(p, OFlags::RDONLY) {
            Ok(fd) => fd,
            Err(FsError::NotFound { .. }) => return Ok(0),
            Err(e) => return Err(e),
        };
        let dir = rustix::fs::Dir::read_from(&parent)
            .map_err(|e| from_errno(e, path, "read directory"))?;
        let mut stale = Vec::new();
        for entry in dir {
            let entry = entry.map_err(|e| from_errno(e, path, "read directory"))?;
            let name = entry.file_name().to_bytes();
            if name.starts_with(TEMP_PREFIX.as_bytes()) && !writer_alive(name) {
                stale.push(entry.file_name().to_owned());
            }
        }
        let mut removed = 0;
        for name in stale {
            let Ok(st) = rustix::fs::statat(&parent, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)
            else {
                continue;
            };
            if rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
                && rustix::fs::unlinkat(&parent, name.as_c_str(), AtFlags::empty()).is_ok()
            {
                removed += 1;
            }
        }
        if removed > 0 {
            rustix::fs::fsync(&parent).map_err(|e| from_errno(e, path, "sync directory"))?;
        }
        Ok(removed)
    }

    /// Creates a fresh temp file in `parent` (`O_CREAT | O_EXCL`, so it is new and ours).
    fn create_temp(
        &self,
        parent: &OwnedFd,
        mode: u32,
        path: &str,
    ) -> Result<(String, OwnedFd), FsError> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        let mut last = Errno::EXIST;
        for _ in 0..TEMP_ATTEMPTS {
            let name = temp_name();
            match self.open_beneath(parent.as_fd(), &name, flags, Mode::from_raw_mode(mode)) {
                Ok(fd) => return Ok((name, fd)),
                Err(Errno::EXIST) => last = Errno::EXIST,
                Err(errno) => return Err(from_errno(errno, path, "create temp file")),
            }
        }
        Err(from_errno(last, path, "create temp file"))
    }
}

/// Gives the new file the old one's owner, so a server running as root does not take
/// files over. Best effort: an unprivileged process may not chown, and that is fine.
fn keep_owner(file: &File, st: &Stat) {
    let Ok(new) = rustix::fs::fstat(file) else { return };
    if (new.st_uid, new.st_gid) != (st.st_uid, st.st_gid) {
        let owner = Uid::from_raw(st.st_uid);
        let group = Gid::from_raw(st.st_gid);
        let _ = rustix::fs::fchown(file, Some(owner), Some(group));
    }
}
