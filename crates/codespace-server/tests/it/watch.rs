//! The workspace watcher end to end: `changes` across a command, caches that never answer
//! stale (a concurrent writer, a rename with the same size and mtime, a directory replaced
//! by a symlink), the counters `workspace_info` shows, and, in-process through the
//! gateway's test hooks, a watcher that cannot start, overflows, resyncs and restarts.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::process::{exec, wait_exit};
use crate::support::{Client, Env, call, refused};

fn sha(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// A cached version needs a ctime safely in the past: wait the margin out once.
fn age_files() {
    std::thread::sleep(codespace_watch::RACY_MARGIN + Duration::from_millis(200));
}

async fn watch_info(client: &Client, id: &str) -> Value {
    let info = call(client, "workspace_info", json!({"workspace_id": id})).await.unwrap();
    info["execution"]["files"]["watch"].clone()
}

/// Waits until the workspace's watcher runs (it starts on the first file tool).
async fn running(client: &Client, id: &str) {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let w = watch_info(client, id).await;
        if w["state"] == "running" {
            return;
        }
        assert!(Instant::now() < end, "watcher never ran: {w}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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
async fn changes_across_a_command_that_creates_edits_renames_and_deletes() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write"}));
    for name in ["keep.txt", "edit.txt", "old.txt", "gone.txt"] {
        std::fs::write(root.join(name), "before\n").unwrap();
    }
    let client = env.stdio().await;
    let start = call(&client, "changes", json!({"workspace_id": "w"})).await.unwrap();
    assert_eq!(start["resync_required"], false, "{start}");
    assert_eq!(start["changes"], json!([]));
    let script = "echo new > new.txt; echo more >> edit.txt; mv old.txt renamed.txt; rm gone.txt; mkdir sub; echo x > sub/deep.txt";
    let id = exec(&client, "w", &["sh", "-c", script], false).await;
    assert_eq!(wait_exit(&client, &id).await["exit_code"], 0);
    let since = json!({"workspace_id": "w", "since": start["cursor"]});
    let after = call(&client, "changes", since.clone()).await.unwrap();
    assert_eq!(after["resync_required"], false, "{after}");
    assert_eq!(after["truncated"], false);
    let got = kinds(&after);
    let want = [
        ("edit.txt", "modified"),
        ("gone.txt", "removed"),
        ("new.txt", "created"),
        ("old.txt", "removed"),
        ("renamed.txt", "created"),
        ("sub", "created"),
    ];
    for (path, kind) in want {
        assert!(
            got.contains(&(path.to_owned(), kind.to_owned())),
            "{path} {kind} missing: {got:?}"
        );
    }
    assert!(!got.iter().any(|(p, _)| p == "keep.txt"), "{got:?}");
    assert!(!got.iter().any(|(p, _)| p.contains("codespace-cookie")), "{got:?}");
    // The same cursor again gives the same answer; the new cursor, nothing.
    assert_eq!(kinds(&call(&client, "changes", since).await.unwrap()), got);
    let quiet = call(&client, "changes", json!({"workspace_id": "w", "since": after["cursor"]}))
        .await
        .unwrap();
    assert_eq!(quiet["changes"], json!([]), "{quiet}");
    assert_eq!(quiet["resync_required"], false);
    // A patch is seen too.
    let patch = "*** Begin Patch\n*** Add File: patched.txt\n+p\n*** End Patch\n";
    call(&client, "apply_patch", json!({"workspace_id": "w", "patch": patch})).await.unwrap();
    let patched = call(&client, "changes", json!({"workspace_id": "w", "since": quiet["cursor"]}))
        .await
        .unwrap();
    assert!(kinds(&patched).contains(&("patched.txt".to_owned(), "created".to_owned())));
    let e = refused(
        &client,
        "changes",
        json!({"workspace_id": "w", "since": "c1.zz"}),
        "INVALID_ARGUMENTS",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("since"), "{e}");
    refused(&client, "changes", json!({"workspace_id": "nope"}), "WORKSPACE_NOT_FOUND").await;
}

/// What the writer has finished, published after each step completes.
#[derive(Default)]
struct Published {
    /// The last generation written to `f.txt` (by rename, same size each time).
    written: AtomicU64,
    /// The last `c/new<n>.txt` created; every one below `removed` is gone.
    created: AtomicU64,
    removed: AtomicU64,
    /// Set before `c/new<n-1>.txt` is unlinked: from then on it may be gone.
    removing: AtomicU64,
    stop: AtomicBool,
}

fn writer(root: &Path, p: &Published) {
    let mut n = 0u64;
    // Each kind of change alone, with room for calls between them, so that every kind
    // must invalidate on its own.
    let pause = || std::thread::sleep(Duration::from_millis(3));
    while !p.stop.load(Ordering::SeqCst) {
        n += 1;
        std::fs::write(root.join("f.tmp"), format!("gen {n:08}\n")).unwrap();
        std::fs::rename(root.join("f.tmp"), root.join("c/f.txt")).unwrap();
        p.written.store(n, Ordering::SeqCst);
        pause();
        std::fs::write(root.join(format!("c/new{n}.txt")), format!("needle {n}\n")).unwrap();
        p.created.store(n, Ordering::SeqCst);
        pause();
        p.removing.store(n, Ordering::SeqCst);
        std::fs::remove_file(root.join(format!("c/new{}.txt", n - 1))).unwrap();
        p.removed.store(n, Ordering::SeqCst);
        // Quiet spells let the caches fill, so hits are checked too.
        if n.is_multiple_of(25) {
            std::thread::sleep(Duration::from_millis(400));
        } else {
            pause();
        }
    }
}

/// The `new<n>` numbers an answer lists.
fn news<'a>(paths: impl Iterator<Item = &'a str>) -> Vec<u64> {
    paths
        .filter_map(|p| p.strip_prefix("c/new").and_then(|s| s.strip_suffix(".txt")))
        .map(|n| n.parse().unwrap())
        .collect()
}

/// Stale: a file removed before the call began is listed, or one created before the call
/// began whose removal had not started when it ended is missing.
fn stale_listing(listed: &[u64], before: (u64, u64), after_removing: u64) -> bool {
    let (created0, removed0) = before;
    listed.iter().any(|n| *n < removed0)
        || (created0 >= after_removing && !listed.contains(&created0))
}

#[tokio::test]
async fn a_concurrent_writer_never_gets_a_stale_answer() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    std::fs::create_dir(root.join("c")).unwrap();
    std::fs::write(root.join("c/new0.txt"), "needle 0\n").unwrap();
    std::fs::write(root.join("stable.txt"), "stable\n").unwrap();
    age_files();
    let client = env.stdio().await;
    call(&client, "version", json!({"workspace_id": "w", "paths": ["stable.txt"]})).await.unwrap();
    running(&client, "w").await;
    let published = Arc::new(Published::default());
    let thread = {
        let (root, published) = (root.clone(), Arc::clone(&published));
        std::thread::spawn(move || writer(&root, &published))
    };
    let before =
        |p: &Published| (p.created.load(Ordering::SeqCst), p.removed.load(Ordering::SeqCst));
    let (mut stale, mut calls) = (Vec::new(), 0);
    let end = Instant::now() + Duration::from_secs(6);
    while Instant::now() < end {
        let (w0, b0) = (published.written.load(Ordering::SeqCst), before(&published));
        let v = call(
            &client,
            "version",
            json!({"workspace_id": "w", "paths": ["c/f.txt", "stable.txt"]}),
        )
        .await
        .unwrap();
        let w1 = published.written.load(Ordering::SeqCst);
        let ok: Vec<String> =
            (w0.max(1)..=w1 + 1).map(|n| sha(format!("gen {n:08}\n").as_bytes())).collect();
        let got = v["versions"][0]["version"].as_str().unwrap_or_default().to_owned();
        if w0 > 0 && !ok.contains(&got) {
            stale.push(format!("version {got} outside gens {w0}..={}", w1 + 1));
        }
        assert_eq!(v["versions"][1]["version"], sha(b"stable\n"));

        let f =
            call(&client, "find", json!({"workspace_id": "w", "glob": "c/*.txt"})).await.unwrap();
        let listed = news(f["paths"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()));
        if stale_listing(&listed, b0, published.removing.load(Ordering::SeqCst)) {
            stale.push(format!("find {listed:?} with created/removed {b0:?} before"));
        }
        let b0 = before(&published);
        let g = call(
            &client,
            "grep",
            json!({"workspace_id": "w", "pattern": "needle", "fixed_strings": true}),
        )
        .await
        .unwrap();
        let listed =
            news(g["matches"].as_array().unwrap().iter().map(|m| m["path"].as_str().unwrap()));
        if stale_listing(&listed, b0, published.removing.load(Ordering::SeqCst)) {
            stale.push(format!("grep {listed:?} with created/removed {b0:?} before"));
        }
        calls += 3;
    }
    published.stop.store(true, Ordering::SeqCst);
    thread.join().unwrap();
    assert!(stale.is_empty(), "{} stale answers of {calls}: {stale:?}", stale.len());
    let w = watch_info(&client, "w").await;
    assert!(w["version_cache_hits"].as_u64().unwrap() > 0, "{w}");
    assert!(w["listing_cache_hits"].as_u64().unwrap() > 0, "{w}");
    eprintln!("{calls} calls, 0 stale; counters {w}");
}

