//! `POST /reset` for warm reuse, through the real binary: it takes the person's token (the
//! agent's is refused), ends every command, denies every waiting hold, cancels every
//! waiting instruction, forgets the caches, and reports what it did.

use serde_json::{Value, json};

use crate::approvals::append;
use crate::inbox::{PERSON, SERVE, TOKEN, open_work, person, queue, request};
use crate::process::{exec, wait_exit, wait_output};
use crate::support::{Env, call, refused};

#[tokio::test]
async fn reset_takes_the_person_token_clears_everything_waiting_and_reports_it() {
    let mut env = Env::new();
    let held = env.workspace(
        "c",
        json!({"profile": "workspace-write", "approvals": "confirm", "sandbox": "off"}),
    );
    std::fs::write(held.join("a.txt"), "top\n").unwrap();
    env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    let server = env.http(SERVE);
    let agent = server.client(Some(TOKEN)).await;

    // What a task leaves behind: a live command, a pending and a granted hold, a queued
    // instruction and a draft.
    let id = exec(&agent, "w", &["sh", "-c", "echo ready; sleep 60"], false).await;
    wait_output(&agent, &id, "ready").await;
    let pending = refused(&agent, "apply_patch", append("c", "x"), "APPROVAL_REQUIRED").await;
    let granted = refused(&agent, "apply_patch", append("c", "y"), "APPROVAL_REQUIRED").await;
    let granted_id = granted["approval_id"].as_str().unwrap().to_owned();
    call(&agent, "approval_resolve", json!({"approval_id": granted_id, "decision": "grant"}))
        .await
        .unwrap();
    let work = open_work(&agent, "w").await;
    queue(&server, &work, "run the tests", "next_checkpoint");
    let (status, _) = person(
        &server,
        "POST",
        &format!("/inbox/works/{work}/intents"),
        Some(json!({"body": "a draft"})),
    );
    assert_eq!(status, 201);

    // The agent's token never resets.
    let refused_reset = request(&server, "POST", "/reset", Some(TOKEN), None, None);
    assert_eq!(refused_reset.status, 401, "{refused_reset:?}");
    assert_eq!(request(&server, "POST", "/reset", None, None, None).status, 401);
    let alive = call(&agent, "process_status", json!({"process_id": id})).await.unwrap();
    assert_eq!(alive["state"], "running", "a refused reset did nothing");

    let done = request(&server, "POST", "/reset", Some(PERSON), None, None);
    assert_eq!(done.status, 200, "{done:?}");
    let report: Value = serde_json::from_str(&done.body).unwrap();
    assert_eq!(report["processes_terminated"], 1, "{report}");
    assert_eq!(report["holds_denied"], 2, "{report}");
    assert_eq!(report["instructions_cancelled"], 2, "{report}");
    assert_eq!(report["hints_cleared"], true, "{report}");

    // Cleared for the next task.
    wait_exit(&agent, &id).await;
    for hold in [pending["approval_id"].as_str().unwrap(), granted_id.as_str()] {
        refused(&agent, "operation_resume", json!({"approval_id": hold}), "APPROVAL_DENIED").await;
    }
    assert_eq!(std::fs::read_to_string(held.join("a.txt")).unwrap(), "top\n", "nothing ran");
    let (_, intents) = person(&server, "GET", &format!("/inbox/works/{work}/intents"), None);
    let states: Vec<&str> =
        intents.as_array().unwrap().iter().map(|i| i["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["cancelled", "cancelled"], "{intents}");
    // The workspace takes new work at once.
    let next = exec(&agent, "w", &["true"], false).await;
    wait_exit(&agent, &next).await;
    // A second reset finds nothing left.
    let again = request(&server, "POST", "/reset", Some(PERSON), None, None);
    let again: Value = serde_json::from_str(&again.body).unwrap();
    assert_eq!(again["holds_denied"], 0, "{again}");
    assert_eq!(again["instructions_cancelled"], 0, "{again}");
}
