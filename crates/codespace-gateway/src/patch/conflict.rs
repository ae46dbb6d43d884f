//! What a `VERSION_CONFLICT` shows besides the versions: a bounded unified diff from the
//! content the caller expected to the file as it is now, when the server still knows the
//! expected content (whole-file content it returned from `read` or wrote, [`Seen`], or the
//! undo record of one of its own operations). The one place a conflict's diff is made.

use codespace_patch::{BoundedDiff, bounded_diff};
use codespace_runner::{FsError, Runner, RunnerError, WorkspacePath, ops};
use codespace_store::Store;
use codespace_types::Version;

use crate::GatewayError;
use crate::error::RevertRefusal;
use crate::seen::Seen;

/// Most bytes of a conflict's diff.
pub(crate) const CONFLICT_DIFF_MAX_BYTES: usize = 16 * 1024;
/// Largest current file diffed (a `read` window's cap).
const CURRENT_MAX_BYTES: usize = 1 << 20;

/// The diff of `path` in `ws` from `expected` to the file now, or `None` when the expected
/// content is not known, either side is not text or is too large, or the file cannot be
/// read. Runs on the blocking pool (it may read the ledger and the file).
pub(crate) fn conflict_diff(
    runner: &Runner,
    store: &Store,
    seen: &Seen,
    ws: &str,
    path: &str,
    expected: Version,
) -> Option<BoundedDiff> {
    let old = match expected {
        Version::Absent => Vec::new(),
        Version::Sha256(_) => {
            let known = seen.get(ws, path, expected).or_else(|| {
                store.undo_content_of_version(ws, path, &expected.to_string()).ok().flatten()
            })?;
            // A version names its bytes: never diff from content that is not it.
            if Version::of_bytes(&known) != expected {
                return None;
            }
            known
        }
    };
    let at = WorkspacePath::parse(path).ok()?;
    let read = ops::ReadNow { ws: ws.to_owned(), path: at, limit: CURRENT_MAX_BYTES };
    let (new, actual) = match runner.run_blocking(read) {
        Ok(w) if w.data.len() as u64 == w.file_size => (w.data, w.version),
        Ok(_) => return None,
        Err(RunnerError::Fs(FsError::NotFound { .. })) => (Vec::new(), Version::Absent),
        Err(_) => return None,
    };
    let (from, to) = (format!("{path} ({expected})"), format!("{path} ({actual})"));
    bounded_diff(&old, &new, &from, &to, CONFLICT_DIFF_MAX_BYTES)
}

/// `e` with the diff of every file it names as changed: a patch's stale expected version, a
/// revert's files changed since the operation. Any other error is returned as it is.
pub(crate) fn with_diffs(
    e: GatewayError,
    runner: &Runner,
    store: &Store,
    seen: &Seen,
    ws: &str,
) -> GatewayError {
    match e {
        GatewayError::VersionConflict { path, expected, actual, diff: None } => {
            let diff = conflict_diff(runner, store, seen, ws, &path, expected).map(Box::new);
            GatewayError::VersionConflict { path, expected, actual, diff }
        }
        GatewayError::Revert(RevertRefusal::Changed { operation_id, files, .. }) => {
            let diffs = files
                .iter()
                .map(|f| conflict_diff(runner, store, seen, ws, &f.path, f.expected))
                .collect();
            GatewayError::Revert(RevertRefusal::Changed { operation_id, files, diffs })
        }
        other => other,
    }
}
