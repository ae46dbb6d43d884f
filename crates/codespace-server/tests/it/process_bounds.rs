//! Processes at their bounds end to end: timeouts and escapees leave nothing behind (R1,
//! R2), an output flood keeps the server bounded (R4), and an HTTP disconnect keeps a
//! process while shutdown kills it.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::process::{alive, exec, gone_within, wait_exit, wait_output, ww};
use crate::support::{Env, HttpServer, call};

#[tokio::test]
async fn r1_r2_timeouts_and_escapees_leave_nothing_behind() {
    let mut env = Env::new();
    ww(&mut env, "w");
    let (client, _) = env.stdio_with(&[("CODESPACE_PROCESS_TIMEOUT_SECS", "1")]).await;
    let started = Instant::now();
    let id = exec(&client, "w", &["sh", "-c", "sleep 100.111 & sleep 100.112"], false).await;
    let st = wait_exit(&client, &id).await;
    assert_eq!(st["termination"], "timeout");
    assert!(started.elapsed() < Duration::from_secs(6), "{:?}", started.elapsed());
    gone_within("sleep 100.11", Duration::from_secs(2)).await;
    client.cancel().await.unwrap();

    let client = env.stdio().await;
    let id = exec(
        &client,
        "w",
        &[
            "sh",
            "-c",
            "setsid sh -c 'sleep 1000.221' & (sh -c 'sleep 1000.222 &') ; sleep 1000.223",
        ],
        false,
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive("sleep 1000.22").len() < 3 {
        assert!(Instant::now() < deadline, "escapees did not start: {:?}", alive("sleep 1000.22"));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    call(&client, "terminate_process", json!({"process_id": id})).await.unwrap();
    gone_within("sleep 1000.22", Duration::from_secs(2)).await;
    assert_eq!(wait_exit(&client, &id).await["termination"], "terminated");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn r4_an_output_flood_keeps_the_server_bounded() {
    let mut env = Env::new();
    ww(&mut env, "w");
    let (client, pid) = env.stdio_with(&[]).await;
    let rss = || -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        s.lines()
            .find(|l| l.starts_with("VmRSS:"))
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap()
    };
    let before = rss();
    let id = exec(&client, "w", &["head", "-c", "100000000", "/dev/zero"], false).await;
    let st = wait_exit(&client, &id).await;
    let after = rss();
    assert_eq!(st["output_total"], 100_000_000u64);
    // The newest 64 MiB stay readable (256 KiB in memory, the rest spilled to disk).
    assert_eq!(st["output_retained_from"], 100_000_000u64 - 64 * 1024 * 1024);
    let r =
        call(&client, "read_process", json!({"process_id": id, "cursor": 0, "max_bytes": 1000}))
            .await
            .unwrap();
    assert_eq!(r["output_lost"], true);
    assert_eq!(r["chunk"].as_str().unwrap().len(), 1000);
    assert!(after.saturating_sub(before) < 32 * 1024, "server RSS grew {before} -> {after} KiB");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_disconnect_keeps_the_process_and_shutdown_kills_it() {
    let mut env = Env::new();
    ww(&mut env, "w");
    // rmcp logs the end of each session's service: the wait below is on that, not a guess.
    let mut cmd = env.http_command(&["--no-auth"]);
    cmd.env("RUST_LOG", "warn,rmcp::service=info");
    let server = HttpServer::start(cmd);
    let first = server.client(None).await;
    let id = exec(&first, "w", &["sh", "-c", "echo started; sleep 1000.331"], false).await;
    first.cancel().await.unwrap();
    server.wait_for_stderr("serve finished", Duration::from_secs(10));
    let second = server.client(None).await;
    let st = call(&second, "process_status", json!({"process_id": id})).await.unwrap();
    assert_eq!(st["state"], "running", "an HTTP session ending never kills a process");
    wait_output(&second, &id, "started").await;
    second.cancel().await.unwrap();
    assert!(!alive("sleep 1000.331").is_empty());
    // SIGTERM to the server kills every command's tree.
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(server.child.id() as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    gone_within("sleep 1000.331", Duration::from_secs(5)).await;

    // stdio EOF does the same.
    let client = env.stdio().await;
    exec(&client, "w", &["sleep", "1000.332"], false).await;
    assert!(!alive("sleep 1000.332").is_empty());
    client.cancel().await.unwrap();
    gone_within("sleep 1000.332", Duration::from_secs(5)).await;
}
