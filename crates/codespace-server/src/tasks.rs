//! The MCP Tasks extension (`io.modelcontextprotocol/tasks`): a `tools/call` of a long tool
//! (`apply_patch`, `exec_command`, `operation_revert`, `grep`) from a client that declared
//! the extension runs as a task. The task is written to the ledger before
//! `CreateTaskResult` answers the call, so `tasks/get` finds it at once and after a restart;
//! its work runs in the background, in the call's tracing span, and settles it once
//! (`completed` with the tool's result, a tool error included; `failed` for a
//! protocol-level failure; `cancelled` when `tasks/cancel` stopped it first). Each settled
//! task is counted in the metrics like a call (tool, outcome, time from its start).
//!
//! A hold met inside a task, for a client that declared elicitation, moves the task to
//! `input_required`: its `inputRequests` ask the person to grant or deny (the prompt of the
//! MRTR path), and `tasks/update` delivers the answer (`input.rs`). Otherwise the hold
//! answers `APPROVAL_REQUIRED` as the task's result.
//!
//! A task whose server exited is settled by the next server that reads it (`tasks/get`): a
//! patch task from its operation as recovery settles it (the task's `operation_key` finds
//! it), a command, revert or search task `failed` with `TASK_INTERRUPTED` (a command is
//! never rerun: its process ended with its server). A task waiting on a hold is taken over
//! and still waits: the hold is in the ledger. `tasks/cancel` of a running command ends its
//! whole tree with the workspace's `kill_grace_ms`, on the server that runs it
//! (`running.rs`: the owner reads cancels from the ledger).
//!
//! `run.rs`: the background work of each tool; `wire.rs`: the task on the wire.

pub(crate) mod input;
pub(crate) mod run;
pub(crate) mod running;
mod wire;

use std::sync::Arc;
use std::time::Instant;

use codespace_gateway::{Gateway, GatewayError};
use codespace_protocol::{ErrorBody, ErrorCode, OperationStatusParams, tool};
use codespace_store::{TaskRow, TaskSettle};
use codespace_types::TaskState;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CreateTaskResult, GetTaskResult, JsonObject,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};
use tracing::Instrument;

use crate::metrics::{self, Metrics};
pub(crate) use running::Running;

/// What the task methods work with: the gateway, the tasks running here, the metrics.
#[derive(Clone)]
pub(crate) struct Tasks {
    pub(crate) gateway: Arc<Gateway>,
    pub(crate) running: Arc<Running>,
    pub(crate) metrics: Arc<Metrics>,
}

/// Whether the tool `name` runs as a task when the client declared the extension.
fn runs_as_task(name: &str) -> bool {
    #[cfg(feature = "conformance-fixtures")]
    if crate::task_fixtures::is_task(name) {
        return true;
    }
    matches!(name, tool::APPLY_PATCH | tool::EXEC_COMMAND | tool::OPERATION_REVERT | tool::GREP)
}

/// The tool table's name of a task's tool, which labels its metrics; `None` for a fixture.
fn counted(name: &str) -> Option<&'static str> {
    [tool::APPLY_PATCH, tool::EXEC_COMMAND, tool::OPERATION_REVERT, tool::GREP]
        .into_iter()
        .find(|t| *t == name)
}

/// Whether this request declared the extension (in its `_meta` or at `initialize`).
pub(crate) fn declared(context: &RequestContext<RoleServer>) -> bool {
    context.client_capabilities().is_some_and(|c| c.supports_tasks())
}

fn ledger_error(e: GatewayError) -> McpError {
    McpError::internal_error(format!("the task ledger failed: {e}"), None)
}

