//! Unit tests for `store` that need the connection itself: storage-failure degradation
//! (D5), corrupt-row detection (statuses, event names and statuses, plan kinds and
//! versions), and the `Send + Sync` bound.

use codespace_types::PatchStatus;
use rusqlite::{ErrorCode, params};

use super::*;
use crate::error::StoreError;
use crate::model::{OpStatus, PlannedFile};
use crate::{ChangeKind, Version};

fn assert_send_sync<T: Send + Sync>() {}

fn h1() -> Version {
    "sha256:0000000000000000000000000000000000000000000000000000000000000001".parse().expect("v")
}

fn update() -> PlannedFile {
    PlannedFile {
        path: "src/a.rs".to_owned(),
        kind: ChangeKind::Update,
        before_version: h1(),
        after_version: h1(),
        move_from: None,
        before_mode: None,
    }
}

fn fresh(store: &Store, key: Option<&str>) -> Draft {
    let Drafted::Fresh(draft) = store.draft(None, "ws", key, "fp", 1).expect("draft") else {
        panic!("fresh expected");
    };
    draft
}

/// A fresh draft of `key`, written to the ledger with one planned file.
fn planned(store: &Store, key: Option<&str>) -> Draft {
    let draft = fresh(store, key);
    assert_eq!(store.plan_draft(&draft, &[update()], &[], 2).expect("plan"), None);
    draft
}

#[test]
fn store_is_send_and_sync() {
    assert_send_sync::<Store>();
    assert_send_sync::<StoreError>();
}

#[test]
fn a_full_disk_degrades_the_handle_and_writes_are_refused_after() {
    let store = Store::open_in_memory().expect("open");
    let kept = planned(&store, Some("kept"));
    {
        let inner = store.lock();
        let pages: i64 =
            inner.conn.pragma_query_value(None, "page_count", |row| row.get(0)).expect("pages");
        // Forbid growth: the next insert that needs a page fails with SQLITE_FULL.
        inner.conn.pragma_update(None, "max_page_count", pages).expect("cap");
    }
    let mut failure = None;
    for i in 0..100_000 {
        let draft = fresh(&store, Some(&format!("k{i}")));
        if let Err(error) = store.plan_draft(&draft, &[update()], &[], 2) {
            failure = Some(error);
            break;
        }
    }
    let failure = failure.expect("the capped database filled up");
    assert!(
        matches!(&failure, StoreError::Sqlite(e) if e.sqlite_error_code() == Some(ErrorCode::DiskFull)),
        "{failure:?}"
    );
    assert!(store.degraded().is_some());
    // Writes are refused now, even ones that would fit.
    let refused = store
        .finish_draft(&kept, OpStatus::Finished(PatchStatus::Applied), "{}", None, 3)
        .expect_err("refused");
    assert!(matches!(refused, StoreError::Degraded { .. }), "{refused:?}");
    let draft = fresh(&store, None);
    let refused = store.plan_draft(&draft, &[], &[], 3).expect_err("refused");
    assert!(matches!(refused, StoreError::Degraded { .. }), "{refused:?}");
    let refused = store
        .finish_draft(&draft, OpStatus::Finished(PatchStatus::Rejected), "{}", None, 3)
        .expect_err("refused");
    assert!(matches!(refused, StoreError::Degraded { .. }), "{refused:?}");
    // A replay is still answered from what the ledger holds; reads still work.
    let replayed = store.draft(None, "ws", Some("kept"), "fp", 3);
    assert!(matches!(replayed, Ok(Drafted::Replayed(_))), "{replayed:?}");
    let conflict = store.draft(None, "ws", Some("kept"), "other", 3);
    assert!(matches!(conflict, Ok(Drafted::KeyConflict(_))), "{conflict:?}");
    let record = store.get(&kept.operation_id).expect("get").expect("present");
    assert_eq!(record.status, OpStatus::Applying);
}

#[test]
fn a_row_with_an_unknown_status_reads_as_corrupt_never_as_missing() {
    let store = Store::open_in_memory().expect("open");
    let draft = planned(&store, Some("k"));
    let operation_id = draft.operation_id.clone();
    {
        let inner = store.lock();
        inner.conn.pragma_update(None, "ignore_check_constraints", "ON").expect("pragma");
        inner
            .conn
            .execute(
                "UPDATE operations SET status = 'exploded' WHERE operation_id = ?1",
                params![operation_id],
            )
            .expect("update");
    }
    for result in [store.get(&operation_id), store.get_by_key("ws", "k")] {
        let error = result.expect_err("corrupt");
        assert!(
            matches!(&error, StoreError::CorruptRow { operation_id: id, detail }
                if *id == operation_id && detail.contains("exploded")),
            "{error:?}"
        );
    }
    // Still unfinished (finished_at is NULL), so recovery must see it fail, not skip it.
    assert!(matches!(store.unfinished(), Err(StoreError::CorruptRow { .. })));
    let error = store
        .finish_draft(&draft, OpStatus::Finished(PatchStatus::Applied), "{}", None, 2)
        .expect_err("corrupt");
    assert!(matches!(error, StoreError::CorruptRow { .. }), "{error:?}");
}

