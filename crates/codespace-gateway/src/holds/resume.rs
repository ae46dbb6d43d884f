//! `operation_resume`: claim a granted hold (`granted → queued`), run it once through the
//! tool's own inner path (`queued → resuming` once the lease is held), and store the
//! terminal outcome with the hold (`→ consumed`). The hold's owner column makes the claim
//! exclusive across servers on one ledger: a hold another live server claimed is refused,
//! one whose server is gone is taken over (and, found `resuming`, reconciled:
//! `reconcile.rs`).

use codespace_policy::Action;
use codespace_protocol::{ApprovalState, HeldTool, OperationResumeResult, PatchStatus};
use codespace_runner::{ProcError, RunnerError};
use codespace_store::{Cas, HoldRecord};

use super::reconcile::ledgered;
use super::{Held, Outcome, replay};
use crate::{Gateway, GatewayError};

/// How a patch resume finds its ledger id.
pub(crate) struct Resume {
    pub(crate) approval_id: String,
    /// The id reserved before an interruption (the hold is already `resuming`); `None`:
    /// move the hold to `resuming` and reserve one once the lease is held.
    pub(crate) reserved: Option<String>,
}

pub(super) async fn resume(gw: &Gateway, id: &str) -> Result<OperationResumeResult, GatewayError> {
    let hold = load(gw, id).await?;
    if let Some(answer) = settled(&hold) {
        return restated(gw, id, answer).await;
    }
    let _claim = gw.resumes.claim(id).ok_or_else(|| {
        conflict(
            id,
            "a resume of this hold is already running; call operation_resume again for its result when it ends",
        )
    })?;
    let answer = claimed(gw, id).await;
    // A hold this server claimed but did not start (a lease refusal, say) is let go, so any
    // server may resume it; a no-op for every other state.
    let owned = id.to_owned();
    if let Err(e) = gw.ledger.run(move |store| Ok(store.release_hold(&owned)?)).await {
        tracing::warn!(approval_id = %id, "the hold could not be let go: {e}");
    }
    answer
}

/// The resume once this process's claim (`InFlight`) is held: claim the hold in the ledger
/// (`granted → queued`, owned by this server; a hold another live server owns is refused;
/// one a dead server owned is taken over), then run or reconcile it.
async fn claimed(gw: &Gateway, id: &str) -> Result<OperationResumeResult, GatewayError> {
    let mut hold = load(gw, id).await?;
    loop {
        if let Some(answer) = settled(&hold) {
            return restated(gw, id, answer).await;
        }
        let owner = hold.owner.clone();
        match hold.state {
            ApprovalState::Granted => {
                let owned = id.to_owned();
                hold = match gw.ledger.run(move |store| Ok(store.queue_hold(&owned)?)).await? {
                    Cas::Moved(h) | Cas::Stale(h) => h,
                    Cas::Missing => return Err(not_found(id)),
                };
                continue;
            }
            ApprovalState::Queued | ApprovalState::Resuming => {}
            ApprovalState::Pending | ApprovalState::Denied | ApprovalState::Consumed => {
                return Err(GatewayError::Internal(format!("hold {id} settled in the loop")));
            }
        }
        let (owned, from) = (id.to_owned(), owner.clone());
        let taken = gw
            .ledger
            .run(move |store| {
                if store.instance_id() == from.as_deref() {
                    return Ok(None);
                }
                if store.owner_alive(from.as_deref()) {
                    return Ok(Some(Err(from)));
                }
                Ok(Some(Ok(store.take_over_hold(&owned, from.as_deref())?)))
            })
            .await?;
        match taken {
            // Ours: this process's claim is the only resume running it.
            None => {}
            Some(Err(owner)) => return Err(elsewhere(id, &hold, owner.as_deref())),
            Some(Ok(Cas::Moved(h))) => {
                tracing::info!(approval_id = %id, from = ?owner, "took over a hold whose server is gone");
                hold = h;
            }
            // Another server took it (or it moved) meanwhile: look again.
            Some(Ok(Cas::Stale(h))) => {
                hold = h;
                continue;
            }
            Some(Ok(Cas::Missing)) => return Err(not_found(id)),
        }
        return match hold.state {
            ApprovalState::Resuming => super::reconcile::reconcile(gw, hold).await,
            _ => execute(gw, hold, None).await,
        };
    }
}

/// A hold a live server is resuming: this one leaves it alone.
fn elsewhere(id: &str, hold: &HoldRecord, owner: Option<&str>) -> GatewayError {
    conflict(
        id,
        &format!(
            "the hold is {} by another running server ({}); call operation_resume again for its outcome once that resume ends",
            match hold.state {
                ApprovalState::Resuming => "being resumed",
                _ => "claimed for a resume",
            },
            owner.unwrap_or("unknown"),
        ),
    )
}

