//! `grep` stays bounded in memory and time: a huge single line is skipped and counted, an
//! oversized pattern is refused, and a pathological pattern returns within the deadline.

use std::io::Write;
use std::time::{Duration, Instant};

use codespace_protocol::GREP_TIME_BUDGET_MS;
use serde_json::json;

use crate::support::{Env, call, refused};

/// The server's peak resident set, in KiB (`VmHWM`).
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Writes `len` bytes of `fill` and no newline: one line as long as the file.
fn one_line_file(path: &std::path::Path, len: usize, fill: u8) {
    let mut f = std::fs::File::create(path).unwrap();
    let chunk = vec![fill; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(chunk.len());
        f.write_all(&chunk[..n]).unwrap();
        left -= n;
    }
}

#[tokio::test]
async fn grep_skips_and_counts_a_256_mib_line_with_bounded_memory() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    one_line_file(&root.join("huge.txt"), 256 << 20, b'a');
    std::fs::write(root.join("small.txt"), "needle\nnot here\n").unwrap();
    let (client, pid) = env.stdio_with(&[]).await;
    let r = call(&client, "grep", json!({"workspace_id": "ro", "pattern": "needle|aaaa"}))
        .await
        .unwrap();
    let peak = peak_rss_kib(pid);
    assert_eq!(r["long_line_files_skipped"], 1, "{r}");
    assert_eq!(r["files_searched"], 2, "{r}");
    let hits: Vec<_> = r["matches"].as_array().unwrap().iter().map(|m| &m["path"]).collect();
    assert_eq!(hits, ["small.txt"], "nothing of the skipped file is matched: {r}");
    assert_eq!(r["incomplete"], false);
    assert!(peak < 128 * 1024, "server peak RSS {peak} KiB");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn grep_pathological_patterns_are_refused_or_end_by_the_deadline() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    one_line_file(&root.join("line.txt"), 5 << 20, b'x');
    let client = env.stdio().await;
    let bound = Duration::from_millis(GREP_TIME_BUDGET_MS) + Duration::from_secs(1);

    // A counted repetition this large compiles to tens of MiB: refused before any search.
    let started = Instant::now();
    let body = refused(
        &client,
        "grep",
        json!({"workspace_id": "ro", "pattern": r"[\s\S]{65535}"}),
        "INVALID_PATTERN",
    )
    .await;
    assert!(started.elapsed() < bound, "{:?}", started.elapsed());
    assert!(body["message"].as_str().unwrap().contains("too large"), "{body}");
    let body = refused(
        &client,
        "grep",
        json!({"workspace_id": "ro", "pattern": "(a{1000}){1000}"}),
        "INVALID_PATTERN",
    )
    .await;
    assert!(body["message"].as_str().unwrap().contains("too large"), "{body}");

    // The largest pattern of the same shape that is accepted, over lines at the line cap.
    std::fs::remove_file(root.join("line.txt")).unwrap();
    let mut f = std::fs::File::create(root.join("lines.txt")).unwrap();
    let line: Vec<u8> = (0..(1usize << 20) - 4096)
        .map(|i| if i % 999 == 998 { 0xff } else { b'a' })
        .chain([b'\n'])
        .collect();
    for _ in 0..5 {
        f.write_all(&line).unwrap();
    }
    let started = Instant::now();
    let r = call(&client, "grep", json!({"workspace_id": "ro", "pattern": r"[\s\S]{1000}"}))
        .await
        .unwrap();
    assert!(started.elapsed() < bound, "{:?} for {r}", started.elapsed());
    assert_eq!(r["matches"].as_array().unwrap().len(), 0, "{r}");
    client.cancel().await.unwrap();
}

/// The server's CPU time so far (user + system), in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    // utime and stime are fields 14 and 15 of the whole line; index 11 and 12 here.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[tokio::test]
async fn grep_a_pattern_that_defeats_the_lazy_dfa_stops_at_the_deadline() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    // Lines at the line cap of a pseudo-random `a`/`b` mix: every byte is a new DFA state
    // for this pattern, which the regex engine can only search at ~10 KiB/s.
    let mut f = std::fs::File::create(root.join("ab.txt")).unwrap();
    let mut x: u32 = 0x9e37_79b9;
    for _ in 0..3 {
        let line: Vec<u8> = (0..(1usize << 20) - 1)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                if x & 1 == 0 { b'a' } else { b'b' }
            })
            .chain([b'\n'])
            .collect();
        f.write_all(&line).unwrap();
    }
    drop(f);
    let (client, pid) = env.stdio_with(&[]).await;
    let bound = Duration::from_millis(GREP_TIME_BUDGET_MS) + Duration::from_secs(1);
    // Matches end early, but a search that must see the whole line (the regex engine's
    // leftmost-first one) takes over a minute per line.
    let started = Instant::now();
    let pattern = "(?:a|b)*a(?:a|b){14558}";
    let r = call(&client, "grep", json!({"workspace_id": "ro", "pattern": pattern})).await.unwrap();
    assert!(started.elapsed() < bound, "{:?}", started.elapsed());
    assert!(r["matches"].as_array().unwrap().len() == 3 || r["incomplete"] == true, "{r}");
    // No match at all (no `c`): every byte of every line is walked through new states.
    let started = Instant::now();
    let pattern = "(?:a|b)*a(?:a|b){14558}c";
    let r = call(&client, "grep", json!({"workspace_id": "ro", "pattern": pattern})).await.unwrap();
    assert!(started.elapsed() < bound, "{:?} for {r}", started.elapsed());
    assert_eq!(r["incomplete"], true, "{r}");
    // Nothing is left searching once the answer is out.
    let before = cpu_ticks(pid);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let burnt = cpu_ticks(pid) - before;
    // Clock ticks are 10 ms: under 100 ms of CPU in half a second.
    assert!(burnt < 10, "{burnt} ticks of CPU after the answer");
    client.cancel().await.unwrap();
}
