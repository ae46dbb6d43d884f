//! Cache benchmark: the 20,000-file tree of the `files` benchmark served twice in one run,
//! by a server whose workspace watcher runs (cached) and by one started with `--no-watch`
//! (the uncached floor): medians of `version` of 1,000 paths, `find **/*.rs` (the whole
//! page, and a one-path page) and `grep` of a fixed string repeated on the unchanged tree,
//! each as a ratio cached / uncached and against the client's `ping`; then the watcher's
//! start-up time and the memory it adds.
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

use common::{NEEDLE, build_tree, call, median};

use std::path::Path;
use std::time::{Duration, Instant};

use rmcp::model::{ClientRequest, PingRequest};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

const ROUNDS: usize = 21;

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap()
        .parse()
        .unwrap()
}

async fn server(config: &Path, state: &Path, extra: &[&str]) -> (Client, u32) {
    let transport = common::server(config, state, extra);
    let pid = transport.id().unwrap();
    (().serve(transport).await.unwrap(), pid)
}

async fn watch(client: &Client) -> Value {
    let info = call(client, "workspace_info", json!({"workspace_id": "b"})).await;
    info["execution"]["files"]["watch"].clone()
}

/// The median of `ROUNDS` calls of `name` with `args` on `client`, each answer checked.
async fn timed(client: &Client, name: &str, args: &Value, check: impl Fn(&Value)) -> Duration {
    let mut times = Vec::new();
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let r = call(client, name, args.clone()).await;
        times.push(t.elapsed());
        check(&r);
    }
    median(times)
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

#[tokio::main]
async fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let t = Instant::now();
    let paths = build_tree(&ws);
    println!("tree: 20,000 files in 2,000 directories built in {:?}", t.elapsed());
    let config = tmp.path().join("reg.json");
    std::fs::write(
        &config,
        json!({"workspaces": {"b": {"root": ws.display().to_string()}}}).to_string(),
    )
    .unwrap();
    let state = tmp.path().join("state");
    let (cached, pid) = server(&config, &state, &[]).await;
    let (uncached, _) = server(&config, &state, &["--no-watch"]).await;

    // Start-up: from the first file tool to a running watcher, and the memory it adds.
    let idle = rss_kib(pid);
    let t = Instant::now();
    call(&cached, "read", json!({"workspace_id": "b", "path": &paths[0]})).await;
    while watch(&cached).await["state"] != "running" {
        assert!(t.elapsed() < Duration::from_secs(60), "{}", watch(&cached).await);
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let startup = t.elapsed();
    let watching = rss_kib(pid);
    println!(
        "watcher start-up: {startup:?} to watch 2,001 directories; RSS {idle} KiB before, {watching} KiB after (+{} KiB)",
        watching.saturating_sub(idle)
    );
    // A same-size transfer: a file as large as the answer to `version` of 1,000 paths.
    let sample: Vec<&String> = paths.iter().step_by(20).collect();
    let version = json!({"workspace_id": "b", "paths": sample});
    let answer_bytes = call(&uncached, "version", version.clone()).await.to_string().len();
    std::fs::write(ws.join("transfer.txt"), "t".repeat(answer_bytes)).unwrap();
    // A version is cached once its file's ctime is safely in the past.
    tokio::time::sleep(codespace_watch::RACY_MARGIN + Duration::from_millis(100)).await;

    let mut ping = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        cached.send_request(ClientRequest::PingRequest(PingRequest::default())).await.unwrap();
        ping.push(t.elapsed());
    }
    let ping = median(ping);
    println!("ping: {ping:?}");

    let all_found = |r: &Value| {
        assert_eq!(r["versions"].as_array().unwrap().len(), 1000);
        assert!(r["versions"][999]["version"].as_str().unwrap().starts_with("sha256:"));
    };
    call(&cached, "version", version.clone()).await;
    let (vc, vu) = (
        timed(&cached, "version", &version, all_found).await,
        timed(&uncached, "version", &version, all_found).await,
    );
    println!(
        "version of 1,000 paths: cached {vc:?} vs uncached {vu:?}: {:.1}x faster (target >= 10x)",
        ratio(vu, vc)
    );

    let transfer = json!({"workspace_id": "b", "path": "transfer.txt"});
    let same_size = |r: &Value| assert_eq!(r["byte_count"], answer_bytes);
    let tc = timed(&cached, "read", &transfer, same_size).await;
    let beyond = vc.saturating_sub(tc);
    let pings = beyond.as_secs_f64() / ping.as_secs_f64();
    println!(
        "version of 1,000 cached paths {vc:?} vs a read of the same size ({answer_bytes} bytes) {tc:?}: {beyond:?} beyond = {pings:.1} ping (target <= 5), {:.2} µs per path",
        beyond.as_secs_f64() * 1e6 / 1000.0
    );
    common::row(
        "`version` of 1,000 cached paths, beyond a same-size transfer",
        &format!("{} ({} beyond)", common::ms(vc), common::ms(beyond)),
        &format!("`read` of {answer_bytes} bytes {}; ping {}", common::ms(tc), common::ms(ping)),
        &format!("{pings:.1} ping"),
        &common::verdict("<= 5 ping", pings <= 5.0),
    );

    let whole = json!({"workspace_id": "b", "glob": "**/*.rs"});
    let all_rs = |r: &Value| assert_eq!(r["total"], 10_000);
    let (fc, fu) = (
        timed(&cached, "find", &whole, all_rs).await,
        timed(&uncached, "find", &whole, all_rs).await,
    );
    println!(
        "find **/*.rs (10,000 paths in the reply): cached {fc:?} vs uncached {fu:?}: {:.1}x faster; cached vs ping {:.1}x",
        ratio(fu, fc),
        ratio(fc, ping)
    );
    let one = json!({"workspace_id": "b", "glob": "**/*.rs", "limit": 1});
    let (oc, ou) =
        (timed(&cached, "find", &one, all_rs).await, timed(&uncached, "find", &one, all_rs).await);
    println!(
        "find **/*.rs (a one-path page): cached {oc:?} vs uncached {ou:?}: {:.1}x faster (target >= 10x); cached vs ping {:.1}x (target <= 2x)",
        ratio(ou, oc),
        ratio(oc, ping)
    );

    let grep =
        json!({"workspace_id": "b", "pattern": NEEDLE, "fixed_strings": true, "limit": 2000});
    let found = |r: &Value| assert!(!r["matches"].as_array().unwrap().is_empty());
    let (gc, gu) =
        (timed(&cached, "grep", &grep, found).await, timed(&uncached, "grep", &grep, found).await);
    println!(
        "grep fixed string: cached walk {gc:?} vs uncached {gu:?}: {:.2}x faster",
        ratio(gu, gc)
    );

    let w = watch(&cached).await;
    println!(
        "counters: version hits {} misses {} (entries {}), listing hits {} misses {}, sync timeouts {}; RSS now {} KiB",
        w["version_cache_hits"],
        w["version_cache_misses"],
        w["version_cache_entries"],
        w["listing_cache_hits"],
        w["listing_cache_misses"],
        w["sync_timeouts"],
        rss_kib(pid)
    );
    cached.cancel().await.unwrap();
    uncached.cancel().await.unwrap();
}
