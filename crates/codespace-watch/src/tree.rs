//! One workspace's watched directories: a watch per directory beneath the root, and the
//! table that names each watch by the workspace-relative path it was verified at. The
//! watches themselves belong to the process's one inotify instance (see `hub`), reached
//! through a [`Kernel`]: two workspaces that share a directory (one nested in the other)
//! share its watch, which is removed only when no table names it any more.
//!
//! A watch is never added by path. Each directory is opened beneath the root descriptor
//! with no symlink followed ([`Root::open_dir`]: `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS)`), the watch is added on that open directory through its
//! `/proc/self/fd/N` magic link (which resolves to the very inode the descriptor holds,
//! never to a name a command can swap; `IN_DONT_FOLLOW` would watch the magic link itself,
//! so it is `IN_ONLYDIR` instead), and only then is the path checked to
//! still name that directory (device and inode) with a fresh no-follow lookup. A directory
//! moved between the open and the check is dropped; one moved after the check is moved by a
//! rename the parent's watch reports, later in the event stream than the check, and
//! dropping its watch (and every watch beneath it) is part of handling that event.

use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsFd, AsRawFd};

use codespace_fs::{FsError, Root, WorkspacePath};
use rustix::fs::inotify::WatchFlags;
use rustix::io::Errno;

/// What each watch reports: changes only. A file opened, read or closed unwritten changed
/// nothing, and watching opens would queue two events for every file a `grep` (or a build)
/// reads. Every table asks for the same events, so a watch two tables share (added again
/// without `IN_MASK_ADD`) keeps this mask.
pub(crate) const EVENTS: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::DELETE)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::MODIFY)
    .union(WatchFlags::ATTRIB)
    .union(WatchFlags::DELETE_SELF)
    .union(WatchFlags::MOVE_SELF);

/// Entries one directory's listing reads before it gives up (and asks for a resync).
pub(crate) const MAX_DIR_ENTRIES: usize = 100_000;
/// Files a directory that arrived (created or renamed in) may bring before the watcher
/// stops listing them one by one (and asks for a resync instead).
pub(crate) const BROUGHT_MAX_FILES: usize = 10_000;

/// One watched directory: where it was verified, and what it was.
#[derive(Debug, Clone)]
struct Watched {
    path: String,
    dev: u64,
    ino: u64,
}

/// What adding watches beneath a directory found.
#[derive(Debug, Default)]
pub(crate) struct Added {
    /// Files found (workspace-relative), when asked for.
    pub(crate) files: Vec<String>,
    /// Something could not be watched or listed (an unreadable directory, a directory
    /// already watched under another path, a cap): the watcher cannot vouch for it.
    pub(crate) doubtful: bool,
}

/// The shared inotify instance as one table sees it: a watch added is counted as this
/// table's, a watch released is removed from the kernel once no table counts it.
pub(crate) trait Kernel {
    /// Adds (or finds) the watch on the directory `magic` names, counted as this table's;
    /// `ECANCELED` when the table was given up (its workspace removed or restarted).
    fn add_watch(&mut self, magic: &str) -> Result<i32, Errno>;
    /// This table no longer names `wd`.
    fn release(&mut self, wd: i32);
}

/// One workspace's table of watches.
#[derive(Debug, Default)]
pub(crate) struct Tree {
    by_wd: HashMap<i32, Watched>,
    /// The same table by path, ordered so that a subtree is one range.
    by_path: BTreeMap<String, i32>,
}

impl Tree {
    /// Watches the root and every directory beneath it. On failure every watch it added
    /// is released again.
    pub(crate) fn start(root: &Root, kernel: &mut dyn Kernel) -> Result<Tree, String> {
        let mut tree = Tree::default();
        let added = tree.add(root, "", false, kernel);
        let result = match added {
            Ok(_) if tree.root_wd().is_none() => {
                Err("the workspace root could not be watched".to_owned())
            }
            Ok(_) => return Ok(tree),
            Err(reason) => Err(reason),
        };
        tree.forget("", kernel);
        result
    }

    /// The root's watch.
    pub(crate) fn root_wd(&self) -> Option<i32> {
        self.by_path.get("").copied()
    }

    /// The path a live watch was verified at (`""` for the root).
    pub(crate) fn path(&self, wd: i32) -> Option<&str> {
        self.by_wd.get(&wd).map(|w| w.path.as_str())
    }

    /// The watch verified at `path`, if any.
    pub(crate) fn wd_at(&self, path: &str) -> Option<i32> {
        self.by_path.get(path).copied()
    }

    /// True when the directory watched by `wd` is still at its path (or is the root).
    pub(crate) fn still_in_place(&self, root: &Root, wd: i32) -> bool {
        match self.by_wd.get(&wd) {
            Some(w) if w.path.is_empty() => true,
            Some(w) => is_at(root, &w.path, (w.dev, w.ino)),
            None => false,
        }
    }

