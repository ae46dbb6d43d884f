//! `operation_revert` through the real binary: every kind of change put back byte for byte
//! (CRLF and mode kept, added files removed, moves moved back), a preview, a revert refused
//! while a file changed since (every such file named, nothing written), a second revert,
//! an unknown id, an operation that did not apply, a key's replay, a revert of a revert,
//! and the operator's `codespace operations revert`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::approvals::{Holds, append};
use crate::support::{Client, Env, call, refused};

const CRLF: &[u8] = b"first\r\nsecond\r\nthird\r\n";
/// Not UTF-8: a deleted file comes back byte for byte whatever it held.
const BINARY: &[u8] = b"\x00\xff\xfe binary \x80\n";
const MOVED: &[u8] = b"moved away\n";

/// A workspace with a CRLF file to update, an executable binary file to delete and a file
/// to move (with an edit) into a directory that does not exist yet.
pub(crate) fn fixture(env: &mut Env) -> PathBuf {
    let root = env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    std::fs::write(root.join("crlf.txt"), CRLF).unwrap();
    std::fs::write(root.join("tool.bin"), BINARY).unwrap();
    std::fs::set_permissions(root.join("tool.bin"), std::fs::Permissions::from_mode(0o750))
        .unwrap();
    std::fs::write(root.join("mv.txt"), MOVED).unwrap();
    root
}

/// Updates `crlf.txt`, deletes `tool.bin`, moves `mv.txt` to `to/mv.txt` with an edit and
/// adds `new/dir/add.txt`.
pub(crate) const EVERY_KIND: &str = "*** Begin Patch\n\
*** Update File: crlf.txt\n@@\n first\n-second\n+SECOND\n\
*** Delete File: tool.bin\n\
*** Update File: mv.txt\n*** Move to: to/mv.txt\n@@\n-moved away\n+moved here\n\
*** Add File: new/dir/add.txt\n+added\n\
*** End Patch\n";

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// The workspace is exactly as the fixture made it.
pub(crate) fn assert_before(root: &Path) {
    assert_eq!(std::fs::read(root.join("crlf.txt")).unwrap(), CRLF);
    assert_eq!(std::fs::read(root.join("tool.bin")).unwrap(), BINARY);
    assert_eq!(mode(&root.join("tool.bin")), 0o750);
    assert_eq!(std::fs::read(root.join("mv.txt")).unwrap(), MOVED);
    assert!(!root.join("to/mv.txt").exists());
    assert!(!root.join("new/dir/add.txt").exists());
}

/// The workspace is as [`EVERY_KIND`] left it.
pub(crate) fn assert_after(root: &Path) {
    assert_eq!(std::fs::read(root.join("crlf.txt")).unwrap(), b"first\r\nSECOND\r\nthird\r\n");
    assert!(!root.join("tool.bin").exists());
    assert!(!root.join("mv.txt").exists());
    assert_eq!(std::fs::read(root.join("to/mv.txt")).unwrap(), b"moved here\n");
    assert_eq!(std::fs::read(root.join("new/dir/add.txt")).unwrap(), b"added\n");
}

pub(crate) async fn apply(client: &Client, patch: &str) -> String {
    let applied =
        call(client, "apply_patch", json!({"workspace_id": "w", "patch": patch})).await.unwrap();
    assert_eq!(applied["status"], "applied", "{applied}");
    applied["operation_id"].as_str().unwrap().to_owned()
}

fn status_of(v: &Value) -> &str {
    v["status"].as_str().unwrap_or("?")
}

