//! The ledger lifecycle on an in-memory store: drafts, replay and key conflicts (C1, C2),
//! workspace-scoped keys, plans, finishing exactly once, recovery, and refusals.

use codespace_store::{
    ChangeKind, Drafted, Event, EventName, OpStatus, PlannedFile, SCHEMA_VERSION, Store, StoreError,
};
use codespace_types::PatchStatus;

use crate::support::{TempLedger, draft, plan, planned, version};

fn store() -> Store {
    Store::open_in_memory().unwrap()
}

fn event(at: i64, name: &str, status: Option<&str>, reason: Option<&str>) -> Event {
    Event {
        at,
        name: EventName::parse(name).unwrap(),
        status: status.map(|s| OpStatus::parse(s).unwrap()),
        reason: reason.map(str::to_owned),
    }
}

#[test]
fn a_planned_draft_is_an_applying_row_with_minted_and_planned_events() {
    let store = store();
    let d = draft(&store, "ws", Some("k1"), "fp1");
    let id = d.operation_id.clone();
    let hex = id.strip_prefix("op-").expect("op- prefix");
    let parsed = uuid::Uuid::parse_str(hex).expect("a uuid after op-");
    assert_eq!(parsed.get_version_num(), 4);
    assert_eq!(hex, parsed.hyphenated().to_string());
    assert!(store.get(&id).unwrap().is_none(), "a draft writes nothing");

    assert_eq!(store.plan_draft(&d, &plan(7), &[], 120).unwrap(), None);
    let record = store.get(&id).unwrap().expect("stored");
    assert_eq!(record.operation_id, id);
    assert_eq!(record.operation_key.as_deref(), Some("k1"));
    assert_eq!(record.workspace_id, "ws");
    assert_eq!(record.fingerprint, "fp1");
    assert_eq!(record.status, OpStatus::Applying);
    assert_eq!(record.result_json, None);
    assert_eq!(record.plan, plan(7), "the plan round-trips in order");
    assert_eq!(record.created_at, 100);
    assert_eq!(record.finished_at, None);
    assert_eq!(
        record.events,
        [event(100, "minted", None, None), event(120, "planned", None, None)]
    );
    assert_eq!(store.get_by_key("ws", "k1").unwrap().unwrap(), record);

    store.finish_draft(&d, OpStatus::Finished(PatchStatus::Applied), "{}", None, 130).unwrap();
    let record = store.get(&id).unwrap().unwrap();
    assert_eq!(record.plan, plan(7), "the plan is kept after finishing");
    assert_eq!(
        record.events.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
        ["minted", "planned", "finished"]
    );
}

