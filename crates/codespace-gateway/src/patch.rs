//! `apply_patch` and `operation_status`: lease, ledger, expected versions, plan, undo log,
//! write, verify, finish.
//!
//! # Layout
//! - `undo`: what goes into the undo log before the first write, what a result names as
//!   preserved, and what is discarded once the operation is terminal and verified.
//! - `recover`: start-up rollback of operations a crash left unfinished.
//! - `operations`: the operator's view: list, show, and restore preserved content.
//! - `revert`: `operation_revert`: an applied operation's files put back from its undo
//!   record, planned as a transaction like any patch.
//! - `transaction`: everything after the lease, and a runner answer lost on its socket.

mod conflict;
mod operations;
mod recover;
mod revert;
mod transaction;
mod undo;

use std::sync::Arc;

use codespace_files::PlannedWrite;
use codespace_policy::Action;
use codespace_protocol::{
    ApplyPatchParams, ApplyPatchResult, ErrorBody, EventName, FileChange, OperationEvent,
    OperationKind, OperationStatusParams, OperationStatusResult, PatchStatus, UndoRecord,
};
use codespace_store::{OpStatus, OperationRecord, PlannedFile};
use codespace_types::Approvals;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::holds::{Held, Resume};
use crate::{Gateway, GatewayError, now};
use transaction::{Request, Transacted};

pub use operations::{PutBack, RestoreOutcome, list_operations, show_operation};
pub(crate) use revert::fingerprint as revert_fingerprint;

/// What the ledger keeps as an operation's result: the success or the refusal the caller got.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Recorded {
    Result(ApplyPatchResult),
    Error(ErrorBody),
}

/// A key given without its workspace (as the reference's clients do) answers when exactly
/// one workspace used it; keys are scoped to a workspace, so several matches need the id.
fn only_match(
    mut found: Vec<OperationRecord>,
    key: &str,
) -> Result<Option<OperationRecord>, GatewayError> {
    if found.len() > 1 {
        return Err(GatewayError::WorkspaceIdRequired { key: key.to_owned() });
    }
    Ok(found.pop())
}

/// `sha256:` of the canonical request: workspace, patch, expected versions, check_only. The
/// key and work_id are not part of it: they name the request, they do not change it.
pub(crate) fn fingerprint(p: &ApplyPatchParams) -> String {
    let canonical = serde_json::json!({
        "workspace_id": p.workspace_id,
        "patch": p.patch,
        "expected_versions": p.expected_versions,
        "check_only": p.check_only.unwrap_or(false),
    });
    let digest = Sha256::digest(canonical.to_string().as_bytes());
    format!("sha256:{}", hex::encode(digest))
}

/// The wire's status of a recorded operation. Unfinished rows read as unknown: they may
/// have executed.
fn wire_status(s: OpStatus) -> PatchStatus {
    s.outcome().unwrap_or(PatchStatus::Unknown)
}

fn changes_of(writes: &[PlannedWrite]) -> Vec<FileChange> {
    writes
        .iter()
        .map(|w| FileChange {
            path: w.path.as_str().to_owned(),
            kind: w.kind,
            move_from: w.move_from.clone(),
            before_version: w.before_version(),
            after_version: w.after_version(),
        })
        .collect()
}

fn changes_of_plan(plan: &[PlannedFile]) -> Vec<FileChange> {
    plan.iter()
        .map(|f| FileChange {
            path: f.path.clone(),
            kind: f.kind,
            move_from: f.move_from.clone(),
            before_version: f.before_version,
            after_version: f.after_version,
        })
        .collect()
}

impl Gateway {
    /// Applies (or checks) a patch. A named `work_id` is checked before anything else runs;
    /// the result (also a replayed one) carries the work's hint as it was at the call.
    pub async fn apply_patch(&self, p: ApplyPatchParams) -> Result<ApplyPatchResult, GatewayError> {
        self.lookup(&p.workspace_id)?;
        let coordination = self.work_hint(&p.workspace_id, p.work_id.as_deref())?;
        let mut result = self.run_patch(p).await?;
        result.coordination = coordination;
        Ok(result)
    }

