//! A hold found `resuming` whose owner is gone (or that this server took over): its action
//! may have started before an interruption. A patch or revert is settled from the ledger by
//! the id it reserved (an unfinished row settled from the disk first); a command is never
//! started again.

use codespace_protocol::{
    ApplyPatchResult, ApprovalState, HeldTool, OperationResumeResult, PatchStatus,
};
use codespace_store::{Cas, EventName, HoldRecord, OpStatus, OperationRecord};

use super::resume::{ambiguous, conflict, execute, finish, not_found};
use crate::{Gateway, GatewayError};

/// A hold found `resuming`: its action may have started before an interruption.
pub(super) async fn reconcile(
    gw: &Gateway,
    hold: HoldRecord,
) -> Result<OperationResumeResult, GatewayError> {
    let id = hold.approval_id.clone();
    match (hold.tool, hold.operation_id.clone()) {
        (tool @ (HeldTool::ApplyPatch | HeldTool::OperationRevert), Some(op)) => {
            let key = op.clone();
            let mut found = gw.ledger.run(move |store| Ok(store.get(&key)?)).await?;
            // Begun by a server that is gone and never finished: settled from the disk first
            // (here, or by the server that took it over first).
            if let Some(record) = found.as_ref().filter(|r| r.finished_at.is_none()) {
                gw.settle_met(record, true).await?;
                let key = op.clone();
                found = gw.ledger.run(move |store| Ok(store.get(&key)?)).await?;
                if let Some(record) = found.as_ref().filter(|r| r.finished_at.is_none())
                    && record.owner != gw.ledger.instance_id()
                {
                    return Err(conflict(
                        &id,
                        "the operation this hold began is being settled by another running server; call operation_resume again for the outcome",
                    ));
                }
            }
            match found {
                // Recovery proved nothing of it is on disk: it runs again, once, under a
                // new id (with an operation_key, the key's recorded outcome answers).
                Some(record) if rolled_back_by_recovery(&record) => {
                    let owned = id.clone();
                    match gw.ledger.run(move |store| Ok(store.reserve_again(&owned)?)).await? {
                        Cas::Moved(h) => {
                            tracing::info!(approval_id = %id, interrupted = %op, "interrupted resume rolled back by recovery: running it again");
                            execute(gw, h.clone(), h.operation_id).await
                        }
                        Cas::Stale(h) => {
                            Err(conflict(&id, &format!("the hold moved to {} meanwhile", h.state)))
                        }
                        Cas::Missing => Err(not_found(&id)),
                    }
                }
                // The ledger knows what happened (startup recovery classified it).
                Some(record) => {
                    tracing::info!(approval_id = %id, operation_id = %op, "interrupted resume reconciled from the ledger");
                    let outcome = crate::patch::replay(record).map(|r| ledgered(tool, &id, r));
                    finish(gw, &id, outcome).await
                }
                // The ledger proves it never began: run it now, under the reserved id.
                None => execute(gw, hold, Some(op)).await,
            }
        }
        (HeldTool::ApplyPatch | HeldTool::OperationRevert, None) => {
            let e = ambiguous(
                &id,
                None,
                "a patch resume was interrupted before it reserved a ledger id",
            );
            finish(gw, &id, Err(e)).await
        }
        (HeldTool::ExecCommand, _) => {
            let e = ambiguous(
                &id,
                None,
                "a command resume was interrupted, so whether it started is unknown: the process was not started again",
            );
            finish(gw, &id, Err(e)).await
        }
    }
}

/// The resume result of a held patch or revert (both operations in the ledger).
pub(super) fn ledgered(tool: HeldTool, id: &str, r: ApplyPatchResult) -> OperationResumeResult {
    let revert = tool == HeldTool::OperationRevert;
    OperationResumeResult {
        approval_id: id.to_owned(),
        state: ApprovalState::Consumed,
        apply_patch: (!revert).then(|| r.clone()),
        exec_command: None,
        operation_revert: revert.then_some(r),
    }
}

/// An operation a crash interrupted and start-up recovery closed with the disk as before it.
fn rolled_back_by_recovery(record: &OperationRecord) -> bool {
    let recovered = record.events.iter().any(|e| e.name == EventName::Recovered);
    recovered
        && matches!(
            record.status,
            OpStatus::Finished(PatchStatus::Rejected)
                | OpStatus::Finished(PatchStatus::FailedRolledBack)
        )
}
