//! `apply_patch` and `operation_status` end to end: apply, preview, replay, key conflicts and
//! scope, version guards, product refusals (P6, P10), rollback on a real full disk, and 100
//! concurrent duplicates (D3, C1-C5). The kill -9 loop is in `kill.rs`.

use std::os::unix::fs::symlink;

use serde_json::{Value, json};

use crate::support::{Env, call, mkfifo, refused};

fn ww(env: &mut Env, id: &str) -> std::path::PathBuf {
    env.workspace(id, json!({"profile": "workspace-write"}))
}

fn patch(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

fn apply(ws: &str, p: &str) -> Value {
    json!({"workspace_id": ws, "patch": p})
}

#[tokio::test]
async fn apply_preview_replay_and_status() {
    let mut env = Env::new();
    let root = ww(&mut env, "w");
    std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
    let client = env.stdio().await;
    let p =
        patch("*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** Add File: dir/new.txt\n+hello\n");

    // Preview writes nothing.
    let mut args = apply("w", &p);
    args["check_only"] = json!(true);
    let checked = call(&client, "apply_patch", args).await.unwrap();
    assert_eq!(checked["status"], "checked");
    assert_eq!(checked["files"], json!(["a.txt", "dir/new.txt"]));
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "one\ntwo\n");
    assert!(!root.join("dir").exists());

    let mut args = apply("w", &p);
    args["operation_key"] = json!("k1");
    // The work the change belongs to: checked, echoed, and its hint attached.
    let work = call(&client, "work_open", json!({"workspace_id": "w"})).await.unwrap();
    let work_id = work["work_id"].as_str().unwrap().to_owned();
    args["work_id"] = json!(work_id);
    let applied = call(&client, "apply_patch", args.clone()).await.unwrap();
    assert_eq!(applied["status"], "applied");
    assert_eq!(applied["replayed"], false);
    assert_eq!(applied["work_id"], work_id.as_str());
    assert_eq!(applied["coordination"]["work_id"], work_id.as_str());
    assert!(applied["operation_id"].as_str().unwrap().starts_with("op-"));
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "one\nTWO\n");
    assert_eq!(std::fs::read_to_string(root.join("dir/new.txt")).unwrap(), "hello\n");
    let changes = applied["changes"].as_array().unwrap();
    assert_eq!(changes[0]["kind"], "update");
    assert_eq!(changes[1]["kind"], "add");
    assert_eq!(changes[1]["before_version"], "absent");
    let read = call(&client, "read", json!({"workspace_id": "w", "path": "a.txt"})).await.unwrap();
    assert_eq!(changes[0]["after_version"], read["version"], "after_version is what read sees");

    // Same key, same request: the recorded result, not a second application.
    let again = call(&client, "apply_patch", args.clone()).await.unwrap();
    assert_eq!(again["replayed"], true);
    assert_eq!(again["operation_id"], applied["operation_id"]);
    assert_eq!(again["status"], "applied");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "one\nTWO\n");
    // Same key, other request.
    let mut other = args.clone();
    other["patch"] = json!(patch("*** Add File: other.txt\n+x\n"));
    let conflict = refused(&client, "apply_patch", other, "OPERATION_KEY_CONFLICT").await;
    assert_eq!(conflict["operation_id"], applied["operation_id"]);
    assert!(!root.join("other.txt").exists());

    let by_id = call(&client, "operation_status", json!({"operation_id": applied["operation_id"]}))
        .await
        .unwrap();
    assert_eq!(by_id["status"], "applied");
    assert_eq!(by_id["kind"], "patch");
    assert_eq!(by_id["workspace_id"], "w");
    assert_eq!(by_id["operation_key"], "k1");
    assert!(by_id["finished_at"].as_i64().unwrap() >= by_id["created_at"].as_i64().unwrap());
    let names: Vec<&str> =
        by_id["events"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["minted", "planned", "finished"]);
    assert_eq!(by_id["changes"], applied["changes"]);
    let by_key =
        call(&client, "operation_status", json!({"operation_key": "k1", "workspace_id": "w"}))
            .await
            .unwrap();
    assert_eq!(by_key["operation_id"], applied["operation_id"]);
    // The reference's clients send the key alone: one workspace has it, so it is found.
    let key_only = call(&client, "operation_status", json!({"operation_key": "k1"})).await.unwrap();
    assert_eq!(key_only["operation_id"], applied["operation_id"]);
    for bad in [
        json!({}),
        json!({"operation_id": applied["operation_id"], "operation_key": "k1", "workspace_id": "w"}),
        json!({"operation_key": "no-such-key"}),
        json!({"operation_key": "k1", "workspace_id": "other"}),
        json!({"operation_id": "op-00000000-0000-4000-8000-000000000000"}),
    ] {
        refused(&client, "operation_status", bad, "OPERATION_NOT_FOUND").await;
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn keys_are_scoped_to_the_workspace() {
    let mut env = Env::new();
    ww(&mut env, "a");
    ww(&mut env, "b");
    let client = env.stdio().await;
    let p = patch("*** Add File: f.txt\n+x\n");
    let mut args = apply("a", &p);
    args["operation_key"] = json!("same");
    let ra = call(&client, "apply_patch", args.clone()).await.unwrap();
    args["workspace_id"] = json!("b");
    let rb = call(&client, "apply_patch", args).await.unwrap();
    assert_eq!((ra["status"].clone(), rb["status"].clone()), (json!("applied"), json!("applied")));
    assert_eq!(rb["replayed"], false);
    assert_ne!(ra["operation_id"], rb["operation_id"]);
    // The key alone names two operations: the caller must say which workspace.
    let body = refused(
        &client,
        "operation_status",
        json!({"operation_key": "same"}),
        "WORKSPACE_ID_REQUIRED",
    )
    .await;
    assert!(body["message"].as_str().unwrap().contains("workspace_id"), "{body}");
    let by_b =
        call(&client, "operation_status", json!({"operation_key": "same", "workspace_id": "b"}))
            .await
            .unwrap();
    assert_eq!(by_b["operation_id"], rb["operation_id"]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn version_guard_and_refusals_write_nothing() {
    let mut env = Env::new();
    let root = ww(&mut env, "w");
    env.workspace("ro", json!({}));
    env.workspace("confirm", json!({"profile": "workspace-write", "approvals": "confirm"}));
    std::fs::write(root.join("a.txt"), "v1\n").unwrap();
    std::fs::write(root.join("b.txt"), "b\n").unwrap();
    mkfifo(&root.join("fifo"));
    symlink(env.path().join("outside/secret.txt"), root.join("leak")).unwrap();
    symlink(env.path().join("outside"), root.join("outdir")).unwrap();
    let client = env.stdio().await;

    let v1 = call(&client, "read", json!({"workspace_id": "w", "path": "a.txt"})).await.unwrap()["version"].clone();
    std::fs::write(root.join("a.txt"), "v2 by someone else\n").unwrap();
    let p = patch("*** Update File: a.txt\n@@\n-v1\n+v3\n");
    let mut args = apply("w", &p);
    args["expected_versions"] = json!({"a.txt": v1});
    let body = refused(&client, "apply_patch", args, "VERSION_CONFLICT").await;
    assert_eq!(body["path"], "a.txt");
    assert!(
        body["operation_id"].as_str().unwrap().starts_with("op-"),
        "a refusal after begin names its operation"
    );
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "v2 by someone else\n");
    let mut absent = apply("w", &patch("*** Add File: n.txt\n+n\n"));
    absent["expected_versions"] = json!({"n.txt": "absent", "b.txt": "sha256:00"});
    refused(&client, "apply_patch", absent, "INVALID_PATCH").await;
    assert!(!root.join("n.txt").exists());

    let outside = std::fs::read_to_string(env.path().join("outside/secret.txt")).unwrap();
    let cases = [
        ("ro", patch("*** Add File: x\n+x\n"), "UNAUTHORIZED"),
        ("confirm", patch("*** Add File: x\n+x\n"), "APPROVAL_REQUIRED"),
        ("w", patch("*** Add File: b.txt\n+x\n"), "ADD_FILE_EXISTS"),
        (
            "w",
            patch("*** Update File: a.txt\n*** Move to: b.txt\n@@\n-v2 by someone else\n+moved\n"),
            "MOVE_DESTINATION_EXISTS",
        ),
        ("w", "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+c\n".to_owned(), "INVALID_PATCH"),
        ("w", patch("*** Update File: a.txt\n@@\n-not there\n+x\n"), "INVALID_PATCH"),
        ("w", patch("*** Add File: ../escape.txt\n+x\n"), "PATH_ESCAPE"),
        ("w", patch("*** Add File: /etc/evil\n+x\n"), "PATH_ESCAPE"),
        ("w", patch("*** Update File: leak\n@@\n-TOP-SECRET\n+pwned\n"), "SYMLINK_REJECTED"),
        ("w", patch("*** Add File: outdir/planted.txt\n+x\n"), "SYMLINK_REJECTED"),
        ("w", patch("*** Delete File: fifo\n"), "SPECIAL_FILE_REJECTED"),
        ("w", patch("*** Add File: link\n+x\n*** Add File: link/file\n+y\n"), "PATH_NOT_DIRECTORY"),
        ("w", patch("*** Add File: b.txt/child\n+y\n"), "PATH_NOT_DIRECTORY"),
        ("w", patch("*** Delete File: missing.txt\n"), "FILE_NOT_FOUND"),
        // Hunk 4 of 5 fails: nothing of hunks 1-3 is written.
        (
            "w",
            patch(
                "*** Add File: h1\n+1\n*** Add File: h2\n+2\n*** Update File: b.txt\n@@\n-b\n+B\n*** Update File: a.txt\n@@\n-nope\n+x\n*** Add File: h5\n+5\n",
            ),
            "INVALID_PATCH",
        ),
    ];
    for (ws, p, code) in cases {
        let body = refused(&client, "apply_patch", apply(ws, &p), code).await;
        assert!(!body["message"].as_str().unwrap().is_empty());
    }
    for f in ["x", "link", "h1", "h2", "h5", "escape.txt"] {
        assert!(!root.join(f).exists(), "{f} must not exist");
    }
    assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "b\n");
    assert_eq!(std::fs::read_to_string(env.path().join("outside/secret.txt")).unwrap(), outside);
    assert!(!env.path().join("outside/planted.txt").exists());
    // The error names the file, the chunk and the line.
    let body = refused(
        &client,
        "apply_patch",
        apply("w", &patch("*** Update File: a.txt\n@@\n-nope\n+x\n")),
        "INVALID_PATCH",
    )
    .await;
    let msg = body["message"].as_str().unwrap();
    assert!(msg.contains("a.txt") && msg.contains("chunk 1") && msg.contains("line"), "{msg}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn p6_hard_links_are_replaced_and_modes_kept() {
    use std::os::unix::fs::PermissionsExt;
    let mut env = Env::new();
    let root = ww(&mut env, "w");
    let outside = env.path().join("outside/bashrc");
    std::fs::write(&outside, "original\n").unwrap();
    std::fs::hard_link(&outside, root.join("notes.txt")).unwrap();
    std::fs::write(root.join("run.sh"), "echo 1\n").unwrap();
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let client = env.stdio().await;
    let p = patch(
        "*** Update File: notes.txt\n@@\n-original\n+changed\n*** Update File: run.sh\n@@\n-echo 1\n+echo 2\n",
    );
    assert_eq!(call(&client, "apply_patch", apply("w", &p)).await.unwrap()["status"], "applied");
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "original\n",
        "the outside inode is never written"
    );
    assert_eq!(std::fs::read_to_string(root.join("notes.txt")).unwrap(), "changed\n");
    assert_eq!(std::fs::metadata(root.join("run.sh")).unwrap().permissions().mode() & 0o777, 0o755);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_full_disk_midway_rolls_back() {
    // A real fault: the workspace is a 256 KiB tmpfs; the second write runs out of space.
    let mut env = Env::new();
    let root = ww(&mut env, "w");
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&root)
        .status()
        .is_ok_and(|s| s.success());
    assert!(mounted, "mounting a small tmpfs needs root (CI runs as root)");
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _guard = Unmount(root.clone());
    std::fs::write(root.join("a.txt"), "small\n").unwrap();
    let client = env.stdio().await;
    let big: String = (0..20_000).map(|i| format!("+line {i:08}\n")).collect();
    let p = patch(&format!(
        "*** Update File: a.txt\n@@\n-small\n+changed\n*** Add File: sub/big.txt\n{big}"
    ));
    let r = call(&client, "apply_patch", apply("w", &p)).await.unwrap();
    assert_eq!(r["status"], "failed_rolled_back", "{r}");
    assert!(r["failure"].as_str().unwrap().contains("big.txt"), "{r}");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "small\n");
    assert!(!root.join("sub").exists(), "the directory the patch created is removed too");
    let names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["a.txt"], "no temp file is left behind");
    let st = call(&client, "operation_status", json!({"operation_id": r["operation_id"]}))
        .await
        .unwrap();
    assert_eq!(st["status"], "failed_rolled_back");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn c3_one_hundred_concurrent_duplicates_apply_once() {
    let mut env = Env::new();
    let root = ww(&mut env, "w");
    std::fs::write(root.join("count.txt"), "base\n").unwrap();
    let client = std::sync::Arc::new(env.stdio().await);
    // Applying twice would add a second line: context `base` still matches afterwards.
    let p = patch("*** Update File: count.txt\n@@\n base\n+once\n");
    let mut tasks = Vec::new();
    for _ in 0..100 {
        let client = client.clone();
        let mut args = apply("w", &p);
        args["operation_key"] = json!("dup");
        // A duplicate either waits for the first and replays, or (past the 64-waiter queue)
        // gets the retryable RESOURCE_QUEUE_FULL and retries: never a second application.
        tasks.push(tokio::spawn(async move {
            loop {
                match call(&client, "apply_patch", args.clone()).await {
                    Ok(r) => return r,
                    Err(e) if e["code"] == "RESOURCE_QUEUE_FULL" => {
                        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        }));
    }
    let mut fresh = 0;
    let mut ids = std::collections::BTreeSet::new();
    for t in tasks {
        let r = t.await.unwrap();
        assert_eq!(r["status"], "applied");
        fresh += usize::from(r["replayed"] == false);
        ids.insert(r["operation_id"].as_str().unwrap().to_owned());
    }
    assert_eq!(fresh, 1, "exactly one request applies; 99 replay");
    assert_eq!(ids.len(), 1);
    assert_eq!(std::fs::read_to_string(root.join("count.txt")).unwrap(), "base\nonce\n");
}

/// The terminal record of an applied patch comes after the answer, and `operation_status`
/// answers with it, and a `read` in the meantime does not wait for it either: deterministic,
/// with the ledger's write lock held by another connection from between the patch's last
/// write and its verification (after the plan's commit) until 400 ms later, so the record
/// cannot land before then. (A record made before the answer would wait out the lock first
/// and fail the first check.)
#[tokio::test]
async fn the_answer_does_not_wait_for_the_terminal_record_but_operation_status_does() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use codespace_protocol::{ApplyPatchParams, OperationStatusParams, PatchStatus, ReadParams};

    let mut env = Env::new();
    let root = ww(&mut env, "w");
    std::fs::write(root.join("a.txt"), "old\n").unwrap();
    let db = env.path().join("ledger.sqlite3");
    let gw = crate::support::in_process_gateway(&env, codespace_store::Store::open(&db).unwrap());
    let released = Arc::new(AtomicBool::new(false));
    let (flag, ledger) = (Arc::clone(&released), db.clone());
    gw.runner().set_written_hook(Some(Arc::new(move || {
        let (held, flag, ledger) = (std::sync::mpsc::channel(), Arc::clone(&flag), ledger.clone());
        let (tx, rx) = held;
        std::thread::spawn(move || {
            let conn = rusqlite::Connection::open(&ledger).unwrap();
            conn.execute_batch("BEGIN IMMEDIATE").unwrap();
            tx.send(()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(400));
            flag.store(true, Ordering::SeqCst);
            conn.execute_batch("ROLLBACK").unwrap();
        });
        rx.recv().unwrap();
    })));
    let p: ApplyPatchParams =
        serde_json::from_value(apply("w", &patch("*** Update File: a.txt\n@@\n-old\n+new\n")))
            .unwrap();
    let applied = gw.apply_patch(p).await.unwrap();
    assert_eq!(applied.status, PatchStatus::Applied);
    assert!(!released.load(Ordering::SeqCst), "the answer waited for the terminal record");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "new\n");
    // Meanwhile the record's transaction holds the ledger's writing connection, waiting for
    // the lock: a file call takes its coordination snapshot through the read-only one and
    // does not wait.
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let read = gw
        .read(ReadParams {
            workspace_id: "w".to_owned(),
            path: "a.txt".to_owned(),
            offset: None,
            limit: None,
            image: None,
            work_id: None,
        })
        .await
        .unwrap();
    assert_eq!(read.content, "new\n");
    assert!(!released.load(Ordering::SeqCst), "the read waited for the terminal record");
    let status = gw
        .operation_status(OperationStatusParams {
            operation_id: Some(applied.operation_id.clone()),
            operation_key: None,
            workspace_id: None,
        })
        .await
        .unwrap();
    assert!(released.load(Ordering::SeqCst), "operation_status answered before the record");
    assert_eq!(status.status, PatchStatus::Applied);
    assert!(status.finished_at.is_some(), "{status:?}");
    gw.shutdown().await;
}

/// An applied patch is answered before its terminal record is written (recovery reads the
/// same answer off the disk); `operation_status` right after the answer, and a server that
/// stops right after it, still see the finished record.
#[tokio::test]
async fn an_applied_answer_is_what_the_ledger_says_at_once() {
    let mut env = Env::new();
    let root = ww(&mut env, "w");
    std::fs::write(root.join("a.txt"), "v0\n").unwrap();
    let client = env.stdio().await;
    for i in 0..30 {
        let p = patch(&format!("*** Update File: a.txt\n@@\n-v{i}\n+v{}\n", i + 1));
        let applied = call(&client, "apply_patch", apply("w", &p)).await.unwrap();
        assert_eq!(applied["status"], "applied");
        let st =
            call(&client, "operation_status", json!({"operation_id": applied["operation_id"]}))
                .await
                .unwrap();
        assert_eq!(st["status"], "applied", "round {i}: {st}");
        assert!(st["finished_at"].is_i64(), "round {i}: {st}");
    }
    client.cancel().await.unwrap();

    // The last patch's answer, then at once the end of stdin: the record is written before
    // the server exits, so the next start has nothing to recover.
    let (client, pid) = env.stdio_with(&[]).await;
    let p = patch("*** Update File: a.txt\n@@\n-v30\n+last\n");
    let applied = call(&client, "apply_patch", apply("w", &p)).await.unwrap();
    assert_eq!(applied["status"], "applied");
    client.cancel().await.unwrap();
    let gone = std::time::Instant::now();
    while std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
    {
        assert!(gone.elapsed() < std::time::Duration::from_secs(10), "the server did not exit");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let client = env.stdio().await;
    let st = call(&client, "operation_status", json!({"operation_id": applied["operation_id"]}))
        .await
        .unwrap();
    assert_eq!(st["status"], "applied");
    let names: Vec<&str> =
        st["events"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["minted", "planned", "finished"], "nothing was recovered: {st}");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "last\n");
    client.cancel().await.unwrap();
}