#[test]
fn the_same_key_and_fingerprint_replays_the_stored_record() {
    let store = store();
    let d = planned(&store, "ws", Some("k"), "fp", 1);
    // Replaying an unfinished operation returns it as it stands (the gateway reads it as
    // unknown) and mints nothing.
    match store.draft(None, "ws", Some("k"), "fp", 200).unwrap() {
        Drafted::Replayed(record) => {
            assert_eq!(record.operation_id, d.operation_id);
            assert_eq!(record.status, OpStatus::Applying);
        }
        other => panic!("expected Replayed, got {other:?}"),
    }
    store
        .finish_draft(
            &d,
            OpStatus::Finished(PatchStatus::Applied),
            r#"{"status":"applied"}"#,
            None,
            300,
        )
        .unwrap();
    match store.draft(None, "ws", Some("k"), "fp", 400).unwrap() {
        Drafted::Replayed(record) => {
            assert_eq!(record.operation_id, d.operation_id);
            assert_eq!(record.status, OpStatus::Finished(PatchStatus::Applied));
            assert_eq!(record.result_json.as_deref(), Some(r#"{"status":"applied"}"#));
            assert_eq!(record.finished_at, Some(300));
            assert_eq!(record.events.len(), 3, "a replay appends no event");
        }
        other => panic!("expected Replayed, got {other:?}"),
    }
}

#[test]
fn the_same_key_with_another_fingerprint_is_a_conflict_and_changes_nothing() {
    let store = store();
    let d = draft(&store, "ws", Some("k"), "fp");
    // Drafted before the key reached the ledger: its plan finds the key inside its transaction.
    let racing = draft(&store, "ws", Some("k"), "fp-other");
    store
        .finish_draft(
            &d,
            OpStatus::Finished(PatchStatus::Rejected),
            r#"{"r":1}"#,
            Some("VERSION_CONFLICT"),
            300,
        )
        .unwrap();
    let before = store.get(&d.operation_id).unwrap().unwrap();
    match store.draft(None, "ws", Some("k"), "fp-other", 400).unwrap() {
        Drafted::KeyConflict(record) => assert_eq!(record, before),
        other => panic!("expected KeyConflict, got {other:?}"),
    }
    let late = store.plan_draft(&racing, &plan(1), &[], 410).unwrap();
    assert_eq!(late, Some(Drafted::KeyConflict(before.clone())));
    assert!(store.get(&racing.operation_id).unwrap().is_none());
    assert_eq!(store.get(&d.operation_id).unwrap().unwrap(), before);
}

#[test]
fn keys_are_scoped_to_a_workspace() {
    let store = store();
    let a = planned(&store, "alpha", Some("shared-key"), "fp", 1).operation_id;
    let b = planned(&store, "beta", Some("shared-key"), "fp", 2).operation_id;
    assert_ne!(a, b);
    assert_eq!(store.get_by_key("alpha", "shared-key").unwrap().unwrap().operation_id, a);
    assert_eq!(store.get_by_key("beta", "shared-key").unwrap().unwrap().operation_id, b);
    assert!(store.get_by_key("gamma", "shared-key").unwrap().is_none());
    // A different fingerprint in another workspace is no conflict either.
    let c = planned(&store, "gamma", Some("shared-key"), "another-fp", 3).operation_id;
    assert_ne!(c, a);
}

#[test]
fn without_a_key_every_draft_is_fresh() {
    let store = store();
    let ids: Vec<String> =
        (0..5).map(|n| planned(&store, "ws", None, "same-fp", n).operation_id).collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 5);
    for id in &ids {
        assert_eq!(store.get(id).unwrap().unwrap().operation_key, None);
    }
}

#[test]
fn unknown_ids_and_keys_are_none_not_errors() {
    let store = store();
    planned(&store, "ws", Some("k"), "fp", 1);
    assert!(store.get("op-00000000-0000-4000-8000-000000000000").unwrap().is_none());
    assert!(store.get("").unwrap().is_none());
    assert!(store.get_by_key("ws", "other").unwrap().is_none());
    assert!(store.get_by_key("other-ws", "k").unwrap().is_none());
}

#[test]
fn an_outcome_is_recorded_once_and_a_second_finish_is_refused() {
    let store = store();
    let d = draft(&store, "ws", None, "fp");
    store
        .finish_draft(
            &d,
            OpStatus::Finished(PatchStatus::Checked),
            r#"{"status":"checked"}"#,
            None,
            150,
        )
        .unwrap();
    let error = store
        .finish_draft(
            &d,
            OpStatus::Finished(PatchStatus::Applied),
            r#"{"status":"applied"}"#,
            None,
            160,
        )
        .unwrap_err();
    assert!(
        matches!(&error, StoreError::AlreadyFinished { operation_id, status: OpStatus::Finished(PatchStatus::Checked) }
            if *operation_id == d.operation_id),
        "{error:?}"
    );
    let error = store
        .recover(&d.operation_id, OpStatus::Finished(PatchStatus::Unknown), "{}", "crash", 170)
        .unwrap_err();
    assert!(matches!(error, StoreError::AlreadyFinished { .. }), "{error:?}");
    let record = store.get(&d.operation_id).unwrap().unwrap();
    assert_eq!(record.status, OpStatus::Finished(PatchStatus::Checked));
    assert_eq!(record.result_json.as_deref(), Some(r#"{"status":"checked"}"#));
    assert_eq!(record.finished_at, Some(150));
    assert_eq!(
        record.events,
        [event(100, "minted", None, None), event(150, "finished", Some("checked"), None)]
    );
}

#[test]
fn every_terminal_status_can_finish_and_unknown_gets_reason_unknown() {
    let store = store();
    for status in OpStatus::ALL.into_iter().filter(|s| s.is_terminal()) {
        for d in [draft(&store, "ws", None, "fp"), planned(&store, "ws", None, "fp", 1)] {
            store.finish_draft(&d, status, "{}", None, 200).unwrap();
            let record = store.get(&d.operation_id).unwrap().unwrap();
            assert_eq!(record.status, status);
            let last = record.events.last().unwrap();
            assert_eq!(last.name, EventName::Finished);
            assert_eq!(last.status, Some(status));
            let expected_reason =
                (status == OpStatus::Finished(PatchStatus::Unknown)).then_some("unknown");
            assert_eq!(last.reason.as_deref(), expected_reason, "{status}");
        }
    }
    let d = draft(&store, "ws", None, "fp");
    store
        .finish_draft(
            &d,
            OpStatus::Finished(PatchStatus::Unknown),
            "{}",
            Some("transport lost"),
            200,
        )
        .unwrap();
    let record = store.get(&d.operation_id).unwrap().unwrap();
    assert_eq!(record.events[1].reason.as_deref(), Some("transport lost"));
}

#[test]
fn a_non_terminal_outcome_and_an_unknown_id_are_refused() {
    let store = store();
    let d = planned(&store, "ws", None, "fp", 1);
    for status in [OpStatus::Pending, OpStatus::Applying] {
        let error = store.finish_draft(&d, status, "{}", None, 200).unwrap_err();
        assert!(matches!(error, StoreError::InvalidInput { .. }), "{error:?}");
        let error = store.recover(&d.operation_id, status, "{}", "x", 200).unwrap_err();
        assert!(matches!(error, StoreError::InvalidInput { .. }), "{error:?}");
    }
    assert_eq!(store.get(&d.operation_id).unwrap().unwrap().status, OpStatus::Applying);
    let error = store
        .recover("op-missing", OpStatus::Finished(PatchStatus::Unknown), "{}", "x", 200)
        .unwrap_err();
    assert!(
        matches!(&error, StoreError::UnknownOperation { operation_id } if operation_id == "op-missing")
    );
    let error = store.note_restored("op-missing", "x", 200).unwrap_err();
    assert!(matches!(error, StoreError::UnknownOperation { .. }), "{error:?}");
}

#[test]
fn a_plan_is_recorded_once_and_refused_when_malformed() {
    let store = store();
    let d = planned(&store, "ws", Some("k"), "fp", 1);
    // The same request planned again is answered from the ledger; the plan stays.
    match store.plan_draft(&d, &plan(2), &[], 111).unwrap() {
        Some(Drafted::Replayed(record)) => assert_eq!(record.plan, plan(1)),
        other => panic!("expected Replayed, got {other:?}"),
    }
    store.finish_draft(&d, OpStatus::Finished(PatchStatus::Checked), "{}", None, 112).unwrap();
    assert!(matches!(
        store.plan_draft(&d, &plan(2), &[], 113).unwrap(),
        Some(Drafted::Replayed(_))
    ));
    assert_eq!(store.get(&d.operation_id).unwrap().unwrap().plan, plan(1));

    let other = draft(&store, "ws", None, "fp");
    // A version that does not parse cannot be built any more; an add whose before_version
    // is not `absent` is the malformed before_version the ledger itself must refuse.
    let malformed = [PlannedFile {
        path: "a".to_owned(),
        kind: ChangeKind::Add,
        before_version: version(2),
        after_version: version(1),
        move_from: None,
        before_mode: None,
    }];
    let error = store.plan_draft(&other, &malformed, &[], 111).unwrap_err();
    assert!(
        matches!(&error, StoreError::InvalidInput { reason } if reason.contains("before_version"))
    );
    assert!(store.get(&other.operation_id).unwrap().is_none(), "nothing was written");
}

#[test]
fn an_empty_plan_is_recorded_as_applying() {
    let store = store();
    let d = draft(&store, "ws", None, "fp");
    assert_eq!(store.plan_draft(&d, &[], &[], 110).unwrap(), None);
    let record = store.get(&d.operation_id).unwrap().unwrap();
    assert_eq!((record.status, record.plan.len()), (OpStatus::Applying, 0));
}

#[test]
fn unfinished_lists_planned_rows_oldest_first() {
    let store = store();
    let mut drafts = Vec::new();
    // created_at out of insertion order, with a tie resolved by insertion order.
    for (n, created) in [(0, 30), (1, 10), (2, 20), (3, 20), (4, 40), (5, 5)] {
        let key = format!("k{n}");
        match store.draft(None, "ws", Some(&key), "fp", created).unwrap() {
            Drafted::Fresh(d) => drafts.push(d),
            other => panic!("{other:?}"),
        }
    }
    for d in &drafts[..5] {
        assert_eq!(store.plan_draft(d, &plan(9), &[], 50).unwrap(), None);
    }
    store
        .finish_draft(&drafts[4], OpStatus::Finished(PatchStatus::Applied), "{}", None, 60)
        .unwrap();
    store
        .finish_draft(&drafts[5], OpStatus::Finished(PatchStatus::Rejected), "{}", None, 60)
        .unwrap();
    let unfinished = store.unfinished().unwrap();
    let listed: Vec<&str> = unfinished.iter().map(|r| r.operation_id.as_str()).collect();
    let id = |n: usize| drafts[n].operation_id.as_str();
    assert_eq!(listed, [id(1), id(2), id(3), id(0)]);
    assert!(unfinished.iter().all(|r| r.status == OpStatus::Applying && r.plan == plan(9)));
}

#[test]
fn recover_closes_an_unfinished_row_with_a_recovered_event() {
    let store = store();
    let d = planned(&store, "ws", Some("k"), "fp", 3);
    let id = d.operation_id.as_str();
    store
        .recover(
            id,
            OpStatus::Finished(PatchStatus::FailedPartial),
            r#"{"status":"failed_partial"}"#,
            "disk mixed",
            500,
        )
        .unwrap();
    let record = store.get(id).unwrap().unwrap();
    assert_eq!(record.status, OpStatus::Finished(PatchStatus::FailedPartial));
    assert_eq!(record.finished_at, Some(500));
    assert_eq!(record.result_json.as_deref(), Some(r#"{"status":"failed_partial"}"#));
    assert_eq!(
        record.events.last().unwrap(),
        &event(500, "recovered", Some("failed_partial"), Some("disk mixed"))
    );
    assert!(store.unfinished().unwrap().is_empty());
    let error = store
        .finish_draft(&d, OpStatus::Finished(PatchStatus::Applied), "{}", None, 600)
        .unwrap_err();
    assert!(matches!(
        error,
        StoreError::AlreadyFinished { status: OpStatus::Finished(PatchStatus::FailedPartial), .. }
    ));
    let error = store.recover(id, OpStatus::Applying, "{}", "x", 600).unwrap_err();
    assert!(matches!(error, StoreError::InvalidInput { .. }), "{error:?}");
}

#[test]
fn empty_identifiers_are_refused() {
    let store = store();
    for (ws, fp) in [("", "fp"), ("ws", "")] {
        let error = store.draft(None, ws, None, fp, 1).unwrap_err();
        assert!(matches!(error, StoreError::InvalidInput { .. }), "{error:?}");
    }
}

#[test]
fn an_in_memory_ledger_is_migrated_and_sound() {
    let store = store();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.integrity_check().unwrap(), "ok");
    assert_eq!(store.path(), None);
    assert_eq!(store.degraded(), None);
}

#[test]
fn errors_say_what_happened() {
    let store = store();
    let d = draft(&store, "ws", None, "fp");
    store.finish_draft(&d, OpStatus::Finished(PatchStatus::Applied), "{}", None, 1).unwrap();
    let error = store
        .finish_draft(&d, OpStatus::Finished(PatchStatus::Applied), "{}", None, 2)
        .unwrap_err();
    let id = &d.operation_id;
    assert_eq!(error.to_string(), format!("operation {id} is already finished as applied"));
    assert!(!error.is_retryable());
    assert!(!error.to_string().contains("not found"));
}

#[test]
fn a_restored_note_keeps_the_status_and_list_is_newest_first() {
    let ledger = TempLedger::new();
    let store = ledger.open();
    let first = draft(&store, "w", None, "fp-1");
    let mut plan = plan(1);
    plan[1].before_mode = Some(0o755);
    assert_eq!(store.plan_draft(&first, &plan, &[], 101).unwrap(), None);
    store
        .finish_draft(
            &first,
            OpStatus::Finished(PatchStatus::FailedPartial),
            "{}",
            Some("why"),
            102,
        )
        .unwrap();
    let first = first.operation_id;
    store.note_restored(&first, "src/lib.rs put back", 103).unwrap();
    let second = match store.draft(None, "w", None, "fp-2", 200).unwrap() {
        Drafted::Fresh(d) => d,
        other => panic!("{other:?}"),
    };
    store
        .finish_draft(&second, OpStatus::Finished(PatchStatus::Rejected), "{}", None, 201)
        .unwrap();
    drop(store);
    // Reopened: the note, the mode and the order survive.
    let store = ledger.open();
    let rec = store.get(&first).unwrap().unwrap();
    assert_eq!(rec.status, OpStatus::Finished(PatchStatus::FailedPartial));
    assert_eq!(rec.plan[1].before_mode, Some(0o755));
    let last = rec.events.last().unwrap();
    assert_eq!(
        (last.name, last.status, last.reason.as_deref()),
        (EventName::Restored, None, Some("src/lib.rs put back"))
    );
    let ids: Vec<String> = store.list(10).unwrap().into_iter().map(|r| r.operation_id).collect();
    assert_eq!(ids, vec![second.operation_id.clone(), first]);
    assert_eq!(store.list(1).unwrap().len(), 1);
    assert!(store.note_restored("op-0000", "x", 1).is_err());
    assert_eq!(store.undo().dir(), ledger.path.with_extension("sqlite3.undo"));
}
