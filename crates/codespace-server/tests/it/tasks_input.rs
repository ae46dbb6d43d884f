//! A hold met inside a task, end to end with the real binary: the task moves to
//! `input_required` with the person's prompt in its `inputRequests`, and `tasks/update`
//! delivers the answer (a grant runs the patch, a decline completes the task with
//! `APPROVAL_DENIED`); answers to keys the task does not wait on change nothing. The hold and
//! the waiting task are in the ledger, so the answer may come after a restart, to the next
//! server. A cancel sent to another server sharing the ledger stops the owner's command; a
//! cancel of a waiting task withdraws its hold.
//! Settled tasks are counted in `/metrics` like calls.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::owners::Shared;
use crate::support::{Env, HttpServer};
use crate::tasks::{declared, gone, read_pid, request, sleeper, start_task};

fn patch(line: &str) -> String {
    format!("*** Begin Patch\n*** Update File: a.txt\n@@\n top\n+{line}\n*** End Patch\n")
}

fn grant(yes: bool) -> Value {
    json!({"codespace_hold": {"action": "accept", "content": {"grant": yes}}})
}

/// Polls `get` until the task's status is one of `statuses` (or it settled).
fn until(mut get: impl FnMut() -> Value, statuses: &[&str]) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let task = get();
        let status = task["status"].as_str().unwrap_or_default();
        if statuses.contains(&status) || ["completed", "failed", "cancelled"].contains(&status) {
            return task;
        }
        assert!(Instant::now() < deadline, "the task never came to {statuses:?}: {task}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One HTTP session speaking raw JSON-RPC (each single answer is plain JSON).
struct Http<'a> {
    server: &'a HttpServer,
    session: String,
    next: u64,
}

impl Http<'_> {
    fn open(server: &HttpServer) -> Http<'_> {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "raw", "version": "1"}}});
        let reply = server.post("/mcp", &[], &init.to_string());
        assert_eq!(reply.status, 200, "{reply:?}");
        let session = format!("Mcp-Session-Id: {}", reply.header("mcp-session-id").unwrap());
        let http = Http { server, session, next: 1 };
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        http.server.post("/mcp", &[&http.session, "MCP-Protocol-Version: 2025-06-18"], initialized);
        http
    }

    fn request(&mut self, method: &str, mut params: Value) -> Value {
        params["_meta"] = declared();
        self.next += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        let headers = [self.session.as_str(), "MCP-Protocol-Version: 2025-06-18"];
        let reply = self.server.post("/mcp", &headers, &body.to_string());
        assert_eq!(reply.status, 200, "{method}: {reply:?}");
        let v: Value = serde_json::from_str(&reply.body).unwrap();
        assert_eq!(v["id"], self.next, "{v}");
        v
    }

    fn get(&mut self, task: &str) -> Value {
        self.request("tasks/get", json!({"taskId": task}))["result"].clone()
    }

    fn start(&mut self, args: Value) -> String {
        let reply = self.request("tools/call", json!({"name": "apply_patch", "arguments": args}));
        assert_eq!(reply["result"]["resultType"], "task", "{reply}");
        reply["result"]["taskId"].as_str().unwrap().to_owned()
    }

    fn update(&mut self, task: &str, responses: Value) {
        let ack =
            self.request("tasks/update", json!({"taskId": task, "inputResponses": responses}));
        assert!(ack.get("error").is_none(), "{ack}");
        assert_eq!(ack["result"]["resultType"], "complete", "an empty acknowledgement: {ack}");
        assert!(ack["result"].get("status").is_none(), "{ack}");
    }
}

fn metrics(server: &HttpServer) -> BTreeMap<String, f64> {
    let request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let r = server.raw(request.as_bytes());
    assert_eq!(r.status, 200, "{}", r.body);
    let sample = |l: &str| {
        let (key, value) = l.rsplit_once(' ').unwrap();
        (key.to_owned(), value.parse().unwrap())
    };
    r.body.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).map(sample).collect()
}

