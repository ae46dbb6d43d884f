//! Undo records are bounded: the operator's `--undo-max-bytes` and `--undo-max-age-secs`
//! drop the oldest first (what an applied operation keeps for a revert, and what a failed
//! one preserved in the undo directory), `operations list` shows what is kept and what was
//! pruned, and a revert of a pruned operation answers `UNDO_PRUNED`, writing nothing.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use codespace_protocol::{ApplyPatchParams, PatchStatus};
use codespace_store::{Retention, Store};
use serde_json::json;

use crate::support::{Env, call, refused};

/// 200 bytes: one line repeated.
fn content(tag: usize) -> String {
    format!("{tag:04} {}\n", "x".repeat(194))
}

fn replace(from: usize, to: usize) -> String {
    format!(
        "*** Begin Patch\n*** Update File: big.txt\n@@\n-{}+{}*** End Patch\n",
        content(from),
        content(to)
    )
}

fn list(env: &Env) -> Vec<String> {
    let out = env.command().args(["operations", "list"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
}

/// The bytes `operations list` says are kept, over every operation.
fn kept(lines: &[String]) -> u64 {
    lines
        .iter()
        .filter_map(|l| l.split("\tundo: ").nth(1))
        .filter_map(|u| u.split(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[tokio::test]
async fn the_undo_records_stay_within_the_bytes_bound_oldest_pruned_first() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    std::fs::write(root.join("big.txt"), content(0)).unwrap();
    let (client, _) = env.stdio_with(&[("CODESPACE_UNDO_MAX_BYTES", "600")]).await;
    let mut ops = Vec::new();
    for i in 0..8 {
        let patch = replace(i, i + 1);
        let done = call(&client, "apply_patch", json!({"workspace_id": "w", "patch": patch}))
            .await
            .unwrap();
        assert_eq!(done["status"], "applied", "{done}");
        ops.push(done["operation_id"].as_str().unwrap().to_owned());
    }
    // Wait for the last terminal record (written after the reply), through the ledger.
    call(&client, "operation_status", json!({"operation_id": ops[7]})).await.unwrap();
    let lines = list(&env);
    assert!(kept(&lines) <= 600, "more kept than the bound: {lines:#?}");
    assert_eq!(kept(&lines), 600, "the newest three records are kept: {lines:#?}");
    // The oldest are shown pruned, the newest kept.
    let line_of = |op: &str| lines.iter().find(|l| l.starts_with(op)).unwrap().clone();
    assert!(line_of(&ops[0]).contains("undo: pruned at "), "{lines:#?}");
    assert!(line_of(&ops[7]).contains("undo: 200 bytes"), "{lines:#?}");
    let shown = call(&client, "operation_status", json!({"operation_id": ops[0]})).await.unwrap();
    assert!(shown["undo"]["pruned_at"].is_i64(), "{shown}");
    assert_eq!(shown["undo"]["kept_bytes"], 0, "{shown}");

    // A pruned record answers UNDO_PRUNED and writes nothing. (Its files changed since
    // anyway; the record's absence is what is reported.)
    let body = refused(
        &client,
        "operation_revert",
        json!({"workspace_id": "w", "operation_id": ops[0]}),
        "UNDO_PRUNED",
    )
    .await;
    assert!(body["message"].as_str().unwrap().contains("retention"), "{body}");
    assert_eq!(std::fs::read_to_string(root.join("big.txt")).unwrap(), content(8));
    // The newest still reverts.
    let back =
        call(&client, "operation_revert", json!({"workspace_id": "w", "operation_id": ops[7]}))
            .await
            .unwrap();
    assert_eq!(back["status"], "applied", "{back}");
    assert_eq!(std::fs::read_to_string(root.join("big.txt")).unwrap(), content(7));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn undo_records_older_than_the_age_bound_are_pruned() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    std::fs::write(root.join("big.txt"), content(0)).unwrap();
    let (client, _) = env.stdio_with(&[("CODESPACE_UNDO_MAX_AGE_SECS", "1")]).await;
    let first = call(&client, "apply_patch", json!({"workspace_id": "w", "patch": replace(0, 1)}))
        .await
        .unwrap();
    // Ages are whole seconds: more than one has passed once two have.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let second = call(&client, "apply_patch", json!({"workspace_id": "w", "patch": replace(1, 2)}))
        .await
        .unwrap();
    let old = call(&client, "operation_status", json!({"operation_id": first["operation_id"]}))
        .await
        .unwrap();
    assert!(old["undo"]["pruned_at"].is_i64(), "{old}");
    let new = call(&client, "operation_status", json!({"operation_id": second["operation_id"]}))
        .await
        .unwrap();
    assert_eq!(new["undo"]["kept_bytes"], 200, "{new}");
    client.cancel().await.unwrap();
}

/// Bytes and operation directories in the undo directory.
fn undo_dir_usage(dir: &Path) -> (u64, usize) {
    let Ok(ops) = std::fs::read_dir(dir) else { return (0, 0) };
    let mut bytes = 0;
    let mut count = 0;
    for op in ops {
        count += 1;
        for entry in std::fs::read_dir(op.unwrap().path()).unwrap() {
            bytes += entry.unwrap().metadata().unwrap().len();
        }
    }
    (bytes, count)
}

/// Content a failed operation preserved is kept until it is restored or the bound drops
/// it: twelve moves whose source directory is swapped away mid-write each preserve 200
/// bytes, and the undo directory never holds more than the bound.
#[tokio::test]
async fn the_undo_directory_stays_within_the_bound() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write"}));
    let db = env.path().join("ledger.sqlite3");
    let mut store = Store::open(&db).unwrap();
    store.set_retention(Retention { max_age_secs: 3600, max_bytes: 500 });
    let gw = crate::support::in_process_gateway(&env, store);
    let undo = env.path().join("ledger.sqlite3.undo");
    let mut most = 0;
    for i in 0..12 {
        let d = format!("d{i}");
        std::fs::create_dir(root.join(&d)).unwrap();
        std::fs::write(root.join(&d).join("mv.txt"), content(i)).unwrap();
        let (r, outside) = (root.clone(), env.path().join("outside"));
        let swapped = d.clone();
        gw.runner().set_written_hook(Some(Arc::new(move || {
            std::fs::rename(r.join(&swapped), r.join(format!("{swapped}.moved"))).unwrap();
            std::os::unix::fs::symlink(&outside, r.join(&swapped)).unwrap();
        })));
        let patch = format!(
            "*** Begin Patch\n*** Update File: {d}/mv.txt\n*** Move to: e{i}/mv.txt\n@@\n-{}+moved\n*** End Patch\n",
            content(i)
        );
        let p: ApplyPatchParams =
            serde_json::from_value(json!({"workspace_id": "w", "patch": patch})).unwrap();
        let result = gw.apply_patch(p).await.unwrap();
        assert_eq!(result.status, PatchStatus::FailedPartial, "{result:?}");
        let (bytes, dirs) = undo_dir_usage(&undo);
        assert!(bytes <= 500, "round {i}: {bytes} bytes in the undo directory");
        most = most.max(dirs);
    }
    gw.shutdown().await;
    assert!(most <= 2, "at most two 200-byte records fit in 500 bytes, saw {most}");
    assert_eq!(undo_dir_usage(&undo), (400, 2));
}
