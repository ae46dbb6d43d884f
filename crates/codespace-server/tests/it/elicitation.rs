//! A held call asks the person through the client's elicitation (the official Python SDK's
//! callback): accept grants and runs it in the same call; decline (or an unticked grant)
//! denies it (`APPROVAL_DENIED`, then and on a later resume); cancel, a late answer and an abandoned call leave it pending. The hold moves
//! exactly as `approval_resolve` and `operation_resume` move it.

use serde_json::Value;

use crate::approvals::{Holds, error_body};
use crate::support::bin;

/// Runs `python_elicit.py` in `mode` against workspace `c` (approvals=confirm).
fn elicit(h: &Holds, mode: &str) -> Value {
    elicit_on(h, mode, "a.txt")
}

/// [`elicit`], the patch updating `file` instead of `a.txt`.
fn elicit_on(h: &Holds, mode: &str, file: &str) -> Value {
    let config = h.env.config();
    h.python("python_elicit.py", &[bin(), config.to_str().unwrap(), "c", mode, file], "1")
}

#[test]
fn accepting_grants_and_runs_the_change_in_the_same_call() {
    let h = Holds::new();
    let seen = elicit(&h, "accept");
    assert_eq!(seen["is_error"], false, "{seen}");
    assert_eq!(seen["result"]["status"], "applied", "the tool's own result: {seen}");
    assert_eq!(h.file("c"), "top\nelicited\n");
    let asked = &seen["seen"][0];
    let message = asked["message"].as_str().unwrap();
    assert!(
        message.contains("update a.txt (+1 -0)") && message.contains("workspace c"),
        "{message}"
    );
    assert!(
        message
            .contains("The patch:\n*** Begin Patch\n*** Update File: a.txt\n@@\n top\n+elicited\n"),
        "the patch itself: {message}"
    );
    assert_eq!(asked["schema"]["properties"]["grant"]["type"], "boolean", "{asked}");
    let hold = h.only_hold();
    assert_eq!(hold["state"], "consumed");
    assert_eq!(hold["operation_id"], seen["result"]["operation_id"], "{hold}");
}

#[tokio::test]
async fn declining_denies_the_hold() {
    for mode in ["decline", "untick"] {
        let h = Holds::new();
        let seen = elicit(&h, mode);
        let body = error_body(&seen);
        assert_eq!(body["code"], "APPROVAL_DENIED", "{mode}: {body}");
        assert!(body["message"].as_str().unwrap().contains("new hold"), "{mode}: {body}");
        let hold = h.only_hold();
        assert_eq!(hold["state"], "denied", "{mode}");
        assert_eq!(body["approval_id"], hold["approval_id"], "{mode}");
        assert_eq!(h.file("c"), "top\n", "{mode}");
        // A later resume of the denied hold answers the same code, not a conflict.
        let client = h.client().await;
        let args = serde_json::json!({"approval_id": hold["approval_id"]});
        crate::support::refused(&client, "operation_resume", args, "APPROVAL_DENIED").await;
        client.cancel().await.unwrap();
    }
}

#[test]
fn cancel_timeout_and_an_abandoned_call_leave_the_hold_pending() {
    for mode in ["cancel", "late"] {
        let h = Holds::new();
        let seen = elicit(&h, mode);
        assert_eq!(seen["seen"].as_array().unwrap().len(), 1, "{mode}: asked once: {seen}");
        let body = error_body(&seen);
        assert_eq!(body["code"], "APPROVAL_REQUIRED", "{mode}: {body}");
        assert!(body["message"].as_str().unwrap().contains("(pending)"), "{mode}: {body}");
        let hold = h.only_hold();
        assert_eq!(hold["state"], "pending", "{mode}: {hold}");
        assert_eq!(body["approval_id"], hold["approval_id"]);
        assert_eq!(h.file("c"), "top\n", "{mode}");
    }
    let h = Holds::new();
    let seen = elicit(&h, "abandon");
    assert_eq!(
        (seen["abandoned"].clone(), seen["after"].clone()),
        (Value::Bool(true), Value::Bool(true)),
        "{seen}"
    );
    assert_eq!(h.only_hold()["state"], "pending");
    assert_eq!(h.file("c"), "top\n");
}

/// The question shows a name's bidirectional mark written out, never the mark itself.
#[test]
fn the_question_shows_hidden_characters_written_out() {
    let h = Holds::new();
    let name = "readme\u{202E}txt.hs";
    std::fs::write(h.root("c").join(name), "top\n").unwrap();
    let seen = elicit_on(&h, "decline", name);
    let message = seen["seen"][0]["message"].as_str().unwrap();
    assert!(message.contains("update readme\\u{202E}txt.hs (+1 -0)"), "{message}");
    assert!(!message.contains('\u{202E}'), "{message}");
    assert_eq!(error_body(&seen)["code"], "APPROVAL_DENIED");
}

/// A held revert is put to the person as a patch is, and accepting runs it in the call.
#[test]
fn accepting_a_held_revert_runs_it_in_the_same_call() {
    let h = Holds::new();
    let seen = elicit(&h, "revert");
    assert_eq!(seen["is_error"], false, "{seen}");
    assert_eq!(seen["result"]["status"], "applied", "the revert's own result: {seen}");
    assert!(seen["result"]["reverts"].is_string(), "{seen}");
    assert_eq!(h.file("c"), "top\n");
    let asked = seen["seen"][1]["message"].as_str().unwrap();
    assert!(asked.contains("revert operation") && asked.contains("restore a.txt"), "{asked}");
}
