//! The change journal behind `changes`: the last events of the current epoch, bounded, and
//! the opaque cursor that names a point in them. Pure: no I/O.

use std::collections::{BTreeMap, VecDeque};

use codespace_types::ObservedChange;

use crate::event::EventKind;

/// Events kept for `changes`; a cursor older than the oldest kept must resync.
pub const JOURNAL_EVENTS: usize = 10_000;
/// Paths one `changes` answer lists at most; more sets `truncated`.
pub const MAX_CHANGES: usize = 1_000;

/// A point in the event stream of one watcher: which server instance, epoch and sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cursor {
    pub instance: u64,
    pub epoch: u64,
    pub seq: u64,
}

/// A cursor string that is not one this server hands out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("{cursor:?} is not a cursor returned by `changes` (expected c1.<instance>.<epoch>.<seq>)")]
pub struct BadCursor {
    pub cursor: String,
}

impl Cursor {
    /// The opaque wire form.
    pub fn encode(&self) -> String {
        format!("c1.{:016x}.{}.{}", self.instance, self.epoch, self.seq)
    }

    pub fn parse(text: &str) -> Result<Cursor, BadCursor> {
        let bad = || BadCursor { cursor: text.chars().take(80).collect() };
        let mut parts = text.split('.');
        if parts.next() != Some("c1") {
            return Err(bad());
        }
        let instance =
            parts.next().and_then(|s| u64::from_str_radix(s, 16).ok()).ok_or_else(bad)?;
        let epoch = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let seq = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(Cursor { instance, epoch, seq })
    }
}

/// What changed since a cursor.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Changes {
    pub cursor: Cursor,
    /// Coalesced per path, sorted by path.
    pub changes: Vec<(String, ObservedChange)>,
    /// The watcher cannot vouch that `changes` is complete: re-read instead of trusting it.
    pub resync_required: bool,
    /// More paths changed than [`MAX_CHANGES`]; the first ones by path are listed.
    pub truncated: bool,
}

/// One journalled event.
#[derive(Debug, Clone)]
enum Entry {
    Change(String, ObservedChange),
    Resync,
}

/// The bounded journal of the current epoch.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    entries: VecDeque<(u64, Entry)>,
    /// The highest sequence number dropped for room (0: none).
    dropped_through: u64,
}

impl Journal {
    /// Forgets everything: a new epoch begins.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.dropped_through = 0;
    }

    pub(crate) fn record(&mut self, seq: u64, kind: &EventKind) {
        match kind {
            EventKind::Create { path } => {
                self.push(seq, Entry::Change(path.clone(), ObservedChange::Created))
            }
            EventKind::Modify { path } => {
                self.push(seq, Entry::Change(path.clone(), ObservedChange::Modified))
            }
            EventKind::Remove { path } => {
                self.push(seq, Entry::Change(path.clone(), ObservedChange::Removed))
            }
            EventKind::Rename { from, to } => {
                self.push(seq, Entry::Change(from.clone(), ObservedChange::Removed));
                self.push(seq, Entry::Change(to.clone(), ObservedChange::Created));
            }
            EventKind::ResyncRequired => self.push(seq, Entry::Resync),
        }
    }

    fn push(&mut self, seq: u64, entry: Entry) {
        if self.entries.len() >= JOURNAL_EVENTS
            && let Some((dropped, _)) = self.entries.pop_front()
        {
            self.dropped_through = dropped;
        }
        self.entries.push_back((seq, entry));
    }

    /// The changes after `since` (of the same epoch), up to `now`.
    pub(crate) fn since(&self, since: &Cursor, now: Cursor) -> Changes {
        let mut out =
            Changes { cursor: now, changes: Vec::new(), resync_required: false, truncated: false };
        if since.instance != now.instance || since.epoch != now.epoch || since.seq > now.seq {
            out.resync_required = true;
            return out;
        }
        // An event after `since` was dropped for room: the list would be partial.
        if self.dropped_through > since.seq {
            out.resync_required = true;
        }
        let mut paths: BTreeMap<&str, ObservedChange> = BTreeMap::new();
        for (seq, entry) in &self.entries {
            if *seq <= since.seq {
                continue;
            }
            match entry {
                Entry::Resync => out.resync_required = true,
                Entry::Change(path, kind) => {
                    paths.entry(path.as_str()).and_modify(|k| *k = k.then(*kind)).or_insert(*kind);
                }
            }
        }
        out.truncated = paths.len() > MAX_CHANGES;
        out.changes = paths.into_iter().take(MAX_CHANGES).map(|(p, k)| (p.to_owned(), k)).collect();
        out
    }
}

#[cfg(test)]
mod tests;
