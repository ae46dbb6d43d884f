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
    let arrived_dirs: Vec<&String> = classified
        .arrived
        .iter()
        .filter(|p| {
            codespace_fs::WorkspacePath::parse(p)
                .ok()
                .and_then(|p| shared.root.metadata(&p).ok().flatten())
                .is_some_and(|m| m.kind == codespace_fs::FileKind::Directory)
        })
        .collect();
    // A directory renamed in gets its watch after this event, like a created one; the files
    // it brought have no events of their own, so they are listed under its new name here.
    classified.new_directory |= !arrived_dirs.is_empty();
    let brought: Vec<EventKind> =
        arrived_dirs.into_iter().flat_map(|d| files_beneath(&shared.root, d)).collect();
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
    for kind in kinds.into_iter().chain(brought) {
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

/// Entries a walk of a directory that arrived by rename may read before it gives up (and
/// asks for a resync instead).
const BROUGHT_MAX_ENTRIES: usize = 10_000;

/// A `Create` for every file beneath `dir`, or a resync when they cannot all be listed.
fn files_beneath(root: &codespace_fs::Root, dir: &str) -> Vec<EventKind> {
    let limits =
        codespace_fs::WalkLimits { max_entries: BROUGHT_MAX_ENTRIES, ..Default::default() };
    match root.walk_filtered(&limits, &mut Beneath(format!("{dir}/"))) {
        Ok(walk) if !walk.incomplete => {
            walk.files.into_iter().map(|path| EventKind::Create { path }).collect()
        }
        Ok(_) | Err(_) => vec![EventKind::ResyncRequired],
    }
}

/// A walk filter that opens only the directories on the way to a prefix and beneath it.
struct Beneath(String);

impl codespace_fs::WalkFilter for Beneath {
    type Dir = ();

    fn enter(&mut self, _: Option<&()>, _: &str, _: &codespace_fs::DirFiles<'_>) {}

    fn skip(&self, (): &(), path: &str, is_dir: bool) -> bool {
        let beneath = path.starts_with(&self.0);
        let on_the_way = is_dir && self.0.starts_with(&format!("{path}/"));
        !(beneath || on_the_way)
    }
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
