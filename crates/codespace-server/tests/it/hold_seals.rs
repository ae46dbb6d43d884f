//! What runs is what was shown, through the real binary: a hold is sealed with the server's
//! key when it is made; a granted hold whose stored arguments or summary were edited in the
//! ledger (or copied whole from another hold), or that has no seal (made by an older
//! version), is refused at resume with
//! `APPROVAL_UNVERIFIED`; one whose workspace id now names another directory (another
//! registry, or the root re-created) with `APPROVAL_ROOT_MISMATCH`. Nothing runs, and a later
//! resume answers the same. An untouched hold still runs after a restart (the key is kept).

use serde_json::{Value, json};

use crate::approvals::{Holds, append};
use crate::support::{call, refused};

fn granted(h: &Holds, id: &str) {
    let out = h.cli(&["grant", id]);
    assert!(out.status.success(), "{out:?}");
}

fn sql(h: &Holds, statement: &str, id: &str) {
    let conn = rusqlite::Connection::open(&h.db).unwrap();
    assert_eq!(conn.execute(statement, [id]).unwrap(), 1, "{statement}");
}

async fn hold(h: &Holds, tool: &str, arguments: Value) -> String {
    let client = h.client().await;
    let created = call(&client, "approval_create", json!({"tool": tool, "arguments": arguments}))
        .await
        .unwrap();
    client.cancel().await.unwrap();
    created["approval_id"].as_str().unwrap().to_owned()
}

async fn resume_refused(h: &Holds, id: &str, code: &str) -> String {
    let client = h.client().await;
    let args = json!({"approval_id": id});
    let body = refused(&client, "operation_resume", args.clone(), code).await;
    assert_eq!(body["approval_id"], id);
    let again = refused(&client, "operation_resume", args, code).await;
    assert_eq!(again, body, "a later resume answers the same");
    client.cancel().await.unwrap();
    body["message"].as_str().unwrap().to_owned()
}

fn state(h: &Holds, id: &str) -> Value {
    let out = h.cli(&["show", id]);
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["state"].clone()
}

#[tokio::test]
async fn an_edited_or_unsealed_hold_never_runs() {
    let h = Holds::new();
    let command = json!({"workspace_id": "o", "command": ["touch", "harmless"]});
    let id = hold(&h, "exec_command", command).await;
    granted(&h, &id);
    sql(
        &h,
        "UPDATE approvals SET params_json = replace(params_json, 'harmless', 'evil') WHERE approval_id = ?1",
        &id,
    );
    let message = resume_refused(&h, &id, "APPROVAL_UNVERIFIED").await;
    assert!(message.contains("does not match the seal"), "{message}");
    assert!(!h.root("o").join("evil").exists() && !h.root("o").join("harmless").exists());
    assert_eq!(state(&h, &id), "consumed", "it never runs");

    // The summary the person read, changed after the grant.
    let id = hold(&h, "apply_patch", append("o", "shown")).await;
    granted(&h, &id);
    sql(&h, "UPDATE approvals SET summary = 'nothing to see' WHERE approval_id = ?1", &id);
    resume_refused(&h, &id, "APPROVAL_UNVERIFIED").await;
    assert_eq!(h.file("o"), "top\n");

    // A sealed request copied whole (arguments, summary, seal, root) from a hold the person
    // never granted into one they did.
    let shown = hold(&h, "apply_patch", append("o", "granted")).await;
    let other = hold(&h, "apply_patch", append("o", "never granted")).await;
    granted(&h, &shown);
    let conn = rusqlite::Connection::open(&h.db).unwrap();
    conn.execute_batch(&format!(
        "CREATE TEMP TABLE stolen AS SELECT fingerprint, summary, params_json, seal, \
         root_identity FROM approvals WHERE approval_id = '{other}'; \
         DELETE FROM approvals WHERE approval_id = '{other}'; \
         UPDATE approvals SET (fingerprint, summary, params_json, seal, root_identity) = \
         (SELECT * FROM stolen) WHERE approval_id = '{shown}';"
    ))
    .unwrap();
    drop(conn);
    resume_refused(&h, &shown, "APPROVAL_UNVERIFIED").await;
    assert_eq!(h.file("o"), "top\n");

    // A hold made before holds were sealed.
    let id = hold(&h, "apply_patch", append("o", "old")).await;
    granted(&h, &id);
    sql(&h, "UPDATE approvals SET seal = NULL, root_identity = NULL WHERE approval_id = ?1", &id);
    let message = resume_refused(&h, &id, "APPROVAL_UNVERIFIED").await;
    assert!(message.contains("older version"), "{message}");
    assert_eq!(h.file("o"), "top\n");

    // Untouched, across a restart: the key is the same, so it runs.
    let id = hold(&h, "apply_patch", append("o", "fine")).await;
    granted(&h, &id);
    let client = h.client().await;
    let done = call(&client, "operation_resume", json!({"approval_id": id})).await.unwrap();
    assert_eq!(done["apply_patch"]["status"], "applied", "{done}");
    assert_eq!(h.file("o"), "top\nfine\n");
    let key = h.env.state().join("codespace/server-key");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&key).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "{}", key.display());
}

#[tokio::test]
async fn a_hold_runs_only_on_the_root_it_was_made_for() {
    let mut h = Holds::new();
    let id =
        hold(&h, "exec_command", json!({"workspace_id": "o", "command": ["touch", "ran"]})).await;
    granted(&h, &id);
    // Another registry maps the same id elsewhere.
    let elsewhere = h.env.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let entry = json!({"root": elsewhere, "profile": "workspace-write", "sandbox": "off"});
    h.env.raw_workspace("o", entry);
    let message = resume_refused(&h, &id, "APPROVAL_ROOT_MISMATCH").await;
    assert!(message.contains("workspace o was the directory"), "{message}");
    assert!(!elsewhere.join("ran").exists() && !h.root("o").join("ran").exists());

    // The root deleted and made again at the same path is another directory too.
    let id = hold(&h, "apply_patch", json!({"workspace_id": "o", "patch": crate::approvals::patch("*** Add File: new.txt\n+x\n")})).await;
    granted(&h, &id);
    // (Moved away rather than removed, so the new directory cannot reuse its inode.)
    std::fs::rename(&elsewhere, h.env.path().join("elsewhere.old")).unwrap();
    std::fs::create_dir(&elsewhere).unwrap();
    resume_refused(&h, &id, "APPROVAL_ROOT_MISMATCH").await;
    assert!(!elsewhere.join("new.txt").exists());
}
