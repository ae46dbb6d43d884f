//! A file ledger survives closing and reopening with everything in it (rows, plans,
//! events, unfinished rows); files and directories get private modes; migrations run on
//! an empty file.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use codespace_store::{Drafted, OpStatus, SCHEMA_VERSION, Store};
use codespace_types::PatchStatus;

use crate::support::{TempLedger, draft, plan, planned};

#[expect(
    clippy::disallowed_methods,
    reason = "reads the mode of a ledger file a test made in a temporary directory"
)]
fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test makes an empty file where the ledger goes, in a temporary directory"
)]
fn an_empty_file_is_migrated_to_the_schema_version() {
    let ledger = TempLedger::new();
    std::fs::create_dir_all(ledger.path.parent().unwrap()).unwrap();
    std::fs::write(&ledger.path, b"").unwrap();
    let store = ledger.open();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.integrity_check().unwrap(), "ok");
    assert_eq!(store.path(), Some(ledger.path.as_path()));
    drop(store);
    // Reopening does not migrate again and keeps the version.
    assert_eq!(ledger.open().schema_version().unwrap(), SCHEMA_VERSION);
}

#[test]
fn a_reopened_file_holds_everything_including_unfinished_rows() {
    let ledger = TempLedger::new();
    let store = ledger.open();
    let applying = planned(&store, "ws", Some("applying"), "fp-a", 1).operation_id;
    let refused = draft(&store, "ws", Some("refused"), "fp-x");
    store
        .finish_draft(
            &refused,
            OpStatus::Finished(PatchStatus::Rejected),
            "{}",
            Some("VERSION_CONFLICT"),
            115,
        )
        .unwrap();
    let refused = refused.operation_id;
    let done = planned(&store, "other", Some("applying"), "fp-d", 2);
    store
        .finish_draft(
            &done,
            OpStatus::Finished(PatchStatus::Applied),
            r#"{"status":"applied"}"#,
            None,
            120,
        )
        .unwrap();
    let done = done.operation_id;
    let recovered = planned(&store, "ws", None, "fp-r", 3).operation_id;
    store
        .recover(
            &recovered,
            OpStatus::Finished(PatchStatus::Unknown),
            "{}",
            "disk cannot tell",
            130,
        )
        .unwrap();
    let before: Vec<_> = [&refused, &applying, &done, &recovered]
        .iter()
        .map(|id| store.get(id).unwrap().unwrap())
        .collect();
    drop(store);

    let store = ledger.open();
    let after: Vec<_> = [&refused, &applying, &done, &recovered]
        .iter()
        .map(|id| store.get(id).unwrap().unwrap())
        .collect();
    assert_eq!(after, before);
    let unfinished: Vec<String> =
        store.unfinished().unwrap().into_iter().map(|r| r.operation_id).collect();
    assert_eq!(unfinished, [applying.as_str()]);
    assert_eq!(after[1].plan, plan(1));
    assert_eq!(after[3].events.last().unwrap().reason.as_deref(), Some("disk cannot tell"));
    // Keys still replay after the restart.
    assert!(matches!(store.draft(None, "ws", Some("applying"), "fp-a", 200).unwrap(),
        Drafted::Replayed(r) if r.operation_id == applying));
    assert!(matches!(store.draft(None, "other", Some("applying"), "fp-x", 200).unwrap(),
        Drafted::KeyConflict(r) if r.operation_id == done));
    assert!(matches!(store.draft(None, "ws", Some("refused"), "fp-x", 200).unwrap(),
        Drafted::Replayed(r) if r.operation_id == refused));
}

#[test]
fn a_second_handle_sees_the_first_handles_commits() {
    let ledger = TempLedger::new();
    let one = ledger.open();
    let two = ledger.open();
    let d = planned(&one, "ws", Some("k"), "fp", 1);
    assert_eq!(two.get(&d.operation_id).unwrap().unwrap().status, OpStatus::Applying);
    assert!(matches!(two.draft(None, "ws", Some("k"), "fp", 1).unwrap(), Drafted::Replayed(_)));
    two.finish_draft(&d, OpStatus::Finished(PatchStatus::Applied), "{}", None, 2).unwrap();
    assert_eq!(
        one.get(&d.operation_id).unwrap().unwrap().status,
        OpStatus::Finished(PatchStatus::Applied)
    );
}

#[test]
fn directories_are_created_private_and_files_are_0600() {
    let ledger = TempLedger::new();
    let store = ledger.open();
    planned(&store, "ws", None, "fp", 1);
    let state = ledger.path.parent().unwrap();
    assert_eq!(mode(state), 0o700);
    assert_eq!(mode(&ledger.path), 0o600);
    // SQLite creates its sidecars with the database file's mode.
    for suffix in ["-wal", "-shm"] {
        let side = format!("{}{suffix}", ledger.path.display());
        assert_eq!(mode(Path::new(&side)), 0o600, "{side}");
    }
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test makes a loose ledger file in a temporary directory and checks its mode"
)]
fn an_existing_loose_file_is_tightened_to_0600() {
    let ledger = TempLedger::new();
    drop(ledger.open());
    std::fs::set_permissions(&ledger.path, std::fs::Permissions::from_mode(0o644)).unwrap();
    drop(ledger.open());
    assert_eq!(mode(&ledger.path), 0o600);
}

#[test]
fn the_file_is_in_wal_mode_with_the_ledger_application_id() {
    let ledger = TempLedger::new();
    drop(ledger.open());
    let conn = rusqlite::Connection::open(&ledger.path).unwrap();
    let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
    let app: i64 = conn.pragma_query_value(None, "application_id", |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(app, 0x4353_504C);
    let _ = Store::open(&ledger.path).unwrap();
}