/// `tools/call` as a task, when the tool runs as one and the client declared the
/// extension; `None` otherwise (the call runs in line).
pub(crate) async fn start(
    t: &Tasks,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Option<Result<CallToolResponse, McpError>> {
    let name = request.name.as_ref();
    if !runs_as_task(name) || !declared(context) {
        return None;
    }
    #[cfg(feature = "conformance-fixtures")]
    let args = match crate::task_fixtures::before_task(request) {
        Ok(args) => args,
        Err(answer) => return Some(answer),
    };
    #[cfg(not(feature = "conformance-fixtures"))]
    let args = request.arguments.clone();
    Some(create(t, name, args, crate::mrtr::elicits(context)).await)
}

/// Records the task, then runs its work in the background; `asks`: the client answers
/// elicitations (a hold then waits in `input_required`).
async fn create(
    t: &Tasks,
    name: &str,
    args: Option<JsonObject>,
    asks: bool,
) -> Result<CallToolResponse, McpError> {
    let task_id = format!("task-{}", uuid::Uuid::new_v4());
    let mut args = args.unwrap_or_default();
    let workspace_id = args.get("workspace_id").and_then(Value::as_str).map(str::to_owned);
    // A patch task is found again after a restart by its operation's key.
    let operation_key = match name {
        tool::APPLY_PATCH => {
            let key = args.get("operation_key").and_then(Value::as_str).map(str::to_owned);
            let key = key.unwrap_or_else(|| task_id.clone());
            args.insert("operation_key".into(), Value::String(key.clone()));
            Some(key)
        }
        _ => None,
    };
    let row = TaskRow {
        task_id: task_id.clone(),
        tool: name.to_owned(),
        workspace_id,
        operation_key,
        process_id: None,
        owner: None,
        state: TaskState::Working,
        status_message: None,
        result: None,
        error: None,
        cancel_requested: false,
        approval_id: None,
        input_requests: None,
        ttl_ms: None,
        created_at_ms: 0,
        updated_at_ms: 0,
    };
    // Committed before the answer: the task exists once the client hears its id.
    let row = t.gateway.task_create(row).await.map_err(ledger_error)?;
    let cancel = t.running.add(&task_id);
    t.running.watch(&t.gateway);
    let (t2, tool_name, started) = (t.clone(), name.to_owned(), Instant::now());
    #[cfg(feature = "conformance-fixtures")]
    let ask = input::Ask::new(&t.gateway, &t.running, &task_id);
    let work = async move {
        let g = &t2.gateway;
        #[cfg(feature = "conformance-fixtures")]
        let step = match crate::task_fixtures::is_task(&tool_name) {
            true => crate::task_fixtures::work(&tool_name, args, cancel, ask).await,
            false => run::work(g, &task_id, &tool_name, args, cancel, asks).await,
        };
        #[cfg(not(feature = "conformance-fixtures"))]
        let step = run::work(g, &task_id, &tool_name, args, cancel, asks).await;
        finish(&t2, &task_id, &tool_name, started, step).await;
    };
    tokio::spawn(work.instrument(tracing::Span::current()));
    Ok(CallToolResponse::Task(CreateTaskResult::new(wire::task(&row))))
}

/// Records where a task's work ended (settled, or waiting for input) and counts it.
pub(crate) async fn finish(
    t: &Tasks,
    task_id: &str,
    tool: &str,
    started: Instant,
    step: run::Step,
) {
    t.running.remove(task_id);
    let code = match step {
        run::Step::Asked => metrics::INPUT_REQUIRED,
        run::Step::Settle(settle) => {
            let code = outcome(&settle);
            if let Err(e) = t.gateway.task_settle(task_id.to_owned(), settle).await {
                tracing::warn!(task_id, error = %e, "the task's settlement was not recorded");
            }
            code
        }
    };
    let took = started.elapsed();
    if let Some(name) = counted(tool) {
        t.metrics.call(name, code, took);
    }
    tracing::debug!(task_id, code, took_ms = took.as_millis() as u64, "task answered");
}

/// A settlement's outcome label: `OK`, the tool's error code, `CANCELLED`, or a failed
/// task's code (`INTERNAL` when its error names none).
fn outcome(settle: &TaskSettle) -> &'static str {
    let parse = |text: Option<&str>| serde_json::from_str::<Value>(text.unwrap_or("null")).ok();
    let code_of = |body: &Value| {
        serde_json::from_value::<ErrorCode>(body["code"].clone()).map(ErrorCode::as_str)
    };
    match settle.state {
        TaskState::Completed => {
            let result = parse(settle.result.as_deref()).unwrap_or_default();
            if result["isError"] != true {
                return metrics::OK;
            }
            let text = result["content"][0]["text"].as_str();
            parse(text).and_then(|body| code_of(&body).ok()).unwrap_or(ErrorCode::Internal.as_str())
        }
        TaskState::Failed => {
            let error = parse(settle.error.as_deref()).unwrap_or_default();
            code_of(&error["data"]).unwrap_or(ErrorCode::Internal.as_str())
        }
        TaskState::Cancelled => metrics::CANCELLED,
        TaskState::Working | TaskState::InputRequired => metrics::INPUT_REQUIRED,
    }
}

