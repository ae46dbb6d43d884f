//! The grace before the kill, end to end, in the sandbox and out of it: `terminate_process`,
//! the time limit and the server's shutdown send SIGTERM to the whole tree first, so a
//! `TERM` trap cleans up (its lock file is gone); what ignores SIGTERM gets SIGKILL once the
//! workspace's `kill_grace_ms` has passed; `process_status.signal` names the signal that
//! ended the command.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::process::{alive, exec, gone_within, wait_exit, wait_output};
use crate::support::{Client, Env, call};

/// The grace of the test workspaces, in milliseconds.
const GRACE_MS: u64 = 1500;
/// `sandbox: "on"` (the default) and `"off"`, one workspace each.
const MODES: [&str; 2] = ["on", "off"];

/// A server with workspaces `on` and `off`, both with a grace of [`GRACE_MS`].
fn two_workspaces(env: &mut Env) {
    for mode in MODES {
        env.workspace(
            mode,
            json!({"profile": "workspace-write", "sandbox": mode, "kill_grace_ms": GRACE_MS}),
        );
    }
}

/// A command that holds `lockfile` until its TERM trap removes it (and leaves `cleaned`),
/// then dies of SIGTERM as a well-behaved program does.
const TRAP_THEN_DIE: &str = "trap 'rm -f lockfile; touch cleaned; trap - TERM; kill -TERM $$' TERM; \
     touch lockfile; echo ready; while :; do sleep 0.1; done";
/// The same with a trap that exits 0 instead.
const TRAP_THEN_EXIT_0: &str = "trap 'rm -f lockfile; touch cleaned; exit 0' TERM; \
     touch lockfile; echo ready; while :; do sleep 0.1; done";

/// Starts `script` under `sh` in workspace `ws` and waits until it said `ready`.
async fn start(client: &Client, ws: &str, script: &str) -> String {
    let id = exec(client, ws, &["sh", "-c", script], false).await;
    wait_output(client, &id, "ready").await;
    id
}

fn cleaned_up(root: &Path) -> bool {
    !root.join("lockfile").exists() && root.join("cleaned").exists()
}

fn reset(root: &Path) {
    let _ = std::fs::remove_file(root.join("cleaned"));
    let _ = std::fs::remove_file(root.join("lockfile"));
}

fn signal_name(st: &Value) -> &str {
    st["signal"]["name"].as_str().unwrap_or("none")
}

fn unix_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

