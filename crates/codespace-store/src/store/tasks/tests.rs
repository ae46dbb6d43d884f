//! Unit tests for the tasks: created with their owner, changed only while unsettled,
//! settled once, and taken over from a given owner only.

use codespace_types::TaskState;

use crate::{Store, TaskRow, TaskSettle};

fn row(task_id: &str) -> TaskRow {
    TaskRow {
        task_id: task_id.to_owned(),
        tool: "exec_command".to_owned(),
        workspace_id: Some("ws".to_owned()),
        operation_key: None,
        process_id: None,
        owner: None,
        state: TaskState::Working,
        status_message: None,
        result: None,
        error: None,
        cancel_requested: false,
        approval_id: None,
        input_requests: None,
        ttl_ms: None,
        created_at_ms: 1_000,
        updated_at_ms: 1_000,
    }
}

fn settle(state: TaskState, result: Option<&str>) -> TaskSettle {
    TaskSettle { state, status_message: None, result: result.map(str::to_owned), error: None }
}

#[test]
fn a_task_is_recorded_with_its_owner_and_settles_once() {
    let store = Store::open_in_memory().expect("open");
    let me = store.start_instance(1, 0).expect("instance");
    store.create_task(&row("task-1")).expect("create");
    let read = store.task("task-1").expect("read").expect("found");
    assert_eq!((read.owner.as_deref(), read.state), (Some(me.as_str()), TaskState::Working));
    assert!(store.task("task-2").expect("read").is_none());
    let progressed =
        store.update_task("task-1", TaskState::Working, None, Some("proc-1"), 2_000).expect("up");
    assert!(progressed);
    assert!(store.request_task_cancel("task-1", 2_500).expect("cancel"));
    let done = settle(TaskState::Completed, Some("{\"content\":[]}"));
    assert!(store.settle_task("task-1", &done, 3_000).expect("settle"));
    // The first settlement stands; nothing changes a settled task.
    assert!(
        !store.settle_task("task-1", &settle(TaskState::Cancelled, None), 4_000).expect("again")
    );
    assert!(!store.request_task_cancel("task-1", 4_000).expect("cancel settled"));
    assert!(!store.update_task("task-1", TaskState::Working, None, None, 4_000).expect("up"));
    let read = store.task("task-1").expect("read").expect("found");
    assert_eq!(read.state, TaskState::Completed);
    assert_eq!(read.process_id.as_deref(), Some("proc-1"));
    assert_eq!(read.result.as_deref(), Some("{\"content\":[]}"));
    assert!(read.cancel_requested);
    assert_eq!(read.updated_at_ms, 3_000);
}

#[test]
fn a_task_is_taken_over_only_from_the_owner_read() {
    let store = Store::open_in_memory().expect("open");
    let mut orphan = row("task-3");
    orphan.owner = Some("inst-gone".to_owned());
    // Recorded by an operator's handle (no instance): nobody alive owns it.
    store.create_task(&orphan).expect("create");
    assert_eq!(store.task("task-3").expect("read").expect("found").owner, None);
    assert!(!store.take_over_task("task-3", Some("inst-other")).expect("wrong owner"));
    assert!(store.take_over_task("task-3", None).expect("take over"));
    assert!(store.settle_task("task-3", &settle(TaskState::Failed, None), 5).expect("settle"));
    assert!(!store.take_over_task("task-3", None).expect("settled"));
}

#[test]
fn a_non_terminal_settlement_and_a_terminal_update_are_refused() {
    let store = Store::open_in_memory().expect("open");
    store.create_task(&row("task-4")).expect("create");
    assert!(store.settle_task("task-4", &settle(TaskState::Working, None), 1).is_err());
    assert!(store.update_task("task-4", TaskState::Failed, None, None, 1).is_err());
}

#[test]
fn a_waiting_task_keeps_its_requests_and_is_resumed_once() {
    let store = Store::open_in_memory().expect("open");
    let me = store.start_instance(1, 0).expect("instance");
    store.create_task(&row("task-5")).expect("create");
    let asked = "{\"hold\":{}}";
    assert!(
        store.await_task_input("task-5", Some("appr-1"), asked, Some("asks"), 2).expect("wait")
    );
    let read = store.task("task-5").expect("read").expect("found");
    assert_eq!(read.state, TaskState::InputRequired);
    assert_eq!(
        (read.approval_id.as_deref(), read.input_requests.as_deref()),
        (Some("appr-1"), Some(asked))
    );
    assert!(store.resume_task("task-5", 3).expect("resume"));
    assert!(!store.resume_task("task-5", 4).expect("resumed once"), "a second answer runs nothing");
    let read = store.task("task-5").expect("read").expect("found");
    assert_eq!((read.state, read.input_requests), (TaskState::Working, None));
    assert_eq!(
        (read.approval_id.as_deref(), read.owner.as_deref()),
        (Some("appr-1"), Some(me.as_str()))
    );
    // Running again, it is no longer settled as a waiting one.
    let cancelled = settle(TaskState::Cancelled, None);
    assert!(!store.settle_waiting_task("task-5", &cancelled, 5).expect("not waiting"));
}

#[test]
fn a_cancel_is_seen_by_the_owner_and_stops_a_resume() {
    let store = Store::open_in_memory().expect("open");
    store.start_instance(1, 0).expect("instance");
    store.create_task(&row("task-6")).expect("create");
    store.create_task(&row("task-7")).expect("create");
    assert!(store.cancelled_tasks().expect("none").is_empty());
    assert!(store.await_task_input("task-6", None, "{}", None, 2).expect("wait"));
    assert!(store.request_task_cancel("task-6", 3).expect("cancel"));
    assert_eq!(store.cancelled_tasks().expect("one"), ["task-6"]);
    assert!(!store.resume_task("task-6", 4).expect("cancelled"), "a cancelled task is not resumed");
    let cancelled = settle(TaskState::Cancelled, None);
    assert!(store.settle_waiting_task("task-6", &cancelled, 5).expect("settle"));
    assert!(store.cancelled_tasks().expect("settled").is_empty());
    assert_eq!(store.task("task-6").expect("read").expect("found").input_requests, None);
}
