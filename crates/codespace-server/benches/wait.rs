//! Agent-loop benchmark: the tool calls and the wall time an agent needs to run a command
//! to completion and collect all its output, waiting with `wait_ms` vs polling every 50 ms.
//! Each run is `exec_command`, `read_process` calls from the returned cursor until `eof`,
//! then one `process_status`. The waiting agent passes `wait_ms: 30000`; the polling agent
//! passes none and sleeps 50 ms after a read that brought nothing new. Two commands: `seq 1
//! 200000` (1.26 MiB of output, more than the 256 KiB in-memory ring: the rest is read from
//! the spill file; bytes lost, none below the 64 MiB spill cap, are counted and printed) and
//! `sh -c "sleep 1; echo done"`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark panics on a setup failure and prints its figures to stdout"
)]
#![expect(
    clippy::disallowed_methods,
    reason = "benchmarks build their trees on the host filesystem and start the server binary"
)]

mod common;

use common::{call, median};

use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use serde_json::{Value, json};

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

const ROUNDS: usize = 5;
const POLL: Duration = Duration::from_millis(50);

/// What one agent run cost.
struct Run {
    calls: u64,
    wall: Duration,
    got: u64,
    lost: u64,
}

async fn agent(client: &Client, argv: &[&str], wait: bool) -> Run {
    let t = Instant::now();
    let r = call(client, "exec_command", json!({"workspace_id": "w", "command": argv})).await;
    let id = r["process_id"].as_str().unwrap().to_owned();
    let (mut calls, mut cursor, mut got, mut lost) = (1u64, 0u64, 0u64, 0u64);
    loop {
        let mut args = json!({"process_id": id, "cursor": cursor, "max_bytes": 262144});
        if wait {
            args["wait_ms"] = json!(30000);
        }
        let r: Value = call(client, "read_process", args).await;
        calls += 1;
        if r["output_lost"] == true {
            lost += r["retained_from"].as_u64().unwrap() - cursor;
        }
        let n = r["chunk"].as_str().unwrap().len() as u64;
        got += n;
        cursor = r["cursor"].as_u64().unwrap();
        if r["eof"] == true {
            break;
        }
        if !wait && n == 0 {
            tokio::time::sleep(POLL).await;
        }
    }
    let st = call(client, "process_status", json!({"process_id": id})).await;
    calls += 1;
    assert_eq!(st["exit_code"], 0, "{st}");
    Run { calls, wall: t.elapsed(), got, lost }
}

async fn compare(client: &Client, label: &str, argv: &[&str]) {
    for wait in [true, false] {
        let mut runs = Vec::new();
        for _ in 0..ROUNDS {
            runs.push(agent(client, argv, wait).await);
            // The lease is released right after the exit; let the next run find it free.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut calls: Vec<u64> = runs.iter().map(|r| r.calls).collect();
        calls.sort_unstable();
        let wall = median(runs.iter().map(|r| r.wall).collect());
        let lost: u64 = runs.iter().map(|r| r.lost).sum();
        let got = runs.iter().map(|r| r.got).max().unwrap_or(0);
        println!(
            "{label}, {}: median {} tool calls (min {}, max {}), median wall {wall:?}; bytes collected per run up to {got}, lost over {ROUNDS} runs {lost}",
            if wait { "wait_ms=30000" } else { "polling every 50 ms" },
            calls[calls.len() / 2],
            calls[0],
            calls[calls.len() - 1],
        );
    }
}

#[tokio::main]
async fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let config = tmp.path().join("reg.json");
    std::fs::write(
        &config,
        json!({"workspaces": {
            "w": {"root": ws.display().to_string(), "profile": "workspace-write", "sandbox": "off"}
        }})
        .to_string(),
    )
    .unwrap();
    // Spill files go to this run's own state directory, not the user's.
    let transport =
        common::server(&config, &tmp.path().join("state"), &["--operations-db", ":memory:"]);
    let client = ().serve(transport).await.unwrap();
    compare(&client, "seq 1 200000", &["seq", "1", "200000"]).await;
    compare(&client, "sleep 1; echo done", &["sh", "-c", "sleep 1; echo done"]).await;
    client.cancel().await.unwrap();
}