/// Over HTTP: a held patch task waits for the person in `input_required`, the prompt shows
/// the patch; an answer to another key changes nothing; the grant delivered by
/// `tasks/update` applies it, a decline completes a second task with `APPROVAL_DENIED`. The
/// metrics count each task's wait and settlement by tool and outcome.
#[test]
fn a_held_patch_task_is_granted_or_denied_through_tasks_update() {
    let mut env = Env::new();
    let c = env.workspace(
        "c",
        json!({"profile": "workspace-write", "approvals": "confirm", "sandbox": "off"}),
    );
    std::fs::write(c.join("a.txt"), "top\n").unwrap();
    let db = env.path().join("ledger.sqlite3");
    let server = env.http(&["--no-auth", "--operations-db", db.to_str().unwrap()]);
    let mut rpc = Http::open(&server);

    let task = rpc.start(json!({"workspace_id": "c", "patch": patch("granted")}));
    let waiting = until(|| rpc.get(&task), &["input_required"]);
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    let asked = &waiting["inputRequests"]["codespace_hold"];
    assert_eq!(asked["method"], "elicitation/create", "{waiting}");
    let message = asked["params"]["message"].as_str().unwrap();
    assert!(message.contains("+granted") && message.contains("workspace c"), "{message}");
    assert!(asked["params"]["requestedSchema"]["properties"]["grant"].is_object(), "{asked}");
    // The hold is in the ledger, pending, beside the waiting task.
    let mut listed = env.command();
    listed.args(["approvals", "list", "--json", "--operations-db"]).arg(&db);
    let listed: Value = serde_json::from_slice(&listed.output().unwrap().stdout).unwrap();
    assert_eq!(listed[0]["state"], "pending", "{listed}");
    assert!(
        waiting["statusMessage"]
            .as_str()
            .unwrap()
            .contains(listed[0]["approval_id"].as_str().unwrap())
    );

    rpc.update(&task, json!({"not-asked": {"action": "accept", "content": {"grant": true}}}));
    assert_eq!(rpc.get(&task)["status"], "input_required", "an answer to no request");
    assert_eq!(std::fs::read_to_string(c.join("a.txt")).unwrap(), "top\n");
    rpc.update(&task, grant(true));
    let done = until(|| rpc.get(&task), &[]);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"]["status"], "applied", "{done}");
    assert!(done.get("inputRequests").is_none(), "{done}");
    assert_eq!(std::fs::read_to_string(c.join("a.txt")).unwrap(), "top\ngranted\n");

    let denied = rpc.start(json!({"workspace_id": "c", "patch": patch("denied")}));
    assert_eq!(until(|| rpc.get(&denied), &["input_required"])["status"], "input_required");
    rpc.update(&denied, json!({"codespace_hold": {"action": "decline"}}));
    let done = until(|| rpc.get(&denied), &[]);
    assert_eq!((&done["status"], &done["result"]["isError"]), (&json!("completed"), &json!(true)));
    let body: Value =
        serde_json::from_str(done["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(body["code"], "APPROVAL_DENIED", "{done}");
    assert_eq!(std::fs::read_to_string(c.join("a.txt")).unwrap(), "top\ngranted\n");

    let m = metrics(&server);
    let at = |code: &str| {
        m.get(&format!(r#"codespace_tool_calls_total{{tool="apply_patch",code="{code}"}}"#))
            .copied()
    };
    assert_eq!(
        (at("INPUT_REQUIRED"), at("OK"), at("APPROVAL_DENIED")),
        (Some(2.0), Some(1.0), Some(1.0)),
        "{m:?}"
    );
}

/// A task waiting on a hold outlives its server: after kill -9 the next server on the
/// ledger takes it over still waiting, with the same question, and the grant sent to it
/// applies the patch.
#[test]
fn a_waiting_task_is_answered_to_the_next_server() {
    let s = Shared::new();
    let mut a = s.server(None, &[]);
    let task =
        start_task(&mut a, 1, "apply_patch", json!({"workspace_id": "c", "patch": patch("later")}));
    let mut id = 10;
    let mut get = |raw: &mut crate::support::RawStdio| {
        id += 1;
        request(raw, id, "tasks/get", json!({"taskId": task}))["result"].clone()
    };
    let before = until(|| get(&mut a), &["input_required"]);
    assert_eq!(before["status"], "input_required", "{before}");
    a.child.kill().unwrap();
    a.child.wait().unwrap();

    let mut b = s.server(None, &[]);
    let after = get(&mut b);
    assert_eq!(after["status"], "input_required", "taken over, still waiting: {after}");
    assert_eq!(after["inputRequests"], before["inputRequests"], "the same question");
    let ack = request(
        &mut b,
        100,
        "tasks/update",
        json!({"taskId": task, "inputResponses": grant(true)}),
    );
    assert!(ack.get("error").is_none(), "{ack}");
    let done = until(|| get(&mut b), &[]);
    assert_eq!(done["result"]["structuredContent"]["status"], "applied", "{done}");
    let a_txt = std::fs::read_to_string(s.root("c").join("a.txt")).unwrap();
    assert_eq!(a_txt, "top\nlater\n");
}

/// `tasks/cancel` sent to another live server sharing the ledger: the owner reads the
/// cancel from the ledger and ends its command's tree with the grace; the task settles
/// `cancelled` and both servers read it so.
#[test]
fn a_cancel_sent_to_another_server_stops_the_owners_command() {
    let s = Shared::new();
    let pid_file = s.env.path().join("cmd.pid");
    let mut a = s.server(None, &[]);
    let mut b = s.server(None, &[]);
    let args = json!({"workspace_id": "w", "command": sleeper(&pid_file)});
    let task = start_task(&mut a, 1, "exec_command", args);
    let pid = read_pid(&pid_file);
    let ack = request(&mut b, 2, "tasks/cancel", json!({"taskId": task}));
    assert!(ack.get("error").is_none(), "{ack}");
    let mut id = 10;
    let done = until(
        || {
            id += 1;
            request(&mut b, id, "tasks/get", json!({"taskId": task}))["result"].clone()
        },
        &[],
    );
    assert_eq!(done["status"], "cancelled", "{done}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !gone(pid) {
        assert!(Instant::now() < deadline, "the owner's command outlived the cancel");
        std::thread::sleep(Duration::from_millis(50));
    }
    let on_a = request(&mut a, 200, "tasks/get", json!({"taskId": task}));
    assert_eq!(on_a["result"]["status"], "cancelled", "{on_a}");
}

/// A held command task: the prompt shows its argv; the grant runs it in the task, which
/// waits for its exit and completes with its exit code and output.
#[test]
fn a_held_command_task_granted_through_tasks_update_runs_to_its_exit() {
    let s = Shared::new();
    let mut a = s.server(None, &[]);
    let args = json!({"workspace_id": "c", "command": ["sh", "-c", "echo ran-in-task"]});
    let task = start_task(&mut a, 1, "exec_command", args);
    let mut id = 10;
    let mut get = |raw: &mut crate::support::RawStdio| {
        id += 1;
        request(raw, id, "tasks/get", json!({"taskId": task}))["result"].clone()
    };
    let waiting = until(|| get(&mut a), &["input_required"]);
    let message = waiting["inputRequests"]["codespace_hold"]["params"]["message"].as_str();
    assert!(message.unwrap_or_default().contains("ran-in-task"), "the argv is shown: {waiting}");
    let ack = request(
        &mut a,
        100,
        "tasks/update",
        json!({"taskId": task, "inputResponses": grant(true)}),
    );
    assert!(ack.get("error").is_none(), "{ack}");
    let done = until(|| get(&mut a), &[]);
    let result = &done["result"]["structuredContent"];
    assert_eq!(
        (&done["status"], &result["state"], &result["exit_code"]),
        (&json!("completed"), &json!("exited"), &json!(0)),
        "{done}"
    );
    assert!(
        done["result"]["content"][0]["text"].as_str().unwrap().contains("ran-in-task"),
        "{done}"
    );
}

/// `tasks/cancel` of a task waiting on a hold withdraws the hold, so the person is no longer
/// asked about it; while a second waiting task asked for the same hold (the same patch), the
/// hold stays pending for that one, and is withdrawn when it is cancelled too.
#[test]
fn cancelling_a_waiting_task_withdraws_its_hold_unless_another_waits_on_it() {
    let s = Shared::new();
    let mut a = s.server(None, &[]);
    let args = json!({"workspace_id": "c", "patch": patch("never")});
    let first = start_task(&mut a, 1, "apply_patch", args.clone());
    let second = start_task(&mut a, 2, "apply_patch", args);
    let mut id = 10;
    let mut get = |raw: &mut crate::support::RawStdio, task: &str| {
        id += 1;
        request(raw, id, "tasks/get", json!({"taskId": task}))["result"].clone()
    };
    for task in [&first, &second] {
        assert_eq!(until(|| get(&mut a, task), &["input_required"])["status"], "input_required");
    }
    let holds = |s: &Shared| -> Value {
        serde_json::from_str(&s.cli(&["approvals", "list", "--json"])).unwrap()
    };
    let listed = holds(&s);
    assert_eq!(listed.as_array().unwrap().len(), 1, "one hold for the same patch: {listed}");

    let ack = request(&mut a, 3, "tasks/cancel", json!({"taskId": first}));
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(get(&mut a, &first)["status"], "cancelled");
    assert_eq!(holds(&s)[0]["state"], "pending", "the second task still waits on it");

    let ack = request(&mut a, 4, "tasks/cancel", json!({"taskId": second}));
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(get(&mut a, &second)["status"], "cancelled");
    assert_eq!(holds(&s)[0]["state"], "denied", "withdrawn: {}", holds(&s));
    assert_eq!(std::fs::read_to_string(s.root("c").join("a.txt")).unwrap(), "top\n");
}
