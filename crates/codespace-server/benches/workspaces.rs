//! Many-workspaces benchmark: 1,000 registered workspaces (each a root with one file in a
//! directory) served by a watching server and by a `--no-watch` one (the floor) in the same
//! run: each server's start-up (spawn to initialized), one `find` in each workspace (the
//! first use, which queues each workspace's watch), how long until every workspace is
//! watched, a second `find` in each (cached where watched), and each server's threads,
//! resident memory and inotify instances.
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

use common::call;

use std::path::Path;
use std::time::{Duration, Instant};

use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

const WORKSPACES: usize = 1_000;

fn id(i: usize) -> String {
    format!("w{i:04}")
}

/// A line of /proc/PID/status, as a number (`VmRSS` in KiB, `Threads`).
fn status(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap()
        .parse()
        .unwrap()
}

fn inotify_instances(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|t| t == Path::new("anon_inode:inotify"))
        .count()
}

/// One `find` in each workspace, every answer checked; the total time.
async fn find_each(client: &Client) -> Duration {
    let t = Instant::now();
    for i in 0..WORKSPACES {
        let r = call(client, "find", json!({"workspace_id": id(i)})).await;
        assert_eq!(r["paths"], json!(["src/lib.rs"]), "{}", id(i));
    }
    t.elapsed()
}

/// Waits until workspace `i`'s watcher runs.
async fn running(client: &Client, i: usize) {
    let end = Instant::now() + Duration::from_secs(120);
    loop {
        let info = call(client, "workspace_info", json!({"workspace_id": id(i)})).await;
        let w: &Value = &info["execution"]["files"]["watch"];
        if w["state"] == "running" {
            return;
        }
        assert!(w["state"] == "starting" && Instant::now() < end, "{}: {w}", id(i));
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// What one server measured.
struct Run {
    startup: Duration,
    first: Duration,
    watched_after: Option<Duration>,
    second: Duration,
    threads: (u64, u64),
    rss: (u64, u64),
    inotify: usize,
}

async fn measure(config: &Path, state: &Path, extra: &[&str]) -> Run {
    let t = Instant::now();
    let transport = common::server(config, state, extra);
    let pid = transport.id().unwrap();
    let client: Client = ().serve(transport).await.unwrap();
    let startup = t.elapsed();
    let idle = (status(pid, "Threads:"), status(pid, "VmRSS:"));
    let t = Instant::now();
    let first = find_each(&client).await;
    let watched_after = if extra.contains(&"--no-watch") {
        None
    } else {
        // Starts run in the order they were asked for: the last one running is the time
        // every workspace took; then each is checked (untimed).
        running(&client, WORKSPACES - 1).await;
        let all = t.elapsed();
        for i in 0..WORKSPACES {
            running(&client, i).await;
        }
        Some(all)
    };
    let second = find_each(&client).await;
    let threads = (idle.0, status(pid, "Threads:"));
    let rss = (idle.1, status(pid, "VmRSS:"));
    let inotify = inotify_instances(pid);
    client.cancel().await.unwrap();
    Run { startup, first, watched_after, second, threads, rss, inotify }
}

fn per(total: Duration) -> Duration {
    total / WORKSPACES as u32
}

#[tokio::main]
async fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let mut workspaces = serde_json::Map::new();
    let t = Instant::now();
    for i in 0..WORKSPACES {
        let root = tmp.path().join("ws").join(id(i));
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/lib.rs"), format!("pub const N: usize = {i};\n")).unwrap();
        workspaces.insert(id(i), json!({"root": root.display().to_string()}));
    }
    println!("{WORKSPACES} workspaces (a directory and a file each) built in {:?}", t.elapsed());
    let config = tmp.path().join("reg.json");
    std::fs::write(&config, json!({"workspaces": workspaces}).to_string()).unwrap();
    let state = tmp.path().join("state");
    let limits = ["max_user_instances", "max_user_watches"]
        .map(|f| std::fs::read_to_string(format!("/proc/sys/fs/inotify/{f}")).unwrap());
    println!(
        "host: fs.inotify.max_user_instances {}, max_user_watches {}",
        limits[0].trim(),
        limits[1].trim()
    );

    let w = measure(&config, &state, &[]).await;
    let u = measure(&config, &state, &["--no-watch"]).await;
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!(
        "start-up (spawn to initialized): watched {:?} vs --no-watch {:?}: {:.2}x",
        w.startup,
        u.startup,
        ratio(w.startup, u.startup)
    );
    println!(
        "one find in each (first use, each watch queued): watched {:?} ({:?} a find) vs --no-watch {:?} ({:?}): {:.2}x",
        w.first,
        per(w.first),
        u.first,
        per(u.first),
        ratio(w.first, u.first)
    );
    if let Some(all) = w.watched_after {
        println!("every workspace watched {all:?} after the first find began");
    }
    println!(
        "one find in each again: watched (cached) {:?} ({:?} a find) vs --no-watch {:?} ({:?}): {:.2}x",
        w.second,
        per(w.second),
        u.second,
        per(u.second),
        ratio(w.second, u.second)
    );
    println!(
        "threads idle -> after: watched {} -> {} vs --no-watch {} -> {}; inotify instances {} vs {}",
        w.threads.0, w.threads.1, u.threads.0, u.threads.1, w.inotify, u.inotify
    );
    println!(
        "RSS idle -> after: watched {} -> {} KiB vs --no-watch {} -> {} KiB (+{} KiB for {WORKSPACES} watched workspaces)",
        w.rss.0,
        w.rss.1,
        u.rss.0,
        u.rss.1,
        w.rss.1.saturating_sub(u.rss.1)
    );
    // Every workspace is watched once `all_running` returns (it fails the run otherwise).
    let bounded = w.threads.1 <= u.threads.1 + 4;
    common::row(
        "1,000 workspaces, one `find` in each",
        &format!(
            "all {WORKSPACES} watched in {:?}; threads {} -> {}; {} inotify instance(s)",
            w.watched_after.unwrap_or_default(),
            w.threads.0,
            w.threads.1,
            w.inotify
        ),
        &format!(
            "the host's {} inotify instances per user; --no-watch threads {} -> {}",
            limits[0].trim(),
            u.threads.0,
            u.threads.1
        ),
        &format!("{WORKSPACES} of {WORKSPACES} watched"),
        &common::verdict("all watched, threads bounded (<= --no-watch + 4)", bounded),
    );
}
