//! The change journal behind `changes`: the last events of the current epoch, bounded, and
//! the opaque cursor that names a point in them. Pure: no I/O.
//!
//! Once a walk has seeded it ([`Journal::seed`]), the journal also keeps every path known
//! to exist, so that what inotify cannot say is told from it: a name that arrives by rename
//! over an existing file (an atomic write, `sed -i`) is `modified`, a directory renamed or
//! removed lists the files it held as `removed` (and, renamed within the workspace, as
//! `created` under the new name). The server's own temporary files are never listed.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use codespace_types::ObservedChange;

use crate::event::{EventKind, is_server_temp};

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
    /// Every path known to exist (files, and directories created since the seed), once a
    /// walk of this epoch seeded it.
    known: Option<BTreeSet<String>>,
    /// The last sequence number recorded before the seed: every `created` after it is
    /// certain, so a path created and removed again after it never existed for a cursor.
    seeded_at: Option<u64>,
}

impl Journal {
    /// Forgets everything: a new epoch begins.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.dropped_through = 0;
        self.known = None;
        self.seeded_at = None;
    }

    /// True once a walk seeded the known paths this epoch.
    pub(crate) fn seeded(&self) -> bool {
        self.known.is_some()
    }

    /// Seeds the known paths with a complete walk that started after event `from` was
    /// handled: the events recorded since then are applied over it, so a file removed
    /// while the walk ran is not left standing.
    pub(crate) fn seed(&mut self, files: Vec<String>, from: u64, now: u64) {
        let mut known: BTreeSet<String> = files.into_iter().collect();
        for (seq, entry) in &self.entries {
            if let (true, Entry::Change(path, kind)) = (*seq > from, entry) {
                match kind {
                    ObservedChange::Removed => known.remove(path),
                    ObservedChange::Created | ObservedChange::Modified => {
                        known.insert(path.clone())
                    }
                };
            }
        }
        self.known = Some(known);
        self.seeded_at = Some(now);
    }

    pub(crate) fn record(&mut self, seq: u64, kind: &EventKind) {
        match kind {
            EventKind::Create { path } => self.appeared(seq, path),
            EventKind::Modify { path } => {
                if !is_server_temp(path) {
                    self.push(seq, Entry::Change(path.clone(), ObservedChange::Modified));
                }
            }
            EventKind::Remove { path } => {
                self.gone(seq, path);
            }
            EventKind::Rename { from, to } => {
                let moved = self.gone(seq, from);
                self.appeared(seq, to);
                for rest in moved {
                    self.appeared(seq, &format!("{to}/{rest}"));
                }
            }
            EventKind::ResyncRequired => self.push(seq, Entry::Resync),
        }
    }

    /// `path` exists now: `modified` when it was known to exist (renamed over), else
    /// `created`.
    fn appeared(&mut self, seq: u64, path: &str) {
        if is_server_temp(path) {
            return;
        }
        let existed = self.known.as_mut().is_some_and(|k| !k.insert(path.to_owned()));
        let kind = if existed { ObservedChange::Modified } else { ObservedChange::Created };
        self.push(seq, Entry::Change(path.to_owned(), kind));
    }

    /// `path` is gone, and with it every known path beneath it (each listed `removed`);
    /// returns those paths relative to `path`, for a rename that moved them.
    fn gone(&mut self, seq: u64, path: &str) -> Vec<String> {
        if !is_server_temp(path) {
            self.push(seq, Entry::Change(path.to_owned(), ObservedChange::Removed));
        }
        let Some(known) = self.known.as_mut() else { return Vec::new() };
        known.remove(path);
        let prefix = format!("{path}/");
        let beneath: Vec<String> =
            known.range(prefix.clone()..).take_while(|p| p.starts_with(&prefix)).cloned().collect();
        for p in &beneath {
            known.remove(p);
        }
        for p in &beneath {
            self.push(seq, Entry::Change(p.clone(), ObservedChange::Removed));
        }
        beneath.into_iter().map(|p| p[prefix.len()..].to_owned()).collect()
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
        // Each path's first kind in the window, and the sum of all.
        let mut paths: BTreeMap<&str, (ObservedChange, ObservedChange)> = BTreeMap::new();
        for (seq, entry) in &self.entries {
            if *seq <= since.seq {
                continue;
            }
            match entry {
                Entry::Resync => out.resync_required = true,
                Entry::Change(path, kind) => {
                    paths
                        .entry(path.as_str())
                        .and_modify(|(_, k)| *k = k.then(*kind))
                        .or_insert((*kind, *kind));
                }
            }
        }
        // A temporary file (`sed -i`'s, an editor's) created and gone within the window.
        if self.seeded_at.is_some_and(|at| at <= since.seq) {
            paths.retain(|_, (first, sum)| {
                !(*first == ObservedChange::Created && *sum == ObservedChange::Removed)
            });
        }
        let paths = paths.into_iter().map(|(p, (_, k))| (p, k));
        let paths: Vec<(&str, ObservedChange)> = paths.collect();
        out.truncated = paths.len() > MAX_CHANGES;
        out.changes = paths.into_iter().take(MAX_CHANGES).map(|(p, k)| (p.to_owned(), k)).collect();
        out
    }
}

#[cfg(test)]
mod tests;
