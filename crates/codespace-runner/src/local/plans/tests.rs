//! Unit tests of the held plans: taken once, only by their workspace, the oldest dropped
//! beyond the cap.

use codespace_files::PlannedWrite;
use codespace_fs::WorkspacePath;
use codespace_types::ChangeKind;

use super::{MAX_HELD_PLANS, Plans};
use crate::RunnerError;
use crate::ops::PlanId;

fn plan(after: &str) -> Vec<PlannedWrite> {
    vec![PlannedWrite {
        path: WorkspacePath::parse("a.txt").unwrap(),
        kind: ChangeKind::Add,
        move_from: None,
        before: None,
        after: Some(after.as_bytes().to_vec()),
        mode: None,
    }]
}

fn refusal(got: Result<Vec<PlannedWrite>, RunnerError>) -> String {
    match got {
        Err(RunnerError::Task { reason }) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_plan_is_taken_once_by_its_own_workspace() {
    let plans = Plans::default();
    let id = plans.hold("w", plan("one"));
    let other = plans.hold("w", plan("two"));
    assert_ne!(id, other);
    let wrong = refusal(plans.take("v", id));
    assert!(wrong.contains("nothing was written"), "{wrong}");
    let taken = plans.take("w", id).unwrap();
    assert_eq!(taken[0].after.as_deref(), Some(&b"one"[..]));
    let again = refusal(plans.take("w", id));
    assert!(again.contains("not held"), "{again}");
    assert!(plans.take("w", other).is_ok());
    assert!(refusal(plans.take("w", PlanId(9999))).contains("not held"));
}

#[test]
fn beyond_the_cap_the_oldest_plan_is_dropped() {
    let plans = Plans::default();
    let first = plans.hold("w", plan("first"));
    let second = plans.hold("w", plan("second"));
    for _ in 0..MAX_HELD_PLANS - 1 {
        plans.hold("w", plan("more"));
    }
    assert!(refusal(plans.take("w", first)).contains("not held"));
    assert!(plans.take("w", second).is_ok());
}
