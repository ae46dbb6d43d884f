//! Long file calls and their client: a cancelled `grep` or `find` stops working at once, and
//! a request with a `progressToken` hears `notifications/progress` while it runs (raw
//! frames, and the official Python SDK's progress callback).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::raw_stdio::RawStdio;
use crate::support::{Env, bin, codespace_vars};

/// Every window of these lines is a new state for a regex engine that must remember the
/// last 200 letters: a search over them is slow whatever the engine, so it runs until its
/// time budget unless it is stopped.
const SLOW_PATTERN: &str = "(?:a|b)*a(?:a|b){200}c";

/// A workspace of `files` files of pseudo-random `a`/`b` lines, `kib` KiB each.
fn slow_tree(env: &mut Env, files: usize, kib: usize) {
    let root = env.workspace("big", json!({}));
    let mut x: u32 = 0x9e37_79b9;
    for f in 0..files {
        let dir = root.join(format!("d{}", f % 16));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = Vec::with_capacity(kib * 1024);
        while text.len() < kib * 1024 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            text.push(if x & 1 == 0 { b'a' } else { b'b' });
            if text.len() % 4096 == 4095 {
                text.push(b'\n');
            }
        }
        std::fs::write(dir.join(format!("f{f}.txt")), text).unwrap();
    }
}

/// CPU time (user + system) the server has used so far, with its runner worker's when it
/// has one (the worker does the searching then).
fn cpu_time(pid: u32) -> Duration {
    let worker = crate::process::alive(" worker --socket ").into_iter().find(|w| {
        let stat = std::fs::read_to_string(format!("/proc/{w}/stat")).unwrap_or_default();
        stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1))
            == Some(&pid.to_string())
    });
    process_cpu(pid) + worker.map_or(Duration::ZERO, process_cpu)
}

/// CPU time (user + system) one process has used so far, from `/proc/<pid>/stat`.
fn process_cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    if stat.is_empty() {
        return Duration::ZERO;
    }
    // Fields after the command name, which sits in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // /proc counts in USER_HZ, which Linux fixes at 100 for user space.
    Duration::from_millis(ticks * 10)
}

/// Reads messages until the reply to `id`, returning it with the progress notifications
/// seen on the way.
fn reply_with_progress(raw: &mut RawStdio, id: u64) -> (Value, Vec<Value>) {
    let mut progress = Vec::new();
    loop {
        let v = raw.recv().expect("server still answering");
        if v["method"] == "notifications/progress" {
            progress.push(v["params"].clone());
        } else if v["id"] == id {
            return (v, progress);
        }
    }
}

/// Starts the slow grep as request `id` and returns once it runs: its progress arrived and
/// the server burnt 300 ms of CPU on it (so the probe after a cancel is not vacuous). `None`
/// when the grep answered first: on a starved machine its own 10 s budget can pass before
/// it gets that much CPU (it answers `incomplete`), and the caller starts it again.
fn running_grep(
    raw: &mut RawStdio,
    pid: u32,
    id: u64,
    progress: &mut Vec<Value>,
) -> Option<Duration> {
    raw.send(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"grep","arguments":{"workspace_id":"big","pattern":SLOW_PATTERN},
        "_meta":{"progressToken":"slow-grep"}}}));
    let before = cpu_time(pid);
    let mut seen = Vec::new();
    while cpu_time(pid) - before < Duration::from_millis(300) || seen.is_empty() {
        let v = raw.recv().expect("server still answering");
        if v["id"] == id {
            let incomplete = &v["result"]["structuredContent"]["incomplete"];
            assert_eq!(incomplete, true, "the grep ended early, not by its budget: {v}");
            return None;
        }
        assert_eq!(v["method"], "notifications/progress", "{v}");
        seen.push(v["params"].clone());
    }
    progress.append(&mut seen);
    Some(before)
}

