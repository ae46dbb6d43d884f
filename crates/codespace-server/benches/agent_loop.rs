//! Agent-loop benchmark, before and after waiting calls that answer whole: the tool calls
//! and the wall time for an agent to (1) run `true` to a known exit, (2) collect a bursty
//! 80 KB output (40 lines of 2,000 bytes, one every 100 ms: about 4 s) and its exit code.
//! - before: `exec_command`, then `read_process` with `wait_ms` from the cursor until `eof`
//!   (each wait returns at the first burst), then `process_status` (for `true`, the output
//!   is empty: `exec_command` then `process_status` with `wait_ms` until `exited`);
//! - after: `exec_command` with `wait_ms` (the exit and the first 256 KiB in the answer),
//!   then `read_process` with `min_bytes` = `max_bytes` = 256 KiB until `eof`, then
//!   `process_status` only if the exit is not known yet;
//! - after, short first wait: the same with `exec_command`'s `wait_ms` at 1000, so the rest
//!   comes through `min_bytes`.
//!
//! Printed: median calls and wall time of each, and before/after ratios.
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

use codespace_protocol::MAX_WAIT_MS;
use rmcp::ServiceExt;
use serde_json::{Value, json};

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

const BURSTY: &str =
    "i=0; while [ $i -lt 40 ]; do printf '%02000d\\n' $i; i=$((i+1)); sleep 0.1; done";
const BURSTY_BYTES: u64 = 40 * 2001;
const BIG: u64 = 262_144;

#[derive(Clone, Copy, PartialEq)]
enum Way {
    Before,
    After,
    AfterShortWait,
}

impl Way {
    fn label(self) -> &'static str {
        match self {
            Way::Before => "before (exec_command + read_process wait loop)",
            Way::After => "after (exec_command wait_ms + read_process min_bytes)",
            Way::AfterShortWait => "after, exec_command wait_ms 1000 + read_process min_bytes",
        }
    }
}

/// One agent run: calls made, wall time, bytes collected.
async fn agent(client: &Client, argv: &[&str], way: Way) -> (u64, Duration, u64) {
    let t = Instant::now();
    let mut args = json!({"workspace_id": "w", "command": argv});
    let (mut cursor, mut eof, mut got, mut exit) = (0u64, false, 0u64, Value::Null);
    if way != Way::Before {
        let wait = if way == Way::After { MAX_WAIT_MS } else { 1000 };
        args["wait_ms"] = json!(wait);
        args["max_bytes"] = json!(BIG);
    }
    let r = call(client, "exec_command", args).await;
    let id = r["process_id"].as_str().unwrap().to_owned();
    let mut calls = 1;
    if let Some(output) = r.get("output") {
        got = output["chunk"].as_str().unwrap().len() as u64;
        cursor = output["cursor"].as_u64().unwrap();
        eof = output["eof"] == true;
        exit = r["exit_code"].clone();
    }
    // `true` has no output worth a read: the old way asked for the exit straight away.
    let skip_reads = way == Way::Before && argv == ["true"];
    while !eof && !skip_reads {
        let mut args =
            json!({"process_id": id, "cursor": cursor, "max_bytes": BIG, "wait_ms": MAX_WAIT_MS});
        if way != Way::Before {
            args["min_bytes"] = json!(BIG);
        }
        let r = call(client, "read_process", args).await;
        calls += 1;
        got += r["chunk"].as_str().unwrap().len() as u64;
        cursor = r["cursor"].as_u64().unwrap();
        eof = r["eof"] == true;
    }
    while exit.is_null() {
        let st =
            call(client, "process_status", json!({"process_id": id, "wait_ms": MAX_WAIT_MS})).await;
        calls += 1;
        exit = st["exit_code"].clone();
    }
    assert_eq!(exit, 0);
    (calls, t.elapsed(), got)
}

/// Median calls and wall time of `rounds` runs.
async fn measure(
    client: &Client,
    argv: &[&str],
    way: Way,
    rounds: usize,
    bytes: u64,
) -> (u64, Duration) {
    let mut calls = Vec::new();
    let mut walls = Vec::new();
    for _ in 0..rounds {
        let (c, wall, got) = agent(client, argv, way).await;
        assert_eq!(got, bytes, "the output arrived incomplete");
        calls.push(c);
        walls.push(wall);
        // The lease is released right after the exit; let the next run find it free.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    calls.sort_unstable();
    (calls[calls.len() / 2], median(walls))
}

async fn compare(client: &Client, label: &str, argv: &[&str], rounds: usize, bytes: u64) {
    let mut before = None;
    for way in [Way::Before, Way::After, Way::AfterShortWait] {
        let (calls, wall) = measure(client, argv, way, rounds, bytes).await;
        let ratio = before.map_or(String::new(), |(c, w): (u64, Duration)| {
            format!(
                "; calls {:.2}x, wall {:.2}x of before",
                calls as f64 / c as f64,
                wall.as_secs_f64() / w.as_secs_f64()
            )
        });
        println!(
            "{label}, {}: median {calls} tool calls, median wall {wall:.2?}{ratio}",
            way.label()
        );
        if way == Way::Before {
            before = Some((calls, wall));
        }
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
    let transport =
        common::server(&config, &tmp.path().join("state"), &["--operations-db", ":memory:"]);
    let client = ().serve(transport).await.unwrap();
    compare(&client, "true to a known exit", &["true"], 20, 0).await;
    compare(&client, "bursty 80 KB over 4 s", &["sh", "-c", BURSTY], 3, BURSTY_BYTES).await;
    client.cancel().await.unwrap();
}
