//! The mutation lease as a caller meets it during a run: a `check_only` preview never takes
//! it (it answers `checked`, or its own error, and keeps its ledger row and replay), and
//! `WORKSPACE_BUSY` names the process holding it and what to call next.

use serde_json::json;

use crate::process::{exec, wait_exit, ww};
use crate::support::{Env, call, refused};

#[tokio::test]
async fn a_preview_answers_while_a_command_holds_the_workspace() {
    let mut env = Env::new();
    let root = ww(&mut env, "w");
    std::fs::write(root.join("a.txt"), "old\n").unwrap();
    let client = env.stdio().await;
    let id = exec(&client, "w", &["sleep", "30.321"], false).await;
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch\n";
    let check =
        json!({"workspace_id": "w", "patch": patch, "check_only": true, "operation_key": "k1"});
    let r = call(&client, "apply_patch", check.clone()).await.unwrap();
    assert_eq!(r["status"], "checked", "{r}");
    assert_eq!(r["replayed"], false, "{r}");
    // The key's record answers a retry, as it did under the lease.
    let again = call(&client, "apply_patch", check).await.unwrap();
    assert_eq!(again["status"], "checked", "{again}");
    assert_eq!(again["replayed"], true, "{again}");
    assert_eq!(again["operation_id"], r["operation_id"]);
    // A preview that cannot plan answers its own error, not WORKSPACE_BUSY.
    let missing = "*** Begin Patch\n*** Update File: nope.txt\n@@\n-old\n+new\n*** End Patch\n";
    let e = call(
        &client,
        "apply_patch",
        json!({"workspace_id": "w", "patch": missing, "check_only": true}),
    )
    .await
    .unwrap_err();
    assert_ne!(e["code"], "WORKSPACE_BUSY", "{e}");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "old\n",
        "a preview writes nothing"
    );
    call(&client, "terminate_process", json!({"process_id": id})).await.unwrap();
    wait_exit(&client, &id).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn workspace_busy_names_the_process_and_the_way_out() {
    let mut env = Env::new();
    ww(&mut env, "w");
    let client = env.stdio().await;
    // `sh -c` takes the long word as its `$0`, so the command runs and its argv is long.
    let long = "x".repeat(120);
    let id = exec(&client, "w", &["sh", "-c", "sleep 30.432", &long], false).await;
    let patch = "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n";
    let refusals = [
        ("apply_patch", json!({"workspace_id": "w", "patch": patch})),
        ("exec_command", json!({"workspace_id": "w", "command": ["true"]})),
    ];
    for (tool, args) in refusals {
        let busy = refused(&client, tool, args, "WORKSPACE_BUSY").await;
        let message = busy["message"].as_str().unwrap();
        assert!(message.contains(&format!("process {id} (sh -c sleep 30.432 xxx")), "{message}");
        assert!(message.contains('…') && !message.contains(&long), "shortened: {message}");
        for next in ["process_status", "read_process", "terminate_process"] {
            assert!(message.contains(next), "{message}");
        }
    }
    call(&client, "terminate_process", json!({"process_id": id})).await.unwrap();
    wait_exit(&client, &id).await;
    client.cancel().await.unwrap();
}
