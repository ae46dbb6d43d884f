//! Unit tests of works over an in-memory ledger: the claim cycle, every `work_finish`
//! rule, revision conflicts, instructions carried to the next work, and the hint.
#![expect(clippy::disallowed_methods, reason = "tests build their fixtures on the host filesystem")]

use std::sync::Arc;

use codespace_policy::Registry;
use codespace_process::{Supervisor, SupervisorConfig};
use codespace_protocol::{
    CompleteOutcome, Delivery, EditIntent, ErrorCode, FinishReason, IntentKind, IntentState,
    NewIntent, QueueIntent, ReorderIntents, SteerCompleteParams, UserIntent, WorkIdParams,
    WorkOpenParams, WorkState,
};
use codespace_store::Store;

use crate::{Gateway, GatewayError, Workspaces};

fn gateway(dir: &std::path::Path) -> Gateway {
    gateway_on(dir, Arc::new(Store::open_in_memory().unwrap()))
}

fn gateway_on(dir: &std::path::Path, store: Arc<Store>) -> Gateway {
    for id in ["a", "b"] {
        std::fs::create_dir_all(dir.join(id)).unwrap();
    }
    let registry = Registry::parse(
        &serde_json::json!({"workspaces": {
            "a": {"root": dir.join("a")},
            "b": {"root": dir.join("b")},
        }})
        .to_string(),
    )
    .unwrap();
    let workspaces = Workspaces::open(&registry).unwrap();
    let supervisor =
        Supervisor::new(SupervisorConfig::new(std::path::PathBuf::from("/nonexistent/reaper")));
    let runner = workspaces
        .local_runner(|roots| codespace_runner::LocalRunner::open(roots, supervisor, true))
        .unwrap();
    Gateway::for_tests(workspaces, runner, store, vec![])
}

async fn open(gw: &Gateway, ws: &str) -> String {
    let params = WorkOpenParams { workspace_id: ws.to_owned(), title: None };
    gw.work_open(params).await.unwrap().work_id
}

fn id(work_id: &str) -> WorkIdParams {
    WorkIdParams { work_id: work_id.to_owned() }
}

/// Writes and queues an instruction for `work_id`.
async fn say(gw: &Gateway, work_id: &str, body: &str, delivery: Delivery) -> UserIntent {
    let new = NewIntent { body: body.to_owned(), kind: None, delivery: Some(delivery) };
    let draft = gw.inbox_create(work_id, new).await.unwrap();
    assert_eq!(draft.state, IntentState::Draft);
    let queued = QueueIntent { revision: draft.revision };
    gw.inbox_queue(&draft.intent_id, queued).await.unwrap()
}

fn code(e: GatewayError) -> ErrorCode {
    e.code()
}

#[tokio::test]
async fn draft_queue_claim_complete_finish() {
    let dir = tempfile::tempdir().unwrap();
    let gw = gateway(dir.path());
    let work = open(&gw, "a").await;
    let new = NewIntent { body: "also update the docs".to_owned(), kind: None, delivery: None };
    let draft = gw.inbox_create(&work, new).await.unwrap();
    assert_eq!((draft.kind, draft.delivery), (IntentKind::FollowUp, Delivery::AfterCurrentWork));
    // A draft is invisible to the agent.
    assert!(gw.steer_claim_next(id(&work)).await.unwrap().item.is_none());
    let status = gw.steer_status(id(&work)).await.unwrap();
    assert_eq!((status.queued, status.claimable_now), (0, 0));
    let queued = gw.inbox_queue(&draft.intent_id, QueueIntent { revision: 1 }).await.unwrap();
    assert_eq!((queued.state, queued.revision), (IntentState::Queued, 2));
    // after_current_work is not claimable while the work is active.
    assert!(gw.steer_claim_next(id(&work)).await.unwrap().item.is_none());
    let finish = gw.work_finish(id(&work)).await.unwrap();
    assert!(!finish.closed);
    assert_eq!(finish.reason, Some(FinishReason::PendingUserInput));
    assert_eq!(finish.state, WorkState::Closing);
    let item = gw.steer_claim_next(id(&work)).await.unwrap().item.unwrap();
    assert_eq!(item.content, "also update the docs");
    assert_eq!(item.revision, 3);
    // Claimed content is frozen.
    let edit = EditIntent { revision: 3, body: "changed".to_owned(), delivery: None };
    let e = gw.inbox_edit(&item.intent_id, edit).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::IntentAlreadyClaimed);
    let done = gw
        .steer_complete(SteerCompleteParams {
            work_id: work.clone(),
            intent_id: item.intent_id.clone(),
            outcome: None,
        })
        .await
        .unwrap();
    assert_eq!(done.state, IntentState::Done);
    let again = SteerCompleteParams {
        work_id: work.clone(),
        intent_id: item.intent_id,
        outcome: Some(CompleteOutcome::Blocked),
    };
    assert_eq!(code(gw.steer_complete(again).await.unwrap_err()), ErrorCode::IntentNotEditable);
    let finish = gw.work_finish(id(&work)).await.unwrap();
    assert!(finish.closed, "{finish:?}");
    assert_eq!(finish.state, WorkState::Closed);
    assert_eq!(code(gw.work_finish(id(&work)).await.unwrap_err()), ErrorCode::WorkClosed);
    assert_eq!(code(gw.steer_claim_next(id(&work)).await.unwrap_err()), ErrorCode::WorkClosed);
    let e = gw.steer_status(id("work-nope")).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::WorkNotFound);
}