#[tokio::test]
async fn a_file_replaced_by_rename_with_the_same_size_and_mtime_is_seen() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    std::fs::write(root.join("a.txt"), "AAAA").unwrap();
    let client = env.stdio().await;
    let args = json!({"workspace_id": "w", "paths": ["a.txt"]});
    call(&client, "version", args.clone()).await.unwrap();
    running(&client, "w").await;
    let mtime = std::fs::metadata(root.join("a.txt")).unwrap().modified().unwrap();
    for body in ["BBBB", "CCCC"] {
        // Cached (a hit), then replaced by an inode of the same size with the same mtime.
        age_files();
        let hits = watch_info(&client, "w").await["version_cache_hits"].as_u64().unwrap();
        call(&client, "version", args.clone()).await.unwrap();
        let cached = call(&client, "version", args.clone()).await.unwrap();
        let now_hits = watch_info(&client, "w").await["version_cache_hits"].as_u64().unwrap();
        assert_eq!(now_hits, hits + 1, "the cache did not answer");
        std::fs::write(root.join("b.txt"), body).unwrap();
        let b = std::fs::File::options().write(true).open(root.join("b.txt")).unwrap();
        b.set_modified(mtime).unwrap();
        std::fs::rename(root.join("b.txt"), root.join("a.txt")).unwrap();
        let now = call(&client, "version", args.clone()).await.unwrap();
        assert_ne!(now["versions"][0]["version"], cached["versions"][0]["version"]);
        assert_eq!(now["versions"][0]["version"], sha(body.as_bytes()));
    }
}

