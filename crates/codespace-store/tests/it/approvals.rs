//! Confirmation holds in the ledger: one active hold per request, compare-and-swap state
//! changes, scrubbing, durability across handles, and a race of creators.

use std::sync::Arc;

use codespace_store::{ApprovalState, Cas, Decision, HeldTool, HoldFilter, NewHold};

use crate::support::TempLedger;

fn new<'a>(fp: &'a str) -> NewHold<'a> {
    NewHold {
        approval_id: None,
        workspace_id: "ws",
        tool: HeldTool::ApplyPatch,
        fingerprint: fp,
        summary: "update a.txt (+1 -1)",
        params_json: r#"{"workspace_id":"ws","patch":"..."}"#,
        seal: "hmac-sha256:00",
        root_identity: "1:2",
    }
}

fn moved(cas: Cas) -> codespace_store::HoldRecord {
    match cas {
        Cas::Moved(r) => r,
        other => panic!("expected a move, got {other:?}"),
    }
}

#[test]
fn a_hold_lives_through_its_states_and_is_reused_while_active() {
    let ledger = TempLedger::new();
    let store = ledger.open();
    let (hold, created) = store.create_hold(&new("sha256:a"), 10).unwrap();
    assert!(created);
    assert!(hold.approval_id.starts_with("appr-"), "{}", hold.approval_id);
    assert_eq!(hold.state, ApprovalState::Pending);
    let (again, created) = store.create_hold(&new("sha256:a"), 11).unwrap();
    assert!(!created);
    assert_eq!(again.approval_id, hold.approval_id);

    let id = hold.approval_id.as_str();
    // Only from pending; a second resolve is stale and changes nothing.
    let granted = moved(store.resolve_hold(id, Decision::Grant, 12).unwrap());
    assert_eq!((granted.state, granted.resolved_at), (ApprovalState::Granted, Some(12)));
    match store.resolve_hold(id, Decision::Deny, 13).unwrap() {
        Cas::Stale(r) => assert_eq!(r.state, ApprovalState::Granted),
        other => panic!("{other:?}"),
    }
    assert!(matches!(store.start_resume(id, true).unwrap(), Cas::Stale(_)), "not queued yet");
    moved(store.queue_hold(id).unwrap());
    let resuming = moved(store.start_resume(id, true).unwrap());
    let reserved = resuming.operation_id.clone().unwrap();
    assert!(reserved.starts_with("op-"));
    // Requeued and restarted, the reserved id is kept.
    moved(store.requeue_hold(id).unwrap());
    let again = moved(store.start_resume(id, true).unwrap());
    assert_eq!(again.operation_id.as_deref(), Some(reserved.as_str()));
    // Still active: the same request reuses it.
    assert_eq!(store.create_hold(&new("sha256:a"), 14).unwrap().0.approval_id, id);
    assert!(matches!(store.restate_consumed(id, "{}").unwrap(), Cas::Stale(_)), "not consumed");
    let consumed = moved(store.consume_hold(id, r#"{"outcome":"success"}"#).unwrap());
    assert_eq!(consumed.state, ApprovalState::Consumed);
    assert_eq!(consumed.params_json, None, "consumed scrubs the arguments");
    assert!(matches!(store.consume_hold(id, "{}").unwrap(), Cas::Stale(_)));
    // Only the stored outcome of a consumed hold may be restated.
    let restated = moved(store.restate_consumed(id, r#"{"outcome":"failed"}"#).unwrap());
    assert_eq!(restated.state, ApprovalState::Consumed);
    assert_eq!(restated.result_json.as_deref(), Some(r#"{"outcome":"failed"}"#));
    // Terminal: the same request now gets a new hold.
    let (fresh, created) = store.create_hold(&new("sha256:a"), 15).unwrap();
    assert!(created);
    assert_ne!(fresh.approval_id, id);
    assert_eq!(store.resolve_hold("appr-nope", Decision::Grant, 1).unwrap(), Cas::Missing);
}

#[test]
fn deny_is_terminal_scrubs_and_survives_a_reopen() {
    let ledger = TempLedger::new();
    let id = {
        let store = ledger.open();
        let (hold, _) = store.create_hold(&new("sha256:b"), 10).unwrap();
        let denied = moved(store.resolve_hold(&hold.approval_id, Decision::Deny, 11).unwrap());
        assert_eq!((denied.state, denied.params_json), (ApprovalState::Denied, None));
        let (pending, _) = store.create_hold(&new("sha256:c"), 12).unwrap();
        assert!(pending.params_json.is_some());
        hold.approval_id
    };
    let store = ledger.open();
    let hold = store.hold(&id).unwrap().unwrap();
    assert_eq!(hold.state, ApprovalState::Denied);
    assert!(matches!(store.queue_hold(&id).unwrap(), Cas::Stale(_)));
    let pending = store
        .holds(
            &HoldFilter { workspace_id: Some("ws".into()), state: Some(ApprovalState::Pending) },
            10,
        )
        .unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].fingerprint, "sha256:c");
    assert_eq!(store.holds(&HoldFilter::default(), 10).unwrap().len(), 2);
    let other_ws = HoldFilter { workspace_id: Some("other".into()), state: None };
    assert!(store.holds(&other_ws, 10).unwrap().is_empty());
}

/// Eight handles on one file create the same request at once: one hold, one id.
#[test]
fn racing_creators_share_one_hold() {
    let ledger = Arc::new(TempLedger::new());
    drop(ledger.open());
    let ids: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let ledger = ledger.clone();
                s.spawn(move || ledger.open().create_hold(&new("sha256:race"), 1).unwrap())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap().0.approval_id).collect()
    });
    assert!(ids.iter().all(|id| id == &ids[0]), "{ids:?}");
    assert_eq!(ledger.open().holds(&HoldFilter::default(), 100).unwrap().len(), 1);
}
