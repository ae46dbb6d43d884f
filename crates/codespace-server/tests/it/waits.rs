//! `wait_ms` waits that end early, end to end: the client's `notifications/cancelled` ends a
//! waiting `read_process` or `process_status` at once (and no reply is sent for it), and
//! `terminate_process` ends every wait on the process it kills.

use std::io::{BufRead as _, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::process::exec;
use crate::support::{Env, RawStdio, call};

/// How long the cancelled waits would last: far beyond any delay the test accepts.
const WAIT_MS: u64 = 20_000;
/// The most a cancel may take to end a wait (a loaded machine included).
const PROMPT: Duration = Duration::from_secs(5);

fn tool_call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

/// The next message on stdout, which must be the reply to `id`.
fn reply(raw: &mut RawStdio, id: u64) -> Value {
    let msg = raw.recv().expect("the server ended");
    assert_eq!(msg["id"], id, "expected the reply to {id}, got {msg}");
    msg
}

/// Waits until the server has written, in any order, a stderr line containing each of
/// `needles`; returns when the last of them came.
fn stderr_lines(lines: &mpsc::Receiver<String>, needles: &[String], limit: Duration) -> Instant {
    let deadline = Instant::now() + limit;
    let mut missing: Vec<&String> = needles.iter().collect();
    while !missing.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => missing.retain(|needle| !line.contains(needle.as_str())),
            Err(e) => panic!("no stderr line with {missing:?} within {limit:?}: {e}"),
        }
    }
    Instant::now()
}

#[test]
fn a_cancelled_request_ends_its_wait_at_once() {
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    let mut cmd = env.command();
    cmd.args(["serve", "--config"])
        .arg(env.config())
        .env("RUST_LOG", "warn,codespace=debug")
        .stderr(Stdio::piped());
    let mut raw = RawStdio::start_command(cmd);
    let stderr = raw.child.stderr.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });

    raw.send(&tool_call(
        1,
        "exec_command",
        json!({"workspace_id": "w", "command": ["sleep", "30"]}),
    ));
    let started = reply(&mut raw, 1);
    let pid = started["result"]["structuredContent"]["process_id"].as_str().unwrap().to_owned();
    // Two waits that would last 20 s: one for output, one for the exit.
    raw.send(&tool_call(2, "read_process", json!({"process_id": pid, "wait_ms": WAIT_MS})));
    raw.send(&tool_call(3, "process_status", json!({"process_id": pid, "wait_ms": WAIT_MS})));
    // They block nothing: a ping sent after them is answered first.
    raw.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    reply(&mut raw, 4);
    // Both are waiting before they are cancelled.
    let waiting =
        ["request 2 (read_process) started".into(), "request 3 (process_status) started".into()];
    stderr_lines(&lines, &waiting, PROMPT);

    let cancelled = Instant::now();
    for id in [2, 3] {
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": id, "reason": "the agent moved on"}}));
    }
    // Each wait ends as soon as its request is cancelled, not when wait_ms runs out.
    let ended = stderr_lines(
        &lines,
        &[
            "request 2 (read_process) cancelled".into(),
            "request 3 (process_status) cancelled".into(),
        ],
        PROMPT,
    );
    let took = ended.duration_since(cancelled);
    assert!(took < PROMPT, "the waits went on {took:?} after the cancel");
    // No reply is sent for a cancelled request: the next message is the next ping's.
    raw.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}));
    reply(&mut raw, 5);
    assert!(cancelled.elapsed() < PROMPT, "{:?}", cancelled.elapsed());
    // Cancelling a wait is not terminating the process: it still runs.
    raw.send(&tool_call(6, "process_status", json!({"process_id": pid})));
    let status = reply(&mut raw, 6);
    assert_eq!(status["result"]["structuredContent"]["state"], "running", "{status}");
    raw.send(&tool_call(7, "terminate_process", json!({"process_id": pid})));
    reply(&mut raw, 7);
    assert!(raw.finish().success());
}

#[tokio::test]
async fn terminate_process_ends_every_wait_on_the_process() {
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    let client = env.stdio().await;
    let id = exec(&client, "w", &["sleep", "30"], false).await;
    let started = Instant::now();
    let read = call(&client, "read_process", json!({"process_id": id, "wait_ms": WAIT_MS}));
    let status = call(&client, "process_status", json!({"process_id": id, "wait_ms": WAIT_MS}));
    let terminate = async {
        // Sent after both waits, so answered once the server has taken them.
        call(&client, "workspace_info", json!({})).await.unwrap();
        call(&client, "terminate_process", json!({"process_id": id})).await.unwrap()
    };
    let (read, status, ack) = tokio::join!(read, status, terminate);
    let took = started.elapsed();
    assert_eq!(ack["ok"], true, "{ack}");
    let (read, status) = (read.unwrap(), status.unwrap());
    assert_eq!((read["chunk"].clone(), read["eof"].clone()), (json!(""), json!(true)), "{read}");
    assert_eq!(status["state"], "exited", "{status}");
    assert_eq!(status["termination"], "terminated", "{status}");
    assert!(took < PROMPT, "the waits outlived the process by {took:?}");
    client.cancel().await.unwrap();
}
