//! The watcher's failure paths, forced through the gateway's test hooks in this process: a
//! start that fails (as an inotify watch limit makes it) leaves answers uncached and still
//! correct, and says so; an overflow, a forced resync and a restart each make `changes`
//! say `resync_required`, and a restart starts a new epoch.

use std::path::Path;
use std::time::Duration;

use codespace_fs::{Cancel, Progress};
use codespace_gateway::Gateway;
use codespace_protocol::{ChangesParams, FindParams, GrepParams, VersionParams, WatchState};
use codespace_store::Store;
use serde_json::json;

use crate::support::Env;

fn gateway(env: &Env) -> Gateway {
    crate::support::in_process_gateway(env, Store::open_in_memory().unwrap())
}

fn decode<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).unwrap()
}

async fn watch(gw: &Gateway) -> codespace_protocol::WatchInfo {
    let info = gw.workspace_info(decode(json!({"workspace_id": "w"}))).await.unwrap();
    info.execution.unwrap().files.watch.unwrap()
}

async fn find(gw: &Gateway) -> Vec<String> {
    let p: FindParams = decode(json!({"workspace_id": "w"}));
    gw.find(p, Cancel::new(), Progress::new()).await.unwrap().paths
}

async fn grep(gw: &Gateway, pattern: &str) -> Vec<String> {
    let p: GrepParams = decode(json!({"workspace_id": "w", "pattern": pattern}));
    let out = gw.grep(p, Cancel::new(), Progress::new()).await.unwrap();
    out.matches.into_iter().map(|m| m.path).collect()
}

async fn version(gw: &Gateway, path: &str) -> String {
    let p: VersionParams = decode(json!({"workspace_id": "w", "paths": [path]}));
    gw.version(p).await.unwrap().versions[0].version.unwrap().to_string()
}

async fn changes(gw: &Gateway, since: Option<&str>) -> codespace_protocol::ChangesResult {
    let p: ChangesParams = decode(json!({"workspace_id": "w", "since": since}));
    gw.changes(p).await.unwrap()
}

fn write(root: &Path, name: &str, body: &str) {
    std::fs::write(root.join(name), body).unwrap();
}

#[tokio::test]
async fn a_watcher_that_cannot_start_leaves_answers_uncached_and_correct() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    write(&root, "a.txt", "one hit\n");
    std::thread::sleep(codespace_watch::RACY_MARGIN + Duration::from_millis(200));
    let gw = gateway(&env);
    // What a lowered max_user_watches does: the recursive watch cannot be set up.
    let hook = gw.runner().workspace_watch("w").unwrap();
    hook.fail_next_spawn();
    assert_eq!(find(&gw).await, ["a.txt"]);
    // The start runs in the background: wait for it to end (in failure).
    assert!(!hook.wait_running(Duration::from_secs(10)));
    let w = watch(&gw).await;
    assert_eq!(w.state, WatchState::Failed, "{w:?}");
    assert!(!w.caches_enabled);
    assert!(w.reason.unwrap().contains("test hook"));
    for round in 0..3 {
        let body = format!("round {round} hit\n");
        write(&root, "a.txt", &body);
        write(&root, &format!("n{round}.txt"), "new hit\n");
        assert_eq!(version(&gw, "a.txt").await, super::sha(body.as_bytes()));
        assert!(find(&gw).await.contains(&format!("n{round}.txt")));
        assert!(grep(&gw, "hit").await.contains(&format!("n{round}.txt")));
    }
    let w = watch(&gw).await;
    assert_eq!((w.version_cache_hits, w.listing_cache_hits), (0, 0), "{w:?}");
    let c = changes(&gw, None).await;
    assert!(c.resync_required);
    assert!(changes(&gw, Some(&c.cursor)).await.resync_required);
}

#[tokio::test]
async fn overflow_resync_and_restart_each_make_changes_ask_for_a_resync() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    let gw = gateway(&env);
    let hook = gw.runner().workspace_watch("w").unwrap();
    let start = changes(&gw, None).await;
    assert!(!start.resync_required);
    assert_eq!(watch(&gw).await.epoch, 1);
    write(&root, "x.txt", "x");
    let c = changes(&gw, Some(&start.cursor)).await;
    assert!(!c.resync_required && c.changes.len() == 1, "{c:?}");

    hook.force_resync();
    let after = changes(&gw, Some(&c.cursor)).await;
    assert!(after.resync_required, "{after:?}");

    // An overflow stops the watcher; the next use starts a new one in a new epoch.
    hook.overflow_for_tests();
    let w = watch(&gw).await;
    assert_eq!(w.state, WatchState::Failed);
    assert!(w.reason.unwrap().contains("overflow"));
    let over = changes(&gw, Some(&after.cursor)).await;
    assert!(over.resync_required, "{over:?}");
    assert_eq!(watch(&gw).await.epoch, 2);
    assert_eq!(watch(&gw).await.state, WatchState::Running);
    // From the new epoch's cursor on, lists are complete again.
    write(&root, "y.txt", "y");
    let fresh = changes(&gw, Some(&over.cursor)).await;
    assert!(!fresh.resync_required, "{fresh:?}");
    assert_eq!(fresh.changes.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(), ["y.txt"]);

    hook.restart().unwrap();
    assert_eq!(watch(&gw).await.epoch, 3);
    assert!(changes(&gw, Some(&fresh.cursor)).await.resync_required);
    // A restart that fails leaves the caches off and the answers right.
    hook.fail_next_spawn();
    assert!(hook.restart().is_err());
    assert_eq!(watch(&gw).await.state, WatchState::Failed);
    write(&root, "z.txt", "z");
    assert_eq!(find(&gw).await, ["x.txt", "y.txt", "z.txt"]);
}

/// Reading is not a change: reads deliver no event to the watcher. (Watching opens would
/// queue two events per file read, enough on a large tree to overflow the kernel's queue
/// and force a rescan; here they would be at least 400.)
#[tokio::test]
async fn reading_files_delivers_no_events_to_the_watcher() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    for i in 0..200 {
        write(&root, &format!("f{i}.txt"), "hit\n");
    }
    let gw = gateway(&env);
    let hook = gw.runner().workspace_watch("w").unwrap();
    let start = changes(&gw, None).await;
    assert!(hook.wait_running(Duration::from_secs(10)));
    write(&root, "first.txt", "m");
    let c = changes(&gw, Some(&start.cursor)).await;
    let before = hook.raw_events_for_tests();
    for i in 0..200 {
        let p = decode(json!({"workspace_id": "w", "path": format!("f{i}.txt")}));
        assert_eq!(gw.read(p).await.unwrap().content, "hit\n");
    }
    // `changes` answers once the watcher has seen everything up to the call.
    write(&root, "last.txt", "m");
    let after = changes(&gw, Some(&c.cursor)).await;
    let paths: Vec<&str> = after.changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["last.txt"], "{after:?}");
    let delivered = hook.raw_events_for_tests() - before;
    assert!(delivered < 40, "200 reads delivered {delivered} events");
}