/// `tasks/get`: the task as the ledger has it, settled first when its server is gone (a
/// task waiting on a hold is taken over and waits on).
pub(crate) async fn get(gateway: &Gateway, task_id: String) -> Result<GetTaskResult, McpError> {
    let row = known(gateway, task_id.clone()).await?;
    let waits_on_hold = row.state == TaskState::InputRequired && row.approval_id.is_some();
    let row = match gateway.task_take_over(&row).await.map_err(ledger_error)? {
        true if waits_on_hold => {
            tracing::info!(task_id, "a task waiting on a hold is taken over from a server gone");
            known(gateway, task_id).await?
        }
        true => {
            let settle = orphaned(gateway, &row).await;
            gateway.task_settle(task_id.clone(), settle).await.map_err(ledger_error)?;
            known(gateway, task_id).await?
        }
        false => row,
    };
    Ok(GetTaskResult::new(wire::detailed(&row)))
}

/// `tasks/cancel`: records the request; the server running the task stops it (this one at
/// once, another sharing the ledger when it next reads its cancels), and a task waiting for
/// input, where nothing runs, is settled `cancelled` here and its hold withdrawn. An empty acknowledgement whether
/// or not it had settled (the next `tasks/get` tells).
pub(crate) async fn cancel(t: &Tasks, task_id: String) -> Result<(), McpError> {
    let row = known(&t.gateway, task_id.clone()).await?;
    if row.state.is_terminal() {
        return Ok(());
    }
    t.gateway.task_cancel(task_id.clone()).await.map_err(ledger_error)?;
    if !t.running.cancel(&task_id) && row.state == TaskState::InputRequired {
        let settle = run::cancelled("tasks/cancel: it waited for input; nothing of it ran");
        t.gateway.task_cancel_waiting(task_id, settle).await.map_err(ledger_error)?;
    }
    Ok(())
}

pub(crate) async fn known(gateway: &Gateway, task_id: String) -> Result<TaskRow, McpError> {
    match gateway.task(task_id.clone()).await.map_err(ledger_error)? {
        Some(row) => Ok(row),
        None => Err(McpError::invalid_params(
            format!("unknown task: {task_id}"),
            Some(json!({"taskId": task_id})),
        )),
    }
}

/// How a task whose server exited settles: a patch task as recovery settled its operation
/// (`operation_status` settles it first when it is still unfinished); any other `failed`.
async fn orphaned(gateway: &Gateway, row: &TaskRow) -> TaskSettle {
    if row.tool == tool::APPLY_PATCH
        && let Some(key) = &row.operation_key
    {
        let p = OperationStatusParams {
            operation_id: None,
            operation_key: Some(key.clone()),
            workspace_id: row.workspace_id.clone(),
        };
        if let Ok(status) = gateway.operation_status(p).await {
            let mut settle = run::completed(serde_json::to_value(status));
            settle.status_message = Some(
                "its server exited; settled from the ledger as recovery settled the operation"
                    .to_owned(),
            );
            return settle;
        }
        return interrupted(
            "its server exited before the patch was recorded: nothing was written; call \
             apply_patch again",
        );
    }
    interrupted(&format!(
        "its server exited before {} finished; a command or search is never rerun (its \
         process ended with that server), and a revert's outcome is in operation_status",
        row.tool
    ))
}

/// `failed` with `TASK_INTERRUPTED`.
fn interrupted(message: &str) -> TaskSettle {
    let body = ErrorBody::new(ErrorCode::TaskInterrupted, format!("task interrupted: {message}"));
    run::failed(-32603, &body.message.clone(), serde_json::to_value(&body).ok())
}

#[cfg(test)]
mod tests;
