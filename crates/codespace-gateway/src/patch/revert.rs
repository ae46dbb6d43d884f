//! `operation_revert`: an applied operation's files put back from its undo record. The
//! revert is a plan like a patch's (`transaction::Source::Revert`): drafted, planned with
//! its own old content in one commit (which also claims the operation it reverts), written,
//! verified, rolled back and recovered by the same transaction, under the same lease.

use codespace_files::RevertFile;
use codespace_policy::Action;
use codespace_protocol::{ApplyPatchResult, OperationRevertParams};
use codespace_runner::{Runner, ops};
use codespace_store::{OpStatus, OperationRecord, Store};
use codespace_types::{Approvals, ChangeKind, PatchStatus, Version};
use sha2::{Digest, Sha256};

use super::transaction::{Request, Source};
use crate::error::RevertRefusal;
use crate::{Gateway, GatewayError};

/// `sha256:` of the canonical revert request: workspace, operation, check_only.
pub(crate) fn fingerprint(p: &OperationRevertParams) -> String {
    let canonical = serde_json::json!({
        "tool": "operation_revert",
        "workspace_id": p.workspace_id,
        "operation_id": p.operation_id,
        "check_only": p.check_only.unwrap_or(false),
    });
    format!("sha256:{}", hex::encode(Sha256::digest(canonical.to_string().as_bytes())))
}

impl From<OperationRevertParams> for Request {
    fn from(p: OperationRevertParams) -> Request {
        Request {
            fingerprint: fingerprint(&p),
            ws: p.workspace_id,
            key: p.operation_key,
            check_only: p.check_only.unwrap_or(false),
            work_id: None,
            source: Source::Revert { target: p.operation_id },
        }
    }
}

impl Gateway {
    /// Reverts (or checks the revert of) an applied operation.
    pub async fn operation_revert(
        &self,
        p: OperationRevertParams,
    ) -> Result<ApplyPatchResult, GatewayError> {
        let reg = self.authorized(&p.workspace_id, Action::Write)?;
        // An applied patch is answered before its terminal record: a revert (a preview
        // takes no lease to wait behind) reads the operation only once that is written.
        self.recorded().await;
        if reg.ws.approvals == Approvals::Confirm && !p.check_only.unwrap_or(false) {
            return Err(self.require_hold(crate::holds::Held::Revert(p)).await);
        }
        self.apply_now(p.into(), None).await
    }

    /// The operator's revert (`codespace operations revert`): in the workspace the
    /// operation ran in, as the tool runs it, without a hold (the operator is the person).
    pub async fn operator_revert(
        &self,
        operation_id: &str,
        check_only: bool,
    ) -> Result<ApplyPatchResult, GatewayError> {
        self.recorded().await;
        let id = operation_id.to_owned();
        let rec = self.ledger.run(move |store| Ok(store.get(&id)?)).await?.ok_or_else(|| {
            GatewayError::OperationNotFound(format!("no operation {operation_id} in the ledger"))
        })?;
        self.lookup(&rec.workspace_id)?;
        let p = OperationRevertParams {
            workspace_id: rec.workspace_id,
            operation_id: operation_id.to_owned(),
            operation_key: None,
            check_only: Some(check_only),
        };
        self.apply_now(p.into(), None).await
    }
}

/// The revert's writes: every file of `target` checked against what it left, and its old
/// content from the undo record (held by the runner for its `Apply` when `hold`). Runs
/// inside the transaction, after the draft.
pub(super) fn prepare(
    runner: &Runner,
    store: &Store,
    ws: &str,
    target: &str,
    hold: bool,
) -> Result<ops::Planned, GatewayError> {
    let rec = revertible(store, ws, target)?;
    let mut files = Vec::with_capacity(rec.plan.len());
    for (ordinal, f) in rec.plan.iter().enumerate() {
        let back = match f.before_version {
            Version::Absent => None,
            before => match store.undo_content(target, ordinal)? {
                Some(bytes) if Version::of_bytes(&bytes) == before => Some(bytes),
                Some(_) => {
                    return Err(GatewayError::Internal(format!(
                        "the undo record of {target} does not hold {}'s old content",
                        f.path
                    )));
                }
                None => return Err(pruned(&rec)),
            },
        };
        // A file the operation moved away is re-created by moving it back.
        let moved_to = rec
            .plan
            .iter()
            .find(|g| g.kind == ChangeKind::Move && g.move_from.as_deref() == Some(&f.path))
            .map(|g| g.path.clone());
        files.push(RevertFile {
            path: f.path.clone(),
            left: f.after_version,
            back,
            mode: f.before_mode,
            moved_to,
        });
    }
    match runner.run_blocking(ops::PrepareRevert { ws: ws.to_owned(), files, hold })? {
        ops::Reverting::Ready(planned) => Ok(planned),
        ops::Reverting::Changed(files) => Err(GatewayError::Revert(RevertRefusal::Changed {
            operation_id: target.to_owned(),
            files,
            diffs: vec![],
        })),
    }
}

/// The operation to revert, when this workspace may revert it now.
fn revertible(store: &Store, ws: &str, target: &str) -> Result<OperationRecord, GatewayError> {
    let operation_id = target.to_owned();
    let rec = match store.get(target)? {
        Some(rec) if rec.workspace_id == ws => rec,
        Some(rec) => {
            return Err(GatewayError::OperationNotFound(format!(
                "operation {target} ran in workspace {:?}, not {ws:?}",
                rec.workspace_id
            )));
        }
        None => {
            return Err(GatewayError::OperationNotFound(format!(
                "no operation {target} in the ledger"
            )));
        }
    };
    if let Some(by) = rec.reverted_by.clone() {
        return Err(GatewayError::Revert(RevertRefusal::AlreadyReverted { operation_id, by }));
    }
    if rec.status != OpStatus::Finished(PatchStatus::Applied) {
        let status = rec.status.outcome().unwrap_or(PatchStatus::Unknown);
        return Err(GatewayError::Revert(RevertRefusal::NotApplied { operation_id, status }));
    }
    if rec.undo.pruned_at.is_some() {
        return Err(pruned(&rec));
    }
    Ok(rec)
}

fn pruned(rec: &OperationRecord) -> GatewayError {
    GatewayError::Revert(RevertRefusal::Pruned {
        operation_id: rec.operation_id.clone(),
        at: rec.undo.pruned_at,
    })
}