#[tokio::test]
async fn work_finish_rules() {
    let dir = tempfile::tempdir().unwrap();
    let gw = gateway(dir.path());
    // Rule 1: a claimed instruction keeps the work open, state unchanged.
    let work = open(&gw, "a").await;
    say(&gw, &work, "now", Delivery::NextCheckpoint).await;
    let item = gw.steer_claim_next(id(&work)).await.unwrap().item.unwrap();
    let f = gw.work_finish(id(&work)).await.unwrap();
    assert_eq!((f.closed, f.state, f.queued), (false, WorkState::Active, 0));
    assert_eq!(f.reason, Some(FinishReason::PendingUserInput));
    // Rule 1: a queued next_checkpoint instruction too.
    let complete =
        SteerCompleteParams { work_id: work.clone(), intent_id: item.intent_id, outcome: None };
    gw.steer_complete(complete).await.unwrap();
    say(&gw, &work, "next", Delivery::NextCheckpoint).await;
    let f = gw.work_finish(id(&work)).await.unwrap();
    assert_eq!((f.closed, f.state, f.queued), (false, WorkState::Active, 1));
    let item = gw.steer_claim_next(id(&work)).await.unwrap().item.unwrap();
    let complete =
        SteerCompleteParams { work_id: work.clone(), intent_id: item.intent_id, outcome: None };
    gw.steer_complete(complete).await.unwrap();
    // Rule 2: after_current_work makes it closing; they become claimable.
    say(&gw, &work, "after", Delivery::AfterCurrentWork).await;
    assert_eq!(gw.steer_status(id(&work)).await.unwrap().claimable_now, 0);
    let f = gw.work_finish(id(&work)).await.unwrap();
    assert_eq!((f.closed, f.state, f.queued), (false, WorkState::Closing, 1));
    assert_eq!(gw.steer_status(id(&work)).await.unwrap().claimable_now, 1);
    let item = gw.steer_claim_next(id(&work)).await.unwrap().item.unwrap();
    assert_eq!(item.content, "after");
    let complete =
        SteerCompleteParams { work_id: work.clone(), intent_id: item.intent_id, outcome: None };
    gw.steer_complete(complete).await.unwrap();
    // Rule 3: otherwise it closes; drafts, queued next_work items wait for the next work.
    let new = NewIntent { body: "a draft".to_owned(), kind: None, delivery: None };
    let draft = gw.inbox_create(&work, new).await.unwrap();
    let later = say(&gw, &work, "later", Delivery::NextWork).await;
    let f = gw.work_finish(id(&work)).await.unwrap();
    assert_eq!((f.closed, f.state, f.reason), (true, WorkState::Closed, None));
    assert!(gw.inbox_intents(&work).await.unwrap().iter().all(|i| i.state == IntentState::Done));
    // The next work of the same workspace gets both, next_work as after_current_work.
    let other = open(&gw, "b").await;
    assert!(gw.inbox_intents(&other).await.unwrap().is_empty());
    let next = open(&gw, "a").await;
    let carried = gw.inbox_intents(&next).await.unwrap();
    let ids: Vec<&str> = carried.iter().map(|i| i.intent_id.as_str()).collect();
    assert_eq!(ids, [draft.intent_id.as_str(), later.intent_id.as_str()]);
    assert_eq!(carried[1].delivery, Delivery::AfterCurrentWork);
    assert_eq!(carried[1].state, IntentState::Queued);
    assert_eq!(carried[0].state, IntentState::Draft);
}

