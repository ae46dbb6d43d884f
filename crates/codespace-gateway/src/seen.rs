//! [`Seen`]: whole-file content the server returned from `read` or wrote in a patch, by
//! workspace, path and version, bounded by bytes (first in, first out). A `VERSION_CONFLICT`
//! looks the caller's expected version up here (then in the undo records) to show what
//! changed since; nothing else reads it, so a miss only costs the diff.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use codespace_types::Version;

/// Most bytes kept in all.
pub(crate) const SEEN_MAX_BYTES: usize = 32 << 20;
/// Largest content kept (a `read` window is at most 1 MiB).
pub(crate) const SEEN_MAX_ENTRY_BYTES: usize = 1 << 20;

type Key = (String, String, Version);

#[derive(Default)]
pub(crate) struct Seen {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    content: HashMap<Key, Vec<u8>>,
    /// Keys, first remembered first.
    order: VecDeque<Key>,
    bytes: usize,
}

impl Seen {
    /// Forgets everything (an operator's reset); returns how many entries there were.
    pub(crate) fn clear(&self) -> usize {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let n = inner.content.len();
        *inner = Inner::default();
        n
    }

    /// Keeps `content`, the whole file at `path` of `ws` at `version`; a larger one than
    /// [`SEEN_MAX_ENTRY_BYTES`] or an absent version is not kept.
    pub(crate) fn remember(&self, ws: &str, path: &str, version: Version, content: &[u8]) {
        if content.len() > SEEN_MAX_ENTRY_BYTES || version == Version::Absent {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (ws.to_owned(), path.to_owned(), version);
        // Kept already: its place in line stays (first in, first out, so a read costs O(1)).
        if inner.content.contains_key(&key) {
            return;
        }
        while inner.bytes + content.len() > SEEN_MAX_BYTES {
            let Some(old) = inner.order.pop_front() else { break };
            if let Some(gone) = inner.content.remove(&old) {
                inner.bytes -= gone.len();
            }
        }
        inner.bytes += content.len();
        inner.order.push_back(key.clone());
        inner.content.insert(key, content.to_vec());
    }

    /// The content of `path` of `ws` at `version`, if it is kept.
    pub(crate) fn get(&self, ws: &str, path: &str, version: Version) -> Option<Vec<u8>> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.content.get(&(ws.to_owned(), path.to_owned(), version)).cloned()
    }
}

#[cfg(test)]
mod tests;