#[tokio::test]
async fn a_revert_puts_every_kind_of_change_back_byte_for_byte() {
    let mut env = Env::new();
    let root = fixture(&mut env);
    let client = env.stdio().await;
    let op = apply(&client, EVERY_KIND).await;
    assert_after(&root);

    // A preview checks and plans, and writes nothing.
    let args = json!({"workspace_id": "w", "operation_id": op});
    let mut preview = args.clone();
    preview["check_only"] = json!(true);
    let checked = call(&client, "operation_revert", preview).await.unwrap();
    assert_eq!(status_of(&checked), "checked", "{checked}");
    assert_eq!(checked["reverts"], op.as_str());
    assert_after(&root);

    let reverted = call(&client, "operation_revert", args.clone()).await.unwrap();
    assert_eq!(status_of(&reverted), "applied", "{reverted}");
    assert_eq!(reverted["reverts"], op.as_str());
    assert_before(&root);
    // The move is shown moved back; the added file removed.
    let changes = reverted["changes"].as_array().unwrap();
    let back = changes.iter().find(|c| c["path"] == "mv.txt").unwrap();
    assert_eq!(back["kind"], "move", "{reverted}");
    assert_eq!(back["move_from"], "to/mv.txt", "{reverted}");
    let added = changes.iter().find(|c| c["path"] == "new/dir/add.txt").unwrap();
    assert_eq!(added["kind"], "delete", "{reverted}");

    // Both operations say what happened, in the ledger.
    let revert_id = reverted["operation_id"].as_str().unwrap();
    let shown =
        call(&client, "operation_status", json!({"operation_id": revert_id})).await.unwrap();
    assert_eq!(shown["kind"], "revert", "{shown}");
    assert_eq!(shown["reverts"], op.as_str(), "{shown}");
    let target = call(&client, "operation_status", json!({"operation_id": op})).await.unwrap();
    assert_eq!(target["kind"], "patch", "{target}");
    assert_eq!(target["reverted_by"], revert_id, "{target}");

    // A second revert is refused and names the first.
    let again = refused(&client, "operation_revert", args, "OPERATION_ALREADY_REVERTED").await;
    assert!(again["message"].as_str().unwrap().contains(revert_id), "{again}");
    // The refusal is recorded too, as a rejected revert of the same operation.
    let refusal = again["operation_id"].as_str().unwrap();
    let recorded =
        call(&client, "operation_status", json!({"operation_id": refusal})).await.unwrap();
    assert_eq!(recorded["status"], "rejected", "{recorded}");
    assert_eq!(recorded["reverts"], op.as_str(), "{recorded}");
    assert_before(&root);

    // The revert is an operation like any other: reverting it brings the change back.
    let redo = json!({"workspace_id": "w", "operation_id": revert_id});
    let redone = call(&client, "operation_revert", redo).await.unwrap();
    assert_eq!(status_of(&redone), "applied", "{redone}");
    assert_after(&root);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_revert_refuses_while_any_file_changed_since_and_writes_nothing() {
    let mut env = Env::new();
    let root = fixture(&mut env);
    let client = env.stdio().await;
    let op = apply(&client, EVERY_KIND).await;
    // Two files change after the operation: the edited one, and the deleted one comes back.
    std::fs::write(root.join("crlf.txt"), b"someone else's edit\n").unwrap();
    std::fs::write(root.join("tool.bin"), b"new content\n").unwrap();
    let args = json!({"workspace_id": "w", "operation_id": op});
    let body = refused(&client, "operation_revert", args.clone(), "VERSION_CONFLICT").await;
    let conflicts = body["conflicts"].as_array().unwrap();
    let paths: Vec<&str> = conflicts.iter().map(|c| c["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["crlf.txt", "tool.bin"], "{body}");
    assert_eq!(conflicts[1]["expected"], "absent", "{body}");
    assert!(conflicts[0]["actual"].as_str().unwrap().starts_with("sha256:"), "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("crlf.txt") && message.contains("tool.bin"), "{message}");
    // Nothing was written, and the operation can still be reverted once the files are back.
    assert_eq!(std::fs::read(root.join("crlf.txt")).unwrap(), b"someone else's edit\n");
    assert_eq!(std::fs::read(root.join("to/mv.txt")).unwrap(), b"moved here\n");
    assert!(root.join("new/dir/add.txt").exists());
    std::fs::write(root.join("crlf.txt"), b"first\r\nSECOND\r\nthird\r\n").unwrap();
    std::fs::remove_file(root.join("tool.bin")).unwrap();
    let reverted = call(&client, "operation_revert", args).await.unwrap();
    assert_eq!(status_of(&reverted), "applied", "{reverted}");
    assert_before(&root);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn unknown_unapplied_and_replayed_reverts() {
    let mut env = Env::new();
    let root = fixture(&mut env);
    let client = env.stdio().await;
    let unknown =
        json!({"workspace_id": "w", "operation_id": "op-00000000-0000-4000-8000-000000000000"});
    refused(&client, "operation_revert", unknown, "OPERATION_NOT_FOUND").await;
    // A refused patch and a preview did not apply: nothing to revert.
    let bad = "*** Begin Patch\n*** Update File: crlf.txt\n@@\n-no such line\n+x\n*** End Patch\n";
    let rejected =
        call(&client, "apply_patch", json!({"workspace_id": "w", "patch": bad})).await.unwrap_err();
    let rejected_id = rejected["operation_id"].as_str().unwrap();
    let args = json!({"workspace_id": "w", "operation_id": rejected_id});
    let body = refused(&client, "operation_revert", args, "OPERATION_NOT_REVERTIBLE").await;
    assert!(body["message"].as_str().unwrap().contains("rejected"), "{body}");
    let checked = call(
        &client,
        "apply_patch",
        json!({"workspace_id": "w", "patch": EVERY_KIND, "check_only": true}),
    )
    .await
    .unwrap();
    let args = json!({"workspace_id": "w", "operation_id": checked["operation_id"]});
    refused(&client, "operation_revert", args, "OPERATION_NOT_REVERTIBLE").await;

    // operation_key replays a revert; the same key for another request conflicts.
    let op = apply(&client, EVERY_KIND).await;
    let keyed = json!({"workspace_id": "w", "operation_id": op, "operation_key": "undo-1"});
    let first = call(&client, "operation_revert", keyed.clone()).await.unwrap();
    assert_eq!(status_of(&first), "applied", "{first}");
    assert_before(&root);
    let replay = call(&client, "operation_revert", keyed).await.unwrap();
    assert_eq!(replay["replayed"], true, "{replay}");
    assert_eq!(replay["operation_id"], first["operation_id"]);
    assert_before(&root);
    let other =
        json!({"workspace_id": "w", "operation_id": rejected_id, "operation_key": "undo-1"});
    refused(&client, "operation_revert", other, "OPERATION_KEY_CONFLICT").await;
    let by_key =
        call(&client, "operation_status", json!({"workspace_id": "w", "operation_key": "undo-1"}))
            .await
            .unwrap();
    assert_eq!(by_key["reverts"], op.as_str(), "{by_key}");
    client.cancel().await.unwrap();
}

fn operations(env: &Env, args: &[&str]) -> std::process::Output {
    let mut command = env.command();
    command.arg("operations").args(args);
    if args[0] == "revert" {
        command.arg("--config").arg(env.config());
    }
    command.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test]
async fn the_operator_reverts_with_the_cli() {
    let mut env = Env::new();
    let root = fixture(&mut env);
    let client = env.stdio().await;
    let op = apply(&client, EVERY_KIND).await;
    client.cancel().await.unwrap();
    let list = operations(&env, &["list"]);
    assert!(list.status.success(), "{}", text(&list.stderr));
    let line = text(&list.stdout).lines().next().unwrap().to_owned();
    assert!(line.starts_with(&format!("{op}\tapplied\tw\t")), "{line}");
    assert!(line.contains("undo: "), "{line}");
    let out = operations(&env, &["revert", &op]);
    assert!(out.status.success(), "{} {}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("applied"), "{}", text(&out.stdout));
    assert_before(&root);
    // A second revert is refused with exit status 3, naming the code.
    let again = operations(&env, &["revert", &op]);
    assert_eq!(again.status.code(), Some(3), "{}", text(&again.stderr));
    assert!(text(&again.stderr).contains("OPERATION_ALREADY_REVERTED"), "{}", text(&again.stderr));
    assert_before(&root);
}

#[tokio::test]
async fn under_confirm_a_revert_is_held_until_a_person_grants_it() {
    let h = Holds::new();
    let client = h.client().await;
    let grant_and_run = |id: String| {
        let client = &client;
        async move {
            let granted =
                call(client, "approval_resolve", json!({"approval_id": id, "decision": "grant"}));
            assert_eq!(granted.await.unwrap()["state"], "granted");
            call(client, "operation_resume", json!({"approval_id": id})).await.unwrap()
        }
    };
    let held = refused(&client, "apply_patch", append("c", "added"), "APPROVAL_REQUIRED").await;
    let ran = grant_and_run(held["approval_id"].as_str().unwrap().to_owned()).await;
    let op = ran["apply_patch"]["operation_id"].as_str().unwrap().to_owned();
    assert_eq!(h.file("c"), "top\nadded\n");

    // The revert is held: nothing is written, and the summary says what it puts back.
    let args = json!({"workspace_id": "c", "operation_id": op});
    let body = refused(&client, "operation_revert", args.clone(), "APPROVAL_REQUIRED").await;
    let message = body["message"].as_str().unwrap();
    assert!(message.contains(&format!("revert operation {op}")), "{message}");
    assert!(message.contains("restore a.txt"), "{message}");
    assert_eq!(h.file("c"), "top\nadded\n");
    // The same request reuses its hold; a preview is never held.
    let again = refused(&client, "operation_revert", args.clone(), "APPROVAL_REQUIRED").await;
    assert_eq!(again["approval_id"], body["approval_id"]);
    let mut preview = args.clone();
    preview["check_only"] = json!(true);
    assert_eq!(call(&client, "operation_revert", preview).await.unwrap()["status"], "checked");

    // Granted and resumed: the revert runs once, and a repeat answers the same result.
    let id = body["approval_id"].as_str().unwrap().to_owned();
    let done = grant_and_run(id.clone()).await;
    let reverted = &done["operation_revert"];
    assert_eq!(reverted["status"], "applied", "{done}");
    assert_eq!(reverted["reverts"], op.as_str(), "{done}");
    assert!(done.get("apply_patch").is_none(), "{done}");
    assert_eq!(h.file("c"), "top\n");
    let repeat = call(&client, "operation_resume", json!({"approval_id": id})).await.unwrap();
    assert_eq!(repeat["operation_revert"]["operation_id"], reverted["operation_id"]);
    assert_eq!(h.file("c"), "top\n");

    // An explicit hold takes the tool's own arguments, checked as the tool decodes them.
    let bad = json!({"tool": "operation_revert", "arguments": {"workspace_id": "c"}});
    refused(&client, "approval_create", bad, "INVALID_ARGUMENTS").await;
    client.cancel().await.unwrap();
}

/// An applied patch is answered before its terminal record is written; a revert sent at
/// once (a preview takes no lease to wait behind) still finds it applied.
#[tokio::test]
async fn a_revert_right_after_the_patch_finds_it_applied() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    std::fs::write(root.join("n.txt"), "0\n").unwrap();
    let client = env.stdio().await;
    for i in 0..20 {
        let patch = format!(
            "*** Begin Patch\n*** Update File: n.txt\n@@\n-{i}\n+{}\n*** End Patch\n",
            i + 1
        );
        let op = apply(&client, &patch).await;
        let preview = json!({"workspace_id": "w", "operation_id": op, "check_only": true});
        let checked = call(&client, "operation_revert", preview).await.unwrap();
        assert_eq!(status_of(&checked), "checked", "round {i}: {checked}");
    }
    client.cancel().await.unwrap();
}