    /// Watches the directory at `rel` (`""`: the root) and every directory beneath it,
    /// and with `report` lists the files found. Fails only when the watcher cannot go on
    /// (the watch limit); a directory gone or swapped meanwhile is skipped, as its own
    /// events tell what became of it.
    pub(crate) fn add(
        &mut self,
        root: &Root,
        rel: &str,
        report: bool,
        kernel: &mut dyn Kernel,
    ) -> Result<Added, String> {
        let mut added = Added::default();
        let mut stack = vec![rel.to_owned()];
        while let Some(dir) = stack.pop() {
            if self.by_path.contains_key(&dir) {
                self.forget(&dir, kernel);
            }
            let opened = if dir.is_empty() {
                root.open_dir(None)
            } else {
                match WorkspacePath::parse(&dir) {
                    Ok(p) => root.open_dir(Some(&p)),
                    Err(_) => {
                        added.doubtful = true;
                        continue;
                    }
                }
            };
            let opened = match opened {
                Ok(opened) => opened,
                Err(
                    FsError::NotFound { .. }
                    | FsError::NotDirectory { .. }
                    | FsError::SymlinkRejected { .. }
                    | FsError::PathEscape { .. },
                ) => continue,
                Err(_) => {
                    added.doubtful = true;
                    continue;
                }
            };
            let magic = format!("/proc/self/fd/{}", opened.as_fd().as_raw_fd());
            let wd = match kernel.add_watch(&magic) {
                // Watched already by this table, under another path.
                Ok(wd) if self.by_wd.contains_key(&wd) => {
                    added.doubtful |= self.watched_elsewhere(wd, &dir, opened.identity());
                    continue;
                }
                Ok(wd) => wd,
                Err(Errno::NOSPC) => {
                    return Err(
                        "the inotify watch limit (fs.inotify.max_user_watches) was reached"
                            .to_owned(),
                    );
                }
                // The table was given up meanwhile (see `Kernel`).
                Err(Errno::CANCELED) => return Err("the watch was given up".to_owned()),
                Err(e) if dir.is_empty() => {
                    return Err(format!("the root could not be watched through {magic}: {e}"));
                }
                Err(_) => {
                    added.doubtful = true;
                    continue;
                }
            };
            let (dev, ino) = opened.identity();
            if !dir.is_empty() && !is_at(root, &dir, (dev, ino)) {
                kernel.release(wd);
                continue;
            }
            self.by_wd.insert(wd, Watched { path: dir.clone(), dev, ino });
            self.by_path.insert(dir.clone(), wd);
            let listing = opened.entries(MAX_DIR_ENTRIES);
            added.doubtful |= listing.incomplete;
            if report {
                for name in listing.files {
                    if added.files.len() >= BROUGHT_MAX_FILES {
                        added.doubtful = true;
                        break;
                    }
                    added.files.push(join(&dir, &name));
                }
            }
            stack.extend(listing.dirs.iter().map(|name| join(&dir, name)));
        }
        Ok(added)
    }

    /// The directory opened for `dir` is the table's watch `wd` already; doubtful unless it
    /// is watched under another path: an older path it has left since (a record still to
    /// come moves it, and its arrival here is handled then), or one that names it too (a
    /// bind mount: its events are named by the first path, which is beneath the root as
    /// well).
    fn watched_elsewhere(&self, wd: i32, dir: &str, identity: (u64, u64)) -> bool {
        !matches!(self.by_wd.get(&wd), Some(w) if w.path != dir && (w.dev, w.ino) == identity)
    }

    /// Drops the watch at `path` and every watch beneath it.
    pub(crate) fn forget(&mut self, path: &str, kernel: &mut dyn Kernel) {
        let doomed: Vec<String> = if path.is_empty() {
            self.by_path.keys().cloned().collect()
        } else {
            let prefix = format!("{path}/");
            let beneath = self.by_path.range(prefix.clone()..);
            let mut doomed: Vec<String> = beneath
                .take_while(|(p, _)| p.starts_with(&prefix))
                .map(|(p, _)| p.clone())
                .collect();
            doomed.push(path.to_owned());
            doomed
        };
        for p in doomed {
            if let Some(wd) = self.by_path.remove(&p) {
                self.by_wd.remove(&wd);
                kernel.release(wd);
            }
        }
    }

    /// Forgets a watch the kernel removed (`IN_IGNORED`).
    pub(crate) fn removed_by_kernel(&mut self, wd: i32, kernel: &mut dyn Kernel) {
        if let Some(w) = self.by_wd.remove(&wd) {
            kernel.release(wd);
            if self.by_path.get(&w.path) == Some(&wd) {
                self.by_path.remove(&w.path);
            }
        }
    }
}

/// `dir/name`, or `name` in the root.
pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() { name.to_owned() } else { format!("{dir}/{name}") }
}

/// True when `path` names, now and with no symlink on the way, the directory `identity`.
fn is_at(root: &Root, path: &str, identity: (u64, u64)) -> bool {
    let Ok(p) = WorkspacePath::parse(path) else { return false };
    matches!(
        root.metadata(&p),
        Ok(Some(m)) if m.kind == codespace_fs::FileKind::Directory && (m.dev, m.ino) == identity
    )
}
