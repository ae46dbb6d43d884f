//! Confirmation holds: `approval_create`, `approval_resolve`, `operation_resume`, and the
//! implicit hold of a policy-allowed `apply_patch` or `exec_command` under
//! `approvals: "confirm"`.
//!
//! A hold is a durable ledger row in front of one request (its arguments and fingerprint),
//! moved only by compare-and-swap: `pending → granted → queued → resuming → consumed`, or
//! `pending → denied`. A resume re-checks the policy against the registry as it is now and
//! runs the tool's own inner path; the terminal outcome is stored with the hold, so a later
//! resume returns it again. Each hold is sealed with the server's key when it is made, and
//! runs only when its row still matches the seal and its workspace's root is the same
//! directory (`seal`). Unless the operator set `approvers: "person"`, the caller who asked
//! can grant its own hold.
//!
//! # Layout
//! - `summary`: what the held action does, for a person.
//! - `seal`: what runs is what was shown: the seal made with the hold, checked at resume.
//! - `resume`: claiming a granted hold (in this process and, by its owner column, across
//!   servers on the ledger), running it once.
//! - `reconcile`: a hold found `resuming`, interrupted (its server gone).
//! - `wait`: a resume's wait for a person's decision on a pending hold.
//! - `question`: the person's prompt about a hold, and the sealed `requestState` of a
//!   question a client answers on a retry (MCP 2026-07-28).

mod question;
mod reconcile;
mod resume;
mod seal;
mod summary;
mod wait;

pub use question::Question;
pub(crate) use resume::{Resume, start};
pub(crate) use summary::check_created_names_in;

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use codespace_policy::Action;
use codespace_protocol::Decision;
use codespace_protocol::{
    ApplyPatchParams, ApprovalCreateParams, ApprovalResolveParams, ApprovalResult, ErrorBody,
    ExecCommandParams, HeldTool, OperationResumeResult, OperationRevertParams,
};
use codespace_store::{Cas, HoldFilter, HoldRecord, NewHold, Store};
use codespace_types::Approvers;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::TrustError;
use crate::{ExecWait, Gateway, GatewayError, patch};

/// The request a hold stands in front of, decoded as its tool decodes it.
#[derive(Debug, Clone)]
pub(crate) enum Held {
    Patch(ApplyPatchParams),
    Exec(ExecCommandParams),
    Revert(OperationRevertParams),
}

impl Held {
    /// Decodes `arguments` as `tool` does: a failure is `INVALID_PATCH` or
    /// `INVALID_COMMAND`, as the reference has it.
    fn decode(
        tool: HeldTool,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Held, GatewayError> {
        let value = serde_json::Value::Object(arguments);
        let refused =
            |e: serde_json::Error| GatewayError::HeldArguments { tool, detail: e.to_string() };
        match tool {
            HeldTool::ApplyPatch => serde_json::from_value(value).map(Held::Patch).map_err(refused),
            HeldTool::ExecCommand => serde_json::from_value(value).map(Held::Exec).map_err(refused),
            HeldTool::OperationRevert => {
                serde_json::from_value(value).map(Held::Revert).map_err(refused)
            }
        }
    }

    fn tool(&self) -> HeldTool {
        match self {
            Held::Patch(_) => HeldTool::ApplyPatch,
            Held::Exec(_) => HeldTool::ExecCommand,
            Held::Revert(_) => HeldTool::OperationRevert,
        }
    }

    fn workspace_id(&self) -> &str {
        match self {
            Held::Patch(p) => &p.workspace_id,
            Held::Exec(p) => &p.workspace_id,
            Held::Revert(p) => &p.workspace_id,
        }
    }

    /// The canonical request hash: the patch ledger's for a patch; `{workspace_id,
    /// command, tty}` for a command. `operation_key` and `work_id` are not part of either.
    fn fingerprint(&self) -> String {
        match self {
            Held::Patch(p) => patch::fingerprint(p),
            Held::Revert(p) => patch::revert_fingerprint(p),
            Held::Exec(p) => {
                let canonical = serde_json::json!({
                    "workspace_id": p.workspace_id,
                    "command": p.command,
                    "tty": p.tty.unwrap_or(false),
                });
                let digest = Sha256::digest(canonical.to_string().as_bytes());
                format!("sha256:{}", hex::encode(digest))
            }
        }
    }

    fn to_json(&self) -> Result<String, GatewayError> {
        let text = match self {
            Held::Patch(p) => serde_json::to_string(p),
            Held::Exec(p) => serde_json::to_string(p),
            Held::Revert(p) => serde_json::to_string(p),
        };
        text.map_err(|e| GatewayError::Internal(format!("hold arguments serialization: {e}")))
    }
}

/// The terminal outcome stored with a consumed hold: `{"outcome": "success", ...}` or
/// `{"outcome": "failed", ...ErrorBody}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
enum Outcome {
    // Boxed: a result is several times the size of a refusal.
    Success(Box<OperationResumeResult>),
    Failed(ErrorBody),
}

/// The holds a resume is running for in this process: a second resume of the same hold is
/// refused instead of racing the first.
#[derive(Debug, Default)]
pub(crate) struct InFlight(Mutex<HashSet<String>>);

/// Membership of one hold in [`InFlight`], released on drop.
struct Claim<'a> {
    set: &'a InFlight,
    id: String,
}

