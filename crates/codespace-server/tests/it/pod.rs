//! The server as a citizen of a pod, through the real binary: the probes (`/livez`,
//! `/readyz`) answer without a token or a known Host; `/metrics` is scraped and parsed and
//! its counters move with the calls made; `--allowed-host` names pass the Host check and
//! nothing else does; a `traceparent` in `_meta` is in the call's log span; SIGTERM drains (a 503 from `/readyz`,
//! `SERVER_DRAINING` for a new command, the live one given its grace) and exits 0.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::process::{exec, wait_exit, wait_output};
use crate::support::{Env, HttpServer, call, raw_http, refused};

const TOKEN: &str = "pod-token-1";

fn get(server: &HttpServer, path: &str, host: &str, token: Option<&str>) -> (u16, String) {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{auth}Connection: close\r\n\r\n");
    let r = raw_http(&server.addr, request.as_bytes());
    (r.status, r.body)
}

/// Every sample of a Prometheus text scrape, by `name{labels}`.
fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (key, value) = l.rsplit_once(' ').unwrap_or_else(|| panic!("sample line {l:?}"));
            (key.to_owned(), value.parse().unwrap_or_else(|_| panic!("value in {l:?}")))
        })
        .collect()
}

fn scrape(server: &HttpServer) -> BTreeMap<String, f64> {
    let (status, body) = get(server, "/metrics", "10.1.2.3:8787", None);
    assert_eq!(status, 200, "{body}");
    samples(&body)
}