#[test]
fn a_cancelled_grep_stops_using_cpu_within_200_ms() {
    let mut env = Env::new();
    slow_tree(&mut env, 64, 256);
    let mut raw = RawStdio::start(&env, &[]);
    let pid = raw.child.id();
    let mut progress = Vec::new();
    let (id, before) = (5..8)
        .find_map(|id| running_grep(&mut raw, pid, id, &mut progress).map(|b| (id, b)))
        .expect("three greps in a row ran out of their budget before getting 300 ms of CPU");
    raw.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":id,"reason":"test"}}));
    std::thread::sleep(Duration::from_millis(200));
    let settled = cpu_time(pid);
    std::thread::sleep(Duration::from_millis(600));
    let after = cpu_time(pid) - settled;
    eprintln!(
        "CPU before the cancel: {:?}; in the 600 ms from 200 ms after it: {after:?}",
        settled - before
    );
    assert!(
        after <= Duration::from_millis(60),
        "still searching after the cancel: {after:?} of CPU"
    );
    // The session stays usable, and a cancelled request gets no reply (the protocol's rule).
    raw.send(&json!({"jsonrpc":"2.0","id":8,"method":"ping"}));
    loop {
        let v = raw.recv().expect("ping answered");
        if v["method"] == "notifications/progress" {
            progress.push(v["params"].clone());
            continue;
        }
        assert_ne!(v["id"], id, "a cancelled request got a reply: {v}");
        assert_eq!(v["id"], 8, "{v}");
        break;
    }
    // Progress arrived while it ran, for this request's token, never going backwards.
    let mut last = 0.0;
    for p in &progress {
        assert_eq!(p["progressToken"], "slow-grep", "{p}");
        let now = p["progress"].as_f64().unwrap();
        assert!(now > last, "progress went from {last} to {now}");
        last = now;
    }
}

#[test]
fn find_progress_counts_entries_and_needs_a_token() {
    let mut env = Env::new();
    let root = env.workspace("wide", json!({}));
    for d in 0..40 {
        let dir = root.join(format!("d{d}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..1000 {
            std::fs::write(dir.join(format!("f{f}")), "").unwrap();
        }
    }
    let mut raw = RawStdio::start(&env, &[]);
    // A find over 40,000 entries: it completes, with entries counted on the way.
    raw.send(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"find","arguments":{"workspace_id":"wide","glob":"**/f1"},
        "_meta":{"progressToken":42}}}));
    let started = Instant::now();
    let (reply, progress) = reply_with_progress(&mut raw, 1);
    let paths = reply["result"]["structuredContent"]["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 40, "{reply}");
    // A report comes every 200 ms while the walk runs; a walk that ended sooner has none.
    if started.elapsed() > Duration::from_millis(450) {
        assert!(!progress.is_empty(), "a {:?} find sent no progress", started.elapsed());
    }
    for p in &progress {
        assert_eq!(p["progressToken"], 42, "{p}");
        assert!(p["message"].as_str().unwrap().contains("entries walked"), "{p}");
    }
    // Without a token, no progress notification at all.
    raw.send(&json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
        "name":"find","arguments":{"workspace_id":"wide","glob":"**/f2"}}}));
    let (_, progress) = reply_with_progress(&mut raw, 2);
    assert!(progress.is_empty(), "progress without a token: {progress:?}");
}

#[test]
fn the_python_sdk_progress_callback_sees_a_long_grep() {
    let python = crate::interop::tool("CODESPACE_PYTHON", "target/test-tools/venv/bin/python");
    let mut env = Env::new();
    // About 1.5 s of searching here: several 200 ms progress reports.
    slow_tree(&mut env, 24, 64);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/python_progress.py");
    let mut cmd = Command::new(&python);
    for name in codespace_vars() {
        cmd.env_remove(name);
    }
    let out = cmd
        .arg(script)
        .args([bin(), env.config().to_str().unwrap(), "big", SLOW_PATTERN])
        .env("XDG_STATE_HOME", env.state())
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap();
    eprintln!("grep took {} ms", seen["elapsed_ms"]);
    assert_eq!(seen["is_error"], false, "{seen}");
    assert!(seen["result"]["matches"].is_array(), "{seen}");
    let progress = seen["progress"].as_array().unwrap();
    assert!(!progress.is_empty(), "the callback never ran: {seen}");
    let message = progress[0]["message"].as_str().unwrap();
    assert!(message.contains("files searched"), "{message}");
}
