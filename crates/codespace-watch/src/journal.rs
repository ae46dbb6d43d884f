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
mod tests {
    use super::*;

    fn cursor(epoch: u64, seq: u64) -> Cursor {
        Cursor { instance: 7, epoch, seq }
    }

    #[test]
    fn cursors_round_trip_and_junk_is_refused() {
        let c = cursor(3, 42);
        assert_eq!(Cursor::parse(&c.encode()), Ok(c));
        for bad in ["", "c1", "c1.zz.1.2", "c2.07.1.2", "c1.07.1.2.3", "c1.07.-1.2"] {
            assert!(Cursor::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn changes_are_coalesced_per_path_and_sorted() {
        let mut j = Journal::default();
        j.record(1, &EventKind::Create { path: "b".into() });
        j.record(2, &EventKind::Modify { path: "b".into() });
        j.record(3, &EventKind::Modify { path: "a".into() });
        j.record(4, &EventKind::Rename { from: "a".into(), to: "c".into() });
        let out = j.since(&cursor(1, 0), cursor(1, 4));
        assert!(!out.resync_required && !out.truncated);
        assert_eq!(
            out.changes,
            vec![
                ("a".into(), ObservedChange::Removed),
                ("b".into(), ObservedChange::Created),
                ("c".into(), ObservedChange::Created)
            ]
        );
        let later = j.since(&cursor(1, 3), cursor(1, 4));
        assert_eq!(later.changes.len(), 2);
    }

    #[test]
    fn a_resync_an_old_epoch_or_a_lost_event_says_resync() {
        let mut j = Journal::default();
        j.record(1, &EventKind::Create { path: "x".into() });
        j.record(2, &EventKind::ResyncRequired);
        assert!(j.since(&cursor(1, 1), cursor(1, 2)).resync_required);
        assert!(!j.since(&cursor(1, 2), cursor(1, 2)).resync_required);
        assert!(j.since(&cursor(0, 2), cursor(1, 2)).resync_required);
        assert!(j.since(&Cursor { instance: 8, epoch: 1, seq: 2 }, cursor(1, 2)).resync_required);
        let mut j = Journal::default();
        for seq in 1..=(JOURNAL_EVENTS as u64 + 5) {
            j.record(seq, &EventKind::Modify { path: format!("f{seq}") });
        }
        let now = cursor(1, JOURNAL_EVENTS as u64 + 5);
        assert!(j.since(&cursor(1, 1), now).resync_required);
        let recent = j.since(&cursor(1, 5), now);
        assert!(!recent.resync_required);
        assert!(recent.truncated);
        assert_eq!(recent.changes.len(), MAX_CHANGES);
    }
}