/// The answer of a hold that cannot run: consumed (its stored outcome), pending or denied.
fn settled(hold: &HoldRecord) -> Option<Result<OperationResumeResult, GatewayError>> {
    let id = hold.approval_id.as_str();
    match hold.state {
        ApprovalState::Consumed => Some(replay(id, hold.result_json.as_deref())),
        // Not a nudge to grant it: the decision is the person's.
        ApprovalState::Pending => Some(Err(conflict(
            id,
            &format!(
                "the hold is still pending: a person decides it (`codespace approvals grant {id}` or `deny`, or the server's /inbox page); call operation_resume with wait_ms to wait for the decision and run it in the same call"
            ),
        ))),
        ApprovalState::Denied => Some(Err(GatewayError::HoldDenied { approval_id: id.to_owned() })),
        ApprovalState::Granted | ApprovalState::Queued | ApprovalState::Resuming => None,
    }
}

/// A consumed hold's answer, unless it is a patch stored as `unknown` (its write's answer
/// was lost) whose operation start-up recovery has since settled from the disk: then the
/// ledger's outcome, which replaces the stored one (best effort: the ledger stays the
/// authority either way).
async fn restated(
    gw: &Gateway,
    id: &str,
    answer: Result<OperationResumeResult, GatewayError>,
) -> Result<OperationResumeResult, GatewayError> {
    let Ok(stored) = &answer else { return answer };
    let (tool, patch) = match (&stored.apply_patch, &stored.operation_revert) {
        (Some(r), _) => (HeldTool::ApplyPatch, r),
        (None, Some(r)) => (HeldTool::OperationRevert, r),
        (None, None) => return answer,
    };
    if patch.status != PatchStatus::Unknown {
        return answer;
    }
    let op = patch.operation_id.clone();
    let record = match gw.ledger.run(move |store| Ok(store.get(&op)?)).await {
        Ok(Some(record)) => record,
        Ok(None) => return answer,
        Err(e) => {
            tracing::warn!(approval_id = %id, "the ledger could not be asked; the stored outcome answers: {e}");
            return answer;
        }
    };
    let outcome = match crate::patch::replay(record) {
        Ok(r) if r.status == PatchStatus::Unknown => return answer,
        Ok(r) => Outcome::Success(Box::new(ledgered(tool, id, r))),
        Err(GatewayError::Recorded(mut body)) => {
            body.approval_id = Some(id.to_owned());
            Outcome::Failed(*body)
        }
        Err(_) => return answer,
    };
    tracing::info!(approval_id = %id, "a hold stored as unknown restated from the ledger");
    match serde_json::to_string(&outcome) {
        Ok(json) => {
            let owned = id.to_owned();
            let restate = gw.ledger.run(move |store| Ok(store.restate_consumed(&owned, &json)?));
            if let Err(e) = restate.await {
                tracing::warn!(approval_id = %id, "the settled outcome was not stored: {e}");
            }
        }
        Err(e) => tracing::warn!(approval_id = %id, "hold outcome serialization: {e}"),
    }
    match outcome {
        Outcome::Success(result) => Ok(*result),
        Outcome::Failed(body) => Err(GatewayError::Recorded(Box::new(body))),
    }
}

/// Runs the held request through its tool's inner path, policy first (against the
/// registry as it is now).
pub(super) async fn execute(
    gw: &Gateway,
    hold: HoldRecord,
    reserved: Option<String>,
) -> Result<OperationResumeResult, GatewayError> {
    let id = hold.approval_id.clone();
    // What runs is what was shown: a hold whose row or root changed never runs, and keeps
    // that answer (the failure is stored with it below).
    // (A runner that could not be asked leaves it queued, to be checked again.)
    match gw.verify_hold(&hold).await {
        Ok(()) => {}
        Err(refused @ GatewayError::Trust(_)) => {
            tracing::warn!(approval_id = %id, "a hold was refused at resume: {refused}");
            return finish(gw, &id, Err(refused)).await;
        }
        Err(e) => return Err(e),
    }
    let held = snapshot(&hold)?;
    let outcome = match held {
        Held::Patch(p) => match gw.authorized(&p.workspace_id, Action::Write) {
            Ok(_) => {
                let resume = Resume { approval_id: id.clone(), reserved };
                gw.apply_now(p.into(), Some(resume))
                    .await
                    .map(|r| ledgered(HeldTool::ApplyPatch, &id, r))
            }
            Err(e) => Err(e),
        },
        Held::Revert(p) => match gw.authorized(&p.workspace_id, Action::Write) {
            Ok(_) => {
                let resume = Resume { approval_id: id.clone(), reserved };
                gw.apply_now(p.into(), Some(resume))
                    .await
                    .map(|r| ledgered(HeldTool::OperationRevert, &id, r))
            }
            Err(e) => Err(e),
        },
        Held::Exec(p) => {
            let admitted =
                gw.authorized(&p.workspace_id, Action::Exec).and_then(|_| gw.check_command(&p));
            match admitted {
                Ok(()) => gw.exec_now(p, Some(&id)).await.map(|r| OperationResumeResult {
                    approval_id: id.clone(),
                    state: ApprovalState::Consumed,
                    apply_patch: None,
                    exec_command: Some(r),
                    operation_revert: None,
                }),
                Err(e) => Err(e),
            }
        }
    };
    match &outcome {
        // Refused before anything ran: the hold stays queued, and a later resume retries.
        Err(GatewayError::Lease(_)) => outcome,
        // The process limit, or a runner worker that could not be asked (a transport error
        // reaches here only when the action never ran: a write that may have run answers
        // `unknown`, a spawn `dispatch_status: "unknown"`): back to queued, retryable.
        Err(
            GatewayError::Process(ProcError::LimitReached)
            | GatewayError::Runner(RunnerError::Transport(_)),
        ) => {
            let owned = id.clone();
            gw.ledger.run(move |store| Ok(store.requeue_hold(&owned)?)).await?;
            outcome
        }
        Ok(_) | Err(_) => finish(gw, &id, outcome).await,
    }
}