#[test]
fn an_unknown_event_name_reads_as_corrupt() {
    let store = Store::open_in_memory().expect("open");
    let operation_id = planned(&store, None).operation_id;
    {
        let inner = store.lock();
        inner.conn.pragma_update(None, "ignore_check_constraints", "ON").expect("pragma");
        inner.conn.execute("UPDATE operation_events SET name = 'teleported'", []).expect("update");
    }
    let error = store.get(&operation_id).expect_err("corrupt");
    assert!(
        matches!(&error, StoreError::CorruptRow { detail, .. } if detail.contains("teleported"))
    );
}

#[test]
fn the_connection_is_configured() {
    let store = Store::open_in_memory().expect("open");
    let inner = store.lock();
    let foreign_keys: i64 =
        inner.conn.pragma_query_value(None, "foreign_keys", |row| row.get(0)).expect("fk");
    let synchronous: i64 =
        inner.conn.pragma_query_value(None, "synchronous", |row| row.get(0)).expect("sync");
    assert_eq!((foreign_keys, synchronous), (1, 2));
    // Plans never depend on bound values, so a cached statement is never prepared again.
    let qpsg = rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG;
    assert!(inner.conn.db_config(qpsg).expect("qpsg"));
}

#[test]
fn sqlite_is_built_to_allocate_its_page_cache_a_page_at_a_time() {
    // `.cargo/config.toml` passes the flag to the bundled build: without it, every temporary
    // index of a CHECK's IN list allocates (and the allocator faults in) a 20-page block.
    let store = Store::open_in_memory().expect("open");
    let inner = store.lock();
    let mut statement = inner.conn.prepare("PRAGMA compile_options").expect("prepare");
    let options = statement
        .query_map([], |row| row.get::<_, String>(0))
        .expect("query")
        .collect::<Result<Vec<_>, _>>()
        .expect("rows");
    assert!(options.iter().any(|o| o == "DEFAULT_PCACHE_INITSZ=0"), "{options:?}");
}

#[test]
fn an_unknown_event_status_reads_as_corrupt() {
    let store = Store::open_in_memory().expect("open");
    // No plan: the row is inserted finished, its events `minted` (seq 1) and `finished`.
    let draft = fresh(&store, None);
    store
        .finish_draft(&draft, OpStatus::Finished(PatchStatus::Applied), "{}", None, 2)
        .expect("finish");
    let operation_id = draft.operation_id;
    {
        let inner = store.lock();
        inner.conn.pragma_update(None, "ignore_check_constraints", "ON").expect("pragma");
        inner
            .conn
            .execute("UPDATE operation_events SET status = 'vanished' WHERE seq = 2", [])
            .expect("update");
    }
    let error = store.get(&operation_id).expect_err("corrupt");
    assert!(
        matches!(&error, StoreError::CorruptRow { detail, .. } if detail.contains("vanished")),
        "{error:?}"
    );
}

/// A stored kind or version this build cannot read is a corrupt row naming the column,
/// the checks the ledger used to make on strings before the types made them.
#[test]
fn a_planned_file_with_an_unknown_kind_or_a_malformed_version_reads_as_corrupt() {
    let cases = [("kind", "'rename'"), ("before_version", "'sha256:xyz'"), ("after_version", "''")];
    for (column, value) in cases {
        let store = Store::open_in_memory().expect("open");
        let operation_id = planned(&store, None).operation_id;
        {
            let inner = store.lock();
            inner.conn.pragma_update(None, "ignore_check_constraints", "ON").expect("pragma");
            inner
                .conn
                .execute(&format!("UPDATE operation_files SET {column} = {value}"), [])
                .expect("update");
        }
        let error = store.get(&operation_id).expect_err("corrupt");
        assert!(
            matches!(&error, StoreError::CorruptRow { detail, .. } if detail.contains(column)),
            "{column}: {error:?}"
        );
        assert!(matches!(store.unfinished(), Err(StoreError::CorruptRow { .. })), "{column}");
    }
}

#[test]
fn the_change_stamp_moves_with_every_write_from_any_connection_and_never_with_a_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ledger.sqlite3");
    let store = Store::open(&path).expect("open");
    let other = Store::open(&path).expect("second handle");
    let first = store.change_stamp().expect("stamp");
    assert_eq!(store.change_stamp().expect("stamp"), first, "nothing changed");
    store.get("op-none").expect("a read");
    assert_eq!(store.change_stamp().expect("stamp"), first, "a read changes nothing");
    planned(&store, Some("mine"));
    let mine = store.change_stamp().expect("stamp");
    assert_ne!(mine, first, "a write through this handle");
    planned(&other, Some("theirs"));
    assert_ne!(store.change_stamp().expect("stamp"), mine, "a commit by another connection");
}

/// The read-only connection closes before the writing one, so a handle that used both still
/// leaves the ledger checkpointed and its WAL removed when it is dropped, as one connection
/// did (a read-only connection closing last cannot checkpoint).
#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test checks the WAL file of the ledger it made in a temporary directory"
)]
fn a_dropped_handle_that_read_through_its_reader_leaves_no_wal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ledger.sqlite3");
    let wal = dir.path().join("ledger.sqlite3-wal");
    let store = Store::open(&path).expect("open");
    planned(&store, Some("k"));
    store.change_stamp().expect("a stamp through the reader");
    store.works_read(|w| w.works(Some("ws"))).expect("a snapshot through the reader");
    assert!(wal.exists(), "the write is in the WAL while the handle is open");
    drop(store);
    assert!(!wal.exists(), "the last close checkpoints and removes the WAL");
}
