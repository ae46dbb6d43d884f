//! notify's callback: each raw event classified, numbered in the current epoch, and handed
//! to the caches, the journal and the subscribers; events lost or the root gone stop the
//! watcher (a new one starts on next use).

use std::time::{Duration, Instant};

use crate::cache::Caches;
use crate::event::{Classified, EventKind, WatchEvent, classify};
use crate::watcher::{Inner, RETRY_AFTER, Shared, Status};

/// notify's callback: classifies the raw event and emits what it means.
pub(super) fn handle(shared: &Shared, generation: u64, raw: &notify::Result<notify::Event>) {
    let delay = shared.lock().event_delay;
    if !delay.is_zero() {
        std::thread::sleep(delay);
    }
    let mut classified = classify(&shared.root_path, raw);
    // A directory renamed in gets its watch after this event, like a created one.
    classified.new_directory |= classified.arrived.iter().any(|p| {
        codespace_fs::WorkspacePath::parse(p)
            .ok()
            .and_then(|p| shared.root.metadata(&p).ok().flatten())
            .is_some_and(|m| m.kind == codespace_fs::FileKind::Directory)
    });
    let mut inner = shared.lock();
    inner.raw_events += 1;
    if inner.generation != generation {
        return;
    }
    let Classified { kinds, new_directory, metadata, root_gone, cookies, arrived: _ } = classified;
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
    let lost = match raw {
        Err(e) => Some((format!("notify reported an error: {e}"), RETRY_AFTER)),
        Ok(ev) if ev.need_rescan() => {
            Some(("the event queue overflowed".to_owned(), Duration::ZERO))
        }
        Ok(_) if root_gone => {
            Some(("the workspace root was moved or removed".to_owned(), RETRY_AFTER))
        }
        Ok(_) => None,
    };
    let old = lost.and_then(|(reason, retry)| {
        tracing::warn!(root = %shared.root_path.display(), %reason, "workspace watcher stopped; caches are off");
        inner.caches.clear();
        inner.status = Status::Failed { reason, retry_at: Instant::now() + retry };
        inner.generation += 1;
        signal = true;
        inner.watcher.take()
    });
    drop(inner);
    if signal {
        shared.changed.notify_all();
    }
    // Dropping a watcher only sends its event thread a message: safe from that thread.
    drop(old);
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
