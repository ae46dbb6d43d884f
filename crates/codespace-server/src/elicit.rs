//! Asking a person through the client: a held `apply_patch`, `exec_command` or
//! `operation_revert` on a client that declared the `elicitation` capability sends
//! `elicitation/create` with the hold's summary and a grant choice, and waits (bounded;
//! cancelling the call ends the wait).
//! Accept with grant: the hold is granted and resumed in the same call, which returns the
//! tool's normal result. Decline (or grant unticked): denied, and the call returns
//! `APPROVAL_DENIED` naming the hold. Cancel, timeout or a failed request:
//! the hold stays pending, and the call returns `APPROVAL_REQUIRED` as without elicitation.
//! The hold's row moves exactly as `approval_resolve` and `operation_resume` move it.
//! (On MCP 2026-07-28 the server sends no request: `mrtr` asks in the call's result.)

use std::time::Duration;

use codespace_gateway::{Gateway, GatewayError};
use codespace_protocol::{ApprovalResolveParams, ApprovalState, Decision, OperationResumeResult};
use rmcp::RoleServer;
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::{ElicitationError, RequestContext};
use serde::Deserialize;

/// The form the person fills in (in `elicitation/create`, and in the elicitation an
/// `input_required` answer embeds).
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct Answer {
    /// Let this change run now.
    #[schemars(title = "Allow it")]
    pub(crate) grant: bool,
}

rmcp::elicit_safe!(Answer);

/// What the person decided, if anything.
enum Reply {
    Decided(Decision),
    /// No decision: cancelled, timed out, cancelled call, or the request failed.
    Undecided,
}

/// `first` is the tool's answer; a fresh `APPROVAL_REQUIRED` on an eliciting client is
/// turned into a question, and `pick` takes the tool's result out of the resumed hold.
pub(crate) async fn ask<R>(
    gateway: &Gateway,
    context: &RequestContext<RoleServer>,
    wait: Duration,
    first: Result<R, GatewayError>,
    pick: impl FnOnce(OperationResumeResult) -> Option<R>,
) -> Result<R, GatewayError> {
    let approval_id = match &first {
        Err(GatewayError::HoldRequired { approval_id, state: ApprovalState::Pending, .. }) => {
            approval_id.clone()
        }
        Ok(_) | Err(_) => return first,
    };
    if !context.peer.supported_elicitation_modes().contains(&rmcp::service::ElicitationMode::Form) {
        return first;
    }
    // The summary, and a patch itself, with every hidden character written out.
    let Ok(message) = gateway.hold_prompt(&approval_id).await else {
        return first;
    };
    let reply = tokio::select! {
        answer = context.peer.elicit_with_timeout::<Answer>(message, Some(wait)) => reply(answer),
        () = context.ct.cancelled() => Reply::Undecided,
    };
    let decision = match reply {
        Reply::Decided(d) => d,
        Reply::Undecided => {
            tracing::info!(%approval_id, "no decision from the person: the hold stays pending");
            return first;
        }
    };
    decided(gateway, approval_id, ApprovalState::Pending, decision, pick).await
}

/// The person's `decision` on hold `approval_id` (last seen in `state`), answered in the
/// client's prompt: recorded as the person's, then a grant runs the hold in this call.
/// A grant of a hold already decided elsewhere runs (or replays) what the hold says.
pub(crate) async fn decided<R>(
    gateway: &Gateway,
    approval_id: String,
    state: ApprovalState,
    decision: Decision,
    pick: impl FnOnce(OperationResumeResult) -> Option<R>,
) -> Result<R, GatewayError> {
    if state == ApprovalState::Pending || decision == Decision::Deny {
        let resolve = ApprovalResolveParams { approval_id: approval_id.clone(), decision };
        gateway.person_resolve(resolve).await?;
    }
    match decision {
        Decision::Grant => {
            let resumed = gateway.resume_granted(&approval_id).await?;
            pick(resumed).ok_or_else(|| {
                GatewayError::Internal("the resumed hold holds another tool's result".to_owned())
            })
        }
        Decision::Deny => Err(GatewayError::HoldDenied { approval_id }),
    }
}

fn reply(answer: Result<Option<Answer>, ElicitationError>) -> Reply {
    match answer {
        Ok(Some(Answer { grant: true })) => Reply::Decided(Decision::Grant),
        Ok(Some(Answer { grant: false })) | Err(ElicitationError::UserDeclined) => {
            Reply::Decided(Decision::Deny)
        }
        Ok(None) | Err(_) => Reply::Undecided,
    }
}