impl InFlight {
    fn claim(&self, id: &str) -> Option<Claim<'_>> {
        let mut set = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        set.insert(id.to_owned()).then(|| Claim { set: self, id: id.to_owned() })
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.set.0.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.id);
    }
}

/// Withdraws the hold `approval_id` on its requester's behalf: denied while pending, an
/// unclaimed grant taken back (both scrub its arguments); `true` when it moved. A hold a
/// resume claimed, or one already settled, is left as it is.
pub(crate) fn withdraw(store: &Store, approval_id: &str) -> Result<bool, GatewayError> {
    let now = crate::now();
    if matches!(store.resolve_hold(approval_id, Decision::Deny, now)?, Cas::Moved(_)) {
        return Ok(true);
    }
    Ok(matches!(store.withdraw_grant(approval_id, now)?, Cas::Moved(_)))
}

impl Gateway {
    pub async fn approval_create(
        &self,
        p: ApprovalCreateParams,
    ) -> Result<ApprovalResult, GatewayError> {
        let held = Held::decode(p.tool, p.arguments)?;
        self.admit(&held)?;
        let (hold, _created) = self.hold(held).await?;
        Ok(hold)
    }

    /// `approval_resolve` over MCP: the agent's own answer, refused
    /// (`APPROVAL_PERSON_REQUIRED`) in a workspace whose holds only a person answers.
    pub async fn approval_resolve(
        &self,
        p: ApprovalResolveParams,
    ) -> Result<ApprovalResult, GatewayError> {
        let hold = resume::load(self, &p.approval_id).await?;
        let approvers = self.lookup(&hold.workspace_id).map(|r| r.ws.approvers);
        // A workspace no longer registered is the person's to answer too.
        if approvers.unwrap_or(Approvers::Person) == Approvers::Person {
            return Err(GatewayError::Trust(TrustError::PersonOnly {
                approval_id: hold.approval_id,
                workspace_id: hold.workspace_id,
            }));
        }
        self.person_resolve(p).await
    }

    /// A person's answer: on /inbox with the person token, or in the client's prompt
    /// (elicitation). (The CLI answers on the ledger itself, with [`decide`].)
    pub async fn person_resolve(
        &self,
        p: ApprovalResolveParams,
    ) -> Result<ApprovalResult, GatewayError> {
        let hold = self.ledger.run(move |store| decide(store, &p.approval_id, p.decision)).await?;
        // A resume waiting in this process hears it now rather than at its next look.
        self.decisions.notify_waiters();
        Ok(ApprovalResult {
            approval_id: hold.approval_id,
            state: hold.state,
            summary: hold.summary,
        })
    }

