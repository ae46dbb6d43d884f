//! Unit tests for the held directories' bookkeeping.

use std::path::Path;

use codespace_fs::{Root, WorkspacePath};

use super::*;

fn parent_of(root: &Root, p: &str) -> ParentDir {
    root.open_parent_of(&WorkspacePath::parse(p).unwrap()).unwrap().unwrap()
}

#[test]
fn forgetting_a_directory_drops_it_and_what_is_beneath_it_only() {
    let dir = tempfile::tempdir().unwrap();
    for d in ["a/b", "a/bc", "ab"] {
        std::fs::create_dir_all(dir.path().join(d)).unwrap();
    }
    let root = Root::open(Path::new(dir.path())).unwrap();
    let mut held = HeldDirs::default();
    for p in ["top", "a/x", "a/b/x", "a/bc/x", "ab/x"] {
        assert!(held.hold(parent_of(&root, p), 1, 0), "{p}");
    }
    assert!(!held.hold(parent_of(&root, "a/y"), 1, 0), "held twice");
    held.forget("a/b");
    assert!(held.get("a/b", 1, 0).is_none());
    assert!(held.get("a/bc", 1, 0).is_some() && held.get("a", 1, 0).is_some());
    held.forget("a");
    assert_eq!(held.len(), 2, "the root and ab stay");
    assert!(held.get("", 1, 0).is_some() && held.get("ab", 1, 0).is_some());
    assert!(held.get("ab", 2, 0).is_none(), "another epoch");
    assert!(held.get("ab", 1, 1).is_none(), "another mount table");
    held.forget("");
    assert_eq!(held.len(), 0);
}

#[test]
fn the_mount_table_can_be_polled_and_holds_still_when_nothing_is_mounted() {
    let first = mount_generation().expect("/proc/self/mountinfo can be polled");
    // Another test's mount would move it; two polls in a row almost never see one.
    let second = mount_generation().unwrap();
    assert!(second >= first);
}
