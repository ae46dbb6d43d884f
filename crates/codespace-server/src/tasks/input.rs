//! Input a task needs. A fresh hold met inside a task, for a client that answers
//! elicitations, moves the task to `input_required` with the hold and its one input request
//! (the person's prompt and the grant form of the MRTR path, under `codespace_hold`)
//! recorded in the ledger; nothing of the task runs, or waits in memory, until the answer.
//! `tasks/update` delivers it: answers to keys the task does not wait on are ignored (the
//! acknowledgement is the same); accept with grant ticked grants the hold as the person's
//! answer and runs it, decline (or grant unticked) denies it and the task completes with
//! `APPROVAL_DENIED`, cancel leaves it waiting. The server that receives the answer takes
//! the task over with one compare-and-swap (`input_required` to `working`) and runs the
//! rest, so the answer may come to any server sharing the ledger, after a restart too.
//!
//! A task asking in memory (the conformance fixtures) gets its answers through [`Ask`]; the
//! keys answered leave the ledger's `inputRequests` before `tasks/update` is acknowledged.

use std::time::Instant;

use codespace_gateway::{Gateway, GatewayError};
use codespace_protocol::{ApprovalState, Decision, ExecCommandParams, tool};
use codespace_store::{TaskRow, TaskSettle};
use codespace_types::TaskState;
use rmcp::ErrorData as McpError;
use rmcp::model::InputResponses;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::run::{self, Step, cancelled, failed, tool_result};
use super::{Tasks, finish, known, ledger_error, wire};
use crate::elicit;

/// A task's first answer: a fresh hold, when the client answers elicitations, is put to the
/// person in the task's `inputRequests` (the task waits); anything else settles it.
pub(super) async fn held(
    g: &Gateway,
    task_id: &str,
    first: Result<Value, GatewayError>,
    asks: bool,
    cancel: &CancellationToken,
) -> Step {
    let approval_id =
        match &first {
            Err(GatewayError::HoldRequired {
                approval_id, state: ApprovalState::Pending, ..
            }) if asks => approval_id.clone(),
            Ok(_) | Err(_) => return Step::Settle(tool_result(first)),
        };
    if let Err(e) = ask_person(g, task_id, &approval_id).await {
        tracing::warn!(task_id, error = %e, "the hold could not be put to the person");
        return Step::Settle(tool_result(first));
    }
    // A cancel that came while the hold was made: nothing ran, the task ends here.
    if cancel.is_cancelled() {
        let settle = cancelled("tasks/cancel: it waited for input; nothing of it ran");
        if let Err(e) = g.task_cancel_waiting(task_id.to_owned(), settle).await {
            tracing::warn!(task_id, error = %e, "the waiting task's cancel was not recorded");
        }
    }
    Step::Asked
}

/// Records the task as waiting on hold `approval_id`, its input request the person's prompt.
async fn ask_person(g: &Gateway, task_id: &str, approval_id: &str) -> Result<(), GatewayError> {
    let requests = crate::mrtr::hold_requests(g.hold_prompt(approval_id).await?)?;
    let requests = serde_json::to_string(&requests)
        .map_err(|e| GatewayError::Internal(format!("input requests serialization: {e}")))?;
    let note = format!("waits for a person's decision on hold {approval_id}");
    let (id, hold) = (task_id.to_owned(), Some(approval_id.to_owned()));
    g.task_await_input(id, hold, requests, Some(note)).await?;
    tracing::info!(task_id, approval_id, "hold put to the person in the task's inputRequests");
    Ok(())
}

/// `tasks/update`: the answers to a waiting task's outstanding requests; an empty
/// acknowledgement whatever they change (the next `tasks/get` tells), -32602 for an unknown
/// task. `span`: the request's, where the rest of the task then runs.
pub(crate) async fn update(
    t: &Tasks,
    task_id: String,
    responses: InputResponses,
    span: tracing::Span,
) -> Result<(), McpError> {
    let row = known(&t.gateway, task_id).await?;
    if row.state != TaskState::InputRequired {
        return Ok(());
    }
    let mut outstanding = wire::requests(&row);
    let answered: InputResponses =
        responses.into_iter().filter(|(key, _)| outstanding.contains_key(key)).collect();
    if answered.is_empty() {
        return Ok(());
    }
    let Some(approval_id) = row.approval_id.clone() else {
        outstanding.retain(|key, _| !answered.contains_key(key));
        return in_memory(t, &row, outstanding, answered).await;
    };
    let Some(decision) = crate::mrtr::decision(Some(answered)) else {
        tracing::info!(task_id = %row.task_id, "no decision in the answer: the task still waits");
        return Ok(());
    };
    if !t.gateway.task_resume(row.task_id.clone()).await.map_err(ledger_error)? {
        return Ok(());
    }
    let cancel = t.running.add(&row.task_id);
    t.running.watch(&t.gateway);
    let (t2, started) = (t.clone(), Instant::now());
    let rest = async move {
        let (g, id, tool) = (&t2.gateway, &row.task_id, &row.tool);
        let settle = decided(g, id, tool, approval_id, decision, cancel).await;
        finish(&t2, id, tool, started, Step::Settle(settle)).await;
    };
    tokio::spawn(rest.instrument(span));
    Ok(())
}

