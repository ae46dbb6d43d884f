//! [`Progress`]: counters a long walk or search advances as it works, read by whoever
//! reports its progress to the client.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Shared counters: clones see the same values. Advanced by the walk (every directory
/// entry it reads) and by the runner's search (every file it finishes); read from another
/// thread while they run, so a progress report never waits for the work.
#[derive(Debug, Clone, Default)]
pub struct Progress(Arc<Counters>);

#[derive(Debug, Default)]
struct Counters {
    entries: AtomicU64,
    files_searched: AtomicU64,
}

impl Progress {
    /// Counters at zero that nobody else holds.
    pub fn new() -> Progress {
        Progress::default()
    }

    /// One more directory entry read by a walk.
    pub fn entry_seen(&self) {
        self.0.entries.fetch_add(1, Ordering::Relaxed);
    }

    /// One more file searched to its end (or skipped after a look).
    pub fn file_searched(&self) {
        self.0.files_searched.fetch_add(1, Ordering::Relaxed);
    }

    /// Raises the counters to counts taken elsewhere (a runner worker's walk): they never
    /// go down.
    pub fn catch_up(&self, entries: u64, files_searched: u64) {
        self.0.entries.fetch_max(entries, Ordering::Relaxed);
        self.0.files_searched.fetch_max(files_searched, Ordering::Relaxed);
    }

    /// Directory entries read so far.
    pub fn entries(&self) -> u64 {
        self.0.entries.load(Ordering::Relaxed)
    }

    /// Files searched so far.
    pub fn files_searched(&self) -> u64 {
        self.0.files_searched.load(Ordering::Relaxed)
    }
}

/// Two handles are equal when they share one set of counters.
impl PartialEq for Progress {
    fn eq(&self, other: &Progress) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Progress {}
