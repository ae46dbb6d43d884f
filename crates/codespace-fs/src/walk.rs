//! [`Root::walk`]: the bounded, no-follow listing of every regular file beneath the root.

use std::ffi::CStr;
use std::os::fd::OwnedFd;
use std::time::Instant;

use rustix::fs::{AtFlags, Dir, DirEntry, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::cancel::Cancel;
use crate::error::FsError;
use crate::progress::Progress;
use crate::root::Root;

mod filter;

use filter::KeepAll;
pub use filter::{DirFiles, SmallFile, WalkFilter};

/// Caps on one walk. Hitting any of them ends (that part of) the walk with
/// [`Walk::incomplete`] set; the files found so far are still returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkLimits {
    /// Deepest directory level opened; the root is level 0, so `0` lists only the root.
    pub max_depth: usize,
    /// Directories opened, the root included.
    pub max_dirs: usize,
    /// Directory entries seen, of any type, `.` and `..` excluded.
    pub max_entries: usize,
    /// Wall-clock end; checked before every entry.
    pub deadline: Option<Instant>,
    /// Raised when the caller no longer wants the result; checked with the deadline.
    pub cancel: Cancel,
    /// Advanced once per directory entry read, for the caller's progress reports.
    pub progress: Progress,
}

impl Default for WalkLimits {
    /// The Codex-pinned caps: depth 64, 10,000 directories, 50,000 entries, no deadline,
    /// a flag and counters nobody else holds.
    fn default() -> Self {
        Self {
            max_depth: 64,
            max_dirs: 10_000,
            max_entries: 50_000,
            deadline: None,
            cancel: Cancel::new(),
            progress: Progress::new(),
        }
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
struct Frame<S> {
    dir: Dir,
    /// Workspace-relative path of this directory plus a trailing `/`, or `""` for the root.
    prefix: String,
    depth: usize,
    /// The filter's state for this directory.
    state: S,
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
        self.walk_filtered(limits, &mut KeepAll)
    }

    /// [`Root::walk`], leaving out the entries `filter` skips; a skipped directory is not
    /// opened. Entries are counted against `max_entries` whether skipped or not, so the
    /// caps bound the same reads as an unfiltered walk.
    #[expect(
        clippy::disallowed_methods,
        reason = "codespace-fs is where workspace trees are walked: relative to the root's descriptor"
    )]
    pub fn walk_filtered<F: WalkFilter>(
        &self,
        limits: &WalkLimits,
        filter: &mut F,
    ) -> Result<Walk, FsError> {
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
        let dir = Dir::new(fd).map_err(root_unavailable)?;
        let state = filter.enter(None, "", &DirFiles::new(dir.fd().map_err(root_unavailable)?));
        let root = Frame { dir, prefix: String::new(), depth: 0, state };

        let mut walker = Walker {
            limits,
            filter,
            walk: Walk::default(),
            entries: 0,
            dirs: 1,
            stack: vec![root],
        };
        if limits.max_dirs == 0 {
            walker.walk.incomplete = true;
            walker.stack.clear();
        }
        walker.run();
        walker.walk.files.sort_unstable();
        Ok(walker.walk)
    }
}

/// One walk in progress: the open directories and the counts its limits apply to.
struct Walker<'l, F: WalkFilter> {
    limits: &'l WalkLimits,
    filter: &'l mut F,
    walk: Walk,
    /// Entries seen so far (`.` and `..` excluded).
    entries: usize,
    /// Directories opened so far, the root included.
    dirs: usize,
    stack: Vec<Frame<F::Dir>>,
}

impl<F: WalkFilter> Walker<'_, F> {
    /// Reads entries depth-first until the stack is empty or a limit ends the walk.
    fn run(&mut self) {
        while let Some(top) = self.stack.last_mut() {
            if self.limits.cancel.is_cancelled()
                || self.limits.deadline.is_some_and(|deadline| Instant::now() >= deadline)
            {
                self.walk.incomplete = true;
                return;
            }
            let entry = match top.dir.read() {
                None => {
                    self.stack.pop();
                    continue;
                }
                Some(Err(_)) => {
                    // An unreadable directory (EIO, EACCES...): what it holds is unknown.
                    self.walk.incomplete = true;
                    self.stack.pop();
                    continue;
                }
                Some(Ok(entry)) => entry,
            };
            if is_dot_or_dotdot(entry.file_name()) {
                continue;
            }
            self.entries += 1;
            self.limits.progress.entry_seen();
            if self.entries > self.limits.max_entries {
                self.walk.incomplete = true;
                return;
            }
            self.visit(&entry);
        }
    }

    /// Lists a regular file, descends into a directory, and ignores everything else.
    fn visit(&mut self, entry: &DirEntry) {
        let Ok(name) = entry.file_name().to_str() else {
            self.walk.skipped_non_utf8 += 1;
            return;
        };
        let Some(top) = self.stack.last() else { return };
        let Ok(dir_fd) = top.dir.fd() else { return };
        let file_type = match entry.file_type() {
            FileType::Unknown => {
                match rustix::fs::statat(dir_fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => FileType::from_raw_mode(st.st_mode),
                    Err(Errno::NOENT) => return,
                    Err(_) => {
                        self.walk.incomplete = true;
                        return;
                    }
                }
            }
            known => known,
        };
        let is_dir = match file_type {
            FileType::RegularFile => false,
            FileType::Directory => true,
            // Symlinks are never followed or listed; special files are not "files".
            _ => return,
        };
        let path = format!("{}{name}", top.prefix);
        if self.filter.skip(&top.state, &path, is_dir) {
            return;
        }
        if is_dir {
            self.descend(name, path);
        } else {
            self.walk.files.push(path);
        }
    }

    /// Opens `name` (at the workspace-relative `path`) in the top directory without
    /// following a symlink and pushes it.
    fn descend(&mut self, name: &str, path: String) {
        let Some(top) = self.stack.last() else { return };
        let depth = top.depth + 1;
        if depth > self.limits.max_depth || self.dirs >= self.limits.max_dirs {
            self.walk.incomplete = true;
            return;
        }
        let Ok(dir_fd) = top.dir.fd() else { return };
        match open_child(dir_fd, name) {
            Ok(fd) => match Dir::new(fd) {
                Ok(dir) => {
                    let Ok(files) = dir.fd().map(DirFiles::new) else {
                        self.walk.incomplete = true;
                        return;
                    };
                    let state = self.filter.enter(Some(&top.state), &path, &files);
                    let mut prefix = path;
                    prefix.push('/');
                    self.dirs += 1;
                    self.stack.push(Frame { dir, prefix, depth, state });
                }
                Err(_) => self.walk.incomplete = true,
            },
            // Gone, or swapped for a symlink or a file since readdir: not part of the tree
            // any more, and never followed.
            Err(Errno::NOENT | Errno::LOOP | Errno::NOTDIR) => {}
            Err(_) => self.walk.incomplete = true,
        }
    }
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

#[expect(
    clippy::disallowed_methods,
    reason = "codespace-fs is where workspace trees are walked: relative to the parent's descriptor"
)]
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