    /// Under `approvals: "confirm"`: the hold of this request (created, or the active one
    /// reused), returned as the `APPROVAL_REQUIRED` refusal. Nothing has run.
    pub(crate) async fn require_hold(&self, held: Held) -> GatewayError {
        match self.hold(held).await {
            Ok((hold, created)) => {
                if created {
                    tracing::info!(approval_id = %hold.approval_id, "confirmation hold created");
                }
                GatewayError::HoldRequired {
                    approval_id: hold.approval_id,
                    state: hold.state,
                    summary: hold.summary,
                }
            }
            Err(e) => e,
        }
    }

    /// What the tool would refuse before its lease, checked before a hold is created:
    /// the policy, and for a command its argv and the sandbox (a patch's parse follows, in
    /// `summarise`).
    fn admit(&self, held: &Held) -> Result<(), GatewayError> {
        match held {
            // The patch itself is parsed once, by `summarise`.
            Held::Patch(p) => {
                self.authorized(&p.workspace_id, Action::Write)?;
            }
            Held::Exec(p) => {
                self.authorized(&p.workspace_id, Action::Exec)?;
                self.check_command(p)?;
            }
            Held::Revert(p) => {
                self.authorized(&p.workspace_id, Action::Write)?;
            }
        }
        Ok(())
    }

    /// Creates the hold of an admitted request, or returns its active one.
    async fn hold(&self, held: Held) -> Result<(ApprovalResult, bool), GatewayError> {
        let summary = match &held {
            Held::Revert(p) => self.revert_summary(p).await?,
            Held::Patch(_) | Held::Exec(_) => self.summarise(&held)?,
        };
        let (fingerprint, params_json) = (held.fingerprint(), held.to_json()?);
        let (workspace_id, tool) = (held.workspace_id().to_owned(), held.tool());
        let root_identity = self.root_identity(&workspace_id).await?;
        // Minted here, to be sealed (an active hold of the same request is reused instead).
        let approval_id = format!("appr-{}", uuid::Uuid::new_v4());
        let seal = seal::Sealed {
            approval_id: &approval_id,
            workspace_id: &workspace_id,
            tool,
            fingerprint: &fingerprint,
            summary: &summary,
            params_json: &params_json,
            root_identity: &root_identity,
        }
        .seal(&self.key);
        let (hold, created) = self
            .ledger
            .run(move |store| {
                let new = NewHold {
                    approval_id: Some(&approval_id),
                    workspace_id: &workspace_id,
                    tool,
                    fingerprint: &fingerprint,
                    summary: &summary,
                    params_json: &params_json,
                    seal: &seal,
                    root_identity: &root_identity,
                };
                Ok(store.create_hold(&new, crate::now())?)
            })
            .await?;
        let result = ApprovalResult {
            approval_id: hold.approval_id,
            state: hold.state,
            summary: hold.summary,
        };
        Ok((result, created))
    }

    fn summarise(&self, held: &Held) -> Result<String, GatewayError> {
        Ok(match held {
            Held::Patch(p) => {
                let parsed =
                    codespace_patch::parse(&p.patch).map_err(|e| GatewayError::Patch(e.into()))?;
                summary::check_created_names(&parsed).map_err(GatewayError::Trust)?;
                summary::patch(&p.workspace_id, &parsed, p.check_only.unwrap_or(false))
            }
            Held::Exec(p) => summary::command(p, self.granted_timeout(p)?.secs),
            // Summarised from its ledger record, in `hold`.
            Held::Revert(p) => summary::revert(p, &[]),
        })
    }

    /// What a held revert puts back, from the record of the operation it reverts.
    async fn revert_summary(&self, p: &OperationRevertParams) -> Result<String, GatewayError> {
        let id = p.operation_id.clone();
        let plan = self.ledger.run(move |store| Ok(store.get(&id)?)).await?.map(|r| r.plan);
        Ok(summary::revert(p, plan.as_deref().unwrap_or_default()))
    }