#[tokio::test]
async fn edits_need_the_current_revision() {
    let dir = tempfile::tempdir().unwrap();
    let gw = gateway(dir.path());
    let work = open(&gw, "a").await;
    let new = NewIntent { body: "one".to_owned(), kind: None, delivery: None };
    let draft = gw.inbox_create(&work, new).await.unwrap();
    let edit =
        |revision, body: &str| EditIntent { revision, body: body.to_owned(), delivery: None };
    let edited = gw.inbox_edit(&draft.intent_id, edit(1, "two")).await.unwrap();
    assert_eq!((edited.revision, edited.body.as_str()), (2, "two"));
    let e = gw.inbox_edit(&draft.intent_id, edit(1, "three")).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::IntentRevisionConflict);
    let e = gw.inbox_queue(&draft.intent_id, QueueIntent { revision: 1 }).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::IntentRevisionConflict);
    let e = gw.inbox_edit(&draft.intent_id, edit(2, "  ")).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::InvalidArguments);
    let cancelled = gw.inbox_cancel(&draft.intent_id).await.unwrap();
    assert_eq!(cancelled.state, IntentState::Cancelled);
    let e = gw.inbox_edit(&draft.intent_id, edit(3, "four")).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::IntentNotEditable);
    let e = gw.inbox_edit("fb-nope", edit(1, "x")).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::IntentNotFound);
}

#[tokio::test]
async fn reorder_changes_the_claim_order_and_another_work_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let gw = gateway(dir.path());
    let work = open(&gw, "a").await;
    let one = say(&gw, &work, "one", Delivery::NextCheckpoint).await;
    let two = say(&gw, &work, "two", Delivery::NextCheckpoint).await;
    let order = ReorderIntents { intent_ids: vec![two.intent_id.clone(), one.intent_id.clone()] };
    let queued = gw.inbox_reorder(&work, order).await.unwrap();
    assert_eq!(queued[0].intent_id, two.intent_id);
    let item = gw.steer_claim_next(id(&work)).await.unwrap().item.unwrap();
    assert_eq!(item.content, "two");
    let twice = ReorderIntents { intent_ids: vec![one.intent_id.clone(), one.intent_id.clone()] };
    assert_eq!(
        code(gw.inbox_reorder(&work, twice).await.unwrap_err()),
        ErrorCode::InvalidArguments
    );
    // Completing from another work: not found there.
    let other = open(&gw, "a").await;
    let complete =
        SteerCompleteParams { work_id: other.clone(), intent_id: item.intent_id, outcome: None };
    assert_eq!(code(gw.steer_complete(complete).await.unwrap_err()), ErrorCode::IntentNotFound);
}

#[tokio::test]
async fn the_hint_follows_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let gw = gateway(dir.path());
    assert_eq!(gw.work_hint("a", None).unwrap(), None);
    let work = open(&gw, "a").await;
    let hint = gw.work_hint("a", None).unwrap().unwrap();
    assert_eq!((hint.work_id.as_str(), hint.claimable_now), (work.as_str(), 0));
    say(&gw, &work, "stop, wrong branch", Delivery::NextCheckpoint).await;
    let after = gw.work_hint("a", Some(&work)).unwrap().unwrap();
    assert_eq!((after.pending_user_items, after.claimable_now), (1, 1));
    assert!(after.queue_revision > hint.queue_revision);
    // Another workspace's work is not found, and no hint is given about it.
    assert_eq!(code(gw.work_hint("b", Some(&work)).unwrap_err()), ErrorCode::WorkNotFound);
    // A closed work: no hint, and no refusal (the call still runs).
    let done = open(&gw, "b").await;
    gw.work_finish(id(&done)).await.unwrap();
    assert_eq!(gw.work_hint("b", Some(&done)).unwrap(), None);
    // Two open works and none named: no hint.
    open(&gw, "a").await;
    assert_eq!(gw.work_hint("a", None).unwrap(), None);
}

/// The hint is kept while the ledger is unchanged; a work opened by another server on the
/// same ledger file shows at the next call all the same.
#[tokio::test]
async fn the_kept_hint_follows_another_handle_on_the_same_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3");
    let gw = gateway_on(dir.path(), Arc::new(Store::open(&ledger).unwrap()));
    let other = gateway_on(dir.path(), Arc::new(Store::open(&ledger).unwrap()));
    assert_eq!(gw.work_hint("a", None).unwrap(), None);
    assert_eq!(gw.work_hint("a", None).unwrap(), None);
    let work = open(&other, "a").await;
    let hint = gw.work_hint("a", None).unwrap().expect("the other server's work");
    assert_eq!(hint.work_id, work);
    say(&other, &work, "stop", Delivery::NextCheckpoint).await;
    assert_eq!(gw.work_hint("a", None).unwrap().unwrap().pending_user_items, 1);
}
