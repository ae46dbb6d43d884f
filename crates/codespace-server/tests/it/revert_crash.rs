//! A revert interrupted by kill -9 is recovered all-or-nothing, as a patch is: the worker
//! killed before its first write, between its writes and after its last (the fault server's
//! stall), and the real server killed at random instants during reverts. After each restart
//! the workspace is either exactly as the operation left it (the revert rolled back, its
//! claim released) or exactly as before the operation (the revert applied), the ledger says
//! which, and a replay under the revert's key never writes again.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};

use crate::revert::{EVERY_KIND, apply, assert_after, assert_before, fixture};
use crate::runner_uds::{wait_for_file, wait_gone, worker_of};
use crate::support::RawStdio;
use crate::support::{Env, call, fault_bin};

const UDS: (&str, &str) = ("CODESPACE_RUNNER", "uds");

/// Kill -9 the worker at the revert's first write (nothing written), after its three
/// writes before its two removals (half done), and after every write before verification
/// (all done): the next start rolls the first two back and records the third as applied.
#[tokio::test]
async fn a_worker_killed_mid_revert_leaves_no_half_reverted_operation() {
    for (stall, reverted) in [("0", false), ("3", false), ("", true)] {
        let mut env = Env::new();
        let root = fixture(&mut env);
        let client = env.stdio_with(&[UDS]).await.0;
        let op = apply(&client, EVERY_KIND).await;
        client.cancel().await.unwrap();

        let marker = env.path().join("stalled");
        let vars = [
            UDS,
            ("CODESPACE_TEST_WORKER_STALL_AT", stall),
            ("CODESPACE_TEST_WORKER_MARKER", marker.to_str().unwrap()),
        ];
        let (client, server) = env.stdio_of(&fault_bin(), &vars).await;
        let args = json!({"workspace_id": "w", "operation_id": op, "operation_key": "undo"});
        let stop = {
            let marker = marker.clone();
            tokio::task::spawn_blocking(move || {
                wait_for_file(&marker, Duration::from_secs(20), "the worker never stalled");
                let worker = worker_of(server);
                rustix::process::kill_process(
                    rustix::process::Pid::from_raw(worker as i32).unwrap(),
                    rustix::process::Signal::KILL,
                )
                .unwrap();
            })
        };
        let pending = crate::support::try_call(&client, "operation_revert", args.clone());
        let (_, stopped) =
            tokio::join!(tokio::time::timeout(Duration::from_secs(30), pending), stop);
        stopped.unwrap();
        wait_gone(server, Duration::from_secs(10));
        drop(client);

        let client = env.stdio_with(&[UDS]).await.0;
        let by_key = json!({"workspace_id": "w", "operation_key": "undo"});
        let status = call(&client, "operation_status", by_key).await.unwrap();
        let want = if reverted { "applied" } else { "failed_rolled_back" };
        assert_eq!(status["status"], want, "stall {stall:?}: {status}");
        assert_eq!(status["recovered"], true, "{status}");
        assert_eq!(status["reverts"], op.as_str(), "{status}");
        let target = call(&client, "operation_status", json!({"operation_id": op})).await.unwrap();
        if reverted {
            assert_before(&root);
            assert_eq!(target["reverted_by"], status["operation_id"], "{target}");
        } else {
            assert_after(&root);
            assert!(target.get("reverted_by").is_none(), "the claim stayed: {target}");
        }
        // A replay under the key answers the record and writes nothing.
        let again = call(&client, "operation_revert", args).await.unwrap();
        assert_eq!(again["replayed"], true, "{again}");
        assert_eq!(again["operation_id"], status["operation_id"]);
        if reverted {
            assert_before(&root);
        } else {
            // Rolled back: a new revert runs from the undo record, which is still there.
            assert_after(&root);
            let fresh = json!({"workspace_id": "w", "operation_id": op});
            let done = call(&client, "operation_revert", fresh).await.unwrap();
            assert_eq!(done["status"], "applied", "{done}");
            assert_before(&root);
        }
        client.cancel().await.unwrap();
    }
}

fn raw_call(raw: &mut RawStdio, id: u64, name: &str, args: Value) -> Result<Value, Value> {
    raw.send(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args}}));
    let reply = raw.recv().expect("an answer");
    let result = &reply["result"];
    if result["isError"] == true {
        Err(serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap())
    } else {
        Ok(result["structuredContent"].clone())
    }
}

/// SIGKILL of the server at random instants after `operation_revert` was sent. After each
/// restart the disk is all-before or all-after, and agrees with the ledger.
#[test]
fn kills_during_reverts_leave_all_or_nothing() {
    let mut env = Env::new();
    let root = fixture(&mut env);
    let db = env.path().join("ledger.sqlite3");
    let start = |env: &Env| RawStdio::start(env, &["--operations-db".as_ref(), db.as_os_str()]);
    let mut rng = StdRng::seed_from_u64(0x2e7e_27ed);
    let mut seen = std::collections::BTreeMap::<String, u32>::new();
    for round in 0..24 {
        let mut raw = start(&env);
        let applied =
            raw_call(&mut raw, 1, "apply_patch", json!({"workspace_id": "w", "patch": EVERY_KIND}))
                .unwrap();
        let op = applied["operation_id"].as_str().unwrap().to_owned();
        let key = format!("undo-{round}");
        let args = json!({"workspace_id": "w", "operation_id": op, "operation_key": key});
        raw.send(&json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"operation_revert","arguments":args}}));
        std::thread::sleep(Duration::from_micros(rng.random_range(0..60_000)));
        let _ = raw.child.kill();
        raw.child.wait().unwrap();

        let mut raw = start(&env);
        let by_key = json!({"workspace_id": "w", "operation_key": key});
        let outcome = match raw_call(&mut raw, 3, "operation_status", by_key) {
            Ok(status) => status["status"].as_str().unwrap().to_owned(),
            // The kill came before the revert reached the ledger: nothing was written.
            Err(body) => {
                assert_eq!(body["code"], "OPERATION_NOT_FOUND", "{body}");
                "never recorded".to_owned()
            }
        };
        *seen.entry(outcome.clone()).or_default() += 1;
        if outcome == "applied" {
            assert_before(&root);
        } else {
            assert!(
                ["failed_rolled_back", "rejected", "never recorded"].contains(&outcome.as_str()),
                "round {round}: {outcome}"
            );
            assert_after(&root);
            // Not reverted: the operation still reverts, once.
            let fresh = json!({"workspace_id": "w", "operation_id": op});
            let done = raw_call(&mut raw, 4, "operation_revert", fresh).unwrap();
            assert_eq!(done["status"], "applied", "round {round}: {done}");
            assert_before(&root);
        }
        let _ = raw.child.kill();
        raw.child.wait().unwrap();
    }
    eprintln!("revert outcomes after a kill: {seen:?}");
}
