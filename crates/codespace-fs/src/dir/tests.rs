//! Unit tests of `dir`: a directory opens beneath the root only without a symlink, and
//! lists its files and directories by kind.

use std::os::unix::fs::MetadataExt;

use super::*;

fn path(p: &str) -> WorkspacePath {
    WorkspacePath::parse(p).unwrap()
}

#[test]
fn a_directory_opens_with_its_identity_and_lists_by_kind() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("d/sub")).unwrap();
    std::fs::write(dir.path().join("d/f.txt"), "x").unwrap();
    std::os::unix::fs::symlink("/etc", dir.path().join("d/link")).unwrap();
    let root = Root::open(dir.path()).unwrap();
    let d = root.open_dir(Some(&path("d"))).unwrap();
    let meta = std::fs::metadata(dir.path().join("d")).unwrap();
    assert_eq!(d.identity(), (meta.dev(), meta.ino()));
    let listing = d.entries(100);
    assert_eq!(listing.files, ["f.txt"]);
    assert_eq!(listing.dirs, ["sub"]);
    assert!(!listing.incomplete);
    assert!(d.entries(1).incomplete);
    let top = root.open_dir(None).unwrap();
    let meta = std::fs::metadata(dir.path()).unwrap();
    assert_eq!(top.identity(), (meta.dev(), meta.ino()));
}

#[test]
fn a_symlink_on_the_way_or_as_the_leaf_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(outside.path().join("inner")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("l")).unwrap();
    std::fs::write(dir.path().join("file"), "x").unwrap();
    let root = Root::open(dir.path()).unwrap();
    for p in ["l", "l/inner"] {
        let err = root.open_dir(Some(&path(p))).unwrap_err();
        let refused = matches!(err, FsError::SymlinkRejected { .. } | FsError::NotDirectory { .. });
        assert!(refused, "{p}: {err:?}");
    }
    assert!(root.open_dir(Some(&path("file"))).is_err());
    assert!(root.open_dir(Some(&path("gone"))).unwrap_err().is_not_found());
}