#[tokio::test]
async fn terminate_sends_sigterm_first_so_a_trap_cleans_up() {
    let mut env = Env::new();
    two_workspaces(&mut env);
    let client = env.stdio().await;
    for ws in MODES {
        let root = env.path().join("ws").join(ws);
        let info = call(&client, "workspace_info", json!({"workspace_id": ws})).await.unwrap();
        assert_eq!(info["execution"]["process"]["limits"]["kill_grace_ms"], GRACE_MS, "{info}");

        // The trap runs and the command then dies of SIGTERM: the status names it.
        let id = start(&client, ws, TRAP_THEN_DIE).await;
        assert!(root.join("lockfile").exists());
        let ack = call(&client, "terminate_process", json!({"process_id": id})).await.unwrap();
        assert_eq!((ack["grace_ms"].as_u64(), ack.get("grace_clamped")), (Some(GRACE_MS), None));
        let st = wait_exit(&client, &id).await;
        assert!(cleaned_up(&root), "{ws}: the trap did not run: {st}");
        assert_eq!(st["termination"], "terminated", "{ws}: {st}");
        assert_eq!((st["signal"]["number"].as_i64(), signal_name(&st)), (Some(15), "SIGTERM"));
        assert!(st.get("exit_code").is_none(), "{ws}: {st}");

        // A trap that exits 0: still `terminated`, with the exit code its trap chose.
        reset(&root);
        let id = start(&client, ws, TRAP_THEN_EXIT_0).await;
        call(&client, "terminate_process", json!({"process_id": id})).await.unwrap();
        let st = wait_exit(&client, &id).await;
        assert!(cleaned_up(&root), "{ws}: the trap did not run: {st}");
        assert_eq!(
            (st["termination"].as_str(), st["exit_code"].as_i64()),
            (Some("terminated"), Some(0))
        );
        assert!(st.get("signal").is_none(), "{ws}: {st}");

        // `grace_ms: 0` kills at once: the trap never runs and SIGKILL is named.
        reset(&root);
        let id = start(&client, ws, TRAP_THEN_DIE).await;
        let ack = call(&client, "terminate_process", json!({"process_id": id, "grace_ms": 0}))
            .await
            .unwrap();
        assert_eq!(ack["grace_ms"], 0, "{ack}");
        let st = wait_exit(&client, &id).await;
        assert!(root.join("lockfile").exists() && !root.join("cleaned").exists(), "{ws}");
        assert_eq!((st["termination"].as_str(), signal_name(&st)), (Some("terminated"), "SIGKILL"));
        reset(&root);
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn what_ignores_sigterm_is_sigkilled_after_the_grace_daemons_included() {
    let mut env = Env::new();
    two_workspaces(&mut env);
    let client = env.stdio().await;
    for ws in MODES {
        // The command and a daemonized grandchild (its own session) both ignore SIGTERM.
        // The marker is computed by the daemon's shell, so only the daemon's command line
        // holds it.
        let k = if ws == "on" { 1 } else { 2 };
        let marker = format!("sleep 1000.{}", 550 + k);
        let script = format!(
            "trap '' TERM; setsid sh -c 'exec sleep 1000.$((550+{k}))' & echo ready; \
             while :; do sleep 0.1; done"
        );
        let id = start(&client, ws, &script).await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while alive(&marker).is_empty() {
            assert!(Instant::now() < deadline, "{ws}: the daemon did not start");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // A grace over the workspace's is cut to it, and the result says so.
        let asked = unix_ms();
        let ack =
            call(&client, "terminate_process", json!({"process_id": id, "grace_ms": 600_000}))
                .await
                .unwrap();
        assert_eq!(
            (ack["grace_ms"].as_u64(), &ack["grace_clamped"]),
            (Some(GRACE_MS), &json!(true))
        );
        // Still there during the grace: SIGTERM did nothing to them.
        tokio::time::sleep(Duration::from_millis(GRACE_MS / 3)).await;
        let st = call(&client, "process_status", json!({"process_id": id})).await.unwrap();
        assert_eq!(st["state"], "running", "{ws}: {st}");
        assert!(!alive(&marker).is_empty(), "{ws}: the daemon died of SIGTERM");
        let st = wait_exit(&client, &id).await;
        assert_eq!((st["termination"].as_str(), signal_name(&st)), (Some("terminated"), "SIGKILL"));
        let exited = st["exited_at"].as_u64().unwrap();
        assert!(exited >= asked + GRACE_MS - 50, "{ws}: SIGKILL before the grace: {st}");
        gone_within(&marker, Duration::from_secs(2)).await;
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_time_limit_sends_sigterm_first_so_a_trap_cleans_up() {
    let mut env = Env::new();
    two_workspaces(&mut env);
    let client = env.stdio().await;
    for ws in MODES {
        let root = env.path().join("ws").join(ws);
        let args =
            json!({"workspace_id": ws, "command": ["sh", "-c", TRAP_THEN_DIE], "timeout_secs": 1});
        let r = call(&client, "exec_command", args).await.unwrap();
        let id = r["process_id"].as_str().unwrap().to_owned();
        let st = wait_exit(&client, &id).await;
        assert!(cleaned_up(&root), "{ws}: the trap did not run at the time limit: {st}");
        assert_eq!((st["termination"].as_str(), signal_name(&st)), (Some("timeout"), "SIGTERM"));
        reset(&root);
        // What ignores it is SIGKILLed once the grace is over.
        let args = json!({"workspace_id": ws, "command": ["sh", "-c", "trap '' TERM; sleep 1000"], "timeout_secs": 1});
        let r = call(&client, "exec_command", args).await.unwrap();
        let st = wait_exit(&client, r["process_id"].as_str().unwrap()).await;
        assert_eq!((st["termination"].as_str(), signal_name(&st)), (Some("timeout"), "SIGKILL"));
        let ran = st["exited_at"].as_u64().unwrap() - st["started_at"].as_u64().unwrap();
        assert!(ran >= 1000 + GRACE_MS - 50, "{ws}: {ran} ms: {st}");
    }
    client.cancel().await.unwrap();
}

/// The server's end (stdin closed, then SIGTERM to the server) gives every command its grace
/// at once: the traps run, and what ignores SIGTERM is gone too.
#[tokio::test]
async fn server_shutdown_sends_sigterm_first_so_a_trap_cleans_up() {
    let mut env = Env::new();
    two_workspaces(&mut env);
    for how in ["stdin closed", "SIGTERM"] {
        let (client, pid) = env.stdio_with(&[]).await;
        let on = env.path().join("ws/on");
        let off = env.path().join("ws/off");
        start(&client, "on", TRAP_THEN_DIE).await;
        start(&client, "off", TRAP_THEN_EXIT_0).await;
        match how {
            "SIGTERM" => rustix::process::kill_process(
                rustix::process::Pid::from_raw(pid as i32).unwrap(),
                rustix::process::Signal::TERM,
            )
            .unwrap(),
            _ => drop(client.cancel().await.unwrap()),
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while !(cleaned_up(&on) && cleaned_up(&off)) {
            assert!(Instant::now() < deadline, "{how}: a trap did not run at shutdown");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        reset(&on);
        reset(&off);
    }
    // A command that ignores SIGTERM does not outlive the server's grace.
    let (client, _) = env.stdio_with(&[]).await;
    for (ws, marker) in [("on", "sleep 1000.661"), ("off", "sleep 1000.662")] {
        let script = format!("trap '' TERM; echo ready; {marker}");
        start(&client, ws, &script).await;
    }
    client.cancel().await.unwrap();
    gone_within("sleep 1000.66", Duration::from_secs(10)).await;
}
