//! The conformance suite's fixtures of the Tasks extension: `greet` (never a task),
//! `slow_compute` (a task of `seconds` seconds, cancelled by `tasks/cancel`), `failing_job`
//! (a task that must be one: its tool error after about a second), `protocol_error_job`
//! (a task that fails with a protocol-level error), `confirm_delete` and `multi_input` (tasks
//! that wait in `input_required` for one elicitation, or two at once answered one by one),
//! and `test_tool_with_task` (asks a name through MRTR in the call, then runs as a task whose
//! result carries it). Built only with `conformance-fixtures`.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock,
    InputRequiredResult, JsonObject, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::tasks::input::Ask;
use crate::tasks::run::{Step, cancelled, failed, settle_completed};

const GREET: &str = "greet";
const SLOW_COMPUTE: &str = "slow_compute";
const FAILING_JOB: &str = "failing_job";
const PROTOCOL_ERROR_JOB: &str = "protocol_error_job";
const CONFIRM_DELETE: &str = "confirm_delete";
const MULTI_INPUT: &str = "multi_input";
const TOOL_WITH_TASK: &str = "test_tool_with_task";

/// Whether the fixture `name` runs as a task.
pub(crate) fn is_task(name: &str) -> bool {
    matches!(
        name,
        SLOW_COMPUTE
            | FAILING_JOB
            | PROTOCOL_ERROR_JOB
            | CONFIRM_DELETE
            | MULTI_INPUT
            | TOOL_WITH_TASK
    )
}

/// The arguments a task starts with, or the call's own answer before any task:
/// `test_tool_with_task` asks the name first (`input_required`), and its task gets the name.
pub(crate) fn before_task(
    request: &CallToolRequestParams,
) -> Result<Option<JsonObject>, Result<CallToolResponse, McpError>> {
    if request.name != TOOL_WITH_TASK {
        return Ok(request.arguments.clone());
    }
    let given = request.input_responses.as_ref().and_then(|r| r.get("user_name"));
    let name = given.and_then(|answer| answer["content"]["name"].as_str());
    match name {
        Some(name) => Ok(json!({"user_name": name}).as_object().cloned()),
        None => {
            let ask = json!({"user_name": elicit("What is your name?", "name", "string")});
            let requests = serde_json::from_value(ask).map_err(|e| {
                Err(McpError::internal_error(format!("the fixture's input request: {e}"), None))
            })?;
            Err(Ok(InputRequiredResult::new(Some(requests), None).into()))
        }
    }
}

fn elicit(message: &str, field: &str, kind: &str) -> Value {
    json!({"method": "elicitation/create", "params": {"mode": "form", "message": message,
        "requestedSchema": {"type": "object", "properties": {field: {"type": kind}},
            "required": [field]}}})
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
        json!({"name": CONFIRM_DELETE, "description": "A task that asks before it deletes",
               "inputSchema": {"type": "object", "properties": {"filename": {"type": "string"}}}}),
        json!({"name": MULTI_INPUT, "description": "A task that asks two things at once",
               "inputSchema": {"type": "object", "properties": {}}}),
        json!({"name": TOOL_WITH_TASK, "description": "Asks a name, then greets in a task",
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
        // Tasks that must be ones.
        CONFIRM_DELETE | MULTI_INPUT | TOOL_WITH_TASK => {
            Err(McpError::missing_required_client_capability(
                ClientCapabilities::builder().enable_tasks().build(),
            ))
        }
        _ => return None,
    })
}

/// A fixture's work as a task.
pub(crate) async fn work(
    name: &str,
    args: JsonObject,
    cancel: CancellationToken,
    ask: Ask,
) -> Step {
    let result = |text: String, is_error: bool| {
        settle_completed(json!({"content": [{"type": "text", "text": text}], "isError": is_error}))
    };
    Step::Settle(match name {
        SLOW_COMPUTE => tokio::select! {
            () = tokio::time::sleep(seconds(&args)) => result(done(&args), false),
            () = cancel.cancelled() => cancelled("tasks/cancel stopped it"),
        },
        FAILING_JOB => {
            tokio::time::sleep(Duration::from_secs(1)).await;
            result("failing_job: the job failed".to_owned(), true)
        }
        CONFIRM_DELETE => {
            let file = args.get("filename").and_then(Value::as_str).unwrap_or("the file");
            let asked =
                json!({"confirm": elicit(&format!("Delete {file}?"), "confirm", "boolean")});
            match gather(ask, asked, &cancel).await {
                Some(answers) if answers["confirm"]["content"]["confirm"] == true => {
                    result(format!("Deleted {file}"), false)
                }
                Some(_) => result(format!("Kept {file}"), false),
                None => cancelled("tasks/cancel stopped it while it waited"),
            }
        }
        MULTI_INPUT => {
            let asked = json!({"name": elicit("Your name?", "name", "string"),
                               "confirm": elicit("Go ahead?", "confirm", "boolean")});
            match gather(ask, asked, &cancel).await {
                Some(answers) => result(format!("multi_input: both answered: {answers}"), false),
                None => cancelled("tasks/cancel stopped it while it waited"),
            }
        }
        TOOL_WITH_TASK => {
            let name = args.get("user_name").and_then(Value::as_str).unwrap_or("nobody");
            result(format!("Hello, {name}! (asked before the task)"), false)
        }
        _ => failed(-32603, "protocol_error_job: an internal error", None),
    })
}

/// Asks `asked` (key to request) and waits until each is answered: the answers by key;
/// `None` when the task was cancelled first.
async fn gather(mut ask: Ask, asked: Value, cancel: &CancellationToken) -> Option<Value> {
    let mut pending: Vec<String> = asked.as_object()?.keys().cloned().collect();
    if let Err(e) = ask.post(&asked).await {
        tracing::warn!(error = %e, "a fixture task's input requests were not recorded");
    }
    let mut answers = serde_json::Map::new();
    while !pending.is_empty() {
        let delivered = tokio::select! {
            delivered = ask.next() => delivered?,
            () = cancel.cancelled() => return None,
        };
        for (key, answer) in delivered {
            pending.retain(|k| *k != key);
            answers.insert(key, answer);
        }
    }
    Some(Value::Object(answers))
}
