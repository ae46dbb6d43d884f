//! Unit tests of a task's outcome label in the metrics: `OK`, the tool's error code of a
//! refusal, `CANCELLED`, and a failed task's code.

use codespace_protocol::{ErrorBody, ErrorCode};
use codespace_types::TaskState;
use serde_json::json;

use super::outcome;
use super::run::{cancelled, completed, failed, settle_completed};

#[test]
fn a_settled_task_is_labelled_by_its_outcome() {
    assert_eq!(outcome(&completed(Ok(json!({"status": "applied"})))), "OK");
    let body = ErrorBody::new(ErrorCode::ApprovalDenied, "denied".to_owned());
    let text = serde_json::to_string(&body).unwrap();
    let refused =
        settle_completed(json!({"content": [{"type": "text", "text": text}], "isError": true}));
    assert_eq!(outcome(&refused), "APPROVAL_DENIED");
    let unreadable =
        settle_completed(json!({"content": [{"type": "text", "text": "?"}], "isError": true}));
    assert_eq!(outcome(&unreadable), "INTERNAL");
    assert_eq!(outcome(&cancelled("stopped")), "CANCELLED");
    let interrupted = ErrorBody::new(ErrorCode::TaskInterrupted, "gone".to_owned());
    let data = serde_json::to_value(&interrupted).ok();
    assert_eq!(outcome(&failed(-32603, "gone", data)), "TASK_INTERRUPTED");
    assert_eq!(outcome(&failed(-32603, "bare", None)), "INTERNAL");
    assert_eq!(cancelled("x").state, TaskState::Cancelled);
}
