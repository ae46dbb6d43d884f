//! [`Root::walk`]: the bounded, no-follow listing of every regular file beneath the root.

use std::ffi::CStr;
use std::os::fd::OwnedFd;
use std::time::Instant;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::error::FsError;
use crate::root::Root;

/// Caps on one walk. Hitting any of them ends (that part of) the walk with
/// [`Walk::incomplete`] set; the files found so far are still returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkLimits {
    /// Deepest directory level opened; the root is level 0, so `0` lists only the root.
    pub max_depth: usize,
    /// Directories opened, the root included.
    pub max_dirs: usize,
    /// Directory entries seen, of any type, `.` and `..` excluded.
    pub max_entries: usize,
    /// Wall-clock end; checked before every entry.
    pub deadline: Option<Instant>,
}

impl Default for WalkLimits {
    /// The Codex-pinned caps: depth 64, 10,000 directories, 50,000 entries, no deadline.
    fn default() -> Self {
        Self { max_depth: 64, max_dirs: 10_000, max_entries: 50_000, deadline: None }
    }
}

/// The result of a walk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Walk {
    /// Regular files, workspace-relative, `/`-separated, sorted by bytes.
    pub files: Vec<String>,
    /// A cap or the deadline was hit, or a directory could not be read: `files` is not
    /// known to be the whole set.
    pub incomplete: bool,
    /// Entries (files or directories) skipped because their name is not valid UTF-8;
    /// a skipped directory is not descended into.
    pub skipped_non_utf8: u64,
}

/// One open directory on the descent stack: at most `max_depth + 1` are open at a time.
struct Frame {
    dir: Dir,
    /// Workspace-relative path of this directory plus a trailing `/`, or `""` for the root.
    prefix: String,
    depth: usize,
}

impl Root {
    /// Lists every regular file beneath the root, never following a symlink.
    ///
    /// Directories are opened with `openat(parent, name, O_RDONLY | O_DIRECTORY |
    /// O_NOFOLLOW)` relative to the already-open parent, so a directory swapped for a
    /// symlink mid-walk is skipped rather than followed. Symlinks, FIFOs, sockets and
    /// devices are not listed; hidden names are. `DT_UNKNOWN` falls back to a no-follow
    /// `statat`. Entries that vanish during the walk are skipped silently.
    pub fn walk(&self, limits: &WalkLimits) -> Result<Walk, FsError> {
        let root_unavailable = |errno: Errno| FsError::RootUnavailable {
            root: self.path().to_owned(),
            source: errno.into(),
        };
        // A deleted root still has a descriptor but lists as empty; say so instead.
        let st = rustix::fs::fstat(self.fd()).map_err(root_unavailable)?;
        if st.st_nlink == 0 {
            return Err(root_unavailable(Errno::NOENT));
        }
        let fd = rustix::fs::openat(self.fd(), ".", dir_flags(), Mode::empty())
            .map_err(root_unavailable)?;

        let mut walk = Walk::default();
        let mut entries = 0usize;
        let mut dirs = 1usize;
        let mut stack = vec![Frame {
            dir: Dir::new(fd).map_err(root_unavailable)?,
            prefix: String::new(),
            depth: 0,
        }];
        if limits.max_dirs == 0 {
            walk.incomplete = true;
            stack.clear();
        }
        while let Some(top) = stack.last_mut() {
            if limits.deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                walk.incomplete = true;
                break;
            }
            let entry = match top.dir.read() {
                None => {
                    stack.pop();
                    continue;
                }
                Some(Err(_)) => {
                    // An unreadable directory (EIO, EACCES...): what it holds is unknown.
                    walk.incomplete = true;
                    stack.pop();
                    continue;
                }
                Some(Ok(entry)) => entry,
            };
            let raw_name = entry.file_name();
            if is_dot_or_dotdot(raw_name) {
                continue;
            }
            entries += 1;
            if entries > limits.max_entries {
                walk.incomplete = true;
                break;
            }
            let Ok(name) = raw_name.to_str() else {
                walk.skipped_non_utf8 += 1;
                continue;
            };
            let Ok(dir_fd) = top.dir.fd() else { continue };
            let file_type = match entry.file_type() {
                FileType::Unknown => {
                    match rustix::fs::statat(dir_fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(st) => FileType::from_raw_mode(st.st_mode),
                        Err(Errno::NOENT) => continue,
                        Err(_) => {
                            walk.incomplete = true;
                            continue;
                        }
                    }
                }
                known => known,
            };
            match file_type {
                FileType::RegularFile => walk.files.push(format!("{}{name}", top.prefix)),
                FileType::Directory => {
                    let depth = top.depth + 1;
                    if depth > limits.max_depth || dirs >= limits.max_dirs {
                        walk.incomplete = true;
                        continue;
                    }
                    match open_child(dir_fd, name) {
                        Ok(fd) => match Dir::new(fd) {
                            Ok(dir) => {
                                dirs += 1;
                                let prefix = format!("{}{name}/", top.prefix);
                                stack.push(Frame { dir, prefix, depth });
                            }
                            Err(_) => walk.incomplete = true,
                        },
                        // Gone, or swapped for a symlink or a file since readdir: not part
                        // of the tree any more, and never followed.
                        Err(Errno::NOENT | Errno::LOOP | Errno::NOTDIR) => {}
                        Err(_) => walk.incomplete = true,
                    }
                }
                // Symlinks are never followed or listed; special files are not "files".
                _ => {}
            }
        }
        walk.files.sort_unstable();
        Ok(walk)
    }
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

fn open_child(parent: std::os::fd::BorrowedFd<'_>, name: &str) -> Result<OwnedFd, Errno> {
    loop {
        match rustix::fs::openat(parent, name, dir_flags(), Mode::empty()) {
            Err(Errno::INTR) => continue,
            done => return done,
        }
    }
}

fn is_dot_or_dotdot(name: &CStr) -> bool {
    matches!(name.to_bytes(), b"." | b"..")
}
