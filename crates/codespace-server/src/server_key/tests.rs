//! Unit tests of `server_key`.
#![expect(clippy::disallowed_methods, reason = "the tests look at the key file")]

use std::os::unix::fs::PermissionsExt;

use super::*;

#[test]
fn the_key_is_made_once_0600_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let first = load_or_create(dir.path()).unwrap();
    let path = dir.path().join(FILE_NAME);
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    let again = load_or_create(dir.path()).unwrap();
    let seal = first.seal("t", &[b"x"]);
    assert!(again.verify("t", &[b"x"], &seal), "the same key after a restart");
    assert!(!ephemeral().verify("t", &[b"x"], &seal));
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, [FILE_NAME], "no temporary file is left");
}

#[test]
fn a_readable_or_broken_key_fails_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    fs::write(&path, "00".repeat(32)).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    let e = load_or_create(dir.path()).unwrap_err();
    assert!(e.0.contains("0600"), "{}", e.0);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    assert!(load_or_create(dir.path()).is_ok());
    fs::write(&path, "not a key").unwrap();
    let e = load_or_create(dir.path()).unwrap_err();
    assert!(e.0.contains("64 hex digits"), "{}", e.0);
}
