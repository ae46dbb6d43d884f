//! `changes`: what changed in a workspace since an earlier cursor, from its watcher's
//! journal, or that the caller must re-read.

use codespace_policy::Action;
use codespace_protocol::{ChangesParams, ChangesResult, PathChange, WatchInfo};
use codespace_runner::ops;
use codespace_runner::{BadCursor, Cursor, MAX_VERSION_ENTRIES, WatchReport};
use codespace_types::WatchState;

use crate::{Gateway, GatewayError};

impl Gateway {
    pub async fn changes(&self, p: ChangesParams) -> Result<ChangesResult, GatewayError> {
        self.authorized(&p.workspace_id, Action::Read)?;
        let found =
            self.runner.run(ops::Changes { ws: p.workspace_id.clone(), since: p.since }).await?;
        let Some(out) = found.map_err(|e| bad_since(&e))? else {
            // Watching is off (`--no-watch`): no list can be vouched for.
            return Ok(ChangesResult {
                cursor: Cursor { instance: 0, epoch: 0, seq: 0 }.encode(),
                changes: Vec::new(),
                resync_required: true,
                truncated: false,
            });
        };
        Ok(ChangesResult {
            cursor: out.cursor.encode(),
            changes: out
                .changes
                .into_iter()
                .map(|(path, kind)| PathChange { path, kind })
                .collect(),
            resync_required: out.resync_required,
            truncated: out.truncated,
        })
    }
}

fn bad_since(e: &BadCursor) -> GatewayError {
    GatewayError::InvalidArguments {
        tool: codespace_protocol::tool::CHANGES.to_owned(),
        detail: format!("since: {e}"),
    }
}

/// What `workspace_info` shows of a workspace's watcher and caches.
pub(crate) fn watch_info(report: WatchReport) -> WatchInfo {
    let s = report.stats;
    WatchInfo {
        state: report.state,
        reason: report.reason,
        caches_enabled: report.state == WatchState::Running,
        epoch: report.epoch,
        version_cache_hits: s.version_hits,
        version_cache_misses: s.version_misses,
        version_cache_entries: s.version_entries,
        version_cache_max_entries: MAX_VERSION_ENTRIES as u64,
        listing_cache_hits: s.listing_hits,
        listing_cache_misses: s.listing_misses,
        sync_timeouts: s.sync_timeouts,
    }
}
