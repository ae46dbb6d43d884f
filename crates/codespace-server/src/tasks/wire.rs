//! A ledger task as the extension shows it: `Task` (in `CreateTaskResult`) and the
//! `DetailedTask` of `tasks/get`, its payload by state (the unanswered `inputRequests` of a
//! task in `input_required`, the result of a completed one, the error of a failed one).

use codespace_store::TaskRow;
use codespace_types::TaskState;
use rmcp::model::{DetailedTask, InputRequests, JsonObject, Task, TaskPayload, TaskStatus};
use serde_json::Value;

/// How often a client is asked to poll `tasks/get`.
const POLL_INTERVAL_MS: u64 = 500;

/// The base `Task` of `row`.
pub(super) fn task(row: &TaskRow) -> Task {
    let status = match row.state {
        TaskState::Working => TaskStatus::Working,
        TaskState::InputRequired => TaskStatus::InputRequired,
        TaskState::Completed => TaskStatus::Completed,
        TaskState::Failed => TaskStatus::Failed,
        TaskState::Cancelled => TaskStatus::Cancelled,
    };
    let (created, updated) =
        (super::run::iso8601(row.created_at_ms), super::run::iso8601(row.updated_at_ms));
    let mut task =
        Task::new(&row.task_id, status, created, updated).with_poll_interval_ms(POLL_INTERVAL_MS);
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

/// The requests a waiting task's row keeps; empty when they do not read.
pub(super) fn requests(row: &TaskRow) -> InputRequests {
    let text = row.input_requests.as_deref().unwrap_or("{}");
    serde_json::from_str(text).unwrap_or_else(|e| {
        tracing::warn!(task_id = %row.task_id, error = %e, "a task's input requests do not read");
        InputRequests::new()
    })
}

/// The `DetailedTask` of `row`.
pub(super) fn detailed(row: &TaskRow) -> DetailedTask {
    let payload = match row.state {
        TaskState::Working => TaskPayload::Working,
        TaskState::InputRequired => TaskPayload::InputRequired { input_requests: requests(row) },
        TaskState::Completed => TaskPayload::Completed { result: object(row.result.as_deref()) },
        TaskState::Failed => TaskPayload::Failed { error: object(row.error.as_deref()) },
        TaskState::Cancelled => TaskPayload::Cancelled,
    };
    DetailedTask::new(task(row), payload)
}