/// Answers to a task asking in memory: the keys answered leave the ledger, then the answers
/// reach the task (when it runs here).
async fn in_memory(
    t: &Tasks,
    row: &TaskRow,
    outstanding: rmcp::model::InputRequests,
    answered: InputResponses,
) -> Result<(), McpError> {
    let id = row.task_id.clone();
    match outstanding.is_empty() {
        true => t.gateway.task_progress(id, TaskState::Working, None, None).await,
        false => {
            let requests = serde_json::to_string(&outstanding).unwrap_or_else(|_| "{}".into());
            let message = row.status_message.clone();
            t.gateway.task_await_input(id, None, requests, message).await
        }
    }
    .map_err(ledger_error)?;
    if !t.running.deliver(&row.task_id, answered) {
        tracing::info!(task_id = %row.task_id, "answers to a task that does not run here");
    }
    Ok(())
}

/// The rest of a task that waited on hold `approval_id`, after the person's `decision`:
/// recorded as the person's, then a grant runs the hold (a command is then followed to its
/// exit like any command task), a denial completes the task with `APPROVAL_DENIED`.
async fn decided(
    g: &Gateway,
    task_id: &str,
    tool: &str,
    approval_id: String,
    decision: Decision,
    cancel: CancellationToken,
) -> TaskSettle {
    let (hold, params) = match g.hold_state(&approval_id).await {
        Ok(found) => found,
        Err(e) => return tool_result::<()>(Err(e)),
    };
    let state = hold.state;
    match tool {
        tool::APPLY_PATCH => {
            tool_result(elicit::decided(g, approval_id, state, decision, |r| r.apply_patch).await)
        }
        tool::OPERATION_REVERT => tool_result(
            elicit::decided(g, approval_id, state, decision, |r| r.operation_revert).await,
        ),
        tool::EXEC_COMMAND => {
            let params = params.as_deref().map(serde_json::from_str::<ExecCommandParams>);
            let wait = params.and_then(Result::ok).map(|p| run::slice(&p));
            match elicit::decided(g, approval_id, state, decision, |r| r.exec_command).await {
                Ok(started) => match wait {
                    Some(wait) => run::command(g, task_id, started, wait, cancel).await,
                    None => tool_result(Ok(started)),
                },
                Err(e) => tool_result::<()>(Err(e)),
            }
        }
        other => failed(-32603, &format!("{other} does not wait on a hold"), None),
    }
}

/// How a task asking in memory asks its client and hears the answers.
pub(crate) struct Ask {
    gateway: std::sync::Arc<Gateway>,
    task_id: String,
    inbox: tokio::sync::mpsc::UnboundedReceiver<InputResponses>,
}

#[cfg_attr(
    not(feature = "conformance-fixtures"),
    expect(dead_code, reason = "only the fixture build's tasks ask in memory")
)]
impl Ask {
    pub(super) fn new(
        gateway: &std::sync::Arc<Gateway>,
        running: &super::Running,
        task_id: &str,
    ) -> Ask {
        let inbox = running.inbox(task_id);
        Ask { gateway: gateway.clone(), task_id: task_id.to_owned(), inbox }
    }

    /// Records the task as waiting for `requests` (key to request).
    pub(crate) async fn post(&self, requests: &Value) -> Result<bool, GatewayError> {
        let (id, text) = (self.task_id.clone(), requests.to_string());
        self.gateway.task_await_input(id, None, text, Some("waits for input".to_owned())).await
    }

    /// The next answers `tasks/update` delivered; `None` once nothing can deliver any.
    pub(crate) async fn next(&mut self) -> Option<InputResponses> {
        self.inbox.recv().await
    }
}
