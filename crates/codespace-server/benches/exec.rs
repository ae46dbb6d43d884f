//! Process benchmark, medians in one run, every figure a ratio against a floor measured in
//! the same run:
//! - `exec_command ["true"]` then one `process_status` with `wait_ms` until `exited`, over
//!   stdio, unsandboxed and sandboxed, vs spawn+wait of `true` in-process (the floor) and
//!   the client's `ping` (target: floor + 2 ping + 1 ms; sandboxed 2.5 ms more);
//! - `seq 1 2000000` (14.9 MB) drained through `read_process` with `wait_ms`, every byte
//!   checked, vs the same output captured in-process (target: at most 2x), by the rmcp
//!   client in both result shapes and by a minimal line client.
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

use common::{call, median, true_until_exited};

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{ClientRequest, PingRequest};

type Client<H> = rmcp::service::RunningService<rmcp::RoleClient, H>;
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
    // Spill files go to this run's own state directory.
    let in_memory = ["--operations-db", ":memory:"];
    let transport = common::server(&config, &tmp.path().join("state"), &in_memory);
    let client = ().serve(transport).await.unwrap();

    let rounds = 40;
    let (mut floor, mut ping, mut plain, mut boxed) = (vec![], vec![], vec![], vec![]);
    for _ in 0..rounds {
        let t = Instant::now();
        let st = Command::new("true").stdin(Stdio::null()).stdout(Stdio::null()).status().unwrap();
        floor.push(t.elapsed());
        assert!(st.success());
        let t = Instant::now();
        client.send_request(ClientRequest::PingRequest(PingRequest::default())).await.unwrap();
        ping.push(t.elapsed());
        for (ws, out) in [("w", &mut plain), ("boxed", &mut boxed)] {
            out.push(true_until_exited(&client, ws).await);
            // The lease is released right after the exit; let the next round find it free.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    let (floor, ping, plain, boxed) = (median(floor), median(ping), median(plain), median(boxed));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let budget = floor + 2 * ping + Duration::from_millis(1);
    println!(
        "exec_command [\"true\"] + process_status wait_ms until exited: {:.2} ms = {:.2}x the in-process spawn+wait floor {:.2} ms (ping {:.3} ms); budget floor + 2 ping + 1 ms = {:.2} ms: {:+.2} ms ({})",
        ms(plain),
        plain.as_secs_f64() / floor.as_secs_f64(),
        ms(floor),
        ms(ping),
        ms(budget),
        ms(plain) - ms(budget),
        if plain <= budget { "met" } else { "missed" }
    );
    let boxed_budget = budget + Duration::from_micros(2500);
    println!(
        "the same, sandboxed: {:.2} ms = {:.2}x the floor; the sandbox adds {:+.2} ms; budget floor + 2 ping + 3.5 ms = {:.2} ms: {:+.2} ms ({})",
        ms(boxed),
        boxed.as_secs_f64() / floor.as_secs_f64(),
        ms(boxed) - ms(plain),
        ms(boxed_budget),
        ms(boxed) - ms(boxed_budget),
        if boxed <= boxed_budget { "met" } else { "missed" }
    );

    drains(&client, &config, tmp.path(), &in_memory).await;
    client.cancel().await.unwrap();
}

/// `seq 1 2000000` drained by `client` (default shape), by an rmcp client that declared
/// structured-only (each chunk crosses once) and by a minimal line client (the server's cost
/// without the rmcp client's decoding), each against the same output captured in-process.
async fn drains<H: rmcp::ClientHandler>(
    client: &Client<H>,
    config: &std::path::Path,
    tmp: &std::path::Path,
    in_memory: &[&str],
) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let once_transport = common::server(config, &tmp.join("state-once"), in_memory);
    let once = common::structured_only().serve(once_transport).await.unwrap();
    let mut bare = common::BareClient::launch(config, &tmp.join("state-bare"), in_memory, true);
    let (mut local, mut drained, mut drained_once) = (Vec::new(), Vec::new(), Vec::new());
    let mut drained_bare = Vec::new();
    let expected = Command::new("seq").args(["1", "2000000"]).output().unwrap().stdout;
    for _ in 0..10 {
        let t = Instant::now();
        let out = Command::new("seq").args(["1", "2000000"]).output().unwrap();
        local.push(t.elapsed());
        assert_eq!(out.stdout.len(), expected.len());
        let t = Instant::now();
        let got = drain(client, &["seq", "1", "2000000"]).await;
        drained.push(t.elapsed());
        assert!(got == expected, "{} of {} bytes arrived, or differ", got.len(), expected.len());
        let t = Instant::now();
        let got = drain(&once, &["seq", "1", "2000000"]).await;
        drained_once.push(t.elapsed());
        assert!(got == expected, "{} of {} bytes arrived, or differ", got.len(), expected.len());
        let t = Instant::now();
        let got = bare_drain(&mut bare, &["seq", "1", "2000000"]);
        drained_bare.push(t.elapsed());
        assert!(got == expected, "{} of {} bytes arrived, or differ", got.len(), expected.len());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let local = median(local);
    for (label, drained) in [
        ("", median(drained)),
        (", structured-only session", median(drained_once)),
        (", structured-only session, minimal line client", median(drained_bare)),
    ] {
        println!(
            "seq 1 2000000 ({} bytes) drained complete through read_process with wait_ms{label}: {:.2} ms = {:.2}x the in-process capture {:.2} ms (target <= 2x: {})",
            expected.len(),
            ms(drained),
            drained.as_secs_f64() / local.as_secs_f64(),
            ms(local),
            if drained.as_secs_f64() <= 2.0 * local.as_secs_f64() { "met" } else { "missed" }
        );
    }
    once.cancel().await.unwrap();
}

/// [`drain`] through a [`common::BareClient`].
fn bare_drain(client: &mut common::BareClient, argv: &[&str]) -> Vec<u8> {
    let r = client.call("exec_command", json!({"workspace_id": "w", "command": argv}));
    let id = r["process_id"].as_str().unwrap().to_owned();
    let (mut cursor, mut got) = (0u64, Vec::new());
    loop {
        let args =
            json!({"process_id": id, "cursor": cursor, "max_bytes": 262144, "wait_ms": 30000});
        let r = client.call("read_process", args);
        assert_ne!(r["output_lost"], true, "{}", r["retained_from"]);
        got.extend_from_slice(r["chunk"].as_str().unwrap().as_bytes());
        cursor = r["cursor"].as_u64().unwrap();
        if r["eof"] == true {
            return got;
        }
    }
}

/// Runs `argv` and reads its whole output, 256 KiB per `read_process`, each waiting for
/// output with `wait_ms`.
async fn drain<H: rmcp::ClientHandler>(client: &Client<H>, argv: &[&str]) -> Vec<u8> {
    let r = call(client, "exec_command", json!({"workspace_id": "w", "command": argv})).await;
    let id = r["process_id"].as_str().unwrap().to_owned();
    let (mut cursor, mut got) = (0u64, Vec::new());
    loop {
        let args =
            json!({"process_id": id, "cursor": cursor, "max_bytes": 262144, "wait_ms": 30000});
        let r = call(client, "read_process", args).await;
        assert_ne!(r["output_lost"], true, "{}", r["retained_from"]);
        got.extend_from_slice(r["chunk"].as_str().unwrap().as_bytes());
        cursor = r["cursor"].as_u64().unwrap();
        if r["eof"] == true {
            return got;
        }
    }
}
