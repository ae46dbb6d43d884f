//! Runner benchmark: the same workspace served with the runner in process and with
//! `--runner uds` (a worker behind a Unix socket), in one run, medians interleaved round by
//! round so both see the same machine:
//! - `read` of a 4 KiB file;
//! - `exec_command ["true"]` then `process_status` with `wait_ms` until `exited`;
//! - a one-line `apply_patch` to a 1,000-line file (durable file ledger).
//!
//! Each figure is printed as what the socket adds per call, and as a ratio against the
//! in-process median (the floor) and against `ping` to the in-process server (one round
//! trip between two processes on this machine); target: the socket adds at most one such
//! round trip per call (the exec row is two calls, `exec_command` and `process_status`).
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

use std::path::Path;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{ClientRequest, PingRequest};
use serde_json::json;

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

async fn server(dir: &Path, mode: &str) -> Client {
    let config = dir.join("reg.json");
    let ledger = dir.join(format!("ledger-{mode}.sqlite3"));
    let extra =
        ["--runner".as_ref(), mode.as_ref(), "--operations-db".as_ref(), ledger.as_os_str()];
    ().serve(common::server::<&std::ffi::OsStr>(&config, &dir.join("state"), &extra)).await.unwrap()
}

/// One round of each operation on `client`: (read, exec, patch).
async fn round(client: &Client, ws: &str, n: usize) -> [Duration; 3] {
    let t = Instant::now();
    let r = call(client, "read", json!({"workspace_id": ws, "path": "small.txt"})).await;
    let read = t.elapsed();
    assert_eq!(r["byte_count"], 4096);

    let exec = true_until_exited(client, ws).await;
    // The lease is released right after the exit; let the patch find it free.
    tokio::time::sleep(Duration::from_millis(5)).await;

    let (old, new) = (format!("line {n} old"), format!("line {n} new"));
    let patch =
        format!("*** Begin Patch\n*** Update File: big.txt\n@@\n-{old}\n+{new}\n*** End Patch\n");
    let t = Instant::now();
    let r = call(client, "apply_patch", json!({"workspace_id": ws, "patch": patch})).await;
    let patch = t.elapsed();
    assert_eq!(r["status"], "applied", "{r}");
    [read, exec, patch]
}

#[tokio::main]
async fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let rounds = 60;
    let mut reg = serde_json::Map::new();
    for mode in ["in-process", "uds"] {
        let ws = tmp.path().join(mode);
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(ws.join("small.txt"), "x".repeat(4095) + "\n").unwrap();
        let big: String = (0..1000).map(|i| format!("line {i} old\n")).collect();
        std::fs::write(ws.join("big.txt"), big).unwrap();
        reg.insert(
            mode.to_owned(),
            json!({"root": ws.display().to_string(), "profile": "workspace-write", "sandbox": "off"}),
        );
    }
    std::fs::write(tmp.path().join("reg.json"), json!({"workspaces": reg}).to_string()).unwrap();
    let local = server(tmp.path(), "in-process").await;
    let uds = server(tmp.path(), "uds").await;
    let mut times: [[Vec<Duration>; 3]; 2] = Default::default();
    let mut pings = Vec::new();
    for n in 0..rounds {
        let t = Instant::now();
        local.send_request(ClientRequest::PingRequest(PingRequest::default())).await.unwrap();
        pings.push(t.elapsed());
        for (i, (client, ws)) in [(&local, "in-process"), (&uds, "uds")].into_iter().enumerate() {
            let got = round(client, ws, n).await;
            for (k, d) in got.into_iter().enumerate() {
                times[i][k].push(d);
            }
        }
    }
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let ping = median(pings);
    println!(
        "ping to the in-process server (a round trip between two processes): {:.0} µs",
        us(ping)
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average: {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    let rows = [
        ("read 4 KiB", 1.0),
        ("exec_command [\"true\"] until exited", 2.0),
        ("apply_patch one line of 1,000", 1.0),
    ];
    for (k, (what, calls)) in rows.into_iter().enumerate() {
        let floor = median(times[0][k].clone());
        let socket = median(times[1][k].clone());
        let added = us(socket) - us(floor);
        let per_call = added / us(ping) / calls;
        println!(
            "{what}: in process {:.0} µs, --runner uds {:.0} µs = {:.2}x; the socket adds {:+.0} µs = {:.2} ping, {per_call:.2} ping per call (target <= 1 ping per call: {})",
            us(floor),
            us(socket),
            socket.as_secs_f64() / floor.as_secs_f64(),
            added,
            added / us(ping),
            if per_call <= 1.0 { "met" } else { "missed" }
        );
        common::row(
            &format!("worker socket, added per call: {what}"),
            &format!(
                "{added:+.0} µs = {:+.2} ping (in process {:.0} µs, --runner uds {:.0} µs)",
                added / us(ping),
                us(floor),
                us(socket)
            ),
            &format!("one inter-process round trip (ping) {:.0} µs", us(ping)),
            &format!("{per_call:.2} ping per call ({calls} call(s))"),
            &common::verdict("<= 1 ping per call", per_call <= 1.0),
        );
    }
    local.cancel().await.unwrap();
    uds.cancel().await.unwrap();
}
