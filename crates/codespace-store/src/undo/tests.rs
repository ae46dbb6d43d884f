//! Unit tests of `undo`: the undo log's records, read back as written.

use super::*;

fn log() -> (tempfile::TempDir, UndoLog) {
    let dir = tempfile::tempdir().unwrap();
    let log = UndoLog::beside(&dir.path().join("ledger.sqlite3"));
    (dir, log)
}

const OP: &str = "op-0123abcd-0000-4000-8000-00000000beef";

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test inspects the modes of the undo log it made in a temporary directory"
)]
fn saved_entries_are_private_named_by_ordinal_and_load_back() {
    let (dir, log) = log();
    assert_eq!(log.dir(), dir.path().join("ledger.sqlite3.undo"));
    log.save(OP, &[(0, b"zero"), (2, b"two")]).unwrap();
    assert_eq!(log.load(OP, 0).unwrap().as_deref(), Some(&b"zero"[..]));
    assert_eq!(log.load(OP, 2).unwrap().as_deref(), Some(&b"two"[..]));
    assert_eq!(log.load(OP, 1).unwrap(), None);
    let path = log.entry_path(OP, 2).unwrap();
    assert_eq!(path, log.dir().join(OP).join("2"));
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(log.dir()), 0o700);
    assert_eq!(mode(&path), 0o600);
    assert_eq!(log.operations().unwrap(), vec![OP.to_owned()]);
}

#[test]
fn discard_keeps_what_it_is_told_and_removes_an_empty_operation() {
    let (_dir, log) = log();
    log.save(OP, &[(0, b"a"), (1, b"b")]).unwrap();
    log.discard(OP, &[1]).unwrap();
    assert_eq!(log.load(OP, 0).unwrap(), None);
    assert_eq!(log.load(OP, 1).unwrap().as_deref(), Some(&b"b"[..]));
    log.discard(OP, &[]).unwrap();
    assert!(log.operations().unwrap().is_empty());
    // Discarding what is gone is not an error.
    log.discard(OP, &[]).unwrap();
}

#[test]
fn a_name_that_is_not_an_operation_id_is_refused() {
    let (_dir, log) = log();
    for bad in ["../x", "op-", "op-../../etc", "x", "op-a/b"] {
        assert!(matches!(log.entry_path(bad, 0), Err(StoreError::InvalidInput { .. })), "{bad}");
    }
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test checks that the temporary undo log it made is gone"
)]
fn a_temporary_log_disappears_with_its_owner() {
    let log = UndoLog::temporary().unwrap();
    log.save(OP, &[(0, b"a")]).unwrap();
    let dir = log.dir().to_owned();
    assert!(fs::symlink_metadata(&dir).is_ok());
    drop(log);
    assert!(fs::symlink_metadata(&dir).is_err());
}
