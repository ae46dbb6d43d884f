//! A held call on MCP 2026-07-28 (the official Python SDK in its default `auto` mode, with
//! an elicitation callback): the call answers `input_required`, the SDK asks the person
//! through the callback and retries with the answer and the sealed `requestState`; a grant
//! runs the change in that retry, a decline denies the hold. A changed, cut or borrowed
//! `requestState` is refused (`REQUEST_STATE_INVALID`) and an expired one
//! (`REQUEST_STATE_EXPIRED`): nothing runs, no decision is recorded. The state outlives a
//! restart of the server (its key is in the state directory).

use serde_json::Value;

use crate::approvals::{Holds, error_body};
use crate::support::bin;

/// Runs `python_mrtr.py` in `mode` against workspace `c` (approvals=confirm); a question's
/// state expires after `ttl_secs`.
fn mrtr(h: &Holds, mode: &str, ttl_secs: &str) -> Value {
    mrtr_with(h, mode, ttl_secs, &[])
}

/// [`mrtr`] with more arguments: the server's URL in place of the binary's path, say.
fn mrtr_with(h: &Holds, mode: &str, ttl_secs: &str, more: &[&str]) -> Value {
    let config = h.env.config();
    let target = match more.first() {
        Some(url) if url.starts_with("http") => *url,
        Some(_) | None => bin(),
    };
    let rest = more.iter().filter(|m| !m.starts_with("http"));
    let mut args = vec![target, config.to_str().unwrap(), "c", mode];
    args.extend(rest);
    let seen = h.python("python_mrtr.py", &args, ttl_secs);
    assert_eq!(seen["protocol"], "2026-07-28", "the SDK's auto mode speaks 2026-07-28: {seen}");
    seen
}

#[test]
fn a_held_patch_granted_in_the_prompt_is_applied_in_the_retry() {
    let h = Holds::new();
    let seen = mrtr(&h, "accept", "600");
    let call = &seen["call"];
    assert_eq!(call["is_error"], false, "{seen}");
    assert_eq!(call["result"]["status"], "applied", "the tool's own result: {seen}");
    assert_eq!(h.file("c"), "top\nasked\n");
    let asked = &seen["seen"].as_array().unwrap()[..];
    assert_eq!(asked.len(), 1, "asked once: {seen}");
    let message = asked[0]["message"].as_str().unwrap();
    assert!(
        message.contains("update a.txt (+1 -0)") && message.contains("workspace c"),
        "{message}"
    );
    assert!(
        message.contains(
            "The patch:\n*** Begin Patch\n*** Update File: a.txt\n@@\n top\n+asked\n*** End Patch"
        ),
        "the patch itself: {message}"
    );
    assert_eq!(asked[0]["schema"]["properties"]["grant"]["type"], "boolean", "{seen}");
    let hold = h.only_hold();
    assert_eq!(hold["state"], "consumed");
    assert_eq!(hold["operation_id"], call["result"]["operation_id"], "{hold}");
}

#[test]
fn a_held_patch_declined_in_the_prompt_is_denied() {
    let h = Holds::new();
    let seen = mrtr(&h, "decline", "600");
    let body = error_body(&seen["call"]);
    assert_eq!(body["code"], "APPROVAL_DENIED", "{body}");
    let hold = h.only_hold();
    assert_eq!(hold["state"], "denied");
    assert_eq!(body["approval_id"], hold["approval_id"]);
    assert_eq!(h.file("c"), "top\n");
}

#[test]
fn a_changed_cut_or_borrowed_request_state_is_refused_and_nothing_runs() {
    let h = Holds::new();
    let seen = mrtr(&h, "tamper", "600");
    assert_eq!(seen["first"]["input_required"], true, "{seen}");
    assert_eq!(seen["first"]["keys"], serde_json::json!(["codespace_hold"]), "{seen}");
    for retry in ["changed", "cut", "other_request"] {
        let body = error_body(&seen[retry]);
        assert_eq!(body["code"], "REQUEST_STATE_INVALID", "{retry}: {body}");
        assert!(body["message"].as_str().unwrap().contains("nothing ran"), "{retry}: {body}");
    }
    let message = error_body(&seen["other_request"])["message"].as_str().unwrap().to_owned();
    assert!(message.contains("made for another request"), "{message}");
    assert_eq!(h.file("c"), "top\n", "nothing was applied");
    assert_eq!(h.only_hold()["state"], "pending", "no decision was recorded");
}

