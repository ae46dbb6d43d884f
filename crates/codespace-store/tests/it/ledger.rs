//! The ledger lifecycle on an in-memory store: begin, replay and key conflicts (C1, C2),
//! workspace-scoped keys, plans, finishing exactly once, recovery, and refusals.

use codespace_store::{
    Begin, ChangeKind, Event, EventName, OpStatus, PlannedFile, SCHEMA_VERSION, Store, StoreError,
};

use crate::support::{TempLedger, fresh, plan, version};

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
fn a_fresh_begin_mints_a_pending_row_with_a_minted_event() {
    let store = store();
    let id = fresh(&store, "ws", Some("k1"), "fp1");
    let hex = id.strip_prefix("op-").expect("op- prefix");
    let parsed = uuid::Uuid::parse_str(hex).expect("a uuid after op-");
    assert_eq!(parsed.get_version_num(), 4);
    assert_eq!(hex, parsed.hyphenated().to_string());

    let record = store.get(&id).unwrap().expect("stored");
    assert_eq!(record.operation_id, id);
    assert_eq!(record.operation_key.as_deref(), Some("k1"));
    assert_eq!(record.workspace_id, "ws");
    assert_eq!(record.fingerprint, "fp1");
    assert_eq!(record.status, OpStatus::Pending);
    assert_eq!(record.result_json, None);
    assert!(record.plan.is_empty());
    assert_eq!(record.created_at, 100);
    assert_eq!(record.finished_at, None);
    assert_eq!(record.events, [event(100, "minted", None, None)]);
}

