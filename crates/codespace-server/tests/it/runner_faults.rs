//! Faults injected into a runner worker (the `fault-server` example, the only program that
//! reads `CODESPACE_TEST_WORKER_*`): what a lost answer becomes, what a worker killed
//! mid-patch leaves behind, what a hold consumed as unknown answers after recovery; and the
//! real `codespace` binary obeys none of those variables.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::process::alive;
use crate::runner_uds::{
    NEW, OLD, contents, three_file_patch, three_files, wait_for_file, wait_gone, worker_of,
};
use crate::support::{Env, bin, call, fault_bin, refused};

/// The `codespace` binary, however it was built (this test build turns the runner's hooks
/// on), ignores the fault variables: a worker told to hang up after a patch answers it.
#[tokio::test]
async fn the_codespace_binary_ignores_the_fault_variables() {
    let mut env = Env::new();
    let root = three_files(&mut env);
    let hang_up = [("CODESPACE_TEST_WORKER_HANG_UP", "apply")];
    let (mut worker, socket) = external_worker_of(&env, Path::new(bin()), &hang_up);
    let vars = [("CODESPACE_RUNNER_SOCKET", socket.to_str().unwrap())];
    let (client, _) = env.stdio_with(&vars).await;
    let args = json!({"workspace_id": "w", "patch": three_file_patch()});
    let applied = call(&client, "apply_patch", args).await.unwrap();
    assert_eq!(applied["status"], "applied", "the fault was obeyed: {applied}");
    assert_eq!(contents(&root), NEW);
    // A started worker is not told either: `--runner uds` with a stall at the first write.
    let marker = env.path().join("stalled");
    let stall = [
        ("CODESPACE_RUNNER", "uds"),
        ("CODESPACE_TEST_WORKER_STALL_AT", "0"),
        ("CODESPACE_TEST_WORKER_MARKER", marker.to_str().unwrap()),
    ];
    client.cancel().await.unwrap();
    let _ = worker.kill();
    let _ = worker.wait();
    let (client, _) = env.stdio_with(&stall).await;
    let back = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a new\n+a old\n*** End Patch\n";
    let applied = call(&client, "apply_patch", json!({"workspace_id": "w", "patch": back}));
    assert_eq!(applied.await.unwrap()["status"], "applied");
    assert!(!marker.exists(), "the started worker stalled at its write");
    client.cancel().await.unwrap();
}

/// Kill -9 the worker before the first write, between two, and after the last: the server
/// exits non-zero, the next start settles the operation from the disk (all old, or all new
/// when every write had landed), and a replay under the same key never applies twice.
#[tokio::test]
async fn a_worker_killed_mid_patch_leaves_no_half_applied_operation() {
    for (stall, expect_new) in [("0", false), ("1", false), ("", true)] {
        let mut env = Env::new();
        let root = three_files(&mut env);
        let marker = env.path().join("stalled");
        let vars = [
            ("CODESPACE_RUNNER", "uds"),
            ("CODESPACE_TEST_WORKER_STALL_AT", stall),
            ("CODESPACE_TEST_WORKER_MARKER", marker.to_str().unwrap()),
        ];
        let (client, server) = env.stdio_of(&fault_bin(), &vars).await;
        let args = json!({"workspace_id": "w", "patch": three_file_patch(), "operation_key": "k1"});
        let stop = {
            let marker = marker.clone();
            tokio::task::spawn_blocking(move || {
                wait_for_file(
                    &marker,
                    Duration::from_secs(20),
                    "the worker never stopped at its write (a test-hooks build?)",
                );
                let worker = worker_of(server);
                rustix::process::kill_process(
                    rustix::process::Pid::from_raw(worker as i32).unwrap(),
                    rustix::process::Signal::KILL,
                )
                .unwrap();
            })
        };
        // The server cannot serve without its worker: it ends, and the call with it.
        let pending = crate::support::try_call(&client, "apply_patch", args.clone());
        let (_, stopped) =
            tokio::join!(tokio::time::timeout(Duration::from_secs(30), pending), stop);
        stopped.unwrap();
        wait_gone(server, Duration::from_secs(10));
        drop(client);

        let client = env.stdio_with(&[("CODESPACE_RUNNER", "uds")]).await.0;
        let status =
            call(&client, "operation_status", json!({"workspace_id": "w", "operation_key": "k1"}))
                .await
                .unwrap();
        let want = if expect_new { "applied" } else { "failed_rolled_back" };
        assert_eq!(status["status"], want, "stall {stall:?}: {status}");
        assert_eq!(status["recovered"], true, "{status}");
        let files = if expect_new { NEW } else { OLD };
        assert_eq!(contents(&root), files, "stall {stall:?}");
        let again = call(&client, "apply_patch", args.clone()).await.unwrap();
        assert_eq!(again["replayed"], true, "{again}");
        assert_eq!(again["operation_id"], status["operation_id"]);
        assert_eq!(contents(&root), files, "a replay applied again (stall {stall:?})");
    }
}

