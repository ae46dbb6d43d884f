//! The Tasks extension end to end with the real binary: a task is in the ledger before the
//! call answers, so it outlives its server; a command task whose server died settles
//! `failed` (`TASK_INTERRUPTED`, the command is never rerun), a patch task killed mid-write
//! settles from the ledger as recovery settled its operation, and `tasks/cancel` ends a
//! command task's whole tree.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::owners::{Shared, kill_with_worker, wide_patch};
use crate::runner_uds::wait_for_file;
use crate::support::{RawStdio, fault_bin};

/// The per-request declaration of the extension and of elicitation (a 2026-07-28 client
/// sends it on every request; an older session may too).
pub(crate) fn declared() -> Value {
    json!({"io.modelcontextprotocol/clientCapabilities":
        {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}})
}

pub(crate) fn request(raw: &mut RawStdio, id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = declared();
    raw.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    loop {
        let reply = raw.recv().expect("an answer");
        if reply["id"] == id {
            return reply;
        }
    }
}

/// A `tools/call` as a task: its id, from a `CreateTaskResult`.
pub(crate) fn start_task(raw: &mut RawStdio, id: u64, name: &str, args: Value) -> String {
    let reply = request(raw, id, "tools/call", json!({"name": name, "arguments": args}));
    let result = &reply["result"];
    assert_eq!(result["status"], "working", "{reply}");
    assert!(result.get("result").is_none() && result.get("task").is_none(), "{reply}");
    result["taskId"].as_str().expect("a task id").to_owned()
}

pub(crate) fn get(raw: &mut RawStdio, id: u64, task_id: &str) -> Value {
    let reply = request(raw, id, "tasks/get", json!({"taskId": task_id}));
    reply["result"].clone()
}

/// Polls `tasks/get` until the task settles.
pub(crate) fn settled(raw: &mut RawStdio, first_id: u64, task_id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    for id in first_id.. {
        let task = get(raw, id, task_id);
        if ["completed", "failed", "cancelled"].contains(&task["status"].as_str().unwrap_or("")) {
            return task;
        }
        assert!(Instant::now() < deadline, "task {task_id} never settled: {task}");
        std::thread::sleep(Duration::from_millis(100));
    }
    unreachable!()
}

pub(crate) fn read_pid(path: &Path) -> u32 {
    wait_for_file(path, Duration::from_secs(30), "the command never wrote its pid");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(pid) = std::fs::read_to_string(path).unwrap_or_default().trim().parse() {
            return pid;
        }
        assert!(Instant::now() < deadline, "the pid file stayed empty");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub(crate) fn gone(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.is_empty() || stat.contains(") Z")
}

/// The command `sh -c 'echo $$ > <pid>; exec sleep 300'`: its pid in `pid`.
pub(crate) fn sleeper(pid: &Path) -> Value {
    json!(["sh", "-c", format!("echo $$ > {}; exec sleep 300", pid.display())])
}

/// A command task outlives its server as a record: `tasks/get` answers at once that it
/// works; after kill -9 and a restart the next server settles it `failed` with
/// `TASK_INTERRUPTED` (its process ended with the server and is never started again), and
/// the settlement stands.
#[test]
fn a_command_task_whose_server_died_is_failed_after_a_restart() {
    let s = Shared::new();
    let pid_file = s.env.path().join("cmd.pid");
    let mut a = s.server(None, &[]);
    let args = json!({"workspace_id": "w", "command": sleeper(&pid_file)});
    let task = start_task(&mut a, 1, "exec_command", args);
    assert_eq!(get(&mut a, 2, &task)["status"], "working");
    let pid = read_pid(&pid_file);
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !gone(pid) {
        assert!(Instant::now() < deadline, "the command outlived its server");
        std::thread::sleep(Duration::from_millis(50));
    }

    let mut b = s.server(None, &[]);
    let after = get(&mut b, 3, &task);
    assert_eq!(after["status"], "failed", "{after}");
    assert_eq!(after["error"]["code"], -32603, "{after}");
    assert_eq!(after["error"]["data"]["code"], "TASK_INTERRUPTED", "{after}");
    assert!(after.get("result").is_none(), "{after}");
    assert_eq!(get(&mut b, 4, &task), after, "a settled task never changes");
    std::fs::remove_file(&pid_file).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(!pid_file.exists(), "the command was started again");
}

/// A patch task whose server is killed in the middle of its 150 writes: after a restart,
/// `tasks/get` settles the operation as recovery does (rolled back from the ledger's undo
/// content, every file old again) and completes the task with that operation's status.
#[test]
fn a_patch_task_killed_mid_write_settles_from_the_ledger() {
    let s = Shared::new();
    let marker = s.env.path().join("stalled");
    let stall = [
        ("CODESPACE_RUNNER", "uds"),
        ("CODESPACE_TEST_WORKER_STALL_AT", "75"),
        ("CODESPACE_TEST_WORKER_MARKER", marker.to_str().unwrap()),
    ];
    let mut a = s.server(Some(&fault_bin()), &stall);
    let args = json!({"workspace_id": "w", "patch": wide_patch("new")});
    let task = start_task(&mut a, 1, "apply_patch", args);
    wait_for_file(&marker, Duration::from_secs(30), "the patch never stopped at its 76th write");
    assert_eq!(s.holding("new\n"), 75);
    assert_eq!(get(&mut a, 2, &task)["status"], "working");
    kill_with_worker(&mut a);

    let mut b = s.server(None, &[]);
    let after = get(&mut b, 3, &task);
    assert_eq!(after["status"], "completed", "{after}");
    let message = after["statusMessage"].as_str().unwrap_or_default();
    assert!(message.contains("settled from the ledger"), "{after}");
    let op = &after["result"]["structuredContent"];
    assert_eq!(op["status"], "failed_rolled_back", "{after}");
    assert_eq!(op["recovered"], true, "{after}");
    assert_eq!(op["operation_key"], task, "the task's id keys its operation: {after}");
    assert_eq!(s.holding("old\n"), 150, "every file is old again");
}

/// `tasks/cancel` of a running command task answers an empty acknowledgement and ends the
/// command (SIGTERM to its tree, SIGKILL after the grace); the task settles `cancelled`, and
/// a second cancel of the settled task is acknowledged the same way.
#[test]
fn cancelling_a_command_task_ends_its_process() {
    let s = Shared::new();
    let pid_file = s.env.path().join("cmd.pid");
    let mut a = s.server(None, &[]);
    let args = json!({"workspace_id": "w", "command": sleeper(&pid_file)});
    let task = start_task(&mut a, 1, "exec_command", args);
    let pid = read_pid(&pid_file);
    assert!(!gone(pid));
    let ack = request(&mut a, 2, "tasks/cancel", json!({"taskId": task}));
    assert!(ack.get("error").is_none(), "{ack}");
    assert!(ack["result"].get("taskId").is_none() && ack["result"].get("status").is_none());
    let after = settled(&mut a, 3, &task);
    assert_eq!(after["status"], "cancelled", "{after}");
    assert!(gone(pid), "the command outlived its cancelled task");
    let again = request(&mut a, 100, "tasks/cancel", json!({"taskId": task}));
    assert!(again.get("error").is_none(), "{again}");
    let unknown = request(&mut a, 101, "tasks/get", json!({"taskId": "task-none"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}
