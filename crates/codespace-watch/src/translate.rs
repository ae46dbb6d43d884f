//! What one record of the shared inotify instance means to one workspace: named by the
//! workspace's watch table (see `tree`), with the table kept in step with the renames and
//! removals it reads. The hub (see `hub`) reads the queue and hands each record to every
//! workspace whose table names its watch.
//!
//! A record names a path only when the watcher can vouch that the path was beneath the
//! root when the event happened: its directory is still at the path it was verified at,
//! or a record still to come in the same read says that directory (or one above it) was
//! moved or removed afterwards. Otherwise the record is a `ResyncRequired`.

use std::mem::MaybeUninit;
use std::sync::Arc;

use codespace_fs::Root;
use rustix::fs::inotify::{self, ReadFlags};
use rustix::io::Errno;

use crate::event::{Classified, EventKind, Lost, Said, is_cookie, said};
use crate::tree::{Kernel, Tree, join};

/// Bytes read from the inotify queue at once: about a thousand records.
pub(crate) const READ_BUFFER: usize = 64 * 1024;

/// One inotify record, copied out of the read buffer.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    pub(crate) wd: i32,
    pub(crate) mask: ReadFlags,
    pub(crate) cookie: u32,
    pub(crate) name: Option<Vec<u8>>,
}

impl Record {
    /// The kernel's queue overflowed: a record for every table.
    pub(crate) fn overflow() -> Record {
        Record { wd: -1, mask: ReadFlags::QUEUE_OVERFLOW, cookie: 0, name: None }
    }
}

/// One workspace's running watch: its table and the rename it is pairing.
#[derive(Debug)]
pub(crate) struct Live {
    pub(crate) tree: Tree,
    root: Arc<Root>,
    /// The source of a rename whose destination is the next record.
    pending: Option<(u32, String)>,
}

impl Live {
    pub(crate) fn new(tree: Tree, root: Arc<Root>) -> Live {
        Live { tree, root, pending: None }
    }

    /// What one record means; keeps the watch table in step.
    pub(crate) fn translate(
        &mut self,
        rec: &Record,
        later: &[Record],
        kernel: &mut dyn Kernel,
    ) -> Classified {
        let mut out = Classified::default();
        let Some(dir) = self.tree.path(rec.wd).map(str::to_owned) else {
            // A watch dropped already (its directory moved or went): nothing it says now
            // can be vouched for, and what became of it was read before.
            if rec.mask.contains(ReadFlags::QUEUE_OVERFLOW) {
                out.kinds.push(EventKind::ResyncRequired);
                out.lost = Some(Lost::Overflow);
            }
            return out;
        };
        match said(rec.mask, &dir, rec.name.as_deref()) {
            Said::Nothing => {}
            Said::Overflow => out.stop(Lost::Overflow),
            Said::Ignored if self.tree.root_wd() == Some(rec.wd) => out.stop(Lost::RootGone),
            Said::Ignored => self.tree.removed_by_kernel(rec.wd, kernel),
            Said::RootGone => out.stop(Lost::RootGone),
            Said::Resync => out.kinds.push(EventKind::ResyncRequired),
            Said::MovedSelf => {
                // Its parent's MOVED_FROM, read first, drops a watch that moves; one still
                // here moved where no watch saw it go.
                self.tree.forget(&dir, kernel);
                out.kinds.push(EventKind::ResyncRequired);
            }
            Said::Created { path, .. } if dir.is_empty() && is_cookie(&path) => {
                out.cookies.push(path);
            }
            Said::Created { path, dir: is_dir } => {
                self.name(rec, later, &mut out, EventKind::Create { path: path.clone() });
                self.replaced(&path, is_dir, &mut out, kernel);
            }
            Said::Removed { path, .. } => {
                if !is_cookie(&path) {
                    self.name(rec, later, &mut out, EventKind::Remove { path: path.clone() });
                }
                self.tree.forget(&path, kernel);
            }
            Said::MovedFrom { path, dir: is_dir } => {
                self.moved_from(rec, later, path, is_dir, &mut out, kernel)
            }
            Said::MovedTo { path, dir: is_dir } => {
                let from = self.pending.take().filter(|(cookie, _)| *cookie == rec.cookie);
                let kind = match from {
                    Some((_, from)) => EventKind::Rename { from, to: path.clone() },
                    None => EventKind::Create { path: path.clone() },
                };
                self.name(rec, later, &mut out, kind);
                self.replaced(&path, is_dir, &mut out, kernel);
            }
            Said::Modified { path, dir: is_dir, metadata } => {
                out.metadata = metadata;
                self.name(rec, later, &mut out, EventKind::Modify { path: path.clone() });
                // A directory that could not be watched may be readable now.
                if is_dir && metadata && self.tree.wd_at(&path).is_none() {
                    self.arrive(&path, &mut out, kernel);
                }
            }
        }
        out.kinds.retain(|k| !names_cookie(k));
        out
    }

