//! The process tools end to end: exit codes, output, stdin, PTY resize and signals (R8), the
//! lease matrix and the live-process limit; the helpers the other process tests share. (The
//! sandbox is in `process_sandbox.rs`; timeouts, escapees, floods, disconnects and shutdown
//! in `process_bounds.rs`.)

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Client, Env, call, refused};

pub(crate) fn ww(env: &mut Env, id: &str) -> std::path::PathBuf {
    env.workspace(id, json!({"profile": "workspace-write", "sandbox": "off"}))
}

pub(crate) async fn exec(client: &Client, ws: &str, argv: &[&str], tty: bool) -> String {
    let r = call(client, "exec_command", json!({"workspace_id": ws, "command": argv, "tty": tty}))
        .await
        .unwrap();
    assert_eq!(r["dispatch_status"], "confirmed");
    let id = r["process_id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("proc-"));
    id
}

pub(crate) async fn wait_exit(client: &Client, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let st = call(client, "process_status", json!({"process_id": id})).await.unwrap();
        if st["state"] == "exited" && st["eof"] == true {
            return st;
        }
        assert!(Instant::now() < deadline, "process did not exit: {st}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(crate) async fn output(client: &Client, id: &str) -> String {
    let mut out = String::new();
    let mut cursor = 0u64;
    loop {
        let r = call(client, "read_process", json!({"process_id": id, "cursor": cursor}))
            .await
            .unwrap();
        out.push_str(r["chunk"].as_str().unwrap());
        cursor = r["cursor"].as_u64().unwrap();
        if r["eof"] == true {
            return out;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until the output so far contains `needle`.
pub(crate) async fn wait_output(client: &Client, id: &str, needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut out = String::new();
    let mut cursor = 0u64;
    loop {
        let r = call(client, "read_process", json!({"process_id": id, "cursor": cursor}))
            .await
            .unwrap();
        out.push_str(r["chunk"].as_str().unwrap());
        cursor = r["cursor"].as_u64().unwrap();
        if out.contains(needle) {
            return;
        }
        assert!(Instant::now() < deadline && r["eof"] != true, "no {needle:?} in {out:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Processes whose command line contains `marker`.
pub(crate) fn alive(marker: &str) -> Vec<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ").contains(marker))
        })
        .collect()
}

pub(crate) async fn gone_within(marker: &str, limit: Duration) {
    let deadline = Instant::now() + limit;
    while !alive(marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "still alive after {limit:?}: {marker} {:?}",
            alive(marker)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn exit_codes_output_and_status() {
    let mut env = Env::new();
    let root = ww(&mut env, "w");
    std::fs::write(root.join("here.txt"), "x").unwrap();
    let client = env.stdio().await;
    for (argv, code) in
        [(vec!["true"], 0), (vec!["sh", "-c", "exit 1"], 1), (vec!["sh", "-c", "exit 127"], 127)]
    {
        let id = exec(&client, "w", &argv, false).await;
        let st = wait_exit(&client, &id).await;
        assert_eq!(st["termination"], "exited", "{argv:?}");
        assert_eq!(st["exit_code"], code, "{argv:?}");
        assert!(st.get("signal").is_none());
        assert!(st["exited_at"].as_u64().unwrap() >= st["started_at"].as_u64().unwrap());
    }
    // stdout and stderr both land in the one ring; the cwd is the workspace root; the
    // environment is the clean one.
    let id = exec(
        &client,
        "w",
        &[
            "sh",
            "-c",
            "echo out; echo err >&2; ls here.txt; echo \"[$CODESPACE_SECRET_TOKEN]\"; echo $TERM",
        ],
        false,
    )
    .await;
    wait_exit(&client, &id).await;
    let out = output(&client, &id).await;
    for want in ["out\n", "err\n", "here.txt\n", "[]\n"] {
        assert!(out.contains(want), "{want:?} in {out:?}");
    }
    assert!(!out.contains("xterm"), "TERM only on a PTY");
    let id = exec(&client, "w", &["sh", "-c", "ls /proc/self/fd"], false).await;
    wait_exit(&client, &id).await;
    let fds: Vec<String> =
        output(&client, &id).await.split_whitespace().map(str::to_owned).collect();
    assert!(fds.len() <= 4, "R7: only 0-2 (+ the listing's own fd): {fds:?}");
    // Output that is not UTF-8 arrives with replacement characters; the cursor still counts
    // the bytes the command wrote.
    let id = exec(&client, "w", &["printf", "a\\377b\\n\\303\\251\\n"], false).await;
    wait_exit(&client, &id).await;
    let r = call(&client, "read_process", json!({"process_id": id})).await.unwrap();
    assert_eq!(r["chunk"], "a\u{fffd}b\n\u{e9}\n", "{r}");
    assert_eq!(r["cursor"], 7, "{r}");

    refused(
        &client,
        "process_status",
        json!({"process_id": "proc-00000000-0000-4000-8000-000000000000"}),
        "PROCESS_NOT_FOUND",
    )
    .await;
    refused(&client, "read_process", json!({"process_id": "nope"}), "PROCESS_NOT_FOUND").await;
    refused(&client, "read_process", json!({"process_id": id, "max_bytes": 0}), "OUTPUT_LIMIT")
        .await;
    // A cursor past the end reads nothing (as the reference does) and points at the end.
    let total =
        call(&client, "process_status", json!({"process_id": id})).await.unwrap()["output_total"]
            .clone();
    let past = call(&client, "read_process", json!({"process_id": id, "cursor": 1_000_000}))
        .await
        .unwrap();
    assert_eq!(
        (past["chunk"].as_str(), &past["cursor"], &past["eof"]),
        (Some(""), &total, &json!(true))
    );
    let t = call(&client, "terminate_process", json!({"process_id": id})).await.unwrap();
    assert_eq!(t["already_exited"], true);
    refused(&client, "write_stdin", json!({"process_id": id, "data": "x"}), "PROCESS_NOT_RUNNING")
        .await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn policy_and_argument_refusals() {
    let mut env = Env::new();
    ww(&mut env, "w");
    env.workspace("ro", json!({"sandbox": "off"}));
    env.workspace(
        "confirm",
        json!({"profile": "workspace-write", "sandbox": "off", "approvals": "confirm"}),
    );
    let client = env.stdio().await;
    refused(
        &client,
        "exec_command",
        json!({"workspace_id": "ro", "command": ["true"]}),
        "UNAUTHORIZED",
    )
    .await;
    refused(
        &client,
        "exec_command",
        json!({"workspace_id": "confirm", "command": ["true"]}),
        "APPROVAL_REQUIRED",
    )
    .await;
    refused(
        &client,
        "exec_command",
        json!({"workspace_id": "ghost", "command": ["true"]}),
        "WORKSPACE_NOT_FOUND",
    )
    .await;
    refused(
        &client,
        "exec_command",
        json!({"workspace_id": "w", "command": []}),
        "INVALID_COMMAND",
    )
    .await;
    refused(
        &client,
        "exec_command",
        json!({"workspace_id": "w", "command": [""]}),
        "INVALID_COMMAND",
    )
    .await;
    refused(
        &client,
        "exec_command",
        json!({"workspace_id": "w", "command": ["a\u{0}b"]}),
        "INVALID_COMMAND",
    )
    .await;
    // A missing executable starts nothing and leaves the workspace free.
    refused(
        &client,
        "exec_command",
        json!({"workspace_id": "w", "command": ["no-such-program-xyz"]}),
        "PROCESS_SPAWN_FAILED",
    )
    .await;
    let id = exec(&client, "w", &["true"], false).await;
    wait_exit(&client, &id).await;
    // Arguments the schema lacks grant nothing: no cwd, env or timeout reaches the command.
    let r = call(&client, "exec_command", json!({"workspace_id": "w", "command": ["pwd"], "cwd": "/", "env": {"X": "1"}, "timeout": 999999})).await.unwrap();
    let id = r["process_id"].as_str().unwrap().to_owned();
    wait_exit(&client, &id).await;
    assert!(output(&client, &id).await.trim_end().ends_with("/ws/w"));
    let info = call(&client, "workspace_info", json!({"workspace_id": "w"})).await.unwrap();
    assert_eq!(info["execution"]["process"]["available"], true);
    client.cancel().await.unwrap();
}

/// sandbox=on (the default): the command is confined to its workspace and the network
/// policy. The crate tests (codespace-process `sandbox`) cover every rule; this checks the
/// wiring from the registry to the command.
#[tokio::test]
async fn a_live_process_holds_the_lease_but_reads_go_on() {
    let mut env = Env::new();
    let root = ww(&mut env, "w");
    ww(&mut env, "other");
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    let client = env.stdio().await;
    let id = exec(&client, "w", &["sleep", "30"], false).await;
    let patch = "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n";
    refused(&client, "apply_patch", json!({"workspace_id": "w", "patch": patch}), "WORKSPACE_BUSY")
        .await;
    refused(
        &client,
        "exec_command",
        json!({"workspace_id": "w", "command": ["true"]}),
        "WORKSPACE_BUSY",
    )
    .await;
    call(&client, "read", json!({"workspace_id": "w", "path": "a.txt"})).await.unwrap();
    call(&client, "find", json!({"workspace_id": "w"})).await.unwrap();
    call(&client, "grep", json!({"workspace_id": "w", "pattern": "a"})).await.unwrap();
    call(&client, "version", json!({"workspace_id": "w", "paths": ["a.txt"]})).await.unwrap();
    // Another workspace is not affected.
    let other = exec(&client, "other", &["true"], false).await;
    wait_exit(&client, &other).await;
    call(&client, "terminate_process", json!({"process_id": id})).await.unwrap();
    let st = wait_exit(&client, &id).await;
    assert_eq!(st["termination"], "terminated");
    // Released when it exits: the patch goes through now (the release races the status).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match call(&client, "apply_patch", json!({"workspace_id": "w", "patch": patch})).await {
            Ok(r) => {
                assert_eq!(r["status"], "applied");
                break;
            }
            Err(e) if e["code"] == "WORKSPACE_BUSY" && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("{e}"),
        }
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_live_process_limit_creates_no_child() {
    let mut env = Env::new();
    ww(&mut env, "a");
    ww(&mut env, "b");
    let (client, _) = env.stdio_with(&[("CODESPACE_MAX_PROCESSES", "1")]).await;
    let id = exec(&client, "a", &["sleep", "30.987"], false).await;
    let body = refused(
        &client,
        "exec_command",
        json!({"workspace_id": "b", "command": ["sleep", "30.654"]}),
        "WORKSPACE_BUSY",
    )
    .await;
    assert!(body["message"].as_str().unwrap().contains("limit"), "{body}");
    assert!(alive("sleep 30.654").is_empty(), "no child for the refused request");
    call(&client, "terminate_process", json!({"process_id": id})).await.unwrap();
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stdin_round_trip_and_close() {
    let mut env = Env::new();
    ww(&mut env, "w");
    let client = env.stdio().await;
    let id = exec(&client, "w", &["cat"], false).await;
    call(&client, "write_stdin", json!({"process_id": id, "data": "hello\n"})).await.unwrap();
    call(&client, "write_stdin", json!({"process_id": id, "data": "bye\n", "close": true}))
        .await
        .unwrap();
    let st = wait_exit(&client, &id).await;
    assert_eq!((st["termination"].clone(), st["exit_code"].clone()), (json!("exited"), json!(0)));
    assert_eq!(output(&client, &id).await, "hello\nbye\n");
    refused(
        &client,
        "write_stdin",
        json!({"process_id": "proc-nope", "data": "x"}),
        "PROCESS_NOT_FOUND",
    )
    .await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn r8_pty_resize_and_signal_death() {
    let mut env = Env::new();
    ww(&mut env, "w");
    let client = env.stdio().await;
    let id =
        exec(&client, "w", &["sh", "-c", "stty size; tty; echo $TERM; sleep 1; stty size"], true)
            .await;
    // Resize once the first `stty size` has answered, within the command's one second.
    wait_output(&client, &id, "24 80").await;
    let r = call(&client, "process_resize", json!({"process_id": id, "rows": 40, "cols": 120}))
        .await
        .unwrap();
    assert_eq!((r["rows"].clone(), r["cols"].clone()), (json!(40), json!(120)));
    refused(
        &client,
        "process_resize",
        json!({"process_id": id, "rows": 0, "cols": 80}),
        "INVALID_COMMAND",
    )
    .await;
    wait_exit(&client, &id).await;
    let out = output(&client, &id).await;
    assert!(out.contains("24 80"), "{out:?}");
    assert!(out.contains("40 120"), "{out:?}");
    assert!(out.contains("/dev/pts/"), "{out:?}");
    assert!(out.contains("xterm"), "{out:?}");
    refused(
        &client,
        "process_resize",
        json!({"process_id": id, "rows": 10, "cols": 10}),
        "PROCESS_NOT_RUNNING",
    )
    .await;

    let pipe = exec(&client, "w", &["sleep", "5"], false).await;
    refused(
        &client,
        "process_resize",
        json!({"process_id": pipe, "rows": 10, "cols": 10}),
        "PROCESS_NOT_TTY",
    )
    .await;
    call(&client, "terminate_process", json!({"process_id": pipe})).await.unwrap();
    // Terminating is asynchronous: the lease is free once the tree is gone.
    assert_eq!(wait_exit(&client, &pipe).await["termination"], "terminated");

    let sig = exec(&client, "w", &["sh", "-c", "kill -TERM $$"], true).await;
    let st = wait_exit(&client, &sig).await;
    assert_eq!(st["termination"], "signaled", "{st}");
    assert_eq!(st["signal"]["number"], 15);
    assert_eq!(st["signal"]["name"], "SIGTERM");
    assert!(st.get("exit_code").is_none());
    client.cancel().await.unwrap();
}
