//! Process benchmark, medians in one run: `exec_command ["true"]` plus polling
//! `process_status` until exited, over stdio, vs spawn+wait of `true` in-process (the floor)
//! and the client's `ping`; `seq 1 200000` with its whole output drained through
//! `read_process` vs the same output captured in-process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]
#![expect(
    clippy::disallowed_methods,
    reason = "benchmarks build their trees on the host filesystem and start the server binary"
)]

mod common;

use common::{binary, call, median};

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{ClientRequest, PingRequest};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::json;

#[tokio::main]
async fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::create_dir(tmp.path().join("boxed")).unwrap();
    let config = tmp.path().join("reg.json");
    std::fs::write(
        &config,
        json!({"workspaces": {
            "w": {"root": ws.display().to_string(), "profile": "workspace-write", "sandbox": "off"},
            "boxed": {"root": tmp.path().join("boxed").display().to_string(), "profile": "workspace-write"}
        }})
        .to_string(),
    )
    .unwrap();
    let transport = TokioChildProcess::new(tokio::process::Command::new(binary()).configure(|c| {
        c.args(["serve", "--config"])
            .arg(&config)
            .args(["--operations-db", ":memory:"])
            .env("RUST_LOG", "error");
    }))
    .unwrap();
    let client = ().serve(transport).await.unwrap();

    let rounds = 40;
    let (mut floor, mut ping, mut e2e) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        let st = Command::new("true").stdin(Stdio::null()).stdout(Stdio::null()).status().unwrap();
        floor.push(t.elapsed());
        assert!(st.success());
        let t = Instant::now();
        client.send_request(ClientRequest::PingRequest(PingRequest::default())).await.unwrap();
        ping.push(t.elapsed());
        let t = Instant::now();
        let r =
            call(&client, "exec_command", json!({"workspace_id": "w", "command": ["true"]})).await;
        let id = r["process_id"].as_str().unwrap().to_owned();
        loop {
            let st = call(&client, "process_status", json!({"process_id": id})).await;
            if st["state"] == "exited" {
                assert_eq!(st["exit_code"], 0);
                break;
            }
        }
        e2e.push(t.elapsed());
        // The lease is released right after the exit; make sure the next round finds it free.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (floor, ping, e2e) = (median(floor), median(ping), median(e2e));
    let budget = floor + ping + Duration::from_millis(2);
    println!(
        "exec_command [\"true\"] + status polling until exited: {e2e:?} vs in-process spawn+wait {floor:?} + ping {ping:?}: {:+.2} ms over floor+ping (target <= +2 ms; {})",
        (e2e.as_secs_f64() - (floor + ping).as_secs_f64()) * 1e3,
        if e2e <= budget { "met" } else { "missed" }
    );

    // The same `true` with and without the sandbox (sandbox=on vs sandbox=off workspaces).
    let (mut plain, mut boxed) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        for (ws, out) in [("w", &mut plain), ("boxed", &mut boxed)] {
            let t = Instant::now();
            let r = call(&client, "exec_command", json!({"workspace_id": ws, "command": ["true"]}))
                .await;
            let id = r["process_id"].as_str().unwrap().to_owned();
            loop {
                let st = call(&client, "process_status", json!({"process_id": id})).await;
                if st["state"] == "exited" {
                    assert_eq!(st["exit_code"], 0, "{st}");
                    break;
                }
            }
            out.push(t.elapsed());
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    let (plain, boxed) = (median(plain), median(boxed));
    println!(
        "exec_command [\"true\"] with the sandbox {boxed:?} vs without {plain:?}: the sandbox adds {:+.2} ms (target < 5 ms)",
        (boxed.as_secs_f64() - plain.as_secs_f64()) * 1e3
    );

    let (mut local, mut drained) = (Vec::new(), Vec::new());
    let mut lost_total = 0u64;
    let expected = Command::new("seq").args(["1", "200000"]).output().unwrap().stdout;
    for _ in 0..10 {
        let t = Instant::now();
        let out = Command::new("seq").args(["1", "200000"]).output().unwrap();
        local.push(t.elapsed());
        assert_eq!(out.stdout.len(), expected.len());
        let t = Instant::now();
        let r = call(
            &client,
            "exec_command",
            json!({"workspace_id": "w", "command": ["seq", "1", "200000"]}),
        )
        .await;
        let id = r["process_id"].as_str().unwrap().to_owned();
        let mut cursor = 0u64;
        let (mut got, mut lost) = (0u64, 0u64);
        loop {
            let r = call(
                &client,
                "read_process",
                json!({"process_id": id, "cursor": cursor, "max_bytes": 262144}),
            )
            .await;
            if r["output_lost"] == true {
                lost += r["retained_from"].as_u64().unwrap() - cursor;
            }
            got += r["chunk"].as_str().unwrap().len() as u64;
            cursor = r["cursor"].as_u64().unwrap();
            if r["eof"] == true {
                break;
            }
        }
        drained.push(t.elapsed());
        // The ring never blocks the command: what the reader did not keep up with is lost,
        // and says so; drained plus lost is the whole output.
        assert_eq!(got + lost, expected.len() as u64);
        lost_total += lost;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (local, drained) = (median(local), median(drained));
    println!(
        "seq 1 200000 ({} bytes) drained through read_process: {drained:?} vs captured in-process {local:?}: {:.2}x (target <= 2x); bytes the reader did not keep up with over 10 runs: {lost_total}",
        expected.len(),
        drained.as_secs_f64() / local.as_secs_f64()
    );
    client.cancel().await.unwrap();
}
