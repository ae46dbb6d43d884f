//! The process tools end to end: exit codes, output, stdin, PTY resize and signals, the
//! lease matrix, limits, timeouts and escapees (R1, R2, R4, R7, R8), HTTP disconnects and
//! shutdown.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Client, Env, HttpServer, call, refused};

fn ww(env: &mut Env, id: &str) -> std::path::PathBuf {
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

async fn gone_within(marker: &str, limit: Duration) {
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
async fn sandbox_on_confines_commands_to_the_workspace_and_network() {
    let mut env = Env::new();
    let root = env.workspace("boxed", json!({"profile": "workspace-write"}));
    env.workspace("net", json!({"profile": "workspace-write", "network": "enabled"}));
    let outside = env.path().join("outside/planted.txt");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let client = env.stdio().await;
    let info = call(&client, "workspace_info", json!({"workspace_id": "boxed"})).await.unwrap();
    assert_eq!(info["execution"]["isolation"]["command_sandbox"], "linux-sandbox");
    let script = format!(
        "echo in > inside.txt && echo wrote-inside; echo x > {} 2>/dev/null && echo wrote-outside; echo x > /etc/codespace-probe 2>/dev/null && echo wrote-etc; (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected; grep -q NoNewPrivs:.1 /proc/self/status && echo nnp",
        outside.display()
    );
    let id = exec(&client, "boxed", &["bash", "-c", &script], false).await;
    wait_exit(&client, &id).await;
    let out = output(&client, &id).await;
    assert!(out.contains("wrote-inside"), "{out}");
    assert!(out.contains("nnp"), "{out}");
    for denied in ["wrote-outside", "wrote-etc", "connected"] {
        assert!(!out.contains(denied), "{denied} must be denied: {out}");
    }
    assert!(root.join("inside.txt").exists());
    assert!(!outside.exists() && !std::path::Path::new("/etc/codespace-probe").exists());
    // network=enabled: the same connect goes through.
    let id = exec(
        &client,
        "net",
        &["bash", "-c", &format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) && echo connected")],
        false,
    )
    .await;
    wait_exit(&client, &id).await;
    assert!(output(&client, &id).await.contains("connected"));
    drop(listener);
    client.cancel().await.unwrap();
}

/// F7, R3 through the real binary: even with the whole scratch area as an extra read root,
/// a sandboxed command cannot see the server's state directory (ledger, token) or its
/// registry file, write
/// the extra root, home or the host's /tmp, and runs under the configured pid cap with a
/// private TMPDIR. The extra read root itself is readable.
#[tokio::test]
async fn sandbox_hides_the_state_directory_even_beneath_an_extra_read_root() {
    let mut env = Env::new();
    let scratch = env.path().to_path_buf();
    let root = env.workspace(
        "wide",
        json!({"profile": "workspace-write", "extra_read_roots": [scratch.display().to_string()]}),
    );
    std::fs::create_dir_all(scratch.join("outside")).unwrap();
    std::fs::write(scratch.join("outside/planted.txt"), "planted\n").unwrap();
    let state = env.state().join("codespace");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    std::fs::write(state.join("http-token"), "s3cr3t-token\n").unwrap();
    let host_tmp = format!("/tmp/codespace-e2e-private-{}", std::process::id());
    let (client, _) = env.stdio_with(&[("CODESPACE_PROCESS_MAX_PIDS", "500")]).await;
    // The ledger exists once a patch went through.
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n";
    let r = call(&client, "apply_patch", json!({"workspace_id": "wide", "patch": patch}))
        .await
        .unwrap();
    assert_eq!(r["status"], "applied");
    assert!(state.join("operations.sqlite3").exists());
    let script = format!(
        "S='{s}'; E='{e}'; \
         for f in \"$S/http-token\" \"$S/operations.sqlite3\" \"$S/operations.sqlite3-wal\"; do \
           [ -e \"$f\" ] && echo \"visible:$f\"; done; \
         echo state-entries=$(ls -A \"$S\" | wc -l); echo config-bytes=$(wc -c < '{c}'); \
         cat \"$E/outside/planted.txt\"; \
         (echo x > \"$E/outside/new\") 2>/dev/null && echo wrote-extra; \
         (echo x > \"$S/operations.sqlite3\") 2>/dev/null && echo wrote-ledger; \
         (echo x > \"$HOME/codespace-e2e-probe\") 2>/dev/null && echo wrote-home; \
         echo x > '{t}' && echo wrote-private-tmp; \
         echo tmpdir=$TMPDIR; echo pid_max=$(cat /proc/sys/kernel/pid_max); cat a.txt",
        s = state.display(),
        e = scratch.display(),
        t = host_tmp,
        c = env.config().display(),
    );
    let id = exec(&client, "wide", &["bash", "-c", &script], false).await;
    let st = wait_exit(&client, &id).await;
    let out = output(&client, &id).await;
    assert_eq!(st["exit_code"], 0, "{out}");
    for line in [
        "state-entries=0",
        "config-bytes=0",
        "planted",
        "wrote-private-tmp",
        "tmpdir=/tmp",
        "pid_max=500",
        "a",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?}: {out}");
    }
    for denied in ["visible:", "wrote-extra", "wrote-ledger", "wrote-home"] {
        assert!(!out.contains(denied), "{denied}: {out}");
    }
    assert!(!std::path::Path::new(&host_tmp).exists(), "the private /tmp leaked");
    assert!(!scratch.join("outside/new").exists());
    assert_eq!(std::fs::read_to_string(state.join("http-token")).unwrap(), "s3cr3t-token\n");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a\n");
    // The ledger is intact: the patch's record is still there.
    let op = r["operation_id"].as_str().unwrap();
    let status = call(&client, "operation_status", json!({"operation_id": op})).await.unwrap();
    assert_eq!(status["status"], "applied");
    client.cancel().await.unwrap();
}

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
