//! Ownership across handles on one ledger file: each handle a running instance with its
//! lock, a live instance's operations and holds refused to every other handle, a dead
//! one's taken over by exactly one, rows from before owners recoverable, and the key of an
//! unplanned draft checked again inside its transaction.

use codespace_store::{
    Cas, Decision, Drafted, HeldTool, KEPT_ENDED_INSTANCES, NewHold, OpStatus, Store, StoreError,
};
use codespace_types::PatchStatus;

use crate::support::{TempLedger, draft, planned};

const APPLIED: OpStatus = OpStatus::Finished(PatchStatus::Applied);

fn instance(ledger: &TempLedger) -> Store {
    let store = ledger.open();
    store.start_instance(std::process::id(), 1).unwrap();
    store
}

#[test]
fn a_live_instances_operation_is_refused_and_a_dead_ones_taken_over_once() {
    let ledger = TempLedger::new();
    let one = instance(&ledger);
    let two = instance(&ledger);
    let three = instance(&ledger);
    let a = one.instance_id().unwrap().to_owned();
    assert_ne!(Some(a.as_str()), two.instance_id());
    assert!(two.owner_alive(Some(&a)), "another handle's lock is held");
    assert!(!two.owner_alive(None), "no owner is nobody alive");
    let d = planned(&one, "ws", Some("k"), "fp", 1);
    let rec = two.get(&d.operation_id).unwrap().unwrap();
    assert_eq!(rec.owner.as_deref(), Some(a.as_str()));
    // Another instance may neither close nor recover it.
    let refused = two.finish_draft(&d, APPLIED, "{}", None, 2).unwrap_err();
    assert!(
        matches!(&refused, StoreError::NotOwner { owner: Some(o), .. } if *o == a),
        "{refused:?}"
    );
    let refused = two.recover(&d.operation_id, APPLIED, "{}", "why", 2).unwrap_err();
    assert!(matches!(refused, StoreError::NotOwner { .. }), "{refused:?}");
    assert_eq!(two.get(&d.operation_id).unwrap().unwrap().status, OpStatus::Applying);

    drop(one);
    assert!(!two.owner_alive(Some(&a)), "the dropped handle's lock is gone");
    let listed = two.instances().unwrap();
    assert_eq!(listed.len(), 3);
    assert_eq!(listed.iter().filter(|i| i.alive).count(), 2, "{listed:?}");
    // Two noticed; exactly one wins the take-over and settles it.
    let won = [
        two.take_over_operation(&d.operation_id, Some(&a)).unwrap(),
        three.take_over_operation(&d.operation_id, Some(&a)).unwrap(),
    ];
    assert_eq!(won, [true, false]);
    three.recover(&d.operation_id, APPLIED, "{}", "why", 3).unwrap_err();
    two.recover(&d.operation_id, APPLIED, "{}", "why", 3).unwrap();
    assert!(!two.take_over_operation(&d.operation_id, two.instance_id()).unwrap(), "finished");
    assert_eq!(two.end_dead_instances(4).unwrap(), vec![a.clone()]);
    assert!(two.end_dead_instances(5).unwrap().is_empty());
    let ended = two.instances().unwrap();
    assert_eq!(ended.iter().find(|i| i.instance_id == a).unwrap().ended_at, Some(4));
}

#[test]
fn only_the_newest_ended_instances_are_kept() {
    let ledger = TempLedger::new();
    let extra = 5;
    for _ in 0..KEPT_ENDED_INSTANCES + extra {
        drop(instance(&ledger));
    }
    let now = instance(&ledger);
    let ended = now.end_dead_instances(7).unwrap();
    assert_eq!(ended.len() as i64, KEPT_ENDED_INSTANCES + extra, "each dead one is ended");
    let listed = now.instances().unwrap();
    assert_eq!(listed.len() as i64, KEPT_ENDED_INSTANCES + 1, "{listed:?}");
    assert_eq!(listed.iter().filter(|i| i.alive).count(), 1);
    assert!(listed.iter().any(|i| Some(i.instance_id.as_str()) == now.instance_id()));
}

