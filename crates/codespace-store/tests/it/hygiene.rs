//! Open-time refusals (D6): a WAL without its database, symlinks, non-files, files that
//! are not (sound) ledgers. A network filesystem cannot be simulated here; its classifier
//! is unit-tested in `hygiene`.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use codespace_store::{Store, StoreError};

use crate::support::{TempLedger, planned};

fn refusal(path: &Path) -> String {
    match Store::open(path) {
        Err(StoreError::Refused { path: refused, reason }) => {
            assert_eq!(refused, path);
            reason
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn sidecar(path: &Path, suffix: &str) -> std::path::PathBuf {
    format!("{}{suffix}", path.display()).into()
}

/// A real, non-empty WAL: copied while its ledger is open, so its commits are not yet
/// checkpointed into the database file.
#[expect(
    clippy::disallowed_methods,
    reason = "the test makes and inspects its fixture files (WALs, links, bad databases) in a temporary directory"
)]
fn real_wal(ledger: &TempLedger) -> Vec<u8> {
    let store = ledger.open();
    for _ in 0..10 {
        planned(&store, "ws", None, "fp", 1);
    }
    let wal = std::fs::read(sidecar(&ledger.path, "-wal")).unwrap();
    assert!(!wal.is_empty());
    wal
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test makes and inspects its fixture files (WALs, links, bad databases) in a temporary directory"
)]
fn a_wal_beside_a_missing_database_is_refused() {
    let source = TempLedger::new();
    let wal = real_wal(&source);
    let ledger = TempLedger::new();
    std::fs::create_dir_all(ledger.path.parent().unwrap()).unwrap();
    std::fs::write(sidecar(&ledger.path, "-wal"), &wal).unwrap();
    let reason = refusal(&ledger.path);
    assert!(reason.contains("without its WAL"), "{reason}");
    assert!(!ledger.path.exists(), "nothing was created");
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test makes and inspects its fixture files (WALs, links, bad databases) in a temporary directory"
)]
fn a_wal_beside_an_empty_database_is_refused() {
    let source = TempLedger::new();
    let wal = real_wal(&source);
    let ledger = TempLedger::new();
    std::fs::create_dir_all(ledger.path.parent().unwrap()).unwrap();
    std::fs::write(&ledger.path, b"").unwrap();
    std::fs::write(sidecar(&ledger.path, "-wal"), &wal).unwrap();
    assert!(refusal(&ledger.path).contains("write-ahead log"));
    assert_eq!(std::fs::metadata(&ledger.path).unwrap().len(), 0, "left untouched");
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test makes and inspects its fixture files (WALs, links, bad databases) in a temporary directory"
)]
fn an_empty_wal_beside_a_missing_database_is_harmless() {
    let ledger = TempLedger::new();
    std::fs::create_dir_all(ledger.path.parent().unwrap()).unwrap();
    std::fs::write(sidecar(&ledger.path, "-wal"), b"").unwrap();
    assert_eq!(ledger.open().integrity_check().unwrap(), "ok");
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test makes and inspects its fixture files (WALs, links, bad databases) in a temporary directory"
)]
fn a_symlinked_database_path_is_refused() {
    let ledger = TempLedger::new();
    drop(ledger.open());
    let link = ledger.dir.path().join("link.sqlite3");
    std::os::unix::fs::symlink(&ledger.path, &link).unwrap();
    assert!(refusal(&link).contains("symlink"));
    // A dangling symlink is refused too, and nothing is created at its target.
    let dangling = ledger.dir.path().join("dangling.sqlite3");
    let target = ledger.dir.path().join("elsewhere.sqlite3");
    std::os::unix::fs::symlink(&target, &dangling).unwrap();
    assert!(refusal(&dangling).contains("symlink"));
    assert!(!target.exists());
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test makes and inspects its fixture files (WALs, links, bad databases) in a temporary directory"
)]
fn a_symlinked_wal_or_shm_is_refused() {
    for suffix in ["-wal", "-shm"] {
        let ledger = TempLedger::new();
        drop(ledger.open());
        let elsewhere = ledger.dir.path().join("elsewhere");
        std::fs::write(&elsewhere, b"").unwrap();
        let side = sidecar(&ledger.path, suffix);
        let _ = std::fs::remove_file(&side);
        std::os::unix::fs::symlink(&elsewhere, &side).unwrap();
        let reason = refusal(&ledger.path);
        assert!(reason.contains(suffix) && reason.contains("symlink"), "{reason}");
    }
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test makes and inspects its fixture files (WALs, links, bad databases) in a temporary directory"
)]
fn a_directory_at_the_path_is_refused() {
    let ledger = TempLedger::new();
    std::fs::create_dir_all(&ledger.path).unwrap();
    assert!(refusal(&ledger.path).contains("not a regular file"));
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test makes and inspects its fixture files (WALs, links, bad databases) in a temporary directory"
)]
fn a_file_that_is_not_a_database_is_refused() {
    let ledger = TempLedger::new();
    std::fs::create_dir_all(ledger.path.parent().unwrap()).unwrap();
    std::fs::write(&ledger.path, vec![0x5a; 8192]).unwrap();
    assert!(refusal(&ledger.path).contains("not a sound SQLite database"));
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test makes and inspects its fixture files (WALs, links, bad databases) in a temporary directory"
)]
fn a_corrupt_database_is_refused() {
    let ledger = TempLedger::new();
    let store = ledger.open();
    for n in 0..400 {
        planned(&store, "ws", Some(&format!("key-{n}")), "fp", n);
    }
    drop(store); // the last close checkpoints the WAL into the database file
    let len = std::fs::metadata(&ledger.path).unwrap().len();
    assert!(len > 16 * 4096, "{len}");
    let mut file = std::fs::OpenOptions::new().write(true).open(&ledger.path).unwrap();
    for page in [3_u64, 7, 11] {
        file.seek(SeekFrom::Start(page * 4096 + 8)).unwrap();
        file.write_all(&[0xA7; 512]).unwrap();
    }
    file.sync_all().unwrap();
    drop(file);
    let reason = refusal(&ledger.path);
    assert!(
        reason.contains("integrity_check") || reason.contains("not a sound SQLite database"),
        "{reason}"
    );
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test makes and inspects its fixture files (WALs, links, bad databases) in a temporary directory"
)]
fn another_programs_database_is_refused_and_left_alone() {
    let ledger = TempLedger::new();
    std::fs::create_dir_all(ledger.path.parent().unwrap()).unwrap();
    let conn = rusqlite::Connection::open(&ledger.path).unwrap();
    conn.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
        .unwrap();
    drop(conn);
    assert!(refusal(&ledger.path).contains("not a CodeSpace ledger"));
    let conn = rusqlite::Connection::open(&ledger.path).unwrap();
    let tables: i64 =
        conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0)).unwrap();
    assert_eq!(tables, 1);
}

#[test]
fn a_ledger_from_a_newer_build_is_refused() {
    let ledger = TempLedger::new();
    drop(ledger.open());
    let conn = rusqlite::Connection::open(&ledger.path).unwrap();
    conn.pragma_update(None, "user_version", codespace_store::SCHEMA_VERSION + 1).unwrap();
    drop(conn);
    assert!(refusal(&ledger.path).contains("newer than this build"));
}

#[test]
fn the_memory_name_is_not_a_file_path() {
    assert!(refusal(Path::new(":memory:")).contains("not a file"));
    assert!(refusal(Path::new("")).contains("empty"));
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test makes and inspects its fixture files (WALs, links, bad databases) in a temporary directory"
)]
fn an_unusable_directory_is_an_open_error_naming_the_path() {
    let ledger = TempLedger::new();
    let blocker = ledger.dir.path().join("file");
    std::fs::write(&blocker, b"x").unwrap();
    let path = blocker.join("sub").join("ops.sqlite3");
    match Store::open(&path) {
        Err(error @ StoreError::Open { .. }) => {
            assert!(error.to_string().contains(&path.display().to_string()), "{error}");
        }
        other => panic!("expected an open error, got {other:?}"),
    }
}
