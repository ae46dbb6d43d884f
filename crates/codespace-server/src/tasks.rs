//! The MCP Tasks extension (`io.modelcontextprotocol/tasks`): a `tools/call` of a long tool
//! (`apply_patch`, `exec_command`, `grep`) from a client that declared the extension runs as
//! a task. The task is written to the ledger before `CreateTaskResult` answers the call, so
//! `tasks/get` finds it at once and after a restart; its work runs in the background and
//! settles it once (`completed` with the tool's result, a tool error included; `failed` for
//! a protocol-level failure; `cancelled` when `tasks/cancel` stopped it first).
//!
//! A task whose server exited is settled by the next server that reads it (`tasks/get`): a
//! patch task from its operation as recovery settles it (the task's `operation_key` finds
//! it), a command or search task `failed` with `TASK_INTERRUPTED` (a command is never
//! rerun: its process ended with its server). `tasks/cancel` of a running command ends its
//! whole tree with the workspace's `kill_grace_ms`. A hold met inside a task answers
//! `APPROVAL_REQUIRED` as the task's result (the person decides through the hold's own
//! tools or the inbox).
//!
//! `run.rs`: the background work of each tool.

pub(crate) mod run;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use codespace_gateway::{Gateway, GatewayError};
use codespace_protocol::{ErrorBody, ErrorCode, OperationStatusParams, tool};
use codespace_store::{TaskRow, TaskSettle};
use codespace_types::TaskState;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CreateTaskResult, DetailedTask, GetTaskResult,
    JsonObject, Task, TaskPayload, TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// How often a client is asked to poll `tasks/get`.
const POLL_INTERVAL_MS: u64 = 500;

/// The tasks this server runs now: each one's cancel signal, raised by `tasks/cancel`.
#[derive(Default)]
pub(crate) struct Running(Mutex<HashMap<String, CancellationToken>>);

impl Running {
    fn add(&self, task_id: &str) -> CancellationToken {
        let token = CancellationToken::new();
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(task_id.to_owned(), token.clone());
        token
    }

    fn remove(&self, task_id: &str) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(task_id);
    }

    fn cancel(&self, task_id: &str) {
        if let Some(token) = self.0.lock().unwrap_or_else(PoisonError::into_inner).get(task_id) {
            token.cancel();
        }
    }
}

/// Whether the tool `name` runs as a task when the client declared the extension.
fn runs_as_task(name: &str) -> bool {
    #[cfg(feature = "conformance-fixtures")]
    if crate::task_fixtures::is_task(name) {
        return true;
    }
    matches!(name, tool::APPLY_PATCH | tool::EXEC_COMMAND | tool::GREP)
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
    gateway: &Arc<Gateway>,
    running: &Arc<Running>,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Option<Result<CallToolResponse, McpError>> {
    let name = request.name.as_ref();
    if !runs_as_task(name) || !declared(context) {
        return None;
    }
    Some(create(gateway, running, name, request.arguments.clone()).await)
}

async fn create(
    gateway: &Arc<Gateway>,
    running: &Arc<Running>,
    name: &str,
    args: Option<JsonObject>,
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
        ttl_ms: None,
        created_at_ms: 0,
        updated_at_ms: 0,
    };
    // Committed before the answer: the task exists once the client hears its id.
    let row = gateway.task_create(row).await.map_err(ledger_error)?;
    let cancel = running.add(&task_id);
    let (g, r, tool_name) = (gateway.clone(), running.clone(), name.to_owned());
    tokio::spawn(async move {
        let settle = run::work(&g, &task_id, &tool_name, args, cancel).await;
        if let Err(e) = g.task_settle(task_id.clone(), settle).await {
            tracing::warn!(task_id, error = %e, "the task's settlement was not recorded");
        }
        r.remove(&task_id);
    });
    Ok(CallToolResponse::Task(CreateTaskResult::new(wire_task(&row))))
}

/// `tasks/get`: the task as the ledger has it, settled first when its server is gone.
pub(crate) async fn get(gateway: &Gateway, task_id: String) -> Result<GetTaskResult, McpError> {
    let row = known(gateway, task_id.clone()).await?;
    let row = match gateway.task_take_over(&row).await.map_err(ledger_error)? {
        true => {
            let settle = orphaned(gateway, &row).await;
            gateway.task_settle(task_id.clone(), settle).await.map_err(ledger_error)?;
            known(gateway, task_id).await?
        }
        false => row,
    };
    Ok(GetTaskResult::new(detailed(&row)))
}

/// `tasks/cancel`: records the request and stops the work when this server runs it; an
/// empty acknowledgement whether or not it had settled (the next `tasks/get` tells).
pub(crate) async fn cancel(
    gateway: &Gateway,
    running: &Running,
    task_id: String,
) -> Result<(), McpError> {
    let row = known(gateway, task_id.clone()).await?;
    if !row.state.is_terminal() {
        gateway.task_cancel(task_id.clone()).await.map_err(ledger_error)?;
        running.cancel(&task_id);
    }
    Ok(())
}

/// `tasks/update`: no task of this server waits for input (a hold answers
/// `APPROVAL_REQUIRED` as its result), so an update of a known task changes nothing.
pub(crate) async fn update(gateway: &Gateway, task_id: String) -> Result<(), McpError> {
    known(gateway, task_id).await.map(|_| ())
}

async fn known(gateway: &Gateway, task_id: String) -> Result<TaskRow, McpError> {
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
         process ended with that server)",
        row.tool
    ))
}

/// `failed` with `TASK_INTERRUPTED`.
fn interrupted(message: &str) -> TaskSettle {
    let body = ErrorBody::new(ErrorCode::TaskInterrupted, format!("task interrupted: {message}"));
    run::failed(-32603, &body.message.clone(), serde_json::to_value(&body).ok())
}

fn iso(ms: i64) -> String {
    crate::tasks::run::iso8601(ms)
}

fn wire_task(row: &TaskRow) -> Task {
    let status = match row.state {
        TaskState::Working => TaskStatus::Working,
        TaskState::InputRequired => TaskStatus::InputRequired,
        TaskState::Completed => TaskStatus::Completed,
        TaskState::Failed => TaskStatus::Failed,
        TaskState::Cancelled => TaskStatus::Cancelled,
    };
    let mut task = Task::new(&row.task_id, status, iso(row.created_at_ms), iso(row.updated_at_ms))
        .with_poll_interval_ms(POLL_INTERVAL_MS);
    task.ttl_ms = row.ttl_ms;
    if let Some(message) = &row.status_message {
        task = task.with_status_message(message);
    }
    task
}

fn object(text: Option<&str>) -> JsonObject {
    match text.map(serde_json::from_str::<Value>) {
        Some(Ok(Value::Object(o))) => o,
        _ => JsonObject::new(),
    }
}

fn detailed(row: &TaskRow) -> DetailedTask {
    let payload = match row.state {
        TaskState::Working => TaskPayload::Working,
        // No task of this server waits for input; a stored one reads as working.
        TaskState::InputRequired => TaskPayload::Working,
        TaskState::Completed => TaskPayload::Completed { result: object(row.result.as_deref()) },
        TaskState::Failed => TaskPayload::Failed { error: object(row.error.as_deref()) },
        TaskState::Cancelled => TaskPayload::Cancelled,
    };
    DetailedTask::new(wire_task(row), payload)
}
