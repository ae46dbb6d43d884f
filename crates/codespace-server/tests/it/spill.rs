//! Output beyond the in-memory ring spills to the state directory, end to end: a client
//! that keeps reading gets every byte of `seq 1 2000000`, the cap (`CODESPACE_PROCESS_SPILL_BYTES`)
//! drops the oldest and `output_lost` says so, `workspace_info` reports the cap, and what a
//! dead server left is swept at the next start while a live server's files stay.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::process::{exec, wait_exit};
use crate::support::{Client, Env, call};

fn seq_output(n: u32) -> String {
    (1..=n).map(|i| format!("{i}\n")).collect()
}

/// Reads from `cursor` to `eof`, 256 KiB per call, each call waiting for output; returns
/// the text and whether any reply said `output_lost`.
async fn drain(client: &Client, id: &str, mut cursor: u64) -> (String, Vec<Value>) {
    let (mut out, mut lost) = (String::new(), Vec::new());
    loop {
        let args =
            json!({"process_id": id, "cursor": cursor, "max_bytes": 262_144, "wait_ms": 30_000});
        let r = call(client, "read_process", args).await.unwrap();
        if r["output_lost"] == true {
            lost.push(r.clone());
        }
        out.push_str(r["chunk"].as_str().unwrap());
        cursor = r["cursor"].as_u64().unwrap();
        if r["eof"] == true {
            return (out, lost);
        }
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() { out.extend(files_under(&path)) } else { out.push(path) }
    }
    out
}

#[tokio::test]
async fn seq_2000000_arrives_complete_through_read_process_with_wait_ms() {
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    let client = env.stdio().await;
    let info = call(&client, "workspace_info", json!({"workspace_id": "w"})).await.unwrap();
    assert_eq!(info["execution"]["process"]["limits"]["output_retained_bytes"], 64 * 1024 * 1024);
    let id = exec(&client, "w", &["seq", "1", "2000000"], false).await;
    let (out, lost) = drain(&client, &id, 0).await;
    assert!(lost.is_empty(), "{lost:?}");
    let expected = seq_output(2_000_000);
    assert!(out == expected, "{} of {} bytes arrived, or differ", out.len(), expected.len());
    let spill = env.state().join("codespace").join("spill");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&spill).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o700);
    assert_eq!(files_under(&spill).len(), 1, "{:?}", files_under(&spill));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_spill_cap_drops_the_oldest_and_output_lost_says_so() {
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    let (client, _) = env.stdio_with(&[("CODESPACE_PROCESS_SPILL_BYTES", "1048576")]).await;
    let info = call(&client, "workspace_info", json!({"workspace_id": "w"})).await.unwrap();
    assert_eq!(info["execution"]["process"]["limits"]["output_retained_bytes"], 1_048_576);
    let id = exec(&client, "w", &["seq", "1", "1000000"], false).await;
    let st = wait_exit(&client, &id).await;
    let expected = seq_output(1_000_000);
    let total = expected.len() as u64;
    assert_eq!(st["output_total"], total);
    assert_eq!(st["output_retained_from"], total - 1_048_576, "{st}");
    let (out, lost) = drain(&client, &id, 0).await;
    assert_eq!(lost.len(), 1, "only the first read starts late: {lost:?}");
    assert_eq!(lost[0]["retained_from"], total - 1_048_576);
    assert!(out == expected[(total - 1_048_576) as usize..], "the newest MiB, complete");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_start_sweeps_a_dead_servers_spill_and_leaves_a_live_ones() {
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    let stale = env.state().join("codespace").join("spill").join("4242-0123456789abcdef");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("0"), vec![b'x'; 1 << 20]).unwrap();

    let first = env.stdio().await;
    // Once the server answers, its start is over.
    call(&first, "workspace_info", json!({})).await.unwrap();
    assert!(!stale.exists(), "a dead server's spill is swept at start");
    let id = exec(&first, "w", &["seq", "1", "300000"], false).await;
    wait_exit(&first, &id).await;
    let spilled = files_under(&env.state().join("codespace").join("spill"));
    assert_eq!(spilled.len(), 1, "{spilled:?}");

    // A second server on the same state directory leaves the first one's files alone.
    let second = env.stdio().await;
    call(&second, "workspace_info", json!({})).await.unwrap();
    assert!(spilled[0].exists());
    let (out, lost) = drain(&first, &id, 0).await;
    assert!(lost.is_empty() && out == seq_output(300_000));
    second.cancel().await.unwrap();
    first.cancel().await.unwrap();
}
