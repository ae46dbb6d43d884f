//! Unit tests for `instance`: a held lock reads alive from this process too, a dropped
//! instance removes its file, and a free lock file is reaped.
#![expect(
    clippy::disallowed_methods,
    reason = "the tests inspect and fake the lock files of a temporary owners directory"
)]

use std::os::unix::fs::PermissionsExt;

use super::*;

#[test]
fn a_held_lock_is_alive_and_a_dropped_one_is_gone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let owners = dir.path().join("ledger.owners");
    let me = Instance::claim(Some(&owners)).expect("claim");
    assert!(me.id.starts_with("inst-"), "{}", me.id);
    let mode = std::fs::metadata(&owners).expect("dir").permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    // Another open file description of the same file conflicts, even in this process.
    assert!(alive(&owners, &me.id));
    assert!(!reap(&owners, &me.id), "a live instance's file is never reaped");
    let id = me.id.clone();
    drop(me);
    assert!(!owners.join(&id).exists());
    assert!(!alive(&owners, &id));
    assert!(!alive(&owners, "inst-never-was"));
    assert!(alive(&owners, "../escape"), "a name that is no file name is never taken for dead");
}

#[test]
fn a_free_lock_file_is_reaped() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("o")).expect("dir");
    let owners = dir.path().join("o");
    // What a killed instance leaves: the file, with no lock on it.
    std::fs::write(owners.join("inst-dead"), b"").expect("file");
    assert!(!alive(&owners, "inst-dead"));
    assert!(reap(&owners, "inst-dead"));
    assert!(!owners.join("inst-dead").exists());
    let memory = Instance::claim(None).expect("in memory");
    assert!(memory.lock.is_none());
}
