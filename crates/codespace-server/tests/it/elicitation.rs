//! A held call asks the person through the client's elicitation (the official Python SDK's
//! callback): accept grants and runs it in the same call; decline (or an unticked grant)
//! denies it (`APPROVAL_DENIED`, then and on a later resume); cancel, a late answer and an abandoned call leave it pending. The hold moves
//! exactly as `approval_resolve` and `operation_resume` move it.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::approvals::Holds;
use crate::support::{bin, codespace_vars};

/// Runs `python_elicit.py` in `mode` against workspace `c` (approvals=confirm).
fn elicit(h: &Holds, mode: &str) -> Value {
    elicit_on(h, mode, "a.txt")
}

/// [`elicit`], the patch updating `file` instead of `a.txt`.
fn elicit_on(h: &Holds, mode: &str, file: &str) -> Value {
    let python = crate::interop::tool("CODESPACE_PYTHON", "target/test-tools/venv/bin/python");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/python_elicit.py");
    let mut cmd = Command::new(&python);
    for name in codespace_vars() {
        cmd.env_remove(name);
    }
    let out = cmd
        .arg(script)
        .args([bin(), h.env.config().to_str().unwrap(), "c", mode, file])
        .env("XDG_STATE_HOME", h.env.state())
        .env("RUST_LOG", "warn")
        .env("CODESPACE_OPERATIONS_DB", &h.db)
        .env("CODESPACE_ELICITATION_TIMEOUT_SECS", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{mode}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(stdout.trim()).unwrap()
}

/// The one hold's state, from the operator CLI.
fn only_hold(h: &Holds) -> Value {
    let listed = h.cli(&["list", "--json"]);
    assert!(listed.status.success(), "{listed:?}");
    let rows: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1, "{rows}");
    rows[0].clone()
}

fn error_body(seen: &Value) -> Value {
    assert_eq!(seen["is_error"], true, "{seen}");
    serde_json::from_str(seen["text"].as_str().unwrap()).unwrap()
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
    let hold = only_hold(&h);
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
        let hold = only_hold(&h);
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
        let hold = only_hold(&h);
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
    assert_eq!(only_hold(&h)["state"], "pending");
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