    async fn run_patch(&self, p: ApplyPatchParams) -> Result<ApplyPatchResult, GatewayError> {
        let reg = self.authorized(&p.workspace_id, Action::Write)?;
        // A name a person could be misled by is never created, held or not.
        crate::holds::check_created_names_in(&p.patch).map_err(GatewayError::Trust)?;
        // A preview writes nothing, so it is never held.
        if reg.ws.approvals == Approvals::Confirm && !p.check_only.unwrap_or(false) {
            return Err(self.require_hold(Held::Patch(p)).await);
        }
        self.apply_now(p.into(), None).await
    }

    /// The patch path after policy and holds: a finished key's replay, the lease, then the
    /// transaction. A resumed hold moves to `resuming` once the lease is held, and the
    /// operation begins under the ledger id the hold reserved.
    pub(crate) async fn apply_now(
        &self,
        p: Request,
        resume: Option<Resume>,
    ) -> Result<ApplyPatchResult, GatewayError> {
        // A preview reads and plans and writes nothing, so it never takes the lease: it
        // answers while a command runs. Its ledger row (and a key's replay) is the
        // transaction's, as for any patch.
        if p.check_only {
            return self.check_now(p, resume).await;
        }
        let lease = match self.leases.try_acquire(&p.ws) {
            // Free: the transaction's own ledger check answers a replay, in one hand-off.
            Some(lease) => lease,
            None => {
                // A retry of a finished operation is answered without queueing.
                if let Some(done) = self.finished_replay(&p).await? {
                    return done;
                }
                // Reads never wait on this; only mutations queue here, in arrival order.
                self.leases.acquire(&p.ws).await.map_err(GatewayError::Lease)?
            }
        };
        let reserved = self.reserve(resume).await?;
        let done = self.transact(p, reserved).await;
        if !done.settled {
            // The worker may still be writing: no other mutation may start on this
            // workspace until the server restarts and recovery settles the operation.
            tracing::error!(
                "a patch's write timed out in the runner worker: the workspace stays locked until restart"
            );
            lease.keep_forever();
            return done.result;
        }
        if let Some(finish) = done.finish {
            // The answer goes out now; the terminal record follows under the same lease,
            // and `operation_status` and shutdown wait for it.
            let recording = Arc::clone(&self.recordings).read_owned().await;
            tokio::task::spawn_blocking(move || {
                finish.record();
                drop(lease);
                drop(recording);
            });
            return done.result;
        }
        drop(lease);
        done.result
    }

    /// A preview, without the lease: the transaction stops after the plan, so it has no
    /// write and no undo log to guard.
    async fn check_now(
        &self,
        p: Request,
        resume: Option<Resume>,
    ) -> Result<ApplyPatchResult, GatewayError> {
        let reserved = self.reserve(resume).await?;
        let done = self.transact(p, reserved).await;
        debug_assert!(done.finish.is_none(), "a preview is never applied");
        done.result
    }

    /// The ledger id a resumed hold's patch begins under (moving the hold to `resuming`
    /// when it has none yet); `None` for a request that is not a resume.
    async fn reserve(&self, resume: Option<Resume>) -> Result<Option<String>, GatewayError> {
        Ok(match resume {
            None => None,
            Some(Resume { reserved: Some(op), .. }) => Some(op),
            Some(Resume { approval_id, reserved: None }) => {
                crate::holds::start(self, &approval_id, true).await?
            }
        })
    }

    /// The transaction on the blocking pool.
    async fn transact(&self, p: Request, reserved: Option<String>) -> Transacted {
        let (runner, seen) = (Arc::clone(&self.runner), Arc::clone(&self.seen));
        self.ledger
            .run(move |store| Ok(transaction::transaction(&runner, store, &seen, p, reserved)))
            .await
            .unwrap_or_else(|e| Transacted { result: Err(e), settled: true, finish: None })
    }

    /// Waits until every applied patch's terminal record that was pending when called is
    /// written, so what the ledger says next matches what those callers were told.
    pub(crate) async fn recorded(&self) {
        drop(self.recordings.write().await);
    }

    /// The recorded answer to a retry of a finished operation with this key, if any.
    async fn finished_replay(
        &self,
        p: &Request,
    ) -> Result<Option<Result<ApplyPatchResult, GatewayError>>, GatewayError> {
        let Some(key) = p.key.clone() else { return Ok(None) };
        let (ws, fp) = (p.ws.clone(), p.fingerprint.clone());
        let done = self
            .ledger
            .run(move |st| Ok(st.get_by_key(&ws, &key)?.filter(|r| r.finished_at.is_some())))
            .await?;
        Ok(done.map(|rec| {
            if rec.fingerprint == fp {
                replay(rec)
            } else {
                Err(GatewayError::KeyConflict { operation_id: rec.operation_id })
            }
        }))
    }