#[tokio::test]
async fn a_directory_replaced_by_a_symlink_is_never_followed_through_a_cache() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    std::fs::create_dir(root.join("d")).unwrap();
    std::fs::write(root.join("d/x.txt"), "inside\n").unwrap();
    let outside = env.path().join("elsewhere");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("x.txt"), "outside secret\n").unwrap();
    age_files();
    let client = env.stdio().await;
    let version = json!({"workspace_id": "w", "paths": ["d/x.txt"]});
    call(&client, "version", version.clone()).await.unwrap();
    running(&client, "w").await;
    tokio::time::sleep(codespace_watch::SETTLE).await;
    // Warm both caches.
    for _ in 0..2 {
        call(&client, "version", version.clone()).await.unwrap();
        let f = call(&client, "find", json!({"workspace_id": "w"})).await.unwrap();
        assert_eq!(f["paths"], json!(["d/x.txt"]));
    }
    let w = watch_info(&client, "w").await;
    assert!(
        w["version_cache_hits"].as_u64().unwrap() >= 1
            && w["listing_cache_hits"].as_u64().unwrap() >= 1,
        "{w}"
    );
    std::fs::rename(root.join("d"), root.join("d.old")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("d")).unwrap();
    let v = call(&client, "version", version).await.unwrap();
    assert!(v["versions"][0]["version"].is_null(), "{v}");
    assert_eq!(v["versions"][0]["error"]["code"], "SYMLINK_REJECTED", "{v}");
    let f = call(&client, "find", json!({"workspace_id": "w"})).await.unwrap();
    assert_eq!(f["paths"], json!(["d.old/x.txt"]));
    let g = call(&client, "grep", json!({"workspace_id": "w", "pattern": "secret|inside"}))
        .await
        .unwrap();
    let paths: Vec<&str> =
        g["matches"].as_array().unwrap().iter().map(|m| m["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["d.old/x.txt"]);
}

#[tokio::test]
async fn without_a_watcher_changes_always_asks_for_a_resync() {
    use rmcp::ServiceExt;
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    std::fs::write(root.join("a"), "1").unwrap();
    let transport = TokioChildProcess::new(
        tokio::process::Command::new(crate::support::bin()).configure(|c| {
            for name in crate::support::codespace_vars() {
                c.env_remove(name);
            }
            c.args(["serve", "--no-watch", "--config"])
                .arg(env.config())
                .env("XDG_STATE_HOME", env.state())
                .env("RUST_LOG", "warn");
        }),
    )
    .unwrap();
    let client: Client = ().serve(transport).await.unwrap();
    let c = call(&client, "changes", json!({"workspace_id": "w"})).await.unwrap();
    assert_eq!(c["resync_required"], true);
    let again = call(&client, "changes", json!({"workspace_id": "w", "since": c["cursor"]})).await;
    assert_eq!(again.unwrap()["resync_required"], true);
    let f = call(&client, "find", json!({"workspace_id": "w"})).await.unwrap();
    assert_eq!(f["paths"], json!(["a"]));
    assert!(watch_info(&client, "w").await.is_null());
}

/// The real inotify limit: the server runs in a user namespace of its own whose
/// `max_inotify_watches` is 3, on a tree of more directories.
#[tokio::test]
async fn a_watcher_stopped_by_the_inotify_watch_limit_falls_back_to_correct_answers() {
    use rmcp::ServiceExt;
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    let probe = std::process::Command::new("unshare")
        .args(["-U", "-r", "sh", "-c", "echo 3 > /proc/sys/user/max_inotify_watches"])
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
    let root = env.workspace("w", json!({}));
    for d in ["a", "a/b", "c", "c/d", "e"] {
        std::fs::create_dir(root.join(d)).unwrap();
    }
    std::fs::write(root.join("a/b/x.txt"), "one\n").unwrap();
    let bin = crate::support::bin();
    let transport =
        TokioChildProcess::new(tokio::process::Command::new("unshare").configure(|c| {
            for name in crate::support::codespace_vars() {
                c.env_remove(name);
            }
            c.args(["-U", "-r", "sh", "-c"])
                .arg("echo 3 > /proc/sys/user/max_inotify_watches && exec \"$0\" serve --config \"$1\"")
                .arg(bin)
                .arg(env.config())
                .env("XDG_STATE_HOME", env.state())
                .env("RUST_LOG", "warn");
        }))
        .unwrap();
    let client: Client = ().serve(transport).await.unwrap();
    call(&client, "version", json!({"workspace_id": "w", "paths": ["a/b/x.txt"]})).await.unwrap();
    let end = Instant::now() + Duration::from_secs(10);
    let w = loop {
        let w = watch_info(&client, "w").await;
        if w["state"] != "starting" && w["state"] != "not_started" {
            break w;
        }
        assert!(Instant::now() < end, "{w}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(w["state"], "failed", "{w}");
    assert_eq!(w["caches_enabled"], false);
    assert!(w["reason"].as_str().unwrap().contains("limit"), "{w}");
    for round in 0..3 {
        let body = format!("round {round}\n");
        std::fs::write(root.join("a/b/x.txt"), &body).unwrap();
        std::fs::write(root.join(format!("c/d/n{round}.txt")), "n\n").unwrap();
        let v = call(&client, "version", json!({"workspace_id": "w", "paths": ["a/b/x.txt"]}))
            .await
            .unwrap();
        assert_eq!(v["versions"][0]["version"], sha(body.as_bytes()));
        let f = call(&client, "find", json!({"workspace_id": "w"})).await.unwrap();
        assert!(f["paths"].as_array().unwrap().contains(&json!(format!("c/d/n{round}.txt"))));
    }
    let c = call(&client, "changes", json!({"workspace_id": "w"})).await.unwrap();
    assert_eq!(c["resync_required"], true);
}

mod hooks;
mod many;

/// With the version known, a `read` window reads only the window: the second read of an
/// unchanged file is a cache hit with the same version and the right bytes; a write in
/// place (same inode) is seen at once.
#[tokio::test]
async fn a_known_version_makes_a_window_cost_a_window() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    let body: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(root.join("big.txt"), &body).unwrap();
    let client = env.stdio().await;
    let read = |offset: u64| json!({"workspace_id": "w", "path": "big.txt", "offset": offset, "limit": 100});
    call(&client, "read", read(0)).await.unwrap();
    running(&client, "w").await;
    age_files();
    let first = call(&client, "read", read(1000)).await.unwrap();
    let hits = watch_info(&client, "w").await["version_cache_hits"].as_u64().unwrap();
    let second = call(&client, "read", read(5000)).await.unwrap();
    let now_hits = watch_info(&client, "w").await["version_cache_hits"].as_u64().unwrap();
    assert_eq!(now_hits, hits + 1, "the window was not served with the cached version");
    assert_eq!(second["version"], first["version"]);
    assert_eq!(second["version"], sha(body.as_bytes()));
    assert_eq!(second["content"], &body[5000..5100]);
    assert_eq!(second["file_size"], body.len() as u64);
    assert_eq!(second["truncated"], true);
    // Rewritten in place, same size: the next window sees the new bytes and version.
    let changed = body.replacen("line 600", "LINE 600", 1);
    std::fs::write(root.join("big.txt"), &changed).unwrap();
    let third = call(&client, "read", read(5000)).await.unwrap();
    assert_eq!(third["version"], sha(changed.as_bytes()));
    assert_eq!(third["content"], &changed[5000..5100]);
}