/// A worker started separately (`worker --socket`), with a fault: the fault server's.
fn external_worker(env: &Env, fault: Option<&str>) -> (Child, PathBuf) {
    match fault {
        Some(kind) => external_worker_with(env, &[("CODESPACE_TEST_WORKER_HANG_UP", kind)]),
        None => external_worker_with(env, &[]),
    }
}

/// [`external_worker`] with these fault variables, run by the fault server.
fn external_worker_with(env: &Env, faults: &[(&str, &str)]) -> (Child, PathBuf) {
    external_worker_of(env, &fault_bin(), faults)
}

/// A worker of `program` on a socket of `env`'s, with `faults` in its environment.
fn external_worker_of(env: &Env, program: &Path, faults: &[(&str, &str)]) -> (Child, PathBuf) {
    let socket = env.path().join("worker.sock");
    let mut cmd = env.command_of(program);
    cmd.arg("worker").arg("--socket").arg(&socket).stdin(Stdio::null()).stdout(Stdio::null());
    cmd.envs(faults.iter().copied());
    let child = cmd.spawn().unwrap();
    wait_for_file(&socket, Duration::from_secs(10), "the worker never listened");
    (child, socket)
}

/// The connection drops after the patch was sent and ran, before its answer: the caller
/// hears `unknown` (never `rejected`), the ledger keeps it unfinished, the server keeps
/// serving and says plainly that its runner is gone (`TIMEOUT`), and the next start
/// settles it from the disk; a replay under the same key does not apply it again.
#[tokio::test]
async fn a_lost_answer_is_unknown_then_settled_from_the_disk() {
    let mut env = Env::new();
    let root = three_files(&mut env);
    let (mut worker, socket) = external_worker(&env, Some("apply"));
    let (client, _) =
        env.stdio_with(&[("CODESPACE_RUNNER_SOCKET", socket.to_str().unwrap())]).await;
    let args = json!({"workspace_id": "w", "patch": three_file_patch(), "operation_key": "k2"});
    let r = call(&client, "apply_patch", args.clone()).await.unwrap();
    assert_eq!(r["status"], "unknown", "{r}");
    assert!(r["failure"].as_str().unwrap().contains("may have run"), "{r}");
    assert_eq!(contents(&root), NEW, "the worker ran the patch before hanging up");
    let status = call(&client, "operation_status", json!({"operation_id": r["operation_id"]}))
        .await
        .unwrap();
    assert_eq!(status["status"], "unknown", "{status}");
    // No reconnect: every file tool says the runner is gone, and nothing runs.
    let e =
        refused(&client, "read", json!({"workspace_id": "w", "path": "a.txt"}), "TIMEOUT").await;
    assert!(e["message"].as_str().unwrap().contains("nothing ran"), "{e}");
    let info = call(&client, "workspace_info", json!({})).await.unwrap();
    assert_eq!(info["runner"]["mode"], "uds", "{info}");
    assert_eq!(info["runner"]["state"], "lost", "{info}");
    client.cancel().await.unwrap();
    assert!(worker.wait().unwrap().success(), "the worker ends when its gateway connection does");

    let (_worker, socket) = {
        std::fs::remove_file(&socket).ok();
        external_worker(&env, None)
    };
    let client = env.stdio_with(&[("CODESPACE_RUNNER_SOCKET", socket.to_str().unwrap())]).await.0;
    let status = call(&client, "operation_status", json!({"operation_id": r["operation_id"]}))
        .await
        .unwrap();
    assert_eq!(status["status"], "applied", "{status}");
    let again = call(&client, "apply_patch", args).await.unwrap();
    assert_eq!(
        (again["replayed"].clone(), again["status"].clone()),
        (json!(true), json!("applied"))
    );
    assert_eq!(contents(&root), NEW);
}

/// The spawn's answer is lost: `dispatch_status: "unknown"`, with the id the command would
/// have, never a second start.
#[tokio::test]
async fn a_lost_spawn_answer_says_dispatch_unknown() {
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    let (mut worker, socket) = external_worker(&env, Some("spawn"));
    let (client, _) =
        env.stdio_with(&[("CODESPACE_RUNNER_SOCKET", socket.to_str().unwrap())]).await;
    let r =
        call(&client, "exec_command", json!({"workspace_id": "w", "command": ["sleep", "30.271"]}))
            .await
            .unwrap();
    assert_eq!(r["dispatch_status"], "unknown", "{r}");
    assert!(r["process_id"].as_str().unwrap().starts_with("proc-"), "{r}");
    // The worker saw its gateway go and killed what it started.
    assert!(worker.wait().unwrap().success());
    // A marker no other test runs, so a concurrent test's sleep is not mistaken for ours.
    assert!(alive("sleep 30.271").is_empty(), "{:?}", alive("sleep 30.271"));
}

