//! One watcher for many workspaces: one instance for all of them, each record routed to the
//! workspaces whose tables name its watch (nested workspaces each by their own path), and a
//! removed workspace's watches given back.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use codespace_fs::Root;
use codespace_types::WatchState;

use crate::{EventKind, Subscription, Watcher, WorkspaceWatch};

const WAIT: Duration = Duration::from_secs(10);

fn add(watcher: &Watcher, dir: &Path) -> WorkspaceWatch {
    watcher.add_root(Arc::new(Root::open(dir).unwrap()))
}

fn created(sub: &Subscription, want: &str) {
    loop {
        match sub.recv_timeout(WAIT) {
            Ok(ev) if ev.kind == EventKind::Create { path: want.to_owned() } => return,
            Ok(_) => {}
            Err(e) => panic!("no Create {want}: {e}"),
        }
    }
}

#[test]
fn two_hundred_workspaces_run_on_one_instance_and_each_hears_only_its_own_changes() {
    let scratch = tempfile::tempdir().unwrap();
    let watcher = Watcher::new();
    let watches: Vec<(std::path::PathBuf, WorkspaceWatch)> = (0..200)
        .map(|i| {
            let dir = scratch.path().join(format!("w{i}"));
            std::fs::create_dir_all(dir.join("sub")).unwrap();
            let w = add(&watcher, &dir);
            w.ensure_started();
            (dir, w)
        })
        .collect();
    for (_, w) in &watches {
        assert!(w.wait_running(WAIT), "{:?}", w.report());
    }
    let report = watcher.report();
    assert_eq!((report.workspaces, report.running, report.instances), (200, 200, 1), "{report:?}");
    assert_eq!(report.watches, 400, "a root and a subdirectory each: {report:?}");
    let (last_dir, last) = watches.last().unwrap();
    let (first_dir, first) = &watches[0];
    let (sub_last, sub_first) = (last.subscribe(), first.subscribe());
    std::fs::write(last_dir.join("sub/new.txt"), "x").unwrap();
    created(&sub_last, "sub/new.txt");
    std::fs::write(first_dir.join("mine.txt"), "x").unwrap();
    created(&sub_first, "mine.txt");
    assert!(
        last.changes(None).is_ok_and(|c| !c.resync_required),
        "the last workspace syncs through its cookie"
    );
}

#[test]
fn nested_workspaces_share_a_watch_and_each_names_the_event_by_its_own_path() {
    let scratch = tempfile::tempdir().unwrap();
    let (outer_dir, inner_dir) = (scratch.path().join("o"), scratch.path().join("o/inner"));
    std::fs::create_dir_all(inner_dir.join("d")).unwrap();
    let watcher = Watcher::new();
    let (outer, inner) = (add(&watcher, &outer_dir), add(&watcher, &inner_dir));
    for w in [&outer, &inner] {
        w.ensure_started();
        assert!(w.wait_running(WAIT), "{:?}", w.report());
    }
    assert_eq!(watcher.report().watches, 3, "o, o/inner and o/inner/d, each watched once");
    let (so, si) = (outer.subscribe(), inner.subscribe());
    std::fs::write(inner_dir.join("d/f.txt"), "x").unwrap();
    created(&so, "inner/d/f.txt");
    created(&si, "d/f.txt");
    // The inner workspace goes: the outer one still hears what happens in there.
    watcher.remove_root(&inner);
    assert_eq!(watcher.report().watches, 3);
    std::fs::write(inner_dir.join("d/g.txt"), "x").unwrap();
    created(&so, "inner/d/g.txt");
}

#[test]
fn a_removed_workspace_gives_its_watches_back_and_answers_uncached() {
    let scratch = tempfile::tempdir().unwrap();
    for d in ["a/b", "c"] {
        std::fs::create_dir_all(scratch.path().join(d)).unwrap();
    }
    std::fs::write(scratch.path().join("f"), "one").unwrap();
    let watcher = Watcher::new();
    let w = add(&watcher, scratch.path());
    let sub = w.subscribe();
    w.ensure_started();
    assert!(w.wait_running(WAIT));
    assert_eq!(watcher.report().watches, 4);
    watcher.remove_root(&w);
    assert_eq!(sub.recv_timeout(WAIT), Err(crate::RecvError::WatchClosed));
    let report = watcher.report();
    assert_eq!((report.workspaces, report.watches), (0, 0), "{report:?}");
    w.ensure_started();
    let state = w.report();
    assert_eq!(state.state, WatchState::Failed);
    assert!(state.reason.unwrap().contains("no longer watched"));
    let path = codespace_fs::WorkspacePath::parse("f").unwrap();
    let before = w.version(&path).unwrap();
    std::fs::write(scratch.path().join("f"), "two").unwrap();
    assert_ne!(w.version(&path).unwrap(), before);
    assert!(w.changes(None).unwrap().resync_required);
}

#[test]
fn a_workspace_added_later_is_watched_on_the_same_instance() {
    let scratch = tempfile::tempdir().unwrap();
    let watcher = Watcher::new();
    let (a, b) = (scratch.path().join("a"), scratch.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let first = add(&watcher, &a);
    first.ensure_started();
    assert!(first.wait_running(WAIT));
    let later = add(&watcher, &b);
    later.ensure_started();
    assert!(later.wait_running(WAIT));
    let report = watcher.report();
    assert_eq!((report.running, report.instances), (2, 1), "{report:?}");
    let sub = later.subscribe();
    std::fs::write(b.join("x"), "x").unwrap();
    created(&sub, "x");
    drop(first);
    assert_eq!(watcher.report().workspaces, 1, "a dropped handle removes its workspace");
}

#[test]
fn a_restart_while_its_start_is_queued_keeps_the_restarts_watches() {
    let scratch = tempfile::tempdir().unwrap();
    let watcher = Watcher::new();
    // Starts queued ahead keep the start thread busy while the restart runs.
    let ahead: Vec<WorkspaceWatch> = (0..100)
        .map(|i| {
            let dir = scratch.path().join(format!("ahead{i}"));
            std::fs::create_dir_all(dir.join("sub")).unwrap();
            let w = add(&watcher, &dir);
            w.ensure_started();
            w
        })
        .collect();
    let dir = scratch.path().join("target");
    std::fs::create_dir_all(&dir).unwrap();
    let w = add(&watcher, &dir);
    w.ensure_started();
    w.restart().unwrap();
    for a in &ahead {
        assert!(a.wait_running(WAIT));
    }
    // The queued start, run after the restart, built nothing and took nothing away.
    while watcher.report().starting > 0 {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(w.report().state, WatchState::Running);
    let sub = w.subscribe();
    std::fs::write(dir.join("heard"), "x").unwrap();
    created(&sub, "heard");
    assert!(!w.changes(None).unwrap().resync_required);
}
