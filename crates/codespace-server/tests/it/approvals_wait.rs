//! `operation_resume` with `wait_ms` waits for a person's decision on a pending hold, made
//! by the operator CLI from another process on the same ledger: granted, it runs in the
//! same call; denied, `APPROVAL_DENIED` at once; still pending at the end of the wait,
//! `APPROVAL_CONFLICT` naming the person's ways to decide, and a progress token hears that
//! it still waits.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::approvals::{Holds, append};
use crate::support::{RawStdio, call, refused};

/// Far longer than a decision below takes, well under the cap.
const PATIENT: u64 = 30_000;

/// A held patch on workspace `c`: its hold's id.
async fn held(client: &crate::support::Client) -> String {
    let body = refused(client, "apply_patch", append("c", "waited"), "APPROVAL_REQUIRED").await;
    body["approval_id"].as_str().unwrap().to_owned()
}

/// `codespace approvals <decision> <id>` from another process, after `after`.
fn decide_later(
    h: &Holds,
    decision: &str,
    id: &str,
    after: Duration,
) -> std::thread::JoinHandle<()> {
    let mut cmd = h.env.command();
    cmd.args(["approvals", decision, id, "--operations-db"]).arg(&h.db);
    std::thread::spawn(move || {
        std::thread::sleep(after);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
    })
}

#[tokio::test]
async fn a_grant_from_the_cli_runs_the_hold_in_the_waiting_call() {
    let h = Holds::new();
    let client = h.client().await;
    let id = held(&client).await;
    let started = Instant::now();
    let cli = decide_later(&h, "grant", &id, Duration::from_millis(600));
    let args = json!({"approval_id": id, "wait_ms": PATIENT});
    let r = call(&client, "operation_resume", args).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(600), "it waited for the decision");
    assert_eq!(r["state"], "consumed", "{r}");
    assert_eq!(r["apply_patch"]["status"], "applied", "{r}");
    assert_eq!(h.file("c"), "top\nwaited\n");
    cli.join().unwrap();
    // A repeat returns the stored result at once.
    let again = call(&client, "operation_resume", json!({"approval_id": id, "wait_ms": PATIENT}))
        .await
        .unwrap();
    assert_eq!(again["apply_patch"]["operation_id"], r["apply_patch"]["operation_id"]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_resumed_command_waits_as_its_own_wait_ms_asked() {
    let h = Holds::new();
    let client = h.client().await;
    let exec = json!({
        "workspace_id": "c",
        "command": ["sh", "-c", "sleep 0.3; echo resumed-output"],
        "wait_ms": PATIENT,
    });
    let body = refused(&client, "exec_command", exec, "APPROVAL_REQUIRED").await;
    let id = body["approval_id"].as_str().unwrap().to_owned();
    let cli = decide_later(&h, "grant", &id, Duration::from_millis(200));
    let r = call(&client, "operation_resume", json!({"approval_id": id, "wait_ms": PATIENT}))
        .await
        .unwrap();
    cli.join().unwrap();
    let ran = &r["exec_command"];
    assert_eq!(ran["state"], "exited", "the command's own wait_ms applies after the grant: {r}");
    assert_eq!(ran["exit_code"], 0, "{r}");
    assert_eq!(ran["output"]["chunk"], "resumed-output\n", "{r}");
    // A repeat answers the stored start: the same process.
    let again = call(&client, "operation_resume", json!({"approval_id": id})).await.unwrap();
    assert_eq!(again["exec_command"]["process_id"], ran["process_id"], "{again}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_denial_from_the_cli_ends_the_wait_with_approval_denied() {
    let h = Holds::new();
    let client = h.client().await;
    let id = held(&client).await;
    let cli = decide_later(&h, "deny", &id, Duration::from_millis(600));
    let args = json!({"approval_id": id, "wait_ms": PATIENT});
    let body = refused(&client, "operation_resume", args, "APPROVAL_DENIED").await;
    assert_eq!(body["approval_id"], id.as_str(), "{body}");
    assert!(body["message"].as_str().unwrap().contains("new hold"), "{body}");
    cli.join().unwrap();
    assert_eq!(h.file("c"), "top\n", "nothing ran");
    // Later, with or without a wait: the same code.
    for args in [json!({"approval_id": id}), json!({"approval_id": id, "wait_ms": PATIENT})] {
        refused(&client, "operation_resume", args, "APPROVAL_DENIED").await;
    }
    client.cancel().await.unwrap();
}

/// The reply to `id`, with the progress notifications that came before it.
fn reply_with_progress(raw: &mut RawStdio, id: u64) -> (Value, Vec<Value>) {
    let mut progress = Vec::new();
    loop {
        let v = raw.recv().expect("the server ended");
        if v["method"] == "notifications/progress" {
            progress.push(v["params"].clone());
        } else {
            assert_eq!(v["id"], id, "expected the reply to {id}, got {v}");
            return (v, progress);
        }
    }
}

fn tool_call(id: u64, name: &str, arguments: Value, token: Option<&str>) -> Value {
    let mut params = json!({"name": name, "arguments": arguments});
    if let Some(token) = token {
        params["_meta"] = json!({"progressToken": token});
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn error_of(reply: &Value) -> Value {
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn still_pending_after_the_wait_names_the_persons_ways_and_reports_progress() {
    let h = Holds::new();
    let mut cmd = h.env.command();
    cmd.args(["serve", "--config"]).arg(h.env.config()).env("CODESPACE_OPERATIONS_DB", &h.db);
    let mut raw = RawStdio::start_command(cmd);
    raw.send(&tool_call(1, "apply_patch", append("c", "waited"), None));
    let (reply, _) = reply_with_progress(&mut raw, 1);
    let id = error_of(&reply)["approval_id"].as_str().unwrap().to_owned();
    let started = Instant::now();
    let args = json!({"approval_id": id, "wait_ms": 2500});
    raw.send(&tool_call(2, "operation_resume", args, Some("resume-wait")));
    let (reply, progress) = reply_with_progress(&mut raw, 2);
    assert!(started.elapsed() >= Duration::from_millis(2500), "it waited the whole wait");
    let body = error_of(&reply);
    assert_eq!(body["code"], "APPROVAL_CONFLICT", "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains(&format!("codespace approvals grant {id}")), "{message}");
    assert!(message.contains("/inbox") && message.contains("wait_ms"), "{message}");
    assert!(!message.contains("approval_resolve"), "no nudge to grant itself: {message}");
    assert!(!progress.is_empty(), "no progress during a 2.5 s wait");
    assert!(progress.iter().all(|p| p["progressToken"] == "resume-wait"), "{progress:?}");
    assert_eq!(h.file("c"), "top\n");
    assert!(raw.finish().success());
}