/// A granted hold over three files whose resume lost its answer (the worker runs with
/// `faults`; `interrupt` ends it mid-call): consumed as `unknown`. Returns the env, the
/// workspace, the hold's id, that first answer and the ledger's path.
async fn hold_consumed_as_unknown(
    faults: &[(&str, &str)],
    interrupt: impl FnOnce(&mut Child) + Send + 'static,
) -> (Env, PathBuf, serde_json::Value, serde_json::Value, PathBuf) {
    let mut env = Env::new();
    let config = json!({"profile": "workspace-write", "sandbox": "off", "approvals": "confirm"});
    let root = env.workspace("w", config);
    for (i, n) in ["a", "b", "c"].iter().enumerate() {
        std::fs::write(root.join(format!("{n}.txt")), OLD[i]).unwrap();
    }
    let db = env.path().join("ledger.sqlite3");
    let (worker, socket) = external_worker_with(&env, faults);
    let ledger = ("CODESPACE_OPERATIONS_DB", db.to_str().unwrap());
    let (client, _) =
        env.stdio_with(&[("CODESPACE_RUNNER_SOCKET", socket.to_str().unwrap()), ledger]).await;
    let args = json!({"workspace_id": "w", "patch": three_file_patch()});
    let held = refused(&client, "apply_patch", args, "APPROVAL_REQUIRED").await;
    let id = held["approval_id"].clone();
    let grant = json!({"approval_id": id, "decision": "grant"});
    call(&client, "approval_resolve", grant).await.unwrap();
    let resume = call(&client, "operation_resume", json!({"approval_id": id}));
    let interrupted = tokio::task::spawn_blocking(move || {
        let mut worker = worker;
        interrupt(&mut worker);
        worker
    });
    let (first, worker) = tokio::join!(resume, interrupted);
    let (first, mut worker) = (first.unwrap(), worker.unwrap());
    assert_eq!(first["apply_patch"]["status"], "unknown", "{first}");
    client.cancel().await.unwrap();
    let _ = worker.wait();
    std::fs::remove_file(&socket).ok();
    (env, root, id, first, db)
}

/// After a restart (a fresh worker), resuming the hold twice answers `want` for the same
/// operation, and the ledger keeps that outcome with the hold.
async fn resumes_answer(
    env: &Env,
    id: &serde_json::Value,
    first: &serde_json::Value,
    db: &Path,
    want: &str,
) {
    let (_worker, socket) = external_worker(env, None);
    let ledger = ("CODESPACE_OPERATIONS_DB", db.to_str().unwrap());
    let client =
        env.stdio_with(&[("CODESPACE_RUNNER_SOCKET", socket.to_str().unwrap()), ledger]).await.0;
    for round in 0..2 {
        let again = call(&client, "operation_resume", json!({"approval_id": id})).await.unwrap();
        let patch = &again["apply_patch"];
        assert_eq!(patch["status"], want, "round {round}: {again}");
        assert_eq!(patch["operation_id"], first["apply_patch"]["operation_id"], "{again}");
        assert_eq!(again["state"], "consumed", "{again}");
    }
    let conn = rusqlite::Connection::open(db).unwrap();
    let sql = "SELECT result_json FROM approvals WHERE approval_id = ?1";
    let stored: String = conn.query_row(sql, [id.as_str().unwrap()], |r| r.get(0)).unwrap();
    assert!(stored.contains(&format!(r#""status":"{want}""#)), "{stored}");
}

/// A held patch whose resume lost its answer after the worker ran it is consumed as
/// `unknown`. Once the next start has settled the operation from the disk (applied),
/// resuming the hold again answers that, and keeps saying it; nothing is applied again.
#[tokio::test]
async fn a_hold_consumed_as_unknown_answers_what_recovery_settled() {
    let hang_up = [("CODESPACE_TEST_WORKER_HANG_UP", "apply")];
    let (env, root, id, first, db) = hold_consumed_as_unknown(&hang_up, |_| {}).await;
    assert_eq!(contents(&root), NEW, "the worker ran the patch before hanging up");
    resumes_answer(&env, &id, &first, &db, "applied").await;
    assert_eq!(contents(&root), NEW, "nothing was applied again");
}

/// The same when the worker was killed before its first write: recovery finds every file
/// as it was and rolls the operation back, and the consumed hold answers
/// `failed_rolled_back` (its arguments are gone: a new request needs a new hold).
#[tokio::test]
async fn a_hold_consumed_as_unknown_answers_a_rollback_by_recovery() {
    let marker_dir = tempfile::tempdir().unwrap();
    let marker = marker_dir.path().join("stalled");
    let stall = [
        ("CODESPACE_TEST_WORKER_STALL_AT", "0"),
        ("CODESPACE_TEST_WORKER_MARKER", marker.to_str().unwrap()),
    ];
    let stalled = marker.clone();
    let kill = move |worker: &mut Child| {
        wait_for_file(&stalled, Duration::from_secs(20), "the worker never stopped at its write");
        worker.kill().unwrap();
    };
    let (env, root, id, first, db) = hold_consumed_as_unknown(&stall, kill).await;
    assert_eq!(contents(&root), OLD, "killed before its first write");
    resumes_answer(&env, &id, &first, &db, "failed_rolled_back").await;
    assert_eq!(contents(&root), OLD);
}
