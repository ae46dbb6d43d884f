//! Watcher events and what one inotify record says: paths workspace-relative and
//! `/`-separated (a watched directory's verified path and the record's name), anything the
//! watcher cannot name turned into [`EventKind::ResyncRequired`].

use rustix::fs::inotify::ReadFlags;

/// One delivered event: `seq` counts the events of `epoch` from 1; a restart starts a new
/// epoch. A subscriber that lagged receives a [`EventKind::ResyncRequired`] with `seq` 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchEvent {
    pub epoch: u64,
    pub seq: u64,
    pub kind: EventKind,
}

/// What happened. Paths are workspace-relative and lexical: a named path may be a symlink
/// or may already be gone; they are invalidation hints, never permissions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    Create {
        path: String,
    },
    Modify {
        path: String,
    },
    Remove {
        path: String,
    },
    Rename {
        from: String,
        to: String,
    },
    /// Events may have been lost: every cache built before this is untrusted.
    ResyncRequired,
}

/// One inotify record as the watcher handles it: the kinds to emit, and what they mean
/// for the listing cache beyond their paths.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Classified {
    pub(crate) kinds: Vec<EventKind>,
    /// A directory appeared: a walk that started before its watch was added may have
    /// missed files created in it meanwhile (see `cache`).
    pub(crate) new_directory: bool,
    /// Permissions or other metadata changed: a directory may have become unreadable.
    pub(crate) metadata: bool,
    /// Markers whose creation this record reports (see `sync`).
    pub(crate) cookies: Vec<String>,
    /// Events were lost or the root went away: the watcher cannot go on, and why.
    pub(crate) lost: Option<Lost>,
}

/// Why a watcher stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lost {
    /// The kernel's event queue overflowed: a new watcher may start at once.
    Overflow,
    /// The workspace root was moved, removed or unmounted.
    RootGone,
    /// Reading events failed.
    ReadFailed,
    /// A watch could not be added (the watch limit).
    WatchFailed,
}

/// Prefix of the watcher's own marker files in the root (see `sync`); their events are
/// never emitted and a walk never lists them.
pub const COOKIE_PREFIX: &str = ".codespace-cookie-";

/// True for a workspace-relative path that is one of the watchers' markers.
pub fn is_cookie(path: &str) -> bool {
    path.starts_with(COOKIE_PREFIX) && !path.contains('/')
}

/// True for a workspace-relative path whose name is one of the server's own temporary
/// files (an atomic write's, renamed over its target or removed within the call).
pub(crate) fn is_server_temp(path: &str) -> bool {
    path.rsplit_once('/').map_or(path, |(_, name)| name).starts_with(codespace_fs::TEMP_PREFIX)
}

/// What one inotify record says, its directory named by the path its watch was verified
/// at (`""`: the root). Pure: the watcher decides what follows.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Said {
    /// Nothing to report: an access, or a watched directory's own removal (its parent's
    /// event names it).
    Nothing,
    /// The kernel's queue overflowed.
    Overflow,
    /// The kernel dropped the watch (`IN_IGNORED`).
    Ignored,
    /// The root itself was moved, removed or unmounted.
    RootGone,
    /// Something the watcher cannot name or vouch for (a name that is not UTF-8, a
    /// watched directory unmounted, the root's own attributes).
    Resync,
    /// A watched directory other than the root was renamed.
    MovedSelf,
    Created {
        path: String,
        dir: bool,
    },
    Removed {
        path: String,
        dir: bool,
    },
    MovedFrom {
        path: String,
        dir: bool,
    },
    MovedTo {
        path: String,
        dir: bool,
    },
    Modified {
        path: String,
        dir: bool,
        metadata: bool,
    },
}

/// Reads one record of a watch on `dir`.
pub(crate) fn said(mask: ReadFlags, dir: &str, name: Option<&[u8]>) -> Said {
    if mask.contains(ReadFlags::QUEUE_OVERFLOW) {
        return Said::Overflow;
    }
    if mask.contains(ReadFlags::IGNORED) {
        return Said::Ignored;
    }
    let root = dir.is_empty();
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        let gone = ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF | ReadFlags::UNMOUNT;
        return if root && mask.intersects(gone) {
            Said::RootGone
        } else if mask.contains(ReadFlags::MOVE_SELF) {
            Said::MovedSelf
        } else if mask.contains(ReadFlags::UNMOUNT) || (root && mask.contains(ReadFlags::ATTRIB)) {
            Said::Resync
        } else {
            Said::Nothing
        };
    };
    let Ok(name) = std::str::from_utf8(name) else { return Said::Resync };
    if name.contains('/') || name == "." || name == ".." {
        return Said::Resync;
    }
    let path = if root { name.to_owned() } else { format!("{dir}/{name}") };
    let dir = mask.contains(ReadFlags::ISDIR);
    if mask.contains(ReadFlags::CREATE) {
        Said::Created { path, dir }
    } else if mask.contains(ReadFlags::DELETE) {
        Said::Removed { path, dir }
    } else if mask.contains(ReadFlags::MOVED_FROM) {
        Said::MovedFrom { path, dir }
    } else if mask.contains(ReadFlags::MOVED_TO) {
        Said::MovedTo { path, dir }
    } else if mask.intersects(ReadFlags::MODIFY | ReadFlags::ATTRIB) {
        Said::Modified { path, dir, metadata: mask.contains(ReadFlags::ATTRIB) }
    } else {
        Said::Nothing
    }
}

#[cfg(test)]
mod tests;
