//! Parameters and result of `changes`, and the watcher's state as `workspace_info` shows it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{ObservedChange, WatchState};

/// Arguments of `changes`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ChangesParams {
    /// Registered workspace id.
    pub workspace_id: String,
    /// A `cursor` from an earlier call; omitted: only the cursor of now.
    #[serde(default)]
    pub since: Option<String>,
}

/// One path that changed.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct PathChange {
    /// Workspace-relative path ('/'-separated); a file or a directory, possibly gone.
    pub path: String,
    /// `created`, `modified` or `removed`, summed over every change since the cursor (a
    /// rename is its old path removed and its new path created).
    pub kind: ObservedChange,
}

/// Result of `changes`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ChangesResult {
    /// Opaque; pass it as `since` next time.
    pub cursor: String,
    /// The paths that changed since `since`, one entry per path, sorted by path. Hints for
    /// what to re-read, not permissions: reading them follows the usual file rules.
    pub changes: Vec<PathChange>,
    /// True when the watcher cannot vouch that `changes` is complete (the cursor is from
    /// another epoch or server run, events were lost or overflowed, the watcher restarted
    /// or is not running): re-read what matters instead of trusting the list.
    pub resync_required: bool,
    /// More paths changed than one answer lists (1000); the first ones by path are listed.
    pub truncated: bool,
}

/// The workspace watcher and the caches it makes safe.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct WatchInfo {
    /// `not_started`, `starting`, `running` or `failed`.
    pub state: WatchState,
    /// Why it failed (with `failed` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The caches answer (the watcher runs).
    pub caches_enabled: bool,
    /// Current epoch: a restart starts a new one, and cursors of an older one resync.
    pub epoch: u64,
    /// Versions answered from the cache since the server started.
    pub version_cache_hits: u64,
    /// Versions hashed from the disk since the server started.
    pub version_cache_misses: u64,
    /// Versions cached now.
    pub version_cache_entries: u64,
    /// The most versions cached at once (older entries give way).
    pub version_cache_max_entries: u64,
    /// `find`/`grep` listings answered from the cache since the server started.
    pub listing_cache_hits: u64,
    /// `find`/`grep` listings walked on disk since the server started.
    pub listing_cache_misses: u64,
    /// Synchronisation points that did not come back in time (the call walked instead).
    pub sync_timeouts: u64,
}
