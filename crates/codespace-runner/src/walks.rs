//! The walks the gateway asks of a runner, as plain values: what `find` and `grep` look for
//! (inside `ops::Find` and `ops::Grep`) with the caps the gateway chose, and the page `find`
//! answers with. They carry no policy, no ledger id and no MCP type: a runner in another
//! process receives exactly these.

use std::time::{Duration, Instant};

use codespace_fs::{Cancel, Progress, WalkLimits};

/// The caps of one walk; the deadline starts when the runner starts the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WalkCaps {
    pub max_depth: usize,
    pub max_dirs: usize,
    pub max_entries: usize,
    pub budget: Duration,
}

impl WalkCaps {
    pub(crate) fn limits(
        &self,
        deadline: Instant,
        cancel: Cancel,
        progress: Progress,
    ) -> WalkLimits {
        WalkLimits {
            max_depth: self.max_depth,
            max_dirs: self.max_dirs,
            max_entries: self.max_entries,
            deadline: Some(deadline),
            cancel,
            progress,
        }
    }
}

/// One page of `find`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FindJob {
    pub glob: Option<String>,
    pub include_ignored: bool,
    pub offset: u64,
    pub page: u64,
    pub walk: WalkCaps,
}

/// A page of matching paths with what the whole listing says.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FindPage {
    pub paths: Vec<String>,
    /// Matches in the whole listing.
    pub total: u64,
    pub incomplete: bool,
    /// Identifies the whole sorted set of matches: equal sets give equal ids.
    pub listing_version: String,
}

/// One page of `grep`, with its caps.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GrepJob {
    pub pattern: String,
    pub fixed_strings: bool,
    pub case_insensitive: bool,
    pub include_ignored: bool,
    pub glob: Option<String>,
    pub offset: u64,
    pub limit: usize,
    pub max_line_bytes: usize,
    pub max_files: usize,
    pub max_search_line_bytes: usize,
    pub max_regex_bytes: usize,
    /// The walk's caps; its budget bounds the search too.
    pub walk: WalkCaps,
}
