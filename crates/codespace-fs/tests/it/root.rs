//! `Root::open`: what can and cannot be a root.

use std::fs;
use std::path::Path;

use codespace_fs::{FsError, Root};

fn unavailable(path: &Path) -> bool {
    matches!(Root::open(path), Err(FsError::RootUnavailable { .. }))
}

#[test]
fn root_must_be_an_existing_absolute_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    fs::write(&file, b"").unwrap();
    assert!(unavailable(Path::new("relative/dir")));
    assert!(unavailable(Path::new(".")));
    assert!(unavailable(&tmp.path().join("missing")));
    assert!(unavailable(&file));
    let root = Root::open(tmp.path()).unwrap();
    assert_eq!(root.path(), fs::canonicalize(tmp.path()).unwrap());
}

#[test]
fn root_path_is_canonical() {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir(tmp.path().join("a")).unwrap();
    let root = Root::open(&tmp.path().join("a/../a/.")).unwrap();
    assert_eq!(root.path(), fs::canonicalize(tmp.path().join("a")).unwrap());
    let message = Root::open(&tmp.path().join("missing")).unwrap_err().to_string();
    assert!(message.contains("missing"), "{message}");
}

#[test]
fn root_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Root>();
}
