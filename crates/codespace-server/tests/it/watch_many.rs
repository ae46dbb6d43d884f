//! Many workspaces on one watcher, end to end: 300 registered workspaces (more than the 128
//! inotify instances a user has by default) are all watched through one inotify instance
//! with a bounded number of threads; and under a lowered watch limit the workspace that does
//! not fit says so (`workspace_info`, the log) and answers uncached while the others stay
//! watched.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::support::{Client, Env, call};

async fn watch_info(client: &Client, id: &str) -> Value {
    let info = call(client, "workspace_info", json!({"workspace_id": id})).await.unwrap();
    info["execution"]["files"]["watch"].clone()
}

/// Waits until workspace `id`'s watcher leaves `starting`; its report.
async fn settled(client: &Client, id: &str) -> Value {
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        let w = watch_info(client, id).await;
        if w["state"] != "starting" && w["state"] != "not_started" {
            return w;
        }
        assert!(Instant::now() < end, "{id}: the watcher never settled: {w}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// `pid` and every process beneath it (a worker, the spawn helper).
fn family(pid: u32) -> Vec<u32> {
    let mut all = vec![pid];
    let mut i = 0;
    while i < all.len() {
        let parent = all[i];
        let children = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        all.extend(children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
        i += 1;
    }
    all
}

/// The threads of the server and its processes (`Threads:` of /proc/PID/status).
fn threads(pid: u32) -> u64 {
    family(pid)
        .iter()
        .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/status")).ok())
        .filter_map(|s| {
            let line = s.lines().find(|l| l.starts_with("Threads:"))?.to_owned();
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .sum()
}

/// The inotify instances the server and its processes hold open.
fn inotify_instances(pid: u32) -> usize {
    family(pid)
        .iter()
        .filter_map(|p| std::fs::read_dir(format!("/proc/{p}/fd")).ok())
        .flatten()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target == Path::new("anon_inode:inotify"))
        .count()
}

fn kinds(r: &Value) -> Vec<(String, String)> {
    r["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["path"].as_str().unwrap().to_owned(), c["kind"].as_str().unwrap().to_owned()))
        .collect()
}

#[tokio::test]
async fn three_hundred_workspaces_are_all_watched_by_one_instance_with_bounded_threads() {
    const N: usize = 300;
    let id = |i: usize| format!("w{i:03}");
    let mut env = Env::new();
    let roots: Vec<_> = (0..N)
        .map(|i| {
            let root = env.workspace(&id(i), json!({}));
            std::fs::write(root.join("file.txt"), format!("{i}\n")).unwrap();
            root
        })
        .collect();
    let (client, pid) = env.stdio_with(&[]).await;
    let f = call(&client, "find", json!({"workspace_id": id(0)})).await.unwrap();
    assert_eq!(f["paths"], json!(["file.txt"]));
    assert_eq!(settled(&client, &id(0)).await["state"], "running");
    let before = threads(pid);
    for i in 1..N {
        let f = call(&client, "find", json!({"workspace_id": id(i)})).await.unwrap();
        assert_eq!(f["paths"], json!(["file.txt"]), "{}", id(i));
    }
    for i in 0..N {
        let w = settled(&client, &id(i)).await;
        assert_eq!(w["state"], "running", "{}: {w}", id(i));
    }
    let after = threads(pid);
    assert_eq!(inotify_instances(pid), 1, "one inotify instance serves every workspace");
    // One watcher thread per workspace would be 299 more.
    assert!(after <= before + 16, "threads went from {before} to {after} for {N} workspaces");
    let last = id(N - 1);
    let start = call(&client, "changes", json!({"workspace_id": last})).await.unwrap();
    assert_eq!(start["resync_required"], false, "{start}");
    std::fs::write(roots[N - 1].join("new.txt"), "new\n").unwrap();
    let since = json!({"workspace_id": last, "since": start["cursor"]});
    let got = call(&client, "changes", since).await.unwrap();
    assert_eq!(got["resync_required"], false, "{got}");
    assert_eq!(kinds(&got), [("new.txt".to_owned(), "created".to_owned())]);
    let f = call(&client, "find", json!({"workspace_id": last})).await.unwrap();
    assert_eq!(f["paths"], json!(["file.txt", "new.txt"]));
    eprintln!("{N} workspaces watched: threads {before} -> {after}, 1 inotify instance");
}

/// The real watch limit, deterministically: the server runs in a user namespace of its own
/// whose `max_inotify_watches` is 4, and the workspaces start one at a time in the order
/// they are used: `a` (its root: one watch), `big` (its root and five directories: more
/// than the three left), then `b` (one watch: it fits only because `big` gave back the
/// watches it had added before the limit stopped it); then `b` grows three directories,
/// one more than fits.
#[tokio::test]
async fn under_the_watch_limit_the_workspace_that_does_not_fit_says_so_and_the_others_stay_watched()
{
    use rmcp::ServiceExt;
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    let probe = std::process::Command::new("unshare")
        .args(["-U", "-r", "sh", "-c", "echo 4 > /proc/sys/user/max_inotify_watches"])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        assert!(
            std::env::var_os("CODESPACE_REQUIRE_SANDBOX").is_none(),
            "unshare -U cannot lower max_inotify_watches on this host"
        );
        eprintln!("skipped: unshare -U cannot lower max_inotify_watches here");
        return;
    }
    let mut env = Env::new();
    let a = env.workspace("a", json!({}));
    let big = env.workspace("big", json!({}));
    let b = env.workspace("b", json!({}));
    for d in ["d1", "d2", "d3", "d4", "d5"] {
        std::fs::create_dir(big.join(d)).unwrap();
    }
    std::fs::write(big.join("d5/x.txt"), "one\n").unwrap();
    let bin = crate::support::bin();
    let command = tokio::process::Command::new("unshare").configure(|c| {
        for name in crate::support::codespace_vars() {
            c.env_remove(name);
        }
        c.args(["-U", "-r", "sh", "-c"])
            .arg("echo 4 > /proc/sys/user/max_inotify_watches && exec \"$0\" serve --config \"$1\"")
            .arg(bin)
            .arg(env.config())
            .env("XDG_STATE_HOME", env.state())
            .env("RUST_LOG", "warn");
    });
    let (transport, stderr) =
        TokioChildProcess::builder(command).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let lines = Arc::clone(&log);
    let mut stderr = tokio::io::BufReader::new(stderr.unwrap()).lines();
    tokio::spawn(async move {
        while let Ok(Some(line)) = stderr.next_line().await {
            lines.lock().unwrap().push(line);
        }
    });
    let client: Client = ().serve(transport).await.unwrap();
    for (id, want) in [("a", "running"), ("big", "failed"), ("b", "running")] {
        call(&client, "find", json!({"workspace_id": id})).await.unwrap();
        let w = settled(&client, id).await;
        assert_eq!(w["state"], want, "{id}: {w}");
    }
    let w = watch_info(&client, "big").await;
    assert_eq!(w["caches_enabled"], false, "{w}");
    assert!(w["reason"].as_str().unwrap().contains("max_user_watches"), "{w}");
    // The workspaces that fit are watched: a change shows in `changes`.
    let start = call(&client, "changes", json!({"workspace_id": "b"})).await.unwrap();
    std::fs::write(b.join("new.txt"), "n\n").unwrap();
    let got = call(&client, "changes", json!({"workspace_id": "b", "since": start["cursor"]}))
        .await
        .unwrap();
    assert_eq!(got["resync_required"], false, "{got}");
    assert_eq!(kinds(&got), [("new.txt".to_owned(), "created".to_owned())]);
    std::fs::write(a.join("seen.txt"), "n\n").unwrap();
    let f = call(&client, "find", json!({"workspace_id": "a"})).await.unwrap();
    assert_eq!(f["paths"], json!(["seen.txt"]));
    // The one that does not fit answers uncached and right.
    std::fs::write(big.join("d5/x.txt"), "two\n").unwrap();
    std::fs::write(big.join("d3/late.txt"), "n\n").unwrap();
    let f = call(&client, "find", json!({"workspace_id": "big"})).await.unwrap();
    assert_eq!(f["paths"], json!(["d3/late.txt", "d5/x.txt"]));
    let c = call(&client, "changes", json!({"workspace_id": "big"})).await.unwrap();
    assert_eq!(c["resync_required"], true);
    // At run time too: `b` grows past the limit; it stops, says why and gives its watches
    // back, and `a` is still watched.
    for d in ["g1", "g2", "g3"] {
        std::fs::create_dir(b.join(d)).unwrap();
    }
    let end = Instant::now() + Duration::from_secs(10);
    let w = loop {
        let w = watch_info(&client, "b").await;
        if w["state"] == "failed" {
            break w;
        }
        assert!(Instant::now() < end, "b never stopped: {w}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert!(w["reason"].as_str().unwrap().contains("limit"), "{w}");
    let start = call(&client, "changes", json!({"workspace_id": "a"})).await.unwrap();
    std::fs::write(a.join("later.txt"), "n\n").unwrap();
    let got = call(&client, "changes", json!({"workspace_id": "a", "since": start["cursor"]}))
        .await
        .unwrap();
    assert_eq!(got["resync_required"], false, "{got}");
    assert_eq!(kinds(&got), [("later.txt".to_owned(), "created".to_owned())]);
    let logged = log.lock().unwrap().clone();
    let root = big.display().to_string();
    assert!(
        logged.iter().any(|l| l.contains(&root) && l.contains("max_user_watches")),
        "no log line names {root} and the limit: {logged:?}"
    );
    client.cancel().await.unwrap();
}
