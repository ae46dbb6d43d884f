//! Confirmation holds across crashes: the real server SIGKILLed between grant and resume
//! and at random instants during resumes, and holds forced into `resuming` (as a crash
//! leaves them) in the ledger file: a patch is reconciled from the ledger and never applied
//! twice; an interrupted command is never started again.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};

use crate::approvals::{Holds, append};
use crate::support::{RawStdio, call, refused};

fn start(h: &Holds) -> RawStdio {
    RawStdio::start(&h.env, &["--operations-db".as_ref(), h.db.as_os_str()])
}

/// One tool call on a raw connection: Ok(structured) or Err(ErrorBody).
fn raw_call(raw: &mut RawStdio, id: u64, name: &str, args: Value) -> Result<Value, Value> {
    raw.send(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args}}));
    let reply = raw.recv().expect("an answer");
    let result = &reply["result"];
    if result["isError"] == true {
        let text = result["content"][0]["text"].as_str().unwrap();
        Err(serde_json::from_str(text).unwrap())
    } else {
        Ok(result["structuredContent"].clone())
    }
}

fn held(raw: &mut RawStdio, line: &str) -> String {
    let body = raw_call(raw, 1, "apply_patch", append("c", line)).unwrap_err();
    assert_eq!(body["code"], "APPROVAL_REQUIRED", "{body}");
    body["approval_id"].as_str().unwrap().to_owned()
}

fn grant(raw: &mut RawStdio, id: &str) {
    let r = raw_call(raw, 2, "approval_resolve", json!({"approval_id": id, "decision": "grant"}));
    assert_eq!(r.unwrap()["state"], "granted");
}

fn count(h: &Holds, line: &str) -> usize {
    h.file("c").lines().filter(|l| *l == line).count()
}

#[test]
fn a_kill_between_grant_and_resume_loses_nothing() {
    let h = Holds::new();
    let mut raw = start(&h);
    let id = held(&mut raw, "after-kill");
    grant(&mut raw, &id);
    raw.child.kill().unwrap();
    raw.child.wait().unwrap();
    let mut raw = start(&h);
    let done = raw_call(&mut raw, 3, "operation_resume", json!({"approval_id": id})).unwrap();
    assert_eq!(done["apply_patch"]["status"], "applied", "{done}");
    assert_eq!(count(&h, "after-kill"), 1);
}

/// SIGKILL at random instants after `operation_resume` was sent; after each restart the
/// same resume settles the hold. Never applied twice, and the answer matches the disk.
#[test]
fn kills_during_resumes_never_apply_twice() {
    let h = Holds::new();
    let mut rng = StdRng::seed_from_u64(0x05ee_d0f4_011d);
    let mut outcomes = std::collections::BTreeMap::<String, u32>::new();
    let mut rerun = 0;
    for round in 0..24 {
        let line = format!("round-{round}");
        let mut raw = start(&h);
        let id = held(&mut raw, &line);
        grant(&mut raw, &id);
        raw.send(&json!({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"operation_resume","arguments":{"approval_id": id}}}));
        std::thread::sleep(Duration::from_micros(rng.random_range(0..25_000)));
        let _ = raw.child.kill();
        raw.child.wait().unwrap();

        let mut raw = start(&h);
        let settled = raw_call(&mut raw, 3, "operation_resume", json!({"approval_id": id}));
        let again = raw_call(&mut raw, 4, "operation_resume", json!({"approval_id": id}));
        assert_eq!(
            format!("{settled:?}"),
            format!("{again:?}"),
            "round {round}: a resume repeats its answer"
        );
        let status = match &settled {
            Ok(v) => v["apply_patch"]["status"].as_str().unwrap().to_owned(),
            Err(body) => panic!("round {round}: {body}"),
        };
        // Nothing of a rolled-back attempt is on disk, so the resume runs it again: every
        // granted hold ends applied, exactly once.
        assert_eq!(status, "applied", "round {round}: {settled:?}");
        assert_eq!(count(&h, &line), 1, "round {round}: file {:?}", h.file("c"));
        *outcomes.entry(status).or_insert(0) += 1;
        let ops = ledger_ops(&h, &id);
        rerun += u32::from(ops > 1);
        assert!(ops <= 2, "round {round}: {ops} ledger rows");
        let _ = raw.finish();
    }
    eprintln!("kills during resumes: {outcomes:?}, re-run after recovery: {rerun}");
}