#[test]
fn the_same_key_and_fingerprint_replays_the_stored_record() {
    let store = store();
    let id = fresh(&store, "ws", Some("k"), "fp");
    // Replaying an unfinished operation returns it as it stands (the gateway reads it as
    // unknown) and mints nothing.
    match store.begin("ws", Some("k"), "fp", 200).unwrap() {
        Begin::Replayed(record) => {
            assert_eq!(record.operation_id, id);
            assert_eq!(record.status, OpStatus::Pending);
        }
        other => panic!("expected Replayed, got {other:?}"),
    }
    store.finish(&id, OpStatus::Applied, r#"{"status":"applied"}"#, None, 300).unwrap();
    match store.begin("ws", Some("k"), "fp", 400).unwrap() {
        Begin::Replayed(record) => {
            assert_eq!(record.operation_id, id);
            assert_eq!(record.status, OpStatus::Applied);
            assert_eq!(record.result_json.as_deref(), Some(r#"{"status":"applied"}"#));
            assert_eq!(record.finished_at, Some(300));
            assert_eq!(record.events.len(), 2, "a replay appends no event");
        }
        other => panic!("expected Replayed, got {other:?}"),
    }
}

#[test]
fn the_same_key_with_another_fingerprint_is_a_conflict_and_changes_nothing() {
    let store = store();
    let id = fresh(&store, "ws", Some("k"), "fp");
    store.finish(&id, OpStatus::Rejected, r#"{"r":1}"#, Some("VERSION_CONFLICT"), 300).unwrap();
    let before = store.get(&id).unwrap().unwrap();
    match store.begin("ws", Some("k"), "fp-other", 400).unwrap() {
        Begin::KeyConflict(record) => assert_eq!(record, before),
        other => panic!("expected KeyConflict, got {other:?}"),
    }
    assert_eq!(store.get(&id).unwrap().unwrap(), before);
}

#[test]
fn keys_are_scoped_to_a_workspace() {
    let store = store();
    let a = fresh(&store, "alpha", Some("shared-key"), "fp");
    let b = fresh(&store, "beta", Some("shared-key"), "fp");
    assert_ne!(a, b);
    assert_eq!(store.get_by_key("alpha", "shared-key").unwrap().unwrap().operation_id, a);
    assert_eq!(store.get_by_key("beta", "shared-key").unwrap().unwrap().operation_id, b);
    assert!(store.get_by_key("gamma", "shared-key").unwrap().is_none());
    // A different fingerprint in another workspace is no conflict either.
    let c = fresh(&store, "gamma", Some("shared-key"), "another-fp");
    assert_ne!(c, a);
}

#[test]
fn without_a_key_every_begin_is_fresh() {
    let store = store();
    let ids: Vec<String> = (0..5).map(|_| fresh(&store, "ws", None, "same-fp")).collect();
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
    fresh(&store, "ws", Some("k"), "fp");
    assert!(store.get("op-00000000-0000-4000-8000-000000000000").unwrap().is_none());
    assert!(store.get("").unwrap().is_none());
    assert!(store.get_by_key("ws", "other").unwrap().is_none());
    assert!(store.get_by_key("other-ws", "k").unwrap().is_none());
}

#[test]
fn finish_records_the_result_once_and_refuses_a_second_finish() {
    let store = store();
    let id = fresh(&store, "ws", None, "fp");
    store.finish(&id, OpStatus::Checked, r#"{"status":"checked"}"#, None, 150).unwrap();
    let error =
        store.finish(&id, OpStatus::Applied, r#"{"status":"applied"}"#, None, 160).unwrap_err();
    assert!(
        matches!(&error, StoreError::AlreadyFinished { operation_id, status: OpStatus::Checked }
            if *operation_id == id),
        "{error:?}"
    );
    let error = store.recover(&id, OpStatus::Unknown, "{}", "crash", 170).unwrap_err();
    assert!(matches!(error, StoreError::AlreadyFinished { .. }), "{error:?}");
    let record = store.get(&id).unwrap().unwrap();
    assert_eq!(record.status, OpStatus::Checked);
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
        let id = fresh(&store, "ws", None, "fp");
        store.finish(&id, status, "{}", None, 200).unwrap();
        let record = store.get(&id).unwrap().unwrap();
        assert_eq!(record.status, status);
        let last = record.events.last().unwrap();
        assert_eq!(last.name, EventName::Finished);
        assert_eq!(last.status, Some(status));
        let expected_reason = (status == OpStatus::Unknown).then_some("unknown");
        assert_eq!(last.reason.as_deref(), expected_reason, "{status}");
    }
    let id = fresh(&store, "ws", None, "fp");
    store.finish(&id, OpStatus::Unknown, "{}", Some("transport lost"), 200).unwrap();
    let record = store.get(&id).unwrap().unwrap();
    assert_eq!(record.events[1].reason.as_deref(), Some("transport lost"));
}

#[test]
fn finish_refuses_a_non_terminal_status_and_an_unknown_id() {
    let store = store();
    let id = fresh(&store, "ws", None, "fp");
    for status in [OpStatus::Pending, OpStatus::Applying] {
        let error = store.finish(&id, status, "{}", None, 200).unwrap_err();
        assert!(matches!(error, StoreError::InvalidInput { .. }), "{error:?}");
    }
    assert_eq!(store.get(&id).unwrap().unwrap().status, OpStatus::Pending);
    let error = store.finish("op-missing", OpStatus::Applied, "{}", None, 200).unwrap_err();
    assert!(
        matches!(&error, StoreError::UnknownOperation { operation_id } if operation_id == "op-missing")
    );
    let error = store.record_plan("op-missing", &plan(1), 200).unwrap_err();
    assert!(matches!(error, StoreError::UnknownOperation { .. }), "{error:?}");
    let error = store.recover("op-missing", OpStatus::Unknown, "{}", "x", 200).unwrap_err();
    assert!(matches!(error, StoreError::UnknownOperation { .. }), "{error:?}");
}

#[test]
fn record_plan_round_trips_in_order_and_moves_to_applying() {
    let store = store();
    let id = fresh(&store, "ws", Some("k"), "fp");
    let planned = plan(7);
    store.record_plan(&id, &planned, 120).unwrap();
    let record = store.get(&id).unwrap().unwrap();
    assert_eq!(record.status, OpStatus::Applying);
    assert_eq!(record.plan, planned);
    assert_eq!(record.finished_at, None);
    assert_eq!(
        record.events,
        [event(100, "minted", None, None), event(120, "planned", None, None)]
    );
    assert_eq!(store.get_by_key("ws", "k").unwrap().unwrap(), record);

    store.finish(&id, OpStatus::Applied, "{}", None, 130).unwrap();
    let record = store.get(&id).unwrap().unwrap();
    assert_eq!(record.plan, planned, "the plan is kept after finishing");
    assert_eq!(
        record.events.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
        ["minted", "planned", "finished"]
    );
}

#[test]
fn record_plan_is_refused_twice_after_finishing_and_when_malformed() {
    let store = store();
    let id = fresh(&store, "ws", None, "fp");
    store.record_plan(&id, &plan(1), 110).unwrap();
    let error = store.record_plan(&id, &plan(2), 111).unwrap_err();
    assert!(matches!(error, StoreError::PlanAlreadyRecorded { .. }), "{error:?}");
    assert_eq!(store.get(&id).unwrap().unwrap().plan, plan(1));

    let done = fresh(&store, "ws", None, "fp");
    store.finish(&done, OpStatus::Checked, "{}", None, 110).unwrap();
    let error = store.record_plan(&done, &plan(1), 111).unwrap_err();
    assert!(matches!(error, StoreError::AlreadyFinished { .. }), "{error:?}");

    let other = fresh(&store, "ws", None, "fp");
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
    let error = store.record_plan(&other, &malformed, 111).unwrap_err();
    assert!(
        matches!(&error, StoreError::InvalidInput { reason } if reason.contains("before_version"))
    );
    let record = store.get(&other).unwrap().unwrap();
    assert_eq!((record.status, record.plan.len()), (OpStatus::Pending, 0));
}

#[test]
fn an_empty_plan_is_recorded_as_applying() {
    let store = store();
    let id = fresh(&store, "ws", None, "fp");
    store.record_plan(&id, &[], 110).unwrap();
    let record = store.get(&id).unwrap().unwrap();
    assert_eq!((record.status, record.plan.len()), (OpStatus::Applying, 0));
}

#[test]
fn unfinished_lists_pending_and_applying_oldest_first() {
    let store = store();
    let mut ids = Vec::new();
    // created_at out of insertion order, with a tie resolved by insertion order.
    for (n, created) in [(0, 30), (1, 10), (2, 20), (3, 20), (4, 40), (5, 5)] {
        let id = match store.begin("ws", Some(&format!("k{n}")), "fp", created).unwrap() {
            Begin::Fresh { operation_id } => operation_id,
            other => panic!("{other:?}"),
        };
        ids.push(id);
    }
    store.record_plan(&ids[2], &plan(2), 50).unwrap();
    store.record_plan(&ids[4], &plan(4), 50).unwrap();
    store.finish(&ids[4], OpStatus::Applied, "{}", None, 60).unwrap();
    store.finish(&ids[5], OpStatus::Rejected, "{}", None, 60).unwrap();
    let unfinished = store.unfinished().unwrap();
    let listed: Vec<(&str, OpStatus)> =
        unfinished.iter().map(|r| (r.operation_id.as_str(), r.status)).collect();
    assert_eq!(
        listed,
        [
            (ids[1].as_str(), OpStatus::Pending),
            (ids[2].as_str(), OpStatus::Applying),
            (ids[3].as_str(), OpStatus::Pending),
            (ids[0].as_str(), OpStatus::Pending),
        ]
    );
    assert_eq!(unfinished[1].plan, plan(2));
}

#[test]
fn recover_closes_an_unfinished_row_with_a_recovered_event() {
    let store = store();
    let id = fresh(&store, "ws", Some("k"), "fp");
    store.record_plan(&id, &plan(3), 110).unwrap();
    store
        .recover(&id, OpStatus::FailedPartial, r#"{"status":"failed_partial"}"#, "disk mixed", 500)
        .unwrap();
    let record = store.get(&id).unwrap().unwrap();
    assert_eq!(record.status, OpStatus::FailedPartial);
    assert_eq!(record.finished_at, Some(500));
    assert_eq!(record.result_json.as_deref(), Some(r#"{"status":"failed_partial"}"#));
    assert_eq!(
        record.events.last().unwrap(),
        &event(500, "recovered", Some("failed_partial"), Some("disk mixed"))
    );
    assert!(store.unfinished().unwrap().is_empty());
    let error = store.finish(&id, OpStatus::Applied, "{}", None, 600).unwrap_err();
    assert!(matches!(error, StoreError::AlreadyFinished { status: OpStatus::FailedPartial, .. }));
    let error = store.recover(&id, OpStatus::Applying, "{}", "x", 600).unwrap_err();
    assert!(matches!(error, StoreError::InvalidInput { .. }), "{error:?}");
}

#[test]
fn empty_identifiers_are_refused() {
    let store = store();
    for (ws, key, fp) in [("", None, "fp"), ("ws", Some(""), "fp"), ("ws", None, "")] {
        let error = store.begin(ws, key, fp, 1).unwrap_err();
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
    let id = fresh(&store, "ws", None, "fp");
    store.finish(&id, OpStatus::Applied, "{}", None, 1).unwrap();
    let error = store.finish(&id, OpStatus::Applied, "{}", None, 2).unwrap_err();
    assert_eq!(error.to_string(), format!("operation {id} is already finished as applied"));
    assert!(!error.is_retryable());
    assert!(!error.to_string().contains("not found"));
}

#[test]
fn a_restored_note_keeps_the_status_and_list_is_newest_first() {
    let ledger = TempLedger::new();
    let store = ledger.open();
    let first = fresh(&store, "w", None, "fp-1");
    let mut plan = plan(1);
    plan[1].before_mode = Some(0o755);
    store.record_plan(&first, &plan, 101).unwrap();
    store.finish(&first, OpStatus::FailedPartial, "{}", Some("why"), 102).unwrap();
    store.note_restored(&first, "src/lib.rs put back", 103).unwrap();
    let second = match store.begin("w", None, "fp-2", 200).unwrap() {
        Begin::Fresh { operation_id } => operation_id,
        other => panic!("{other:?}"),
    };
    drop(store);
    // Reopened: the note, the mode and the order survive.
    let store = ledger.open();
    let rec = store.get(&first).unwrap().unwrap();
    assert_eq!(rec.status, OpStatus::FailedPartial);
    assert_eq!(rec.plan[1].before_mode, Some(0o755));
    let last = rec.events.last().unwrap();
    assert_eq!(
        (last.name, last.status, last.reason.as_deref()),
        (EventName::Restored, None, Some("src/lib.rs put back"))
    );
    let ids: Vec<String> = store.list(10).unwrap().into_iter().map(|r| r.operation_id).collect();
    assert_eq!(ids, vec![second.clone(), first]);
    assert_eq!(store.list(1).unwrap().len(), 1);
    assert!(store.note_restored("op-0000", "x", 1).is_err());
    assert_eq!(store.undo().dir(), ledger.path.with_extension("sqlite3.undo"));
}
