//! A revert's claim on the operation it reverts, and the undo records' retention: an
//! applied operation keeps its old content; a revert's plan claims it in the same
//! transaction (a second claim is refused), a revert that ends without applying releases
//! it, an applied one drops the reverted operation's record; the retention bound drops the
//! oldest finished records first and marks them.

use codespace_store::{OpStatus, Retention, Store, StoreError};
use codespace_types::PatchStatus;

use crate::support::{TempLedger, draft, plan};

const APPLIED: OpStatus = OpStatus::Finished(PatchStatus::Applied);

/// An applied operation whose plan kept `bytes` of old content (plan rows 1 and 2), finished
/// at `at`.
fn applied(store: &Store, n: u64, bytes: usize, at: i64) -> String {
    let d = draft(store, "ws", None, &format!("sha256:{n}"));
    let old = vec![b'o'; bytes / 2];
    assert_eq!(
        store.plan_draft(&d, &plan(n), &[(1, old.as_slice()), (2, old.as_slice())], at).unwrap(),
        None
    );
    store.finish_draft(&d, APPLIED, "{}", None, at).unwrap();
    d.operation_id
}

#[test]
fn a_revert_claims_once_releases_on_failure_and_drops_the_record_once_applied() {
    let ledger = TempLedger::new();
    let store = ledger.open();
    let target = applied(&store, 1, 20, 100);
    assert_eq!(store.get(&target).unwrap().unwrap().undo.bytes, 20, "kept as the undo record");

    let mut first = draft(&store, "ws", None, "sha256:r1");
    first.reverts = Some(target.clone());
    assert_eq!(store.plan_draft(&first, &plan(2), &[], 101).unwrap(), None);
    assert_eq!(store.get(&target).unwrap().unwrap().reverted_by, Some(first.operation_id.clone()));
    // A second revert's plan is refused while the first holds the claim; nothing is written.
    let mut second = draft(&store, "ws", None, "sha256:r2");
    second.reverts = Some(target.clone());
    match store.plan_draft(&second, &plan(3), &[], 102) {
        Err(StoreError::AlreadyReverted { by: Some(by), .. }) => assert_eq!(by, first.operation_id),
        other => panic!("expected AlreadyReverted, got {other:?}"),
    }
    assert!(store.get(&second.operation_id).unwrap().is_none());
    // The first rolls back: the claim is released, the record kept.
    let rolled = OpStatus::Finished(PatchStatus::FailedRolledBack);
    store.finish_draft(&first, rolled, "{}", None, 103).unwrap();
    let rec = store.get(&target).unwrap().unwrap();
    assert_eq!(rec.reverted_by, None);
    assert_eq!(rec.undo.bytes, 20);
    // A third applies: it holds the claim, and the reverted operation's record is dropped.
    let mut third = draft(&store, "ws", None, "sha256:r3");
    third.reverts = Some(target.clone());
    assert_eq!(store.plan_draft(&third, &plan(4), &[(1, b"after".as_slice())], 104).unwrap(), None);
    store.finish_draft(&third, APPLIED, "{}", None, 105).unwrap();
    let rec = store.get(&target).unwrap().unwrap();
    assert_eq!(rec.reverted_by, Some(third.operation_id.clone()));
    assert_eq!(rec.undo.bytes, 0);
    let revert = store.get(&third.operation_id).unwrap().unwrap();
    assert_eq!(revert.reverts, Some(target));
    assert_eq!(revert.undo.bytes, 5, "the revert keeps its own record");
}

#[test]
fn retention_drops_the_oldest_records_first_and_marks_them() {
    let ledger = TempLedger::new();
    let mut store = ledger.open();
    store.set_retention(Retention { max_age_secs: 1000, max_bytes: 250 });
    let ops: Vec<String> = (0..5).map(|n| applied(&store, n, 100, 1000 + n as i64)).collect();
    // Unfinished content is never dropped.
    let open = draft(&store, "ws", None, "sha256:open");
    assert_eq!(
        store.plan_draft(&open, &plan(9), &[(1, [b'u'; 400].as_slice())], 1010).unwrap(),
        None
    );
    let pruned = store.prune_undo(1010).unwrap();
    let names: Vec<&str> = pruned.iter().map(|(op, _)| op.as_str()).collect();
    assert_eq!(names, [ops[0].as_str(), ops[1].as_str(), ops[2].as_str()]);
    for (i, op) in ops.iter().enumerate() {
        let rec = store.get(op).unwrap().unwrap();
        if i < 3 {
            assert_eq!(rec.undo.pruned_at, Some(1010), "{i}");
            assert_eq!(rec.undo.bytes, 0, "{i}");
        } else {
            assert_eq!(rec.undo.pruned_at, None, "{i}");
            assert_eq!(rec.undo.bytes, 100, "{i}");
        }
    }
    assert_eq!(store.undo_content(&open.operation_id, 1).unwrap().map(|b| b.len()), Some(400));
    // Age: once the rest is older than the bound, it goes too.
    let pruned = store.prune_undo(1004 + 1001).unwrap();
    assert_eq!(pruned.len(), 2);
    assert_eq!(store.get(&ops[4]).unwrap().unwrap().undo.pruned_at, Some(2005));
}