/// How many ledger operations hold `id` began (a re-run after recovery adds one).
fn ledger_ops(h: &Holds, id: &str) -> u32 {
    let conn = rusqlite::Connection::open(&h.db).unwrap();
    conn.query_row(
        "SELECT count(*) FROM operations WHERE fingerprint = \
         (SELECT fingerprint FROM approvals WHERE approval_id = ?1)",
        [id],
        |r| r.get(0),
    )
    .unwrap()
}

/// Sets a hold's columns in the ledger file, as a crash between two steps leaves them.
fn force(h: &Holds, id: &str, state: &str, operation_id: Option<&str>) {
    let conn = rusqlite::Connection::open(&h.db).unwrap();
    let n = conn
        .execute(
            "UPDATE approvals SET state = ?2, operation_id = ?3, resolved_at = 1 WHERE approval_id = ?1",
            rusqlite::params![id, state, operation_id],
        )
        .unwrap();
    assert_eq!(n, 1);
}

#[tokio::test]
async fn a_patch_found_resuming_runs_under_its_reserved_id_when_the_ledger_never_saw_it() {
    let h = Holds::new();
    let id = {
        let client = h.client().await;
        let body =
            refused(&client, "apply_patch", append("c", "reserved"), "APPROVAL_REQUIRED").await;
        client.cancel().await.unwrap();
        body["approval_id"].as_str().unwrap().to_owned()
    };
    let reserved = "op-00000000-0000-4000-8000-000000000001";
    force(&h, &id, "resuming", Some(reserved));
    let client = h.client().await;
    let done = call(&client, "operation_resume", json!({"approval_id": id})).await.unwrap();
    assert_eq!(done["apply_patch"]["operation_id"], reserved, "{done}");
    assert_eq!(done["apply_patch"]["status"], "applied");
    assert_eq!(count(&h, "reserved"), 1);
    // Forced back into resuming with its ledger row present: reconciled, not applied again.
    client.cancel().await.unwrap();
    let conn = rusqlite::Connection::open(&h.db).unwrap();
    let args = append("c", "reserved").to_string();
    let n = conn
        .execute(
            "UPDATE approvals SET state = 'resuming', params_json = ?2, result_json = NULL \
             WHERE approval_id = ?1",
            rusqlite::params![id, args],
        )
        .unwrap();
    assert_eq!(n, 1);
    drop(conn);
    let client = h.client().await;
    let again = call(&client, "operation_resume", json!({"approval_id": id})).await.unwrap();
    assert_eq!(again["apply_patch"]["operation_id"], reserved);
    assert_eq!(count(&h, "reserved"), 1, "never applied twice");
}

#[tokio::test]
async fn an_interrupted_command_resume_is_ambiguous_and_never_respawned() {
    let h = Holds::new();
    let exec = json!({"workspace_id": "c", "command": ["sh", "-c", "echo ran >> marker.txt"]});
    let id = {
        let client = h.client().await;
        let body = refused(&client, "exec_command", exec.clone(), "APPROVAL_REQUIRED").await;
        client.cancel().await.unwrap();
        body["approval_id"].as_str().unwrap().to_owned()
    };
    force(&h, &id, "resuming", None);
    let client = h.client().await;
    let body =
        refused(&client, "operation_resume", json!({"approval_id": id}), "APPROVAL_AMBIGUOUS")
            .await;
    assert_eq!(body["approval_id"], id.as_str());
    assert!(body["message"].as_str().unwrap().contains("not started again"), "{body}");
    refused(&client, "operation_resume", json!({"approval_id": id}), "APPROVAL_AMBIGUOUS").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!h.root("c").join("marker.txt").exists(), "the command was never started");
    // A patch hold found resuming without a reserved id cannot be told either.
    let pid = refused(&client, "apply_patch", append("c", "unreserved"), "APPROVAL_REQUIRED").await;
    let pid = pid["approval_id"].as_str().unwrap().to_owned();
    client.cancel().await.unwrap();
    force(&h, &pid, "resuming", None);
    let client = h.client().await;
    refused(&client, "operation_resume", json!({"approval_id": pid}), "APPROVAL_AMBIGUOUS").await;
    assert_eq!(count(&h, "unreserved"), 0);
}