    /// Runs a granted hold once; with `wait_ms`, first waits (until `cancelled` at most)
    /// for a person's decision on a pending one. A held `exec_command` that this call runs
    /// then waits as its own `wait_ms` and `max_bytes` asked, as it would have unheld (a
    /// repeated resume answers the stored start).
    pub async fn operation_resume(
        &self,
        p: codespace_protocol::OperationResumeParams,
        cancelled: impl Future<Output = ()>,
    ) -> Result<OperationResumeResult, GatewayError> {
        let mut cancelled = std::pin::pin!(cancelled);
        wait::decision(self, &p.approval_id, p.wait_ms, cancelled.as_mut()).await?;
        // Read before the run: a consumed hold's arguments are scrubbed.
        let asked = match resume::load(self, &p.approval_id).await.map(|h| resume::snapshot(&h)) {
            Ok(Ok(Held::Exec(asked))) => Some(ExecWait::from(&asked)),
            Ok(Ok(Held::Patch(_) | Held::Revert(_)) | Err(_)) | Err(_) => None,
        };
        let mut resumed = resume::resume(self, &p.approval_id).await?;
        if let Some(wait) = asked
            && let Some(started) = resumed.exec_command.take()
        {
            resumed.exec_command = Some(self.exec_wait(started, wait, cancelled).await?);
        }
        Ok(resumed)
    }

    /// Runs a hold the person granted in the calling request itself (its prompt, or the
    /// retry that answered it): the caller applies the command's own wait.
    pub async fn resume_granted(
        &self,
        approval_id: &str,
    ) -> Result<OperationResumeResult, GatewayError> {
        resume::resume(self, approval_id).await
    }
}

/// A consumed hold's stored outcome, returned again: a success as it was, a failure as the
/// same error.
fn replay(
    approval_id: &str,
    result_json: Option<&str>,
) -> Result<OperationResumeResult, GatewayError> {
    let outcome: Option<Outcome> = result_json.and_then(|j| serde_json::from_str(j).ok());
    match outcome {
        Some(Outcome::Success(result)) => Ok(*result),
        Some(Outcome::Failed(body)) => Err(GatewayError::Recorded(Box::new(body))),
        None => Err(GatewayError::HoldAmbiguous {
            approval_id: approval_id.to_owned(),
            operation_id: None,
            why: "the hold is consumed but its stored result cannot be read".to_owned(),
        }),
    }
}

/// Grants or denies a pending hold in `store`: what `approval_resolve` does, and what an
/// operator's `codespace approvals grant|deny` does from another process on the same ledger.
pub fn decide(
    store: &Store,
    approval_id: &str,
    decision: Decision,
) -> Result<HoldRecord, GatewayError> {
    match store.resolve_hold(approval_id, decision, crate::now())? {
        Cas::Moved(hold) => {
            tracing::info!(approval_id = %hold.approval_id, state = %hold.state, "hold resolved");
            Ok(hold)
        }
        Cas::Stale(hold) => Err(GatewayError::HoldConflict {
            approval_id: hold.approval_id,
            why: format!("the hold is no longer pending (it is {})", hold.state),
        }),
        Cas::Missing => Err(GatewayError::HoldNotFound { approval_id: approval_id.to_owned() }),
    }
}

/// The newest `limit` holds matching `filter`, newest first: what an operator lists.
pub fn list_holds(
    store: &Store,
    filter: &HoldFilter,
    limit: usize,
) -> Result<Vec<HoldRecord>, GatewayError> {
    Ok(store.holds(filter, limit)?)
}

/// One hold, or `APPROVAL_NOT_FOUND`.
pub fn show_hold(store: &Store, approval_id: &str) -> Result<HoldRecord, GatewayError> {
    store
        .hold(approval_id)?
        .ok_or_else(|| GatewayError::HoldNotFound { approval_id: approval_id.to_owned() })
}

#[cfg(test)]
mod tests;
