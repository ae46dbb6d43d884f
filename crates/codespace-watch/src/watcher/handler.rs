//! The handler: each record's meaning (see `translate`) numbered in the current epoch and
//! handed to the caches, the journal and the subscribers; events lost or the root gone stop
//! the workspace's watcher (its table goes back to the hub; a new one starts on next use).

use std::time::{Duration, Instant};

use crate::cache::Caches;
use crate::event::{Classified, EventKind, Lost, WatchEvent};
use crate::watcher::{Inner, RETRY_AFTER, Shared, Status};

/// Hands one record's meaning to the caches, the journal and the subscribers, if
/// `generation` is still the current start; false when the workspace's table must go.
pub(crate) fn deliver(shared: &Shared, generation: u64, classified: Classified) -> bool {
    let delay = shared.lock().event_delay;
    if !delay.is_zero() {
        std::thread::sleep(delay);
    }
    let mut inner = shared.lock();
    inner.raw_events += 1;
    if inner.generation != generation {
        return false;
    }
    let Classified { kinds, new_directory, metadata, cookies, lost } = classified;
    let go_on = lost.is_none();
    let mut signal = false;
    for cookie in cookies {
        if let Some(seen) = inner.cookies.get_mut(&cookie) {
            *seen = true;
            signal = true;
        }
    }
    if new_directory {
        inner.caches.directory_appeared(Instant::now());
    }
    for kind in kinds {
        if !matches!(inner.status, Status::Running | Status::Starting) {
            break;
        }
        invalidate(&mut inner.caches, &kind, metadata);
        emit(&mut inner, kind);
    }
    // Events were lost (an overflow or an error) or the root went away: this watcher
    // cannot vouch for anything any more. A new one starts on next use.
    if let Some(lost) = lost {
        let (reason, retry) = match lost {
            Lost::Overflow => ("the event queue overflowed", Duration::ZERO),
            Lost::RootGone => ("the workspace root was moved or removed", RETRY_AFTER),
            Lost::ReadFailed => ("reading the event queue failed", RETRY_AFTER),
            Lost::WatchFailed => {
                ("a directory could not be watched: the inotify watch limit", RETRY_AFTER)
            }
        };
        tracing::warn!(root = %shared.root_path.display(), %reason, "workspace watcher stopped; caches are off");
        inner.caches.clear();
        inner.status =
            Status::Failed { reason: reason.to_owned(), retry_at: Instant::now() + retry };
        inner.generation += 1;
        signal = true;
    }
    drop(inner);
    if signal {
        shared.changed.notify_all();
    }
    go_on
}

/// What an event means for the caches.
fn invalidate(caches: &mut Caches, kind: &EventKind, metadata: bool) {
    match kind {
        EventKind::Create { path } | EventKind::Remove { path } => {
            caches.forget(path);
            caches.invalidate_listings();
        }
        EventKind::Rename { from, to } => {
            caches.forget(from);
            caches.forget(to);
            caches.invalidate_listings();
        }
        EventKind::Modify { path } => {
            caches.forget(path);
            if metadata || is_rule_file(path) {
                caches.invalidate_listings();
            }
        }
        EventKind::ResyncRequired => caches.clear(),
    }
}

/// A file whose content changes what `find` and `grep` list.
fn is_rule_file(path: &str) -> bool {
    let name = path.rsplit_once('/').map_or(path, |(_, n)| n);
    matches!(name, ".gitignore" | ".ignore") || path == ".git/info/exclude"
}

/// Numbers one event in the current epoch and hands it to the journal and the subscribers.
pub(crate) fn emit(inner: &mut Inner, kind: EventKind) {
    inner.seq += 1;
    if matches!(kind, EventKind::ResyncRequired) {
        inner.caches.clear();
        inner.caches.stats.resyncs += 1;
    }
    inner.journal.record(inner.seq, &kind);
    let ev = WatchEvent { epoch: inner.epoch, seq: inner.seq, kind };
    inner.subscribers.retain(|s| match s.upgrade() {
        Some(s) => {
            s.push(&ev);
            true
        }
        None => false,
    });
}
