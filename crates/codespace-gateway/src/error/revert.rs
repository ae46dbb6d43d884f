//! [`RevertRefusal`]: why `operation_revert` wrote nothing, and each reason's wire code.

use codespace_files::Changed;
use codespace_patch::BoundedDiff;
use codespace_protocol::{Conflict, ErrorCode, PatchStatus};

/// Why an operation cannot be reverted.
#[derive(Debug, thiserror::Error)]
pub enum RevertRefusal {
    /// The operation did not apply.
    #[error(
        "operation {operation_id} is {status}, not applied: only an applied operation can be reverted; nothing was written"
    )]
    NotApplied { operation_id: String, status: PatchStatus },
    /// Another revert reverted it, or is reverting it now.
    #[error(
        "operation {operation_id} is already reverted by {by} (or that revert is running): look it up with operation_status; revert {by} to bring the change back"
    )]
    AlreadyReverted { operation_id: String, by: String },
    /// The undo record is gone.
    #[error("{}", pruned(operation_id, *at))]
    Pruned { operation_id: String, at: Option<i64> },
    /// Files changed since the operation; `diffs` (by index, when known) show how.
    #[error("{}", changed(operation_id, files))]
    Changed { operation_id: String, files: Vec<Changed>, diffs: Vec<Option<BoundedDiff>> },
}

impl super::GatewayError {
    /// The files a revert's `VERSION_CONFLICT` names.
    pub(super) fn conflicts(&self) -> Vec<Conflict> {
        // A recorded refusal returns its own body whole, before this is asked.
        if let super::GatewayError::Revert(r) = self { r.conflicts() } else { vec![] }
    }
}

impl RevertRefusal {
    /// The wire code.
    pub(crate) fn code(&self) -> ErrorCode {
        match self {
            RevertRefusal::NotApplied { .. } => ErrorCode::OperationNotRevertible,
            RevertRefusal::AlreadyReverted { .. } => ErrorCode::OperationAlreadyReverted,
            RevertRefusal::Pruned { .. } => ErrorCode::UndoPruned,
            RevertRefusal::Changed { .. } => ErrorCode::VersionConflict,
        }
    }

    /// The operation a refusal names: the revert that holds it, or the operation itself.
    pub(crate) fn operation_id(&self) -> &str {
        match self {
            RevertRefusal::AlreadyReverted { by, .. } => by,
            RevertRefusal::NotApplied { operation_id, .. }
            | RevertRefusal::Pruned { operation_id, .. }
            | RevertRefusal::Changed { operation_id, .. } => operation_id,
        }
    }

    /// The first file that changed, for the body's `path`.
    pub(crate) fn path(&self) -> Option<&str> {
        match self {
            RevertRefusal::Changed { files, .. } => files.first().map(|c| c.path.as_str()),
            RevertRefusal::NotApplied { .. }
            | RevertRefusal::AlreadyReverted { .. }
            | RevertRefusal::Pruned { .. } => None,
        }
    }

    /// Every file that changed, for the body's `conflicts`.
    pub(crate) fn conflicts(&self) -> Vec<Conflict> {
        match self {
            RevertRefusal::Changed { files, diffs, .. } => files
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let diff = diffs.get(i).and_then(Option::as_ref);
                    Conflict {
                        path: c.path.clone(),
                        expected: c.expected,
                        actual: c.actual,
                        diff: diff.map(|d| d.text.clone()),
                        diff_truncated: diff.is_some_and(|d| d.truncated),
                    }
                })
                .collect(),
            RevertRefusal::NotApplied { .. }
            | RevertRefusal::AlreadyReverted { .. }
            | RevertRefusal::Pruned { .. } => vec![],
        }
    }
}

fn pruned(operation_id: &str, at: Option<i64>) -> String {
    match at {
        Some(at) => format!(
            "the undo record of operation {operation_id} was dropped at {at} (unix seconds) by the server's retention bound, so it cannot be reverted; nothing was written"
        ),
        None => format!(
            "operation {operation_id} has no undo record (it was recorded before undo records were kept), so it cannot be reverted; nothing was written"
        ),
    }
}

fn changed(operation_id: &str, files: &[Changed]) -> String {
    let each: Vec<String> = files
        .iter()
        .map(|c| format!("{} is {}, the operation left {}", c.path, c.actual, c.expected))
        .collect();
    format!(
        "{} file(s) changed since operation {operation_id}, so it cannot be reverted: {}; nothing was written",
        files.len(),
        each.join("; ")
    )
}
