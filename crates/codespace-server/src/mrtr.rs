//! Holds over MRTR (SEP-2322, MCP 2026-07-28), where a server sends the client no requests:
//! a held `apply_patch`, `exec_command` or `operation_revert` on a request that declared
//! elicitation answers `input_required`, its one input request an elicitation (the
//! person's prompt and a grant choice, under [`INPUT_KEY`]) and a `requestState` the
//! gateway sealed (`Gateway::question`). The client's retry, the same call with
//! `inputResponses` and that `requestState`, is opened first (`Gateway::open_question`: a
//! tampered, foreign or expired state is refused and nothing runs); then accept with grant
//! grants the hold as the person's answer and runs it in that call, decline (or grant
//! unticked) denies it (`APPROVAL_DENIED`), and cancel or no answer leaves it as it is
//! (`APPROVAL_REQUIRED`). On older revisions `elicit` asks with `elicitation/create`.

use std::time::Duration;

use codespace_gateway::{Gateway, GatewayError};
use codespace_protocol::{ApprovalState, Decision, HeldTool, OperationResumeResult};
use rmcp::RoleServer;
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequests, InputRequiredResult, InputResponses, ProtocolVersion,
};
use rmcp::service::RequestContext;
use serde::Serialize;

use crate::elicit::{self, Answer};

/// The key of the one input request a held call's `input_required` carries.
pub(crate) const INPUT_KEY: &str = "codespace_hold";

/// A held call's answer: the tool's own (or its refusal), or a question for the person.
pub(crate) enum Asked<R> {
    Ran(R),
    Input(InputRequiredResult),
}

/// What a retry of an `input_required` answer brings back.
#[derive(Debug, Default)]
pub(crate) struct Retry {
    pub(crate) state: Option<String>,
    pub(crate) responses: Option<InputResponses>,
}

/// A held call: a retry answering a question, or the tool, and a fresh hold put to the
/// person (in the result on 2026-07-28, by `elicitation/create` before).
pub(crate) async fn held<P, R, Fut>(
    gateway: &Gateway,
    context: &RequestContext<RoleServer>,
    wait: Duration,
    retry: Retry,
    (name, p): (&str, P),
    call: impl FnOnce(P) -> Fut,
    pick: impl FnOnce(OperationResumeResult) -> Option<R>,
) -> Result<Asked<R>, GatewayError>
where
    P: Serialize,
    Fut: Future<Output = Result<R, GatewayError>>,
{
    if let Some(state) = retry.state {
        let tool = HeldTool::parse(name)
            .ok_or_else(|| GatewayError::Internal(format!("{name} is not a held tool")))?;
        let hold = gateway.open_question(tool, &p, &state).await?;
        return match decision(retry.responses) {
            Some(d) => elicit::decided(gateway, hold.approval_id, hold.state, d, pick).await,
            None => Err(GatewayError::HoldRequired {
                approval_id: hold.approval_id,
                state: hold.state,
                summary: hold.summary,
            }),
        }
        .map(Asked::Ran);
    }
    let first = call(p).await;
    if !on_2026_wire(context) {
        return elicit::ask(gateway, context, wait, first, pick).await.map(Asked::Ran);
    }
    let approval_id =
        match &first {
            Err(GatewayError::HoldRequired {
                approval_id, state: ApprovalState::Pending, ..
            }) if elicits(context) => approval_id.clone(),
            Ok(_) | Err(_) => return first.map(Asked::Ran),
        };
    let question = gateway.question(&approval_id, wait).await?;
    tracing::info!(%approval_id, "hold put to the person in an input_required result");
    let requests = hold_requests(question.message)?;
    Ok(Asked::Input(InputRequiredResult::new(Some(requests), Some(question.request_state))))
}

/// The one input request that asks the person about a hold: the elicitation of `message`
/// and the grant form, under [`INPUT_KEY`] (in an `input_required` result, or a task's).
pub(crate) fn hold_requests(message: String) -> Result<InputRequests, GatewayError> {
    let schema = ElicitationSchema::from_type::<Answer>()
        .map_err(|e| GatewayError::Internal(format!("the grant form's schema: {e}")))?;
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    };
    let mut requests = InputRequests::new();
    requests.insert(INPUT_KEY.to_owned(), InputRequest::Elicitation(ElicitRequest::new(params)));
    Ok(requests)
}

/// Whether this request speaks MCP 2026-07-28 or later (where results ask, not requests).
fn on_2026_wire(context: &RequestContext<RoleServer>) -> bool {
    context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

/// Whether this request's client declared form elicitation (a bare `elicitation` is form).
pub(crate) fn elicits(context: &RequestContext<RoleServer>) -> bool {
    let declared = context.client_capabilities().and_then(|c| c.elicitation);
    declared.is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The person's answer in a retry's `inputResponses`, if any: accept with grant ticked is a
/// grant, decline or grant unticked a denial; cancel, a missing or malformed answer none.
pub(crate) fn decision(responses: Option<InputResponses>) -> Option<Decision> {
    let answer: ElicitResult = serde_json::from_value(responses?.remove(INPUT_KEY)?).ok()?;
    match answer.action {
        ElicitationAction::Accept => {
            let grant = answer.content?.get("grant")?.as_bool()?;
            Some(if grant { Decision::Grant } else { Decision::Deny })
        }
        ElicitationAction::Decline => Some(Decision::Deny),
        // Cancel, and any action a later revision adds: no decision.
        _ => None,
    }
}

#[cfg(test)]
mod tests;
