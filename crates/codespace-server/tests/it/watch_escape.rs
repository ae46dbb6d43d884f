//! The watcher never names a file outside the root: a directory swapped again and again
//! with a symlink to a host directory (`renameat2(RENAME_EXCHANGE)`), by a sandboxed
//! command or from the host, while the host writes files there, never makes `changes`
//! list one of them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use codespace_watch::JOURNAL_EVENTS;
use serde_json::{Value, json};

use crate::process::{exec, output, wait_exit};
use crate::support::{Client, Env, call};

/// Exchanges per run: enough for the unfixed watcher to follow the link many times over,
/// few enough to take well under a second.
const SWAPS: usize = 500;
/// The marker in every host-only file name.
const SECRET: &str = "HOSTPRIVATE";

/// A workspace `w` (with `sandbox`) holding a directory `d` and a symlink `l` to a host
/// directory the workspace does not contain; returns the root and the host directory.
fn swap_fixture(env: &mut Env, sandbox: &str) -> (PathBuf, PathBuf) {
    let root = env.workspace("w", json!({"profile": "workspace-write", "sandbox": sandbox}));
    let host = env.path().join("host-private");
    std::fs::create_dir(&host).unwrap();
    std::fs::create_dir_all(root.join("d/sub")).unwrap();
    std::fs::write(root.join("d/inside.txt"), "in\n").unwrap();
    std::os::unix::fs::symlink(&host, root.join("l")).unwrap();
    (root, host)
}

/// Writes host-only files into `host` until `stop`, then a last few; returns how many
/// writes it made.
fn host_writer(host: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        // Until the swapping ends (at most 30 s), over and over the same 500 names.
        let end = std::time::Instant::now() + Duration::from_secs(30);
        let mut n = 0;
        while !stop.load(Ordering::Relaxed) && std::time::Instant::now() < end {
            std::fs::write(host.join(format!("{SECRET}_{}.key", n % 500)), "secret\n").unwrap();
            n += 1;
        }
        // After the swapping too: a watch left on the host directory reports these.
        std::thread::sleep(Duration::from_millis(300));
        for i in 0..50 {
            std::fs::write(host.join(format!("{SECRET}_after_{i}.key")), "secret\n").unwrap();
        }
        n + 50
    })
}

/// `changes` since `cursor`. A loaded machine may keep the watcher's cookie from coming
/// back within its second (`resync_required` then, though nothing was lost): a few more
/// looks let it catch up, while a resync that was journalled stays in every answer.
async fn changes_since(client: &Client, cursor: &Value) -> Value {
    let mut last = Value::Null;
    for _ in 0..5 {
        last =
            call(client, "changes", json!({"workspace_id": "w", "since": cursor})).await.unwrap();
        if last["resync_required"] == false {
            break;
        }
    }
    last
}

/// Every listed path, and none of the host's, in a list the watcher kept whole since
/// `start`.
fn assert_nothing_outside(start: &Value, after: &Value, host: &Path) {
    let paths: Vec<&str> =
        after["changes"].as_array().unwrap().iter().map(|c| c["path"].as_str().unwrap()).collect();
    let leaked: Vec<&&str> = paths.iter().filter(|p| p.contains(SECRET)).collect();
    assert!(
        leaked.is_empty(),
        "{} host-only names from {} listed: {:?}",
        leaked.len(),
        host.display(),
        &leaked[..leaked.len().min(10)]
    );
    // The watcher saw the swaps and kept every entry since `start`: an overflow or a
    // restart starts a new epoch and a full journal drops its oldest entries, either of
    // which would hide what it named. A `resync_required` alone is allowed: a watcher that
    // falls behind the swaps finds a name changed again before it looks, and says so.
    let (from, to) = (cursor_parts(&start["cursor"]), cursor_parts(&after["cursor"]));
    assert_eq!(from.0, to.0, "the epoch changed: {after}");
    assert!(to.1 - from.1 <= JOURNAL_EVENTS as u64, "the journal dropped entries: {after}");
    assert_eq!(after["truncated"], false, "{after}");
    assert!(paths.iter().any(|p| *p == "d" || *p == "l"), "{after}");
}

/// The epoch and sequence of a `changes` cursor (`c1.<instance>.<epoch>.<seq>`).
fn cursor_parts(cursor: &Value) -> (u64, u64) {
    let parts: Vec<&str> = cursor.as_str().unwrap().split('.').collect();
    (parts[2].parse().unwrap(), parts[3].parse().unwrap())
}

#[tokio::test]
async fn a_directory_swapped_with_a_link_from_the_host_names_nothing_outside() {
    let mut env = Env::new();
    let (root, host) = swap_fixture(&mut env, "off");
    let client = env.stdio().await;
    let start = call(&client, "changes", json!({"workspace_id": "w"})).await.unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = host_writer(host.clone(), Arc::clone(&stop));
    let (d, l) = (root.join("d"), root.join("l"));
    for _ in 0..SWAPS {
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            &d,
            rustix::fs::CWD,
            &l,
            rustix::fs::RenameFlags::EXCHANGE,
        )
        .unwrap();
        // Paced, so that the watcher's queue (16,384 events by default) never overflows:
        // an overflow would end the epoch and hide what the watcher named.
        std::thread::sleep(Duration::from_micros(100));
    }
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    let after = changes_since(&client, &start["cursor"]).await;
    assert!(written > 50);
    assert_nothing_outside(&start, &after, &host);
    // The swaps stopped with `d` a directory again: the watcher still watches it.
    let cursor = after["cursor"].clone();
    std::fs::write(root.join("d/later.txt"), "x\n").unwrap();
    let later = changes_since(&client, &cursor).await;
    let listed = later["changes"].as_array().unwrap().iter().any(|c| c["path"] == "d/later.txt");
    assert!(listed || later["resync_required"] == true, "{later}");
    client.cancel().await.unwrap();
}

/// The same swap by a command in the sandbox, which cannot see the host directory.
#[tokio::test]
async fn a_directory_swapped_with_a_link_by_a_sandboxed_command_names_nothing_outside() {
    let mut env = Env::new();
    let (_root, host) = swap_fixture(&mut env, "on");
    let client = env.stdio().await;
    let start = call(&client, "changes", json!({"workspace_id": "w"})).await.unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = host_writer(host.clone(), Arc::clone(&stop));
    let script = format!(
        "import ctypes, os, time\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         for _ in range({SWAPS}):\n\
         \x20   if libc.renameat2(-100, b'd', -100, b'l', 2) != 0:\n\
         \x20       raise OSError(ctypes.get_errno(), 'renameat2')\n\
         \x20   time.sleep(0.0002)\n\
         print('swapped', os.path.isdir('d') and not os.path.islink('d'))\n"
    );
    let id = exec(&client, "w", &["python3", "-c", &script], false).await;
    let exit = wait_exit(&client, &id).await;
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    let out = output(&client, &id).await;
    assert_eq!(exit["exit_code"], 0, "{exit} {out}");
    assert!(out.contains("swapped True"), "{out}");
    let after = changes_since(&client, &start["cursor"]).await;
    assert_nothing_outside(&start, &after, &host);
    client.cancel().await.unwrap();
}