    pub async fn operation_status(
        &self,
        p: OperationStatusParams,
    ) -> Result<OperationStatusResult, GatewayError> {
        self.recorded().await;
        let mut record = self
            .ledger
            .run(move |store| {
                let record = match (p.operation_id.as_deref(), p.operation_key.as_deref()) {
                    (Some(id), None) => store.get(id)?,
                    (None, Some(key)) => {
                        match p.workspace_id.as_deref().filter(|w| !w.is_empty()) {
                            Some(ws) => store.get_by_key(ws, key)?,
                            None => only_match(store.find_by_key(key, 2)?, key)?,
                        }
                    }
                    (Some(_), Some(_)) => {
                        return Err(GatewayError::OperationNotFound(
                            "give only one of operation_id or operation_key, not both".to_owned(),
                        ));
                    }
                    (None, None) => {
                        return Err(GatewayError::OperationNotFound(
                            "one of operation_id or operation_key is required (workspace_id is \
                             optional with a key: it picks the workspace when the key was used \
                             in several)"
                                .to_owned(),
                        ));
                    }
                };
                record
                    .ok_or_else(|| GatewayError::OperationNotFound("no such operation".to_owned()))
            })
            .await?;
        // Unfinished, and its server is gone: settled from the disk now, so the answer is
        // its outcome rather than `unknown` until some server's next start.
        if record.finished_at.is_none() && self.settle_met(&record, false).await? {
            let id = record.operation_id.clone();
            if let Some(settled) = self.ledger.run(move |store| Ok(store.get(&id)?)).await? {
                record = settled;
            }
        }
        Ok(status_of(record))
    }
}

fn status_of(rec: OperationRecord) -> OperationStatusResult {
    let recorded: Option<Recorded> =
        rec.result_json.as_deref().and_then(|j| serde_json::from_str(j).ok());
    let (changes, error, preserved) = match recorded {
        Some(Recorded::Result(r)) => (r.changes, None, r.preserved),
        Some(Recorded::Error(e)) => (changes_of_plan(&rec.plan), Some(e), vec![]),
        None => (changes_of_plan(&rec.plan), None, vec![]),
    };
    OperationStatusResult {
        operation_id: rec.operation_id,
        status: wire_status(rec.status),
        replayed: false,
        kind: if rec.reverts.is_some() { OperationKind::Revert } else { OperationKind::Patch },
        reverts: rec.reverts,
        reverted_by: rec.reverted_by,
        undo: (rec.undo.bytes > 0 || rec.undo.pruned_at.is_some())
            .then_some(UndoRecord { kept_bytes: rec.undo.bytes, pruned_at: rec.undo.pruned_at }),
        workspace_id: rec.workspace_id,
        operation_key: rec.operation_key,
        created_at: rec.created_at,
        finished_at: rec.finished_at,
        recovered: rec.events.iter().any(|e| e.name == EventName::Recovered),
        files: changes.iter().map(|c| c.path.clone()).collect(),
        changes,
        events: rec
            .events
            .into_iter()
            .map(|e| OperationEvent {
                at: e.at,
                name: e.name,
                status: e.status.map(wire_status),
                reason: e.reason,
            })
            .collect(),
        error,
        preserved,
    }
}

pub(crate) fn replay(rec: OperationRecord) -> Result<ApplyPatchResult, GatewayError> {
    let recorded: Option<Recorded> =
        rec.result_json.as_deref().and_then(|j| serde_json::from_str(j).ok());
    match recorded {
        Some(Recorded::Result(mut r)) => {
            r.replayed = true;
            Ok(r)
        }
        Some(Recorded::Error(body)) => Err(GatewayError::Recorded(Box::new(body))),
        // The first request with this key has not finished (or never will): say so.
        None => Ok(ApplyPatchResult {
            status: PatchStatus::Unknown,
            operation_id: rec.operation_id,
            replayed: true,
            files: rec.plan.iter().map(|f| f.path.clone()).collect(),
            changes: changes_of_plan(&rec.plan),
            unrestored: vec![],
            failure: Some("the first request with this key has not finished".to_owned()),
            work_id: None,
            preserved: vec![],
            coordination: None,
            reverts: rec.reverts,
        }),
    }
}