#[tokio::test]
async fn probes_answer_without_a_token_and_metrics_count_the_calls() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    let server = env.http(&["--token", TOKEN]);

    // The probes: any Host (a kubelet sends the pod's address), no token.
    assert_eq!(get(&server, "/livez", "10.1.2.3:8787", None).0, 200);
    let (status, body) = get(&server, "/readyz", "pod.cluster.internal", None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&body).unwrap()["state"], "serving");

    // /metrics takes no token by default, an IP-literal Host, never a foreign name.
    assert_eq!(get(&server, "/metrics", "evil.example", None).0, 403);
    let before = scrape(&server);
    assert_eq!(before.get("codespace_live_processes"), Some(&0.0), "{before:?}");
    assert_eq!(before.get("codespace_pending_holds"), Some(&0.0), "{before:?}");
    assert_eq!(before.get("codespace_queued_instructions"), Some(&0.0), "{before:?}");
    // Everything else still needs the token.
    assert_eq!(get(&server, "/mcp", "127.0.0.1", None).0, 401);

    let client = server.client(Some(TOKEN)).await;
    call(&client, "read", json!({"workspace_id": "w", "path": "a.txt"})).await.unwrap();
    call(&client, "read", json!({"workspace_id": "w", "path": "a.txt"})).await.unwrap();
    refused(&client, "read", json!({"workspace_id": "w", "path": "../x"}), "PATH_ESCAPE").await;
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n";
    let applied =
        call(&client, "apply_patch", json!({"workspace_id": "w", "patch": patch})).await.unwrap();
    assert_eq!(applied["status"], "applied");
    // Output beyond the in-memory ring spills.
    let seq = exec(&client, "w", &["seq", "1", "600000"], false).await;
    wait_exit(&client, &seq).await;
    let id = exec(&client, "w", &["sh", "-c", "echo ready; sleep 30"], false).await;
    wait_output(&client, &id, "ready").await;

    let after = scrape(&server);
    let at = |key: &str| after.get(key).copied().unwrap_or_else(|| panic!("{key} in {after:?}"));
    assert_eq!(at(r#"codespace_tool_calls_total{tool="read",code="OK"}"#), 2.0);
    assert_eq!(at(r#"codespace_tool_calls_total{tool="read",code="PATH_ESCAPE"}"#), 1.0);
    assert_eq!(at(r#"codespace_tool_calls_total{tool="apply_patch",code="OK"}"#), 1.0);
    assert_eq!(at(r#"codespace_tool_call_duration_seconds_count{tool="read"}"#), 3.0);
    assert!(at(r#"codespace_tool_call_duration_seconds_bucket{tool="read",le="+Inf"}"#) == 3.0);
    assert!(at("codespace_ledger_commit_duration_seconds_count") >= 2.0, "{after:?}");
    assert_eq!(at("codespace_live_processes"), 1.0);
    assert!(at("codespace_output_spilled_bytes_total") > 0.0, "{after:?}");
    assert_eq!(at("codespace_watcher_resyncs_total"), 0.0);
    // No label value comes from a request's text.
    assert!(after.keys().all(|k| !k.contains("../x")), "{after:?}");
    call(&client, "terminate_process", json!({"process_id": id})).await.unwrap();
    client.cancel().await.unwrap();

    // --metrics-token: /metrics takes the MCP token like /mcp.
    let guarded = env.http(&["--token", TOKEN, "--metrics-token"]);
    assert_eq!(get(&guarded, "/metrics", "127.0.0.1", None).0, 401);
    assert_eq!(get(&guarded, "/metrics", "127.0.0.1", Some(TOKEN)).0, 200);
    assert_eq!(get(&guarded, "/readyz", "127.0.0.1", None).0, 200);
}

/// A command whose TERM trap takes a while, then leaves `cleaned` and exits 0.
const SLOW_TRAP: &str =
    "trap 'sleep 2; touch cleaned; exit 0' TERM; echo ready; while :; do sleep 0.1; done";

#[tokio::test]
async fn sigterm_drains_refuses_new_work_gives_commands_their_grace_and_exits_0() {
    let mut env = Env::new();
    let root = env.workspace(
        "w",
        json!({"profile": "workspace-write", "sandbox": "off", "kill_grace_ms": 8000}),
    );
    let mut server = env.http(&["--token", TOKEN, "--drain-timeout-secs", "15"]);
    let client = server.client(Some(TOKEN)).await;
    let id = exec(&client, "w", &["sh", "-c", SLOW_TRAP], false).await;
    wait_output(&client, &id, "ready").await;

    let pid = rustix::process::Pid::from_raw(server.child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let signalled = Instant::now();
    // Draining: not ready, and a new command is refused with its code while the live one
    // has its grace; reads still answer.
    let deadline = signalled + Duration::from_secs(10);
    loop {
        let (status, body) = get(&server, "/readyz", "127.0.0.1", None);
        if status == 503 {
            assert!(body.contains("draining"), "{body}");
            break;
        }
        assert!(Instant::now() < deadline, "/readyz never turned 503: {status} {body}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let e = refused(
        &client,
        "exec_command",
        json!({"workspace_id": "w", "command": ["true"]}),
        "SERVER_DRAINING",
    )
    .await;
    assert!(e["message"].as_str().is_some_and(|m| m.contains("shutting down")), "{e}");
    call(&client, "workspace_info", json!({"workspace_id": "w"})).await.unwrap();

    // Exits 0 within the drain's bound, the command having ended through its trap.
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(signalled.elapsed() < Duration::from_secs(60), "still running after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(root.join("cleaned").exists(), "the command's TERM trap did not run to its end");
}

#[tokio::test]
async fn allowed_hosts_are_accepted_and_every_other_host_refused() {
    let env = Env::new();
    let server = env.http(&[
        "--token",
        TOKEN,
        "--allowed-host",
        "codespace.sandbox.svc",
        "--allowed-host",
        "router.example:443",
    ]);
    let port = server.addr.rsplit(':').next().unwrap().to_owned();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let post = |host: &str| {
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{init}",
            init.len()
        );
        raw_http(&server.addr, request.as_bytes()).status
    };
    // What a router sends: the name alone, the name on the bound port, an exact NAME:PORT.
    for host in [
        "codespace.sandbox.svc".to_owned(),
        format!("codespace.sandbox.svc:{port}"),
        "CODESPACE.sandbox.svc".to_owned(),
        "router.example:443".to_owned(),
        format!("127.0.0.1:{port}"),
    ] {
        assert_eq!(post(&host), 200, "{host}");
    }
    // Everything else keeps the DNS-rebinding refusal, IP literals included on /mcp.
    for host in [
        "evil.example".to_owned(),
        "codespace.sandbox.svc.evil.example".to_owned(),
        "router.example".to_owned(),
        "router.example:80".to_owned(),
        "codespace.sandbox.svc:1".to_owned(),
        "10.1.2.3".to_owned(),
    ] {
        assert_eq!(post(&host), 403, "{host}");
    }
}

#[tokio::test]
async fn a_traceparent_in_meta_becomes_the_calls_span_in_the_log() {
    let env = Env::new();
    let mut cmd = env.http_command(&["--token", TOKEN]);
    cmd.env("RUST_LOG", "codespace_server=debug");
    let server = HttpServer::start(cmd);
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {
            "name": "workspace_info",
            "arguments": {"workspace_id": "nope"},
            "_meta": {"traceparent": format!("00-{trace_id}-00f067aa0ba902b7-01")}
        }
    });
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let auth = format!("Authorization: Bearer {TOKEN}");
    let opened = server.post("/mcp", &[&auth], init);
    assert_eq!(opened.status, 200, "{opened:?}");
    let session = opened.header("mcp-session-id").expect("session id").to_owned();
    let session_header = format!("Mcp-Session-Id: {session}");
    let version = "MCP-Protocol-Version: 2025-06-18";
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    server.post("/mcp", &[&auth, &session_header, version], initialized);
    let answered = server.post("/mcp", &[&auth, &session_header, version], &body.to_string());
    assert!(answered.body.contains("WORKSPACE_NOT_FOUND"), "{answered:?}");
    server.wait_for_stderr(&format!("trace_id=\"{trace_id}\""), Duration::from_secs(10));
}

/// A server connected to a worker started on its own (`--runner-socket`): when that
/// worker dies the server keeps serving HTTP, not ready. (A worker the server started itself
/// takes the server down with it, so that a supervisor restarts both.)
#[tokio::test]
async fn readyz_turns_503_when_the_runner_worker_is_lost() {
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    let socket = env.path().join("worker.sock");
    let mut worker = env
        .command()
        .arg("worker")
        .arg("--socket")
        .arg(&socket)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "the worker never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    let socket_arg = socket.to_str().unwrap().to_owned();
    let mut cmd = env.http_command(&["--token", TOKEN, "--runner-socket", &socket_arg]);
    cmd.env_remove("CODESPACE_RUNNER");
    let server = HttpServer::start(cmd);
    assert_eq!(get(&server, "/readyz", "127.0.0.1", None).0, 200);
    worker.kill().unwrap();
    worker.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, body) = get(&server, "/readyz", "127.0.0.1", None);
        if status == 503 {
            assert!(body.contains("runner worker is lost"), "{body}");
            break;
        }
        assert!(Instant::now() < deadline, "/readyz still {status}: {body}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Still alive: the process serves, it is only not ready.
    assert_eq!(get(&server, "/livez", "127.0.0.1", None).0, 200);
}