#[test]
fn a_reserved_id_another_instance_recorded_is_never_written_over() {
    let ledger = TempLedger::new();
    let one = instance(&ledger);
    let two = instance(&ledger);
    let d = planned(&one, "ws", None, "fp", 1);
    // The same id drafted by another instance (a hold's reserved id, say).
    let Drafted::Fresh(copy) = two.draft(Some(&d.operation_id), "ws", None, "fp", 2).unwrap()
    else {
        panic!("fresh expected");
    };
    let refused = two.plan_draft(&copy, &crate::support::plan(1), &[], 3).unwrap_err();
    assert!(matches!(refused, StoreError::NotOwner { .. }), "{refused:?}");
    let rejected = OpStatus::Finished(PatchStatus::Rejected);
    let refused = two.finish_draft(&copy, rejected, "{}", None, 3).unwrap_err();
    assert!(matches!(refused, StoreError::NotOwner { .. }), "{refused:?}");
    assert_eq!(one.get(&d.operation_id).unwrap().unwrap().status, OpStatus::Applying);
    assert_eq!(one.finish_draft(&d, APPLIED, "{}", None, 4).unwrap(), None);
}

#[test]
fn an_unplanned_draft_meets_its_key_recorded_first_inside_the_transaction() {
    let ledger = TempLedger::new();
    let one = instance(&ledger);
    let two = instance(&ledger);
    let first = draft(&one, "ws", Some("k"), "fp");
    let second = draft(&two, "ws", Some("k"), "fp");
    let rejected = OpStatus::Finished(PatchStatus::Rejected);
    assert_eq!(one.finish_draft(&first, rejected, "{}", None, 2).unwrap(), None);
    match two.finish_draft(&second, rejected, "{}", None, 3).unwrap() {
        Some(Drafted::Replayed(rec)) => assert_eq!(rec.operation_id, first.operation_id),
        other => panic!("{other:?}"),
    }
    assert!(two.get(&second.operation_id).unwrap().is_none(), "nothing written");
}

#[test]
fn a_hold_is_claimed_by_one_instance_and_taken_over_only_from_a_dead_one() {
    let ledger = TempLedger::new();
    let one = instance(&ledger);
    let two = instance(&ledger);
    let new = NewHold {
        approval_id: None,
        workspace_id: "ws",
        tool: HeldTool::ExecCommand,
        fingerprint: "sha256:h",
        summary: "run true",
        params_json: "{}",
        seal: "hmac-sha256:00",
        root_identity: "1:2",
    };
    let (hold, _) = one.create_hold(&new, 1).unwrap();
    let id = hold.approval_id.as_str();
    assert!(matches!(two.resolve_hold(id, Decision::Grant, 2).unwrap(), Cas::Moved(_)));
    let Cas::Moved(queued) = one.queue_hold(id).unwrap() else { panic!("one claims it") };
    let a = one.instance_id().unwrap().to_owned();
    assert_eq!(queued.owner.as_deref(), Some(a.as_str()));
    assert!(matches!(two.queue_hold(id).unwrap(), Cas::Stale(_)));
    // Every later step is the owner's alone.
    assert!(matches!(two.start_resume(id, false).unwrap(), Cas::Stale(_)));
    assert!(matches!(two.consume_hold(id, "{}").unwrap(), Cas::Stale(_)));
    assert!(matches!(two.release_hold(id).unwrap(), Cas::Stale(_)));
    assert!(matches!(one.start_resume(id, false).unwrap(), Cas::Moved(_)));
    drop(one);
    let Cas::Moved(taken) = two.take_over_hold(id, Some(&a)).unwrap() else { panic!("taken") };
    assert_eq!(taken.owner.as_deref(), two.instance_id());
    assert!(matches!(two.take_over_hold(id, Some(&a)).unwrap(), Cas::Stale(_)), "once");
    assert!(matches!(two.consume_hold(id, "{}").unwrap(), Cas::Moved(_)));
}

#[test]
fn rows_from_before_owners_are_owned_by_nobody_alive() {
    let ledger = TempLedger::new();
    let old = ledger.open();
    let d = planned(&old, "ws", None, "fp", 1);
    drop(old);
    let store = instance(&ledger);
    let rec = store.get(&d.operation_id).unwrap().unwrap();
    assert_eq!(rec.owner, None);
    assert!(!store.owner_alive(rec.owner.as_deref()));
    assert!(store.take_over_operation(&d.operation_id, None).unwrap());
    store.recover(&d.operation_id, APPLIED, "{}", "why", 2).unwrap();
}
