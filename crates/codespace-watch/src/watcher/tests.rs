//! The watcher against the real inotify backend: events, epochs and sequence numbers,
//! overflow, restart, a failed start, lag, and the caches' fallbacks.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use codespace_fs::{Root, Version, WalkLimits, WorkspacePath};
use codespace_types::WatchState;

use crate::{EventKind, RecvError, Subscription, WatchEvent, WorkspaceWatch};

const WAIT: Duration = Duration::from_secs(5);

fn running(dir: &Path) -> WorkspaceWatch {
    let w = WorkspaceWatch::new(Arc::new(Root::open(dir).unwrap()));
    w.ensure_started();
    assert!(w.wait_running(WAIT), "{:?}", w.report());
    w
}

/// Receives until `want` matches an event's kind; returns that event.
fn until(sub: &Subscription, want: impl Fn(&EventKind) -> bool) -> WatchEvent {
    loop {
        match sub.recv_timeout(WAIT) {
            Ok(ev) if want(&ev.kind) => return ev,
            Ok(_) => {}
            Err(e) => panic!("no matching event: {e}"),
        }
    }
}

fn path(p: &str) -> WorkspacePath {
    WorkspacePath::parse(p).unwrap()
}

#[test]
fn create_modify_rename_remove_arrive_numbered_in_epoch_one() {
    let dir = tempfile::tempdir().unwrap();
    let w = running(dir.path());
    let sub = w.subscribe();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let first = until(&sub, |k| matches!(k, EventKind::Create { path } if path == "d"));
    assert_eq!((first.epoch, first.seq), (1, 1));
    std::thread::sleep(Duration::from_millis(50));
    std::fs::write(dir.path().join("d/a.txt"), "one").unwrap();
    until(&sub, |k| matches!(k, EventKind::Create { path } if path == "d/a.txt"));
    std::fs::write(dir.path().join("d/a.txt"), "two").unwrap();
    until(&sub, |k| matches!(k, EventKind::Modify { path } if path == "d/a.txt"));
    std::fs::rename(dir.path().join("d/a.txt"), dir.path().join("b.txt")).unwrap();
    until(
        &sub,
        |k| matches!(k, EventKind::Rename { from, to } if from == "d/a.txt" && to == "b.txt"),
    );
    std::fs::remove_file(dir.path().join("b.txt")).unwrap();
    let last = until(&sub, |k| matches!(k, EventKind::Remove { path } if path == "b.txt"));
    assert_eq!(last.epoch, 1);
    assert!(last.seq > first.seq);
    assert_eq!(w.report().seq, last.seq, "seq counts every emitted event");
}

#[test]
fn overflow_is_a_resync_and_the_next_use_restarts_in_a_new_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let w = running(dir.path());
    let sub = w.subscribe();
    w.overflow_for_tests();
    let ev = sub.recv_timeout(WAIT).unwrap();
    assert_eq!((ev.epoch, ev.kind), (1, EventKind::ResyncRequired));
    assert_eq!(w.report().state, WatchState::Failed);
    w.ensure_started();
    assert!(w.wait_running(WAIT));
    let ev = sub.recv_timeout(WAIT).unwrap();
    assert_eq!(ev, WatchEvent { epoch: 2, seq: 1, kind: EventKind::ResyncRequired });
}

#[test]
fn restart_bumps_the_epoch_and_resets_seq_and_a_forced_resync_is_emitted() {
    let dir = tempfile::tempdir().unwrap();
    let w = running(dir.path());
    let sub = w.subscribe();
    w.force_resync();
    assert_eq!(
        sub.recv_timeout(WAIT).unwrap(),
        WatchEvent { epoch: 1, seq: 1, kind: EventKind::ResyncRequired }
    );
    assert_eq!(w.report().stats.resyncs, 1, "each resync is counted");
    w.restart().unwrap();
    assert_eq!(
        sub.recv_timeout(WAIT).unwrap(),
        WatchEvent { epoch: 2, seq: 1, kind: EventKind::ResyncRequired }
    );
    assert_eq!(w.report().stats.resyncs, 2, "a restart's resync too, the count kept");
    std::fs::write(dir.path().join("after"), "x").unwrap();
    let ev = until(&sub, |k| matches!(k, EventKind::Create { path } if path == "after"));
    assert_eq!((ev.epoch, ev.seq), (2, 2));
}

