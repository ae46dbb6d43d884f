//! Operations minted in memory: no row until the plan (with the old content, one commit) or
//! the outcome; the old content leaves the ledger with the terminal record; what a result
//! preserves is written out first.

use codespace_store::{Drafted, EventName, OpStatus};
use codespace_types::PatchStatus;

use crate::support::{TempLedger, draft, plan};

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test reads back the undo entry the ledger wrote in a temporary directory"
)]
fn a_draft_reaches_the_ledger_only_with_its_plan_or_its_outcome() {
    let ledger = TempLedger::new();
    let store = ledger.open();
    let d = draft(&store, "ws", Some("k"), "sha256:1");
    assert!(store.get(&d.operation_id).unwrap().is_none(), "a draft writes nothing");
    let old = b"old content".as_slice();
    assert_eq!(store.plan_draft(&d, &plan(1), &[(1, old), (2, b"gone")], 101).unwrap(), None);
    let rec = store.get(&d.operation_id).unwrap().unwrap();
    assert_eq!(rec.status, OpStatus::Applying);
    assert_eq!(rec.plan, plan(1));
    let names: Vec<EventName> = rec.events.iter().map(|e| e.name).collect();
    assert_eq!(names, [EventName::Minted, EventName::Planned]);
    // Durable: another handle reads the old content back.
    assert_eq!(ledger.open().undo_content(&d.operation_id, 1).unwrap().as_deref(), Some(old));
    assert_eq!(store.unfinished().unwrap().len(), 1);

    // The same key, drafted again, is a replay of what is recorded.
    assert!(matches!(
        store.draft(None, "ws", Some("k"), "sha256:1", 1).unwrap(),
        Drafted::Replayed(_)
    ));
    assert!(matches!(
        store.draft(None, "ws", Some("k"), "sha256:2", 1).unwrap(),
        Drafted::KeyConflict(_)
    ));

    // What a result preserves is written out before the terminal record drops the rest.
    store.preserve_undo(&d.operation_id, &[2]).unwrap();
    store
        .finish_draft(&d, OpStatus::Finished(PatchStatus::FailedPartial), "{}", Some("taken"), 102)
        .unwrap();
    assert_eq!(store.undo_content(&d.operation_id, 1).unwrap(), None, "dropped at finish");
    assert_eq!(
        store.undo_content(&d.operation_id, 2).unwrap().as_deref(),
        Some(b"gone".as_slice())
    );
    let path = store.undo().entry_path(&d.operation_id, 2).unwrap();
    assert_eq!(std::fs::read(path).unwrap(), b"gone");
}

#[test]
fn an_outcome_without_a_plan_is_one_finished_row_and_a_race_returns_the_first() {
    let ledger = TempLedger::new();
    let store = ledger.open();
    let d = draft(&store, "ws", None, "sha256:1");
    store
        .finish_draft(&d, OpStatus::Finished(PatchStatus::Checked), r#"{"ok":1}"#, None, 105)
        .unwrap();
    let rec = store.get(&d.operation_id).unwrap().unwrap();
    assert_eq!(
        (rec.status, rec.finished_at, rec.result_json.as_deref()),
        (OpStatus::Finished(PatchStatus::Checked), Some(105), Some(r#"{"ok":1}"#))
    );
    let names: Vec<EventName> = rec.events.iter().map(|e| e.name).collect();
    assert_eq!(names, [EventName::Minted, EventName::Finished]);
    assert!(store.unfinished().unwrap().is_empty());

    // Two drafts of one key: the first plan wins; the second is told so and writes nothing.
    let first = draft(&store, "ws", Some("race"), "sha256:r");
    let second = draft(&store, "ws", Some("race"), "sha256:r");
    assert_eq!(store.plan_draft(&first, &plan(2), &[], 110).unwrap(), None);
    match store.plan_draft(&second, &plan(3), &[], 111).unwrap() {
        Some(Drafted::Replayed(rec)) => assert_eq!(rec.operation_id, first.operation_id),
        other => panic!("{other:?}"),
    }
    assert!(store.get(&second.operation_id).unwrap().is_none());
    // A reserved id is used as given.
    let reserved = "op-00000000-0000-4000-8000-00000000abcd";
    match store.draft(Some(reserved), "ws", None, "sha256:x", 1).unwrap() {
        Drafted::Fresh(d) => assert_eq!(d.operation_id, reserved),
        other => panic!("{other:?}"),
    }
}
