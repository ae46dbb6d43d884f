//! The conformance suite's fixtures of the Tasks extension: `greet` (never a task),
//! `slow_compute` (a task of `seconds` seconds, cancelled by `tasks/cancel`), `failing_job`
//! (a task that must be one: its tool error after about a second) and `protocol_error_job`
//! (a task that fails with a protocol-level error). Built only with `conformance-fixtures`.

use std::time::Duration;

use codespace_store::TaskSettle;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock,
    JsonObject, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::tasks::run::{cancelled, failed, settle_completed};

const GREET: &str = "greet";
const SLOW_COMPUTE: &str = "slow_compute";
const FAILING_JOB: &str = "failing_job";
const PROTOCOL_ERROR_JOB: &str = "protocol_error_job";

/// Whether the fixture `name` runs as a task.
pub(crate) fn is_task(name: &str) -> bool {
    matches!(name, SLOW_COMPUTE | FAILING_JOB | PROTOCOL_ERROR_JOB)
}

pub(crate) fn tools() -> Vec<Tool> {
    let list = [
        json!({"name": GREET, "description": "Says hello (never a task)",
               "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}),
        json!({"name": SLOW_COMPUTE, "description": "Sleeps `seconds` seconds, then answers",
               "inputSchema": {"type": "object", "properties": {
                   "seconds": {"type": "number"}, "label": {"type": "string"}}}}),
        json!({"name": FAILING_JOB, "description": "A task that ends in a tool error",
               "inputSchema": {"type": "object", "properties": {}}}),
        json!({"name": PROTOCOL_ERROR_JOB, "description": "A task that fails",
               "inputSchema": {"type": "object", "properties": {}}}),
    ];
    list.into_iter().filter_map(|t| serde_json::from_value(t).ok()).collect()
}

fn seconds(args: &JsonObject) -> Duration {
    let s = args.get("seconds").and_then(Value::as_f64).unwrap_or(1.0);
    Duration::from_secs_f64(s.clamp(0.0, 600.0))
}

fn done(args: &JsonObject) -> String {
    let label = args.get("label").and_then(Value::as_str).unwrap_or("slow_compute");
    format!("{label}: computed after {} s", seconds(args).as_secs_f64())
}

/// A fixture called in line (the client did not declare tasks, or it is `greet`).
pub(crate) async fn call(
    request: &CallToolRequestParams,
    _context: &RequestContext<RoleServer>,
) -> Option<Result<CallToolResponse, McpError>> {
    let args = request.arguments.clone().unwrap_or_default();
    let text = |t: String| Ok(CallToolResult::success(vec![ContentBlock::text(t)]).into());
    Some(match request.name.as_ref() {
        GREET => {
            let name = args.get("name").and_then(Value::as_str).unwrap_or("World");
            text(format!("Hello, {name}!"))
        }
        SLOW_COMPUTE => {
            tokio::time::sleep(seconds(&args)).await;
            text(done(&args))
        }
        // Registered as a task that must be one.
        FAILING_JOB => Err(McpError::missing_required_client_capability(
            ClientCapabilities::builder().enable_tasks().build(),
        )),
        PROTOCOL_ERROR_JOB => {
            Err(McpError::internal_error("protocol_error_job always fails", None))
        }
        _ => return None,
    })
}

/// A fixture's work as a task.
pub(crate) async fn work(name: &str, args: JsonObject, cancel: CancellationToken) -> TaskSettle {
    let result = |text: String, is_error: bool| {
        settle_completed(json!({"content": [{"type": "text", "text": text}], "isError": is_error}))
    };
    match name {
        SLOW_COMPUTE => tokio::select! {
            () = tokio::time::sleep(seconds(&args)) => result(done(&args), false),
            () = cancel.cancelled() => cancelled("tasks/cancel stopped it"),
        },
        FAILING_JOB => {
            tokio::time::sleep(Duration::from_secs(1)).await;
            result("failing_job: the job failed".to_owned(), true)
        }
        _ => failed(-32603, "protocol_error_job: an internal error", None),
    }
}