/// Stores the terminal outcome with the hold (`→ consumed`) and answers as a later resume
/// will: a failure as the recorded error, naming the hold.
pub(super) async fn finish(
    gw: &Gateway,
    id: &str,
    outcome: Result<OperationResumeResult, GatewayError>,
) -> Result<OperationResumeResult, GatewayError> {
    let stored = match &outcome {
        Ok(result) => Outcome::Success(Box::new(result.clone())),
        Err(e) => {
            let mut body = e.to_body();
            body.approval_id = Some(id.to_owned());
            Outcome::Failed(body)
        }
    };
    let json = serde_json::to_string(&stored)
        .map_err(|e| GatewayError::Internal(format!("hold outcome serialization: {e}")))?;
    let owned = id.to_owned();
    let cas = gw.ledger.run(move |store| Ok(store.consume_hold(&owned, &json)?)).await;
    match (cas, outcome) {
        (Ok(Cas::Moved(_)), Ok(result)) => {
            tracing::info!(approval_id = %id, "hold consumed");
            Ok(result)
        }
        (Ok(Cas::Moved(_)), Err(_)) => match stored {
            Outcome::Failed(body) => Err(GatewayError::Recorded(Box::new(body))),
            Outcome::Success(result) => Ok(*result),
        },
        (Ok(Cas::Stale(_) | Cas::Missing) | Err(_), Ok(result)) => {
            let op = result.apply_patch.or(result.operation_revert).map(|r| r.operation_id);
            Err(ambiguous(
                id,
                op,
                "the action ran, but its result could not be stored with the hold",
            ))
        }
        (Ok(Cas::Stale(_) | Cas::Missing) | Err(_), Err(e)) => Err(e),
    }
}

/// The hold's stored arguments, decoded as at creation.
pub(super) fn snapshot(hold: &HoldRecord) -> Result<Held, GatewayError> {
    let id = hold.approval_id.as_str();
    let Some(json) = hold.params_json.as_deref() else {
        return Err(ambiguous(id, hold.operation_id.clone(), "the hold's arguments were scrubbed"));
    };
    let arguments = serde_json::from_str(json).map_err(|e| {
        GatewayError::Internal(format!("hold {id} holds unreadable arguments: {e}"))
    })?;
    Held::decode(hold.tool, arguments)
}

/// Moves a queued hold to `resuming` once its lease is held; with `reserve`, returns the
/// ledger id its patch begins under.
pub(crate) async fn start(
    gw: &Gateway,
    id: &str,
    reserve: bool,
) -> Result<Option<String>, GatewayError> {
    let owned = id.to_owned();
    match gw.ledger.run(move |store| Ok(store.start_resume(&owned, reserve)?)).await? {
        Cas::Moved(hold) => Ok(hold.operation_id),
        Cas::Stale(hold) => {
            Err(conflict(id, &format!("the hold moved to {} meanwhile", hold.state)))
        }
        Cas::Missing => Err(not_found(id)),
    }
}

pub(super) async fn load(gw: &Gateway, id: &str) -> Result<HoldRecord, GatewayError> {
    let owned = id.to_owned();
    gw.ledger.run(move |store| Ok(store.hold(&owned)?)).await?.ok_or_else(|| not_found(id))
}

pub(super) fn not_found(id: &str) -> GatewayError {
    GatewayError::HoldNotFound { approval_id: id.to_owned() }
}

pub(super) fn conflict(id: &str, why: &str) -> GatewayError {
    GatewayError::HoldConflict { approval_id: id.to_owned(), why: why.to_owned() }
}

pub(super) fn ambiguous(id: &str, operation_id: Option<String>, why: &str) -> GatewayError {
    GatewayError::HoldAmbiguous { approval_id: id.to_owned(), operation_id, why: why.to_owned() }
}
