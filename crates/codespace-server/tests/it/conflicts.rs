//! `VERSION_CONFLICT` shows what changed: a bounded unified diff from the expected content
//! to the file now, when the server still knows the expected content (a whole-file `read`,
//! what a patch wrote, or an operation's undo record), and none when it does not.

use serde_json::{Value, json};

use crate::support::{Env, call, refused};

fn ww(env: &mut Env) -> std::path::PathBuf {
    env.workspace("w", json!({"profile": "workspace-write"}))
}

fn lines(n: usize, changed: Option<usize>) -> String {
    (0..n)
        .map(|i| if Some(i) == changed { format!("CHANGED {i}\n") } else { format!("line {i}\n") })
        .collect()
}

/// A patch that expects `path` at `version`; its body never gets planned.
fn stale(path: &str, version: &Value) -> Value {
    let patch =
        format!("*** Begin Patch\n*** Update File: {path}\n@@\n-line 0\n+LINE 0\n*** End Patch\n");
    json!({"workspace_id": "w", "patch": patch, "expected_versions": {path: version}})
}

fn conflict_of(body: &Value) -> &Value {
    assert_eq!(body["reason"], "version_conflict", "{body}");
    let conflicts = body["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1, "{body}");
    &conflicts[0]
}

#[tokio::test]
async fn a_conflict_after_a_read_shows_the_change_since() {
    let mut env = Env::new();
    let root = ww(&mut env);
    std::fs::write(root.join("a.txt"), lines(40, None)).unwrap();
    let client = env.stdio().await;
    let read = call(&client, "read", json!({"workspace_id": "w", "path": "a.txt"})).await.unwrap();
    // Someone else changes line 20.
    std::fs::write(root.join("a.txt"), lines(40, Some(20))).unwrap();
    let body =
        refused(&client, "apply_patch", stale("a.txt", &read["version"]), "VERSION_CONFLICT").await;
    let c = conflict_of(&body);
    assert_eq!((&c["path"], &c["expected"]), (&json!("a.txt"), &read["version"]));
    let diff = c["diff"].as_str().unwrap();
    assert!(diff.contains("\n-line 20\n+CHANGED 20\n"), "{diff}");
    assert!(diff.contains("@@ -18,7 +18,7 @@"), "{diff}");
    assert!(!diff.contains("line 10\n"), "only the change and its context: {diff}");
    assert_eq!(c.get("diff_truncated"), None);
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), lines(40, Some(20)));
}

#[tokio::test]
async fn a_conflict_after_the_servers_own_patch_diffs_from_its_undo_record_or_what_it_wrote() {
    let mut env = Env::new();
    let root = ww(&mut env);
    std::fs::write(root.join("a.txt"), lines(10, None)).unwrap();
    let client = env.stdio().await;
    // Only a version is known to the caller: no content was read.
    let v =
        call(&client, "version", json!({"workspace_id": "w", "paths": ["a.txt"]})).await.unwrap();
    let v1 = v["versions"][0]["version"].clone();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-line 5\n+five\n*** End Patch\n";
    let applied =
        call(&client, "apply_patch", json!({"workspace_id": "w", "patch": patch})).await.unwrap();
    assert_eq!(applied["status"], "applied");
    // Stale against the operation's before-version: its undo record holds that content.
    let body = refused(&client, "apply_patch", stale("a.txt", &v1), "VERSION_CONFLICT").await;
    let diff = conflict_of(&body)["diff"].as_str().unwrap().to_owned();
    assert!(diff.contains("-line 5\n+five\n"), "{diff}");
    // Stale against what the patch wrote (its after_version), after a change on the disk.
    let v2 = applied["changes"][0]["after_version"].clone();
    std::fs::write(root.join("a.txt"), lines(10, None).replace("line 5\n", "five\nsix\n")).unwrap();
    let body = refused(&client, "apply_patch", stale("a.txt", &v2), "VERSION_CONFLICT").await;
    let diff = conflict_of(&body)["diff"].as_str().unwrap().to_owned();
    assert!(diff.contains(" five\n+six\n"), "{diff}");
}

#[tokio::test]
async fn unknown_content_has_no_diff_and_a_large_change_is_cut() {
    let mut env = Env::new();
    let root = ww(&mut env);
    std::fs::write(root.join("a.txt"), lines(10, None)).unwrap();
    std::fs::write(root.join("big.txt"), lines(5000, None)).unwrap();
    let client = env.stdio().await;
    // A version the server never held: the versions, no diff.
    let never = format!("sha256:{}", "ab".repeat(32));
    let body =
        refused(&client, "apply_patch", stale("a.txt", &json!(never)), "VERSION_CONFLICT").await;
    let c = conflict_of(&body);
    assert_eq!(c["expected"], json!(never));
    assert_eq!(c.get("diff"), None, "{body}");
    // Expected absent: the diff is the whole file, from nothing, bounded.
    let body =
        refused(&client, "apply_patch", stale("big.txt", &json!("absent")), "VERSION_CONFLICT")
            .await;
    let c = conflict_of(&body);
    assert_eq!(c["diff_truncated"], true, "{body}");
    let diff = c["diff"].as_str().unwrap();
    assert!(diff.len() <= 16 * 1024 + 1, "{}", diff.len());
    assert!(diff.starts_with("--- big.txt (absent)\n+++ big.txt (sha256:"), "{diff}");
    // The recorded refusal keeps the diff too.
    let args = {
        let mut a = stale("a.txt", &json!(never));
        a["operation_key"] = json!("k");
        a
    };
    refused(&client, "apply_patch", args, "VERSION_CONFLICT").await;
    let status =
        call(&client, "operation_status", json!({"workspace_id": "w", "operation_key": "k"}))
            .await
            .unwrap();
    assert_eq!(status["error"]["reason"], "version_conflict");
    assert_eq!(status["error"]["conflicts"][0]["path"], "a.txt");
}

#[tokio::test]
async fn a_revert_refused_for_a_changed_file_shows_the_change() {
    let mut env = Env::new();
    let root = ww(&mut env);
    std::fs::write(root.join("a.txt"), lines(10, None)).unwrap();
    let client = env.stdio().await;
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-line 5\n+five\n*** End Patch\n";
    let applied =
        call(&client, "apply_patch", json!({"workspace_id": "w", "patch": patch})).await.unwrap();
    std::fs::write(root.join("a.txt"), lines(10, None).replace("line 5\n", "five\nsix\n")).unwrap();
    let args = json!({"workspace_id": "w", "operation_id": applied["operation_id"]});
    let body = refused(&client, "operation_revert", args, "VERSION_CONFLICT").await;
    let c = conflict_of(&body);
    assert_eq!(c["expected"], applied["changes"][0]["after_version"]);
    let diff = c["diff"].as_str().unwrap();
    assert!(diff.contains(" five\n+six\n"), "{diff}");
}
