//! A quick command in one call and a whole output in few calls, end to end: `exec_command`
//! with `wait_ms` answers the exit and the first output, `read_process` with `min_bytes`
//! waits for that much, every wait is cut to `MAX_WAIT_MS`, and a request with a
//! `progressToken` hears progress while it waits.

use std::io::{BufRead as _, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use codespace_protocol::MAX_WAIT_MS;
use serde_json::{Value, json};

use crate::process::ww;
use crate::support::{Client, Env, RawStdio, call};

/// Far longer than any command below takes, well under the cap.
const PATIENT: u64 = 30_000;

/// 40 lines of 2,000 digits and a newline (80,040 bytes), one every 100 ms: a test run's
/// bursty output over about 4 s.
const BURSTY: &str =
    "i=0; while [ $i -lt 40 ]; do printf '%02000d\\n' $i; i=$((i+1)); sleep 0.1; done";

fn bursty_output() -> String {
    (0..40).map(|i| format!("{i:02000}\n")).collect()
}

async fn exec_waiting(client: &Client, argv: &[&str], extra: Value) -> Value {
    let mut args = json!({"workspace_id": "w", "command": argv, "wait_ms": PATIENT});
    args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    call(client, "exec_command", args).await.unwrap()
}

#[tokio::test]
async fn true_with_wait_ms_answers_its_exit_in_one_call() {
    let mut env = Env::new();
    ww(&mut env, "w");
    let client = env.stdio().await;
    let r = exec_waiting(&client, &["true"], json!({})).await;
    assert_eq!(r["dispatch_status"], "confirmed", "{r}");
    assert_eq!(r["state"], "exited", "{r}");
    assert_eq!(r["termination"], "exited", "{r}");
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(r["output"], json!({"chunk": "", "cursor": 0, "eof": true, "output_lost": false}));
    // Still readable by its id, as any process.
    let id = r["process_id"].as_str().unwrap();
    let st = call(&client, "process_status", json!({"process_id": id})).await.unwrap();
    assert_eq!((st["state"].clone(), st["exit_code"].clone()), (json!("exited"), json!(0)));
    // Without wait_ms (or with 0) the answer is the start alone, as before.
    for extra in [json!({}), json!({"wait_ms": 0})] {
        let mut args = json!({"workspace_id": "w", "command": ["true"]});
        args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let r = call(&client, "exec_command", args).await.unwrap();
        for absent in ["state", "termination", "exit_code", "signal", "output"] {
            assert!(r.get(absent).is_none(), "{absent} without a wait: {r}");
        }
        crate::process::wait_exit(&client, r["process_id"].as_str().unwrap()).await;
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_quick_command_answers_stdout_and_stderr_in_the_same_call() {
    let mut env = Env::new();
    ww(&mut env, "w");
    let client = env.stdio().await;
    let script = "echo to-stdout; echo to-stderr >&2; exit 3";
    let r = exec_waiting(&client, &["sh", "-c", script], json!({})).await;
    assert_eq!((r["state"].clone(), r["exit_code"].clone()), (json!("exited"), json!(3)), "{r}");
    assert_eq!(r["output"]["chunk"], "to-stdout\nto-stderr\n", "{r}");
    assert_eq!(r["output"]["cursor"], 20, "{r}");
    assert_eq!(r["output"]["eof"], true, "{r}");
    // A signal is named as process_status names it.
    let r = exec_waiting(&client, &["sh", "-c", "kill -9 $$"], json!({})).await;
    assert_eq!(r["termination"], "signaled", "{r}");
    assert_eq!(r["signal"]["name"], "SIGKILL", "{r}");
    // max_bytes bounds the output, and the rest is read on from its cursor.
    let r = exec_waiting(&client, &["sh", "-c", "echo 0123456789"], json!({"max_bytes": 4})).await;
    assert_eq!(
        r["output"],
        json!({"chunk": "0123", "cursor": 4, "eof": false, "output_lost": false})
    );
    let id = r["process_id"].as_str().unwrap();
    let rest = call(&client, "read_process", json!({"process_id": id, "cursor": 4})).await.unwrap();
    assert_eq!((rest["chunk"].clone(), rest["eof"].clone()), (json!("456789\n"), json!(true)));
    // An out-of-bounds max_bytes is refused before anything starts.
    let refused = crate::support::refused(
        &client,
        "exec_command",
        json!({"workspace_id": "w", "command": ["true"], "wait_ms": 1000, "max_bytes": 262_145}),
        "OUTPUT_LIMIT",
    )
    .await;
    assert!(refused["message"].as_str().unwrap().contains("max_bytes"), "{refused}");
    client.cancel().await.unwrap();
}

/// The README's recipe: `exec_command` with `wait_ms` (here shorter than the command, so
/// the rest remains), then `read_process` with a large `min_bytes` until `eof`.
#[tokio::test]
async fn a_bursty_80_kb_output_arrives_whole_in_at_most_3_calls() {
    let mut env = Env::new();
    ww(&mut env, "w");
    let client = env.stdio().await;
    let big = json!({"wait_ms": 1000, "max_bytes": 262_144});
    let r = exec_waiting(&client, &["sh", "-c", BURSTY], big).await;
    let mut calls = 1;
    let id = r["process_id"].as_str().unwrap().to_owned();
    let mut text = r["output"]["chunk"].as_str().unwrap().to_owned();
    let (mut cursor, mut eof) =
        (r["output"]["cursor"].as_u64().unwrap(), r["output"]["eof"] == true);
    while !eof {
        let args = json!({"process_id": id, "cursor": cursor, "min_bytes": 262_144,
                          "max_bytes": 262_144, "wait_ms": PATIENT});
        let chunk = call(&client, "read_process", args).await.unwrap();
        calls += 1;
        assert!(calls <= 3, "more than 3 calls, {} of {} bytes so far", text.len(), 80_040);
        text.push_str(chunk["chunk"].as_str().unwrap());
        cursor = chunk["cursor"].as_u64().unwrap();
        eof = chunk["eof"] == true;
    }
    assert_eq!(text.len(), 80_040);
    assert!(text == bursty_output(), "the output arrived changed");
    eprintln!("80,040 bytes over about 4 s in {calls} calls");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn read_process_waits_for_min_bytes_cut_to_max_bytes() {
    let mut env = Env::new();
    ww(&mut env, "w");
    let client = env.stdio().await;
    // 10 bytes every 100 ms for about 3 s.
    let script = "i=0; while [ $i -lt 30 ]; do printf 0123456789; i=$((i+1)); sleep 0.1; done";
    let id = crate::process::exec(&client, "w", &["sh", "-c", script], false).await;
    let args = json!({"process_id": id, "min_bytes": 100, "max_bytes": 1000, "wait_ms": PATIENT});
    let first = call(&client, "read_process", args).await.unwrap();
    let got = first["chunk"].as_str().unwrap().len();
    assert!(got >= 100 && first["eof"] == false, "{got} bytes: {first}");
    // A min_bytes above max_bytes waits for max_bytes only: the process still runs after.
    let cursor = first["cursor"].clone();
    let args = json!({"process_id": id, "cursor": cursor, "min_bytes": 100_000,
                      "max_bytes": 50, "wait_ms": PATIENT});
    let second = call(&client, "read_process", args).await.unwrap();
    assert_eq!(second["chunk"].as_str().unwrap().len(), 50, "{second}");
    let st = call(&client, "process_status", json!({"process_id": id})).await.unwrap();
    assert_eq!(st["state"], "running", "the read waited past max_bytes: {st}");
    // At the end of the output a large min_bytes returns what there is.
    let args = json!({"process_id": id, "cursor": second["cursor"], "min_bytes": 100_000,
                      "max_bytes": 262_144, "wait_ms": PATIENT});
    let last = call(&client, "read_process", args).await.unwrap();
    assert_eq!(last["eof"], true, "{last}");
    assert_eq!(last["cursor"], 300, "{last}");
    // The last read carries the exit: no process_status needed after it.
    assert_eq!(last["state"], "exited", "{last}");
    assert_eq!(last["exit_code"], 0, "{last}");
    assert_eq!(last["termination"], "exited", "{last}");
    // Before the end, no exit fields.
    assert!(first.get("state").is_none() && first.get("exit_code").is_none(), "{first}");
    client.cancel().await.unwrap();
}

/// A server whose stderr lines arrive on the returned channel, at debug level.
fn raw_with_stderr(env: &Env) -> (RawStdio, mpsc::Receiver<String>) {
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
    (raw, lines)
}

fn tool_call(id: u64, name: &str, arguments: Value, token: Option<&str>) -> Value {
    let mut params = json!({"name": name, "arguments": arguments});
    if let Some(token) = token {
        params["_meta"] = json!({"progressToken": token});
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// The reply to `id`, with the progress notifications that came before it.
fn reply_with_progress(raw: &mut RawStdio, id: u64) -> (Value, Vec<Value>) {
    let mut progress = Vec::new();
    loop {
        let v = raw.recv().expect("the server ended");
        if v["method"] == "notifications/progress" {
            progress.push(v["params"].clone());
        } else {
            assert_eq!(v["id"], id, "expected the reply to {id}, got {v}");
            return (v, progress);
        }
    }
}

#[test]
fn a_wait_over_the_cap_is_cut_to_it() {
    let mut env = Env::new();
    ww(&mut env, "w");
    let (mut raw, lines) = raw_with_stderr(&env);
    raw.send(&tool_call(1, "workspace_info", json!({"workspace_id": "w"}), None));
    let (info, _) = reply_with_progress(&mut raw, 1);
    let limits = &info["result"]["structuredContent"]["execution"]["process"]["limits"];
    assert_eq!(limits["wait_max_ms"], MAX_WAIT_MS, "{info}");
    // An hour asked for: the server waits the cap, which the test reads off its log rather
    // than sitting through it, then cancels.
    let hour = 3_600_000;
    let args = json!({"workspace_id": "w", "command": ["sleep", "30"], "wait_ms": hour});
    raw.send(&tool_call(2, "exec_command", args, None));
    let cut = format!("a wait of up to {MAX_WAIT_MS} ms");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let line = loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = lines.recv_timeout(left).expect("no wait was logged");
        if line.contains("asked_ms") {
            break line;
        }
    };
    assert!(line.contains(&cut) && line.contains(&format!("asked_ms={hour}")), "{line}");
    raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 2, "reason": "the test moved on"}}));
    assert!(raw.finish().success());
}

#[test]
fn a_waiting_call_with_a_progress_token_hears_progress() {
    let mut env = Env::new();
    ww(&mut env, "w");
    let (mut raw, _lines) = raw_with_stderr(&env);
    // exec_command waits 4.5 s for a command that does not end: reports at 2 s and 4 s.
    let args = json!({"workspace_id": "w", "command": ["sleep", "30"], "wait_ms": 4500});
    raw.send(&tool_call(1, "exec_command", args, Some("exec-wait")));
    let (reply, progress) = reply_with_progress(&mut raw, 1);
    let r = &reply["result"]["structuredContent"];
    assert_eq!(r["state"], "running", "{reply}");
    let id = r["process_id"].as_str().unwrap().to_owned();
    assert!(!progress.is_empty(), "no progress during a 4.5 s wait");
    let mut last = 0.0;
    for p in &progress {
        assert_eq!(p["progressToken"], "exec-wait", "{p}");
        let now = p["progress"].as_f64().unwrap();
        assert!(now > last, "progress went from {last} to {now}");
        last = now;
    }
    // read_process and process_status report too.
    for (n, name) in [(2, "read_process"), (3, "process_status")] {
        let args = json!({"process_id": id, "wait_ms": 2500});
        raw.send(&tool_call(n, name, args, Some(name)));
        let (_, progress) = reply_with_progress(&mut raw, n);
        assert!(!progress.is_empty(), "{name}: no progress during a 2.5 s wait");
        assert!(progress.iter().all(|p| p["progressToken"] == name), "{progress:?}");
    }
    // Without a token, no progress at all.
    raw.send(&tool_call(4, "process_status", json!({"process_id": id, "wait_ms": 2500}), None));
    let (_, progress) = reply_with_progress(&mut raw, 4);
    assert!(progress.is_empty(), "progress without a token: {progress:?}");
    raw.send(&tool_call(5, "terminate_process", json!({"process_id": id}), None));
    reply_with_progress(&mut raw, 5);
    assert!(raw.finish().success());
}
