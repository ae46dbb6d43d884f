//! The background work of one task, to its settlement or to a hold it waits on:
//! `apply_patch` and `operation_revert` run to their end (a patch is never cut short
//! mid-write); `exec_command` starts the command, notes its process in the ledger and waits
//! for its exit, or on `tasks/cancel` ends its whole tree with the workspace's grace; `grep`
//! stops its walk on `tasks/cancel`.

use codespace_fs::{Cancel, Progress};
use codespace_gateway::{ExecWait, Gateway, GatewayError};
use codespace_protocol::{
    ExecCommandParams, ExecCommandResult, GrepParams, TerminateProcessParams, tool,
};
use codespace_store::TaskSettle;
use codespace_types::{ProcessState, TaskState};
use rmcp::model::JsonObject;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The longest single wait of a command task for its exit (the gateway's own cap).
const WAIT_SLICE_MS: u64 = 55_000;

/// Where a task's work ended.
pub(crate) enum Step {
    /// It settles so.
    Settle(TaskSettle),
    /// It waits in `input_required` (recorded); nothing of it runs until an answer comes.
    Asked,
}

/// Runs the task's tool with `args` to its settlement, or to a hold it waits on (`asks`: the
/// client answers elicitations, so a fresh hold is put to the person in `inputRequests`).
pub(super) async fn work(
    g: &Gateway,
    task_id: &str,
    name: &str,
    args: JsonObject,
    cancel: CancellationToken,
    asks: bool,
) -> Step {
    let held = |first| super::input::held(g, task_id, first, asks, &cancel);
    match name {
        tool::APPLY_PATCH => match decode(name, args) {
            Ok(p) => held(g.apply_patch(p).await.map(to_value)).await,
            Err(e) => Step::Settle(tool_result::<()>(Err(e))),
        },
        tool::OPERATION_REVERT => match decode(name, args) {
            Ok(p) => held(g.operation_revert(p).await.map(to_value)).await,
            Err(e) => Step::Settle(tool_result::<()>(Err(e))),
        },
        tool::EXEC_COMMAND => match decode::<ExecCommandParams>(name, args) {
            Ok(p) => {
                let wait = slice(&p);
                match g.exec_command(p).await {
                    Ok(started) => Step::Settle(command(g, task_id, started, wait, cancel).await),
                    Err(e) => held(Err(e)).await,
                }
            }
            Err(e) => Step::Settle(tool_result::<()>(Err(e))),
        },
        tool::GREP => match decode(name, args) {
            Ok(p) => Step::Settle(grep(g, p, cancel).await),
            Err(e) => Step::Settle(tool_result::<()>(Err(e))),
        },
        other => Step::Settle(failed(-32603, &format!("{other} does not run as a task"), None)),
    }
}

fn to_value<T: Serialize>(value: T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// What a command task waits for in one slice of its wait.
pub(super) fn slice(p: &ExecCommandParams) -> ExecWait {
    let mut slice = p.clone();
    slice.wait_ms = Some(WAIT_SLICE_MS);
    ExecWait::from(&slice)
}

async fn grep(g: &Gateway, p: GrepParams, cancel: CancellationToken) -> TaskSettle {
    let flag = Cancel::new();
    let raise = flag.clone();
    let watch = tokio::spawn(async move {
        cancel.cancelled().await;
        raise.cancel();
    });
    let found = g.grep(p, flag.clone(), Progress::new()).await;
    watch.abort();
    match flag.is_cancelled() {
        true => cancelled("tasks/cancel stopped the search"),
        false => tool_result(found),
    }
}

fn decode<T: DeserializeOwned>(name: &str, args: JsonObject) -> Result<T, GatewayError> {
    serde_json::from_value(Value::Object(args)).map_err(|e| GatewayError::InvalidArguments {
        tool: name.to_owned(),
        detail: e.to_string(),
    })
}

/// A started command task: its process noted, then waited for; `tasks/cancel` ends its
/// tree with the workspace's grace.
pub(super) async fn command(
    g: &Gateway,
    task_id: &str,
    started: ExecCommandResult,
    wait: ExecWait,
    cancel: CancellationToken,
) -> TaskSettle {
    let process = Some(started.process_id.clone());
    if let Err(e) = g.task_progress(task_id.to_owned(), TaskState::Working, None, process).await {
        tracing::warn!(task_id, error = %e, "the task's process was not recorded");
    }
    let mut stopped = false;
    loop {
        let answer = tokio::select! {
            waited = g.exec_wait(started.clone(), wait, std::future::pending()) => waited,
            () = cancel.cancelled(), if !stopped => {
                stopped = true;
                let stop = TerminateProcessParams { process_id: started.process_id.clone(), grace_ms: None };
                if let Err(e) = g.terminate_process(stop).await {
                    tracing::warn!(task_id, error = %e, "ending the cancelled task's command failed");
                }
                continue;
            }
        };
        match answer {
            Ok(done) if done.state == Some(ProcessState::Running) => continue,
            Ok(_) if stopped => {
                return cancelled("tasks/cancel ended the command and its whole tree");
            }
            other => return tool_result(other),
        }
    }
}

/// `completed` with the tool's result, or with its refusal as a tool error (`isError`).
pub(super) fn tool_result<T: Serialize>(result: Result<T, GatewayError>) -> TaskSettle {
    match result {
        Ok(value) => completed(serde_json::to_value(value)),
        Err(e) => {
            let body = serde_json::to_value(e.to_body()).unwrap_or(Value::Null);
            let text = body.to_string();
            settle_completed(json!({"content": [{"type": "text", "text": text}], "isError": true}))
        }
    }
}

/// `completed` with `value` as structured content and its text copy.
pub(super) fn completed(value: serde_json::Result<Value>) -> TaskSettle {
    match value {
        Ok(value) => settle_completed(json!({
            "content": [{"type": "text", "text": value.to_string()}],
            "structuredContent": value,
            "isError": false,
        })),
        Err(e) => failed(-32603, &format!("result serialization failed: {e}"), None),
    }
}

pub(crate) fn settle_completed(result: Value) -> TaskSettle {
    TaskSettle {
        state: TaskState::Completed,
        status_message: None,
        result: Some(result.to_string()),
        error: None,
    }
}

/// `failed` with a JSON-RPC error.
pub(crate) fn failed(code: i64, message: &str, data: Option<Value>) -> TaskSettle {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    TaskSettle {
        state: TaskState::Failed,
        status_message: Some(message.to_owned()),
        result: None,
        error: Some(error.to_string()),
    }
}

pub(crate) fn cancelled(message: &str) -> TaskSettle {
    TaskSettle {
        state: TaskState::Cancelled,
        status_message: Some(message.to_owned()),
        result: None,
        error: None,
    }
}

/// Unix milliseconds as ISO-8601 UTC (`2026-07-28T10:30:00.000Z`).
pub(crate) fn iso8601(ms: i64) -> String {
    let (secs, milli) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (rest / 3600, rest % 3600 / 60, rest % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}
