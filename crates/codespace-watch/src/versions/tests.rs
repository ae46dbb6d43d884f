//! The versions of many paths against the real inotify backend: held directories answer
//! only while their path still names them, and the stat they save is never the one that
//! sees a change no event reports.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use codespace_fs::{FsError, Root, Version, WorkspacePath};

use crate::{HOLD_FROM_HITS, RACY_MARGIN, WorkspaceWatch};

const DIRS: usize = HOLD_FROM_HITS + 8;

fn sha(text: &str) -> Version {
    use sha2::Digest;
    Version::Sha256(sha2::Sha256::digest(text.as_bytes()).into())
}

fn paths() -> Vec<WorkspacePath> {
    (0..DIRS).map(|i| WorkspacePath::parse(&format!("d{i}/x.txt")).unwrap()).collect()
}

fn hits(w: &WorkspaceWatch) -> u64 {
    w.report().stats.version_hits
}

/// A workspace of `DIRS` directories, each with one old file, whose versions are cached
/// and whose directories are held.
fn warmed(root: &Path) -> WorkspaceWatch {
    for i in 0..DIRS {
        std::fs::create_dir(root.join(format!("d{i}"))).unwrap();
        std::fs::write(root.join(format!("d{i}/x.txt")), format!("old {i}")).unwrap();
    }
    std::thread::sleep(RACY_MARGIN + Duration::from_millis(100));
    let w = WorkspaceWatch::new(Arc::new(Root::open(root).unwrap()));
    w.ensure_started();
    assert!(w.wait_running(Duration::from_secs(5)), "{:?}", w.report());
    let ps = paths();
    // Hashed and cached, then hit (its directories opened and held), then hit through
    // the held directories.
    for round in 0..3 {
        let got = w.versions(&ps);
        for (i, v) in got.into_iter().enumerate() {
            assert_eq!(v.unwrap(), sha(&format!("old {i}")), "round {round}");
        }
    }
    assert_eq!(hits(&w), 2 * DIRS as u64);
    assert_eq!(w.shared.lock().caches.held.len(), DIRS, "every directory held");
    w
}

#[test]
fn a_held_directory_never_answers_for_what_its_path_no_longer_names() {
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) = (dir.path().join("ws"), dir.path().join("outside"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(outside.join("d1")).unwrap();
    std::fs::write(outside.join("d1/x.txt"), "old 1").unwrap();
    let w = warmed(&root);
    // Events reach the caches late, as on a loaded machine: only the cookie makes the
    // call wait for them (or, past `HOLD_SYNC_TIMEOUT`, open every directory instead).
    w.delay_events_for_tests(Duration::from_millis(3));
    // d0: renamed away and replaced by a new directory whose file has the same size.
    std::fs::rename(root.join("d0"), root.join("d0.old")).unwrap();
    std::fs::create_dir(root.join("d0")).unwrap();
    std::fs::write(root.join("d0/x.txt"), "new 0").unwrap();
    // d1: replaced by a symlink to a directory outside holding the same file.
    std::fs::rename(root.join("d1"), root.join("d1.old")).unwrap();
    std::os::unix::fs::symlink(outside.join("d1"), root.join("d1")).unwrap();
    // d2: its file written in place through a hard link outside the workspace, which no
    // watch of the workspace hears about; only the stat sees it.
    std::fs::hard_link(root.join("d2/x.txt"), outside.join("link")).unwrap();
    std::fs::write(outside.join("link"), "new 2").unwrap();
    let before = hits(&w);
    let got = w.versions(&paths());
    w.delay_events_for_tests(Duration::ZERO);
    let mut got = got.into_iter();
    assert_eq!(got.next().unwrap().unwrap(), sha("new 0"));
    assert!(matches!(got.next().unwrap(), Err(FsError::SymlinkRejected { .. })));
    assert_eq!(got.next().unwrap().unwrap(), sha("new 2"));
    for (i, v) in got.enumerate() {
        assert_eq!(v.unwrap(), sha(&format!("old {}", i + 3)));
    }
    assert_eq!(hits(&w), before + DIRS as u64 - 3, "the others still hit");
}

#[test]
fn a_resync_drops_every_held_directory_and_few_hits_hold_none() {
    let dir = tempfile::tempdir().unwrap();
    let w = warmed(dir.path());
    w.force_resync();
    assert_eq!(w.shared.lock().caches.held.len(), 0);
    let ps = paths();
    w.versions(&ps);
    w.versions(&ps[..HOLD_FROM_HITS - 1]);
    assert_eq!(w.shared.lock().caches.held.len(), 0, "too few hits to hold");
}
