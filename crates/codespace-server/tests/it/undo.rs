//! No content is ever lost by a failed patch: a directory swapped under an `Update File` +
//! `Move to` patch between its last write and its verification (a deterministic version of
//! the race, through the gateway's test hook) leaves the old content in the undo log, named
//! in the result and in `operation_status`; `codespace operations list|show|restore` (the
//! real binary) shows it and puts it back once the path is free, refusing an occupied path.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use codespace_gateway::Gateway;
use codespace_protocol::{ApplyPatchParams, OperationStatusParams, PatchStatus};
use codespace_store::Store;
use serde_json::{Value, json};

use crate::support::Env;

const OLD: &str = "the only copy of this content\n";

/// A gateway over `env`'s registry and the ledger file `db`, in this process.
fn gateway(env: &Env, db: &Path) -> Gateway {
    crate::support::in_process_gateway(env, Store::open(db).unwrap())
}

/// Runs the patch that moves `d/mv.txt` to `e/mv.txt` while, between its last write and its
/// verification, `d` is swapped for a symlink to a directory outside the workspace. Returns
/// the workspace root, the ledger and the operation id.
async fn swapped_move(env: &mut Env) -> (PathBuf, PathBuf, String) {
    let root = env.workspace("w", json!({"profile": "workspace-write"}));
    std::fs::create_dir(root.join("d")).unwrap();
    std::fs::write(root.join("d/mv.txt"), OLD).unwrap();
    let db = env.path().join("ledger.sqlite3");
    let gw = gateway(env, &db);
    let (r, outside) = (root.clone(), env.path().join("outside"));
    gw.runner().set_written_hook(Some(Arc::new(move || {
        std::fs::rename(r.join("d"), r.join("d.moved")).unwrap();
        std::os::unix::fs::symlink(&outside, r.join("d")).unwrap();
    })));
    let patch = format!(
        "*** Begin Patch\n*** Update File: d/mv.txt\n*** Move to: e/mv.txt\n@@\n-{}\n+moved\n*** End Patch\n",
        OLD.trim_end()
    );
    let p: ApplyPatchParams =
        serde_json::from_value(json!({"workspace_id": "w", "patch": patch})).unwrap();
    let result = gw.apply_patch(p).await.unwrap();
    assert_eq!(result.status, PatchStatus::FailedPartial, "{result:?}");
    assert_eq!(result.unrestored, vec!["d/mv.txt".to_owned()], "{result:?}");
    // The content is nowhere in the workspace: not at the source, the destination, or in
    // the directory swapped away.
    assert!(!root.join("e/mv.txt").exists());
    assert!(!root.join("d.moved/mv.txt").exists());
    // It is in the undo log, and the result says where.
    assert_eq!(result.preserved.len(), 1, "{result:?}");
    assert_eq!(result.preserved[0].path, "d/mv.txt");
    let undo = PathBuf::from(&result.preserved[0].undo_path);
    assert!(undo.starts_with(env.path().join("ledger.sqlite3.undo")), "{undo:?}");
    assert_eq!(std::fs::read_to_string(&undo).unwrap(), OLD);
    assert!(result.failure.as_deref().is_some_and(|f| f.contains(&result.preserved[0].undo_path)));
    // operation_status says the same.
    let status = gw
        .operation_status(OperationStatusParams {
            operation_id: Some(result.operation_id.clone()),
            operation_key: None,
            workspace_id: None,
        })
        .await
        .unwrap();
    assert_eq!(status.preserved, result.preserved);
    gw.shutdown().await;
    (root, db, result.operation_id)
}

fn operations(env: &Env, db: &Path, args: &[&str]) -> Output {
    env.command().arg("operations").args(args).arg("--operations-db").arg(db).output().unwrap()
}

fn restore(env: &Env, db: &Path, op: &str) -> Output {
    env.command()
        .args(["operations", "restore", op, "--config"])
        .arg(env.config())
        .arg("--operations-db")
        .arg(db)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test]
async fn a_swapped_move_keeps_its_content_and_operations_restore_puts_it_back() {
    let mut env = Env::new();
    let (root, db, op) = swapped_move(&mut env).await;
    // The path is free again: the operator undoes the swap.
    std::fs::remove_file(root.join("d")).unwrap();
    std::fs::rename(root.join("d.moved"), root.join("d")).unwrap();
    let out = restore(&env, &db, &op);
    assert!(out.status.success(), "{} {}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).starts_with("restored\td/mv.txt"), "{}", text(&out.stdout));
    assert_eq!(std::fs::read_to_string(root.join("d/mv.txt")).unwrap(), OLD);
    // The ledger records it; the entry left the undo log.
    let show = operations(&env, &db, &["show", &op]);
    assert!(show.status.success(), "{}", text(&show.stderr));
    let shown: Value = serde_json::from_slice(&show.stdout).unwrap();
    let last = shown["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["name"], "restored", "{shown}");
    assert!(last["reason"].as_str().unwrap().contains("d/mv.txt"));
    assert!(!Path::new(shown["preserved"][0]["undo_path"].as_str().unwrap()).exists());
    // Idempotent: the content is already there.
    let again = restore(&env, &db, &op);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(text(&again.stdout).starts_with("in place\td/mv.txt"), "{}", text(&again.stdout));
}

#[tokio::test]
async fn operations_list_show_and_a_refused_restore_onto_an_occupied_path() {
    let mut env = Env::new();
    let (root, db, op) = swapped_move(&mut env).await;
    let list = operations(&env, &db, &["list"]);
    assert!(list.status.success(), "{}", text(&list.stderr));
    let line = text(&list.stdout).lines().next().unwrap().to_owned();
    assert!(line.starts_with(&format!("{op}\tfailed_partial\tw\t")), "{line}");
    assert!(line.contains("\tpreserved: 1 file(s)\tundo: 30 bytes, "), "{line}");
    let show = operations(&env, &db, &["show", &op]);
    let shown: Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(shown["status"], "failed_partial");
    assert_eq!(shown["preserved"][0]["path"], "d/mv.txt");
    let undo = PathBuf::from(shown["preserved"][0]["undo_path"].as_str().unwrap());
    // Someone else's file now sits at the path: refused, exit 3, nothing overwritten.
    std::fs::remove_file(root.join("d")).unwrap();
    std::fs::create_dir(root.join("d")).unwrap();
    std::fs::write(root.join("d/mv.txt"), "someone else's\n").unwrap();
    let refused = restore(&env, &db, &op);
    assert_eq!(refused.status.code(), Some(3), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stdout).contains("occupied by other content"),
        "{}",
        text(&refused.stdout)
    );
    assert!(text(&refused.stderr).contains("nothing was overwritten"), "{}", text(&refused.stderr));
    assert_eq!(std::fs::read_to_string(root.join("d/mv.txt")).unwrap(), "someone else's\n");
    assert_eq!(std::fs::read_to_string(&undo).unwrap(), OLD);
    // Once the path is free, it goes back.
    std::fs::remove_file(root.join("d/mv.txt")).unwrap();
    let out = restore(&env, &db, &op);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(root.join("d/mv.txt")).unwrap(), OLD);
    // Unknown ids and an in-memory ledger are usage errors.
    assert_eq!(operations(&env, &db, &["show", "op-00000000"]).status.code(), Some(2));
    let memory =
        env.command().args(["operations", "list", "--operations-db", ":memory:"]).output().unwrap();
    assert_eq!(memory.status.code(), Some(2));
}