    /// A directory renamed away: its watches go; the name may hold another directory
    /// already (an exchange), watched again here because its own arrival was read before.
    fn moved_from(
        &mut self,
        rec: &Record,
        later: &[Record],
        path: String,
        is_dir: bool,
        out: &mut Classified,
        kernel: &mut dyn Kernel,
    ) {
        self.tree.forget(&path, kernel);
        let paired = self.next_of_mine(later).is_some_and(|next| {
            next.mask.contains(ReadFlags::MOVED_TO) && next.cookie == rec.cookie
        });
        if paired && self.vouch(rec.wd, later) {
            self.pending = Some((rec.cookie, path.clone()));
        } else {
            self.name(rec, later, out, EventKind::Remove { path: path.clone() });
        }
        if is_dir {
            self.arrive(&path, out, kernel);
        }
    }

    /// The next record of this table (or an overflow): what the records of one instance
    /// per workspace would have been.
    fn next_of_mine<'r>(&self, later: &'r [Record]) -> Option<&'r Record> {
        later.iter().find(|r| r.wd == -1 || self.tree.path(r.wd).is_some())
    }

    /// Something new is at `path`: a directory is watched (and its files listed), and
    /// whatever was watched there before goes.
    fn replaced(&mut self, path: &str, is_dir: bool, out: &mut Classified, k: &mut dyn Kernel) {
        if is_dir {
            out.new_directory = true;
            self.arrive(path, out, k);
        } else {
            self.tree.forget(path, k);
        }
    }

    /// Watches the directory now at `path` and everything beneath it, listing its files as
    /// created: they have no events of their own.
    fn arrive(&mut self, path: &str, out: &mut Classified, kernel: &mut dyn Kernel) {
        match self.tree.add(&self.root, path, true, kernel) {
            Ok(added) => {
                out.kinds.extend(added.files.into_iter().map(|path| EventKind::Create { path }));
                if added.doubtful {
                    out.kinds.push(EventKind::ResyncRequired);
                }
            }
            Err(reason) => {
                tracing::warn!(%reason, "a directory could not be watched");
                out.stop(Lost::WatchFailed);
            }
        }
    }

    /// Emits `kind` when the record's directory can be vouched for, else a resync.
    fn name(&self, rec: &Record, later: &[Record], out: &mut Classified, kind: EventKind) {
        if self.vouch(rec.wd, later) {
            out.kinds.push(kind);
        } else {
            out.kinds.push(EventKind::ResyncRequired);
        }
    }

    /// True when the directory of `wd` was at its path when the record's event happened:
    /// it is there now, or a later record says it (or a directory above it) moved or went.
    fn vouch(&self, wd: i32, later: &[Record]) -> bool {
        if self.tree.still_in_place(&self.root, wd) {
            return true;
        }
        let Some(path) = self.tree.path(wd) else { return false };
        later.iter().any(|r| {
            let Some(at) = self.tree.path(r.wd) else { return false };
            let self_moved = r.mask.intersects(ReadFlags::MOVE_SELF | ReadFlags::DELETE_SELF)
                && beneath(path, at);
            let named = r.mask.intersects(ReadFlags::MOVED_FROM | ReadFlags::DELETE)
                && r.mask.contains(ReadFlags::ISDIR)
                && r.name
                    .as_deref()
                    .and_then(|n| std::str::from_utf8(n).ok())
                    .is_some_and(|name| beneath(path, &join(at, name)));
            self_moved || named
        })
    }
}

impl Classified {
    /// The watcher cannot go on: a resync, and the reason.
    fn stop(&mut self, lost: Lost) {
        self.kinds.push(EventKind::ResyncRequired);
        self.lost = Some(lost);
    }
}

/// True for an event about one of the watchers' markers, which are never emitted.
fn names_cookie(kind: &EventKind) -> bool {
    match kind {
        EventKind::Create { path } | EventKind::Modify { path } | EventKind::Remove { path } => {
            is_cookie(path)
        }
        EventKind::Rename { from, to } => is_cookie(from) || is_cookie(to),
        EventKind::ResyncRequired => false,
    }
}

/// True when `path` is `dir` or beneath it (`dir` not the root).
fn beneath(path: &str, dir: &str) -> bool {
    !dir.is_empty()
        && path.strip_prefix(dir).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Every record one read returns (`EAGAIN` when there is none).
pub(crate) fn read_batch(
    fd: std::os::fd::BorrowedFd<'_>,
    buf: &mut [MaybeUninit<u8>],
) -> Result<Vec<Record>, Errno> {
    let mut reader = inotify::Reader::new(fd, buf);
    let mut records = Vec::new();
    loop {
        let ev = reader.next()?;
        records.push(Record {
            wd: ev.wd(),
            mask: ev.events(),
            cookie: ev.cookie(),
            name: ev.file_name().map(|n| n.to_bytes().to_vec()),
        });
        if reader.is_buffer_empty() {
            return Ok(records);
        }
    }
}