#[test]
fn a_failed_spawn_is_reported_and_answers_still_come_from_the_disk() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "one").unwrap();
    let w = WorkspaceWatch::new(Arc::new(Root::open(dir.path()).unwrap()));
    w.fail_next_spawn();
    w.ensure_started();
    assert!(!w.wait_running(WAIT));
    let report = w.report();
    assert_eq!(report.state, WatchState::Failed);
    assert!(report.reason.unwrap().contains("test hook"));
    let v1 = w.version(&path("f")).unwrap();
    std::fs::write(dir.path().join("f"), "two").unwrap();
    assert_ne!(w.version(&path("f")).unwrap(), v1);
    let walk = w.listing(false, || dir_walk(dir.path())).unwrap();
    assert_eq!(walk.files, ["f"]);
    assert_eq!(w.report().stats.version_hits, 0);
    let changes = w.changes(None).unwrap();
    assert!(changes.resync_required);
    // A restart that fails too emits a resync in the old epoch and says why.
    let sub = w.subscribe();
    w.fail_next_spawn();
    assert!(w.restart().is_err());
    assert_eq!(sub.recv_timeout(WAIT).unwrap().kind, EventKind::ResyncRequired);
    assert_eq!(w.report().epoch, 1);
}

#[test]
fn a_lagging_subscriber_is_told_to_resync() {
    let dir = tempfile::tempdir().unwrap();
    let w = running(dir.path());
    let sub = w.subscribe();
    for _ in 0..crate::SUBSCRIBER_BUFFER + 1 {
        w.force_resync();
    }
    assert_eq!(
        sub.recv_timeout(WAIT).unwrap(),
        WatchEvent { epoch: 1, seq: 0, kind: EventKind::ResyncRequired }
    );
    assert_eq!(sub.recv_timeout(Duration::ZERO), Err(RecvError::Timeout));
    drop(w);
    assert_eq!(sub.recv_timeout(WAIT), Err(RecvError::WatchClosed));
}

fn dir_walk(dir: &Path) -> Result<codespace_fs::Walk, codespace_fs::FsError> {
    Root::open(dir).unwrap().walk(&WalkLimits::default())
}

/// An old file: ctime cannot be set, so wait out the racy margin once.
fn settle() {
    std::thread::sleep(crate::RACY_MARGIN + Duration::from_millis(100));
}

#[test]
fn versions_hit_only_while_the_identity_holds() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "same").unwrap();
    std::fs::write(dir.path().join("g"), "diff").unwrap();
    settle();
    let w = running(dir.path());
    let v = w.version(&path("f")).unwrap();
    assert_eq!(w.version(&path("f")).unwrap(), v);
    assert_eq!(w.report().stats.version_hits, 1);
    // Replaced by rename with the same size and mtime: a new inode, never the old answer.
    let mtime = std::fs::metadata(dir.path().join("f")).unwrap().modified().unwrap();
    let g = std::fs::File::options().write(true).open(dir.path().join("g")).unwrap();
    g.set_modified(mtime).unwrap();
    std::fs::rename(dir.path().join("g"), dir.path().join("f")).unwrap();
    assert_ne!(w.version(&path("f")).unwrap(), v);
    assert_eq!(w.version(&path("f")).unwrap(), Version::Sha256(sha("diff")));
}

fn sha(text: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes()).into()
}