#[test]
fn an_expired_request_state_is_refused_and_a_new_call_asks_again() {
    let h = Holds::new();
    let seen = mrtr(&h, "expire", "1");
    let body = error_body(&seen["late"]);
    assert_eq!(body["code"], "REQUEST_STATE_EXPIRED", "{body}");
    let hold = h.only_hold();
    assert_eq!(body["approval_id"], hold["approval_id"], "{body}");
    // The same request asked again reuses the pending hold, and the grant applies it once.
    assert_eq!(seen["again"]["result"]["status"], "applied", "{seen}");
    assert_eq!(h.file("c"), "top\nasked\n");
    assert_eq!(h.only_hold()["state"], "consumed");
}

/// A held revert is asked about and run in the retry as a patch is.
#[test]
fn a_held_revert_granted_in_the_prompt_runs_in_the_retry() {
    let h = Holds::new();
    let seen = mrtr(&h, "revert", "600");
    let call = &seen["call"];
    assert_eq!(call["result"]["status"], "applied", "the revert's own result: {seen}");
    assert!(call["result"]["reverts"].is_string(), "{seen}");
    assert_eq!(h.file("c"), "top\n");
    let asked = seen["seen"][1]["message"].as_str().unwrap();
    assert!(asked.contains("revert operation") && asked.contains("restore a.txt"), "{asked}");
}

/// A server with another state directory (so another key) refuses the state.
#[test]
fn a_request_state_made_under_another_key_is_refused() {
    let h = Holds::new();
    let other = tempfile::tempdir().unwrap();
    let seen = mrtr_with(&h, "foreign", "600", &[other.path().to_str().unwrap()]);
    assert_eq!(seen["first"]["input_required"], true, "{seen}");
    let body = error_body(&seen["after_restart"]);
    assert_eq!(body["code"], "REQUEST_STATE_INVALID", "{body}");
    assert!(body["message"].as_str().unwrap().contains("another server key"), "{body}");
    assert_eq!(h.file("c"), "top\n", "nothing was applied");
    assert_eq!(h.only_hold()["state"], "pending");
}

/// Over HTTP, on 2026-07-28 too: the question, the grant, the change applied in the retry.
#[test]
fn a_held_patch_is_granted_over_http() {
    let h = Holds::new();
    let db = h.db.display().to_string();
    let mut cmd = h.env.http_command(&["--no-auth"]);
    cmd.env("CODESPACE_OPERATIONS_DB", &db);
    let server = crate::support::HttpServer::start(cmd);
    let seen = mrtr_with(&h, "accept", "600", &[&server.url()]);
    assert_eq!(seen["call"]["result"]["status"], "applied", "{seen}");
    assert_eq!(seen["seen"].as_array().unwrap().len(), 1, "asked once: {seen}");
    assert_eq!(h.file("c"), "top\nasked\n");
    assert_eq!(h.only_hold()["state"], "consumed");
}

/// The state is sealed with the key in the state directory: a server started after the one
/// that asked opens it.
#[test]
fn a_question_asked_before_a_restart_is_answered_after_it() {
    let h = Holds::new();
    let seen = mrtr(&h, "restart", "600");
    assert_eq!(seen["first"]["input_required"], true, "{seen}");
    assert_eq!(seen["after_restart"]["result"]["status"], "applied", "{seen}");
    assert_eq!(h.file("c"), "top\nasked\n");
    assert_eq!(h.only_hold()["state"], "consumed");
}

#[test]
fn a_held_command_granted_in_the_prompt_runs_in_the_retry() {
    let h = Holds::new();
    let seen = mrtr(&h, "exec", "600");
    let call = &seen["call"];
    assert_eq!(call["is_error"], false, "{seen}");
    assert_eq!(call["result"]["exit_code"], 0, "waited for the command: {seen}");
    let ran = std::fs::read_to_string(h.root("c").join("ran.txt")).unwrap();
    assert_eq!(ran, "ran\n");
    let message = seen["seen"][0]["message"].as_str().unwrap();
    assert!(
        message.contains(r#"run ["sh","-c","echo ran > ran.txt"] in workspace c"#),
        "the argv and workspace: {message}"
    );
    assert_eq!(h.only_hold()["state"], "consumed");
}