#[test]
fn a_listing_is_cached_and_a_change_before_the_call_is_always_seen() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a"), "").unwrap();
    let w = running(dir.path());
    std::thread::sleep(crate::SETTLE);
    let first = w.listing(false, || dir_walk(dir.path())).unwrap();
    assert_eq!(first.files, ["a"]);
    let again = w
        .listing(false, || -> Result<codespace_fs::Walk, codespace_fs::FsError> {
            panic!("walked")
        })
        .unwrap();
    assert_eq!(again.files, ["a"]);
    for i in 0..50 {
        let name = format!("n{i}");
        std::fs::write(dir.path().join(&name), "").unwrap();
        let now = w.listing(false, || dir_walk(dir.path())).unwrap();
        assert!(now.files.contains(&name), "{name} missing from {:?}", now.files);
    }
    let stats = w.report().stats;
    assert!(stats.listing_hits >= 1 && stats.listing_misses >= 51, "{stats:?}");
}

#[test]
fn changes_since_a_cursor_are_coalesced_and_an_old_epoch_resyncs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep"), "").unwrap();
    let w = running(dir.path());
    let start = w.changes(None).unwrap();
    assert!(!start.resync_required);
    let cursor = start.cursor.encode();
    std::fs::write(dir.path().join("new"), "1").unwrap();
    std::fs::write(dir.path().join("new"), "2").unwrap();
    std::fs::write(dir.path().join("keep"), "edited").unwrap();
    std::fs::rename(dir.path().join("keep"), dir.path().join("moved")).unwrap();
    let out = w.changes(Some(&cursor)).unwrap();
    assert!(!out.resync_required && !out.truncated, "{out:?}");
    use codespace_types::ObservedChange::{Created, Removed};
    let got: Vec<(&str, _)> = out.changes.iter().map(|(p, k)| (p.as_str(), *k)).collect();
    assert_eq!(got, vec![("keep", Removed), ("moved", Created), ("new", Created)]);
    w.restart().unwrap();
    assert!(w.changes(Some(&out.cursor.encode())).unwrap().resync_required);
    assert!(w.changes(Some("junk")).is_err());
}

#[test]
fn a_listing_waits_for_late_events_through_the_cookie() {
    let dir = tempfile::tempdir().unwrap();
    let w = running(dir.path());
    std::thread::sleep(crate::SETTLE);
    assert!(w.listing(false, || dir_walk(dir.path())).unwrap().files.is_empty());
    // Events now reach the handler 100 ms late: without the cookie, the cached (empty)
    // listing would answer for a file created before the call.
    w.delay_events_for_tests(Duration::from_millis(100));
    for i in 0..5 {
        let name = format!("late{i}");
        std::fs::write(dir.path().join(&name), "").unwrap();
        let now = w.listing(false, || dir_walk(dir.path())).unwrap();
        assert!(now.files.contains(&name), "{name} missing from {:?}", now.files);
    }
}

/// A watched directory renamed out of the root: what happens in it afterwards is never
/// named, and a symlink to it put in its place is not followed.
#[test]
fn a_directory_moved_out_of_the_root_is_never_named_again() {
    let scratch = tempfile::tempdir().unwrap();
    let (ws, outside) = (scratch.path().join("ws"), scratch.path().join("outside"));
    std::fs::create_dir_all(ws.join("d")).unwrap();
    let w = running(&ws);
    let sub = w.subscribe();
    std::fs::write(ws.join("d/before.txt"), "x").unwrap();
    until(&sub, |k| matches!(k, EventKind::Create { path } if path == "d/before.txt"));
    std::fs::rename(ws.join("d"), &outside).unwrap();
    until(&sub, |k| matches!(k, EventKind::Remove { path } if path == "d"));
    std::os::unix::fs::symlink(&outside, ws.join("d")).unwrap();
    until(&sub, |k| matches!(k, EventKind::Create { path } if path == "d"));
    std::fs::write(outside.join("after.txt"), "secret").unwrap();
    std::fs::write(ws.join("marker"), "x").unwrap();
    loop {
        let ev = sub.recv_timeout(WAIT).unwrap();
        match ev.kind {
            EventKind::Create { path } if path == "marker" => break,
            kind => assert!(!format!("{kind:?}").contains("after"), "{kind:?}"),
        }
    }
}
