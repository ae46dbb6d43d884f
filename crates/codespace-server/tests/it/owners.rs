//! Several servers on one ledger: each owns its work (an instance row and a lock held for
//! its life), a server's start-up never recovers a live server's patch, a dead server's
//! patch is settled exactly once by whichever server meets it first, two servers resuming
//! one hold run it once, and the operator CLI works beside them all.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::runner_uds::{wait_for_file, wait_gone, worker_of};
use crate::support::{Env, RawStdio, fault_bin};

pub(crate) const FILES: usize = 150;

/// A scratch area with workspace `w` (approvals off) holding `f000.txt`..`f149.txt`, `c`
/// (approvals confirm) holding `a.txt`, `x` (approvals confirm, empty, for commands) and
/// one ledger file every server shares.
pub(crate) struct Shared {
    pub(crate) env: Env,
    pub(crate) db: PathBuf,
}

impl Shared {
    pub(crate) fn new() -> Shared {
        let mut env = Env::new();
        let w = env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
        for i in 0..FILES {
            std::fs::write(w.join(format!("f{i:03}.txt")), "old\n").unwrap();
        }
        let c = env.workspace(
            "c",
            json!({"profile": "workspace-write", "approvals": "confirm", "sandbox": "off"}),
        );
        std::fs::write(c.join("a.txt"), "top\n").unwrap();
        env.workspace(
            "x",
            json!({"profile": "workspace-write", "approvals": "confirm", "sandbox": "off"}),
        );
        let db = env.path().join("ledger.sqlite3");
        Shared { env, db }
    }

    pub(crate) fn root(&self, id: &str) -> PathBuf {
        self.env.path().join("ws").join(id)
    }

    /// A server on the shared ledger (the real binary, or `program`), with `vars`.
    pub(crate) fn server(&self, program: Option<&Path>, vars: &[(&str, &str)]) -> RawStdio {
        let mut cmd = match program {
            Some(p) => self.env.command_of(p),
            None => self.env.command(),
        };
        cmd.args(["serve", "--config"]).arg(self.env.config());
        cmd.arg("--operations-db").arg(&self.db).envs(vars.iter().copied());
        RawStdio::start_command(cmd)
    }

    /// `codespace <args> --operations-db <ledger>`, which must succeed; its stdout.
    pub(crate) fn cli(&self, args: &[&str]) -> String {
        let out = self.env.command().args(args).arg("--operations-db").arg(&self.db).output();
        let out = out.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "codespace {args:?} failed: {stderr}");
        String::from_utf8(out.stdout).unwrap()
    }

    /// How many of the 150 files hold `text`.
    pub(crate) fn holding(&self, text: &str) -> usize {
        (0..FILES)
            .filter(|i| {
                let path = self.root("w").join(format!("f{i:03}.txt"));
                std::fs::read_to_string(path).unwrap_or_default() == text
            })
            .count()
    }
}

/// The 150-file patch: every `fNNN.txt` from `old` to `new`.
pub(crate) fn wide_patch(new: &str) -> String {
    let mut patch = String::from("*** Begin Patch\n");
    for i in 0..FILES {
        patch.push_str(&format!("*** Update File: f{i:03}.txt\n@@\n-old\n+{new}\n"));
    }
    patch.push_str("*** End Patch\n");
    patch
}

/// Sends one tool call without waiting for its answer.
pub(crate) fn send_call(raw: &mut RawStdio, id: u64, name: &str, args: Value) {
    raw.send(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args}}));
}

/// The answer to call `id`: Ok(structured) or Err(ErrorBody).
pub(crate) fn answer(raw: &mut RawStdio, id: u64) -> Result<Value, Value> {
    loop {
        let reply = raw.recv().expect("an answer");
        if reply["id"] != id {
            continue;
        }
        let result = &reply["result"];
        if result["isError"] == true {
            let text = result["content"][0]["text"].as_str().unwrap();
            return Err(serde_json::from_str(text).unwrap());
        }
        return Ok(result["structuredContent"].clone());
    }
}

pub(crate) fn call(raw: &mut RawStdio, id: u64, name: &str, args: Value) -> Result<Value, Value> {
    send_call(raw, id, name, args);
    answer(raw, id)
}

/// The operation's status, `recovered` flag and events (not its 150 changes).
fn status_of_key(raw: &mut RawStdio, id: u64, key: &str) -> Value {
    let args = json!({"workspace_id": "w", "operation_key": key});
    let full = call(raw, id, "operation_status", args).unwrap();
    json!({"status": full["status"], "recovered": full["recovered"], "events": full["events"]})
}

/// Kills a stalled fault server (its worker follows it: parent-death signal) and waits
/// until both are gone.
pub(crate) fn kill_with_worker(raw: &mut RawStdio) {
    let server = raw.child.id();
    let worker = worker_of(server);
    raw.child.kill().unwrap();
    raw.child.wait().unwrap();
    wait_gone(worker, Duration::from_secs(10));
}

/// Server A stops in the middle of a 150-file patch (half its files written); server B
/// starts on the same ledger meanwhile. B starts, leaves A's operation and files alone,
/// and the CLI reads the ledger beside both; once A is killed, B settles the operation
/// from the disk the first time it meets it, and a third server finds nothing left to do.
#[test]
fn a_second_server_never_recovers_a_live_patch() {
    let s = Shared::new();
    let marker = s.env.path().join("stalled");
    let stall = [
        ("CODESPACE_RUNNER", "uds"),
        ("CODESPACE_TEST_WORKER_STALL_AT", "75"),
        ("CODESPACE_TEST_WORKER_MARKER", marker.to_str().unwrap()),
    ];
    let mut a = s.server(Some(&fault_bin()), &stall);
    let args = json!({"workspace_id": "w", "patch": wide_patch("new"), "operation_key": "wide"});
    send_call(&mut a, 1, "apply_patch", args);
    wait_for_file(&marker, Duration::from_secs(30), "A never stopped at its 76th write");
    assert_eq!(s.holding("new\n"), 75, "A wrote 75 files before it stopped");

    let mut b = s.server(None, &[]);
    let seen = status_of_key(&mut b, 2, "wide");
    assert_eq!(seen["status"], "unknown", "still A's, unfinished: {seen}");
    assert_ne!(seen["recovered"], true, "B's start recovered A's live patch: {seen}");
    assert_eq!(s.holding("new\n"), 75, "B touched A's files");
    // The operator's commands read the ledger beside both servers and recover nothing.
    let listed = s.cli(&["operations", "list"]);
    assert!(listed.contains("\tunknown\tw\t"), "{listed}");
    let pid = format!("(pid {})", a.child.id());
    assert!(listed.contains("\trunning on inst-") && listed.contains(&pid), "{listed}");
    s.cli(&["approvals", "list"]);
    assert_eq!(s.holding("new\n"), 75, "the CLI touched A's files");
    let seen = status_of_key(&mut b, 3, "wide");
    assert_eq!(seen["status"], "unknown", "{seen}");

    kill_with_worker(&mut a);
    let listed = s.cli(&["operations", "list"]);
    assert!(listed.contains("\tits server is gone (inst-"), "{listed}");
    // B meets the operation again: its server is gone, so B settles it from the disk.
    let settled = status_of_key(&mut b, 4, "wide");
    assert_eq!(settled["status"], "failed_rolled_back", "{settled}");
    assert_eq!(settled["recovered"], true);
    assert_eq!(s.holding("old\n"), FILES, "rolled back to all-old");
    let mut c = s.server(None, &[]);
    let again = status_of_key(&mut c, 5, "wide");
    assert_eq!(again["events"], settled["events"], "settled exactly once");
    let recovered = again["events"].as_array().unwrap();
    assert_eq!(recovered.iter().filter(|e| e["name"] == "recovered").count(), 1, "{again}");
    let _ = b.finish();
    let _ = c.finish();
}

/// Server B starts while server A applies a 150-file patch, a few times over: A's patch
/// always ends `applied` with every file written, and B always starts.
#[test]
fn a_server_starting_beside_a_wide_patch_leaves_it_alone() {
    let s = Shared::new();
    let mut a = s.server(None, &[]);
    for round in 0..6u64 {
        let new = format!("round {round}\n");
        let old = if round == 0 { "old\n".to_owned() } else { format!("round {}\n", round - 1) };
        let patch = wide_patch(&new).replace("-old\n", &format!("-{old}"));
        send_call(&mut a, 10 + round, "apply_patch", json!({"workspace_id": "w", "patch": patch}));
        let b = s.server(None, &[]);
        let done = answer(&mut a, 10 + round);
        let done = done.unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(done["status"], "applied", "round {round}: {}", done["failure"]);
        assert_eq!(s.holding(&new), FILES, "round {round}");
        let _ = b.finish();
    }
    let _ = a.finish();
}

/// One granted patch hold: A's resume stops at its first write; B's resume meanwhile is
/// refused (A is running it) and leaves the hold A's; once A is killed, B takes the hold
/// over, settles A's operation (nothing written: rolled back) and runs the patch once.
#[test]
fn two_servers_resuming_one_patch_hold_run_it_once() {
    let s = Shared::new();
    let marker = s.env.path().join("stalled");
    let stall = [
        ("CODESPACE_RUNNER", "uds"),
        ("CODESPACE_TEST_WORKER_STALL_AT", "0"),
        ("CODESPACE_TEST_WORKER_MARKER", marker.to_str().unwrap()),
    ];
    let mut a = s.server(Some(&fault_bin()), &stall);
    let line = json!({"workspace_id": "c", "patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n top\n+once\n*** End Patch\n"});
    let held = call(&mut a, 1, "apply_patch", line).unwrap_err();
    let id = held["approval_id"].as_str().unwrap().to_owned();
    call(&mut a, 2, "approval_resolve", json!({"approval_id": id, "decision": "grant"})).unwrap();
    send_call(&mut a, 3, "operation_resume", json!({"approval_id": id}));
    wait_for_file(&marker, Duration::from_secs(30), "A never stopped at its write");

    let mut b = s.server(None, &[]);
    let refused = call(&mut b, 4, "operation_resume", json!({"approval_id": id})).unwrap_err();
    assert_eq!(refused["code"], "APPROVAL_CONFLICT", "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("another running server"), "{refused}");
    let shown = s.cli(&["approvals", "show", &id]);
    assert!(shown.contains("resuming"), "B left the hold as A had it: {shown}");

    kill_with_worker(&mut a);
    let done = call(&mut b, 5, "operation_resume", json!({"approval_id": id})).unwrap();
    assert_eq!(done["apply_patch"]["status"], "applied", "{done}");
    let again = call(&mut b, 6, "operation_resume", json!({"approval_id": id})).unwrap();
    assert_eq!(again, done, "a consumed hold answers its outcome again");
    let text = std::fs::read_to_string(s.root("c").join("a.txt")).unwrap();
    assert_eq!(text, "top\nonce\n", "applied exactly once");
    let _ = b.finish();
}

/// Two servers are asked to resume the same granted command hold at the same moment,
/// round after round: the command runs once, the winner answers its `process_id`, and the
/// other answers the same outcome or that the hold is being resumed elsewhere, never
/// `APPROVAL_AMBIGUOUS`.
#[test]
fn two_servers_resuming_one_command_hold_start_it_once() {
    let s = Shared::new();
    let mut a = s.server(None, &[]);
    let mut b = s.server(None, &[]);
    let mut ids = 100;
    let mut conflicts = 0;
    for round in 0..12 {
        let exec = json!({"workspace_id": "c", "command": ["sh", "-c", format!("echo ran-{round} >> ran.txt")]});
        ids += 10;
        let held = call(&mut a, ids, "exec_command", exec).unwrap_err();
        let id = held["approval_id"].as_str().unwrap().to_owned();
        call(&mut b, ids + 1, "approval_resolve", json!({"approval_id": id, "decision": "grant"}))
            .unwrap();
        let resume = json!({"approval_id": id});
        let (first, second) = if round % 2 == 0 { (&mut a, &mut b) } else { (&mut b, &mut a) };
        send_call(first, ids + 2, "operation_resume", resume.clone());
        send_call(second, ids + 3, "operation_resume", resume);
        let answers = [answer(first, ids + 2), answer(second, ids + 3)];
        let mut pids = Vec::new();
        for got in &answers {
            match got {
                Ok(v) => pids.push(v["exec_command"]["process_id"].as_str().unwrap().to_owned()),
                Err(body) => {
                    assert_eq!(body["code"], "APPROVAL_CONFLICT", "round {round}: {body}");
                    conflicts += 1;
                }
            }
        }
        assert!(!pids.is_empty(), "round {round}: nobody answered the process: {answers:?}");
        assert!(pids.windows(2).all(|w| w[0] == w[1]), "round {round}: {pids:?}");
        let ran = |s: &Shared| {
            let text = std::fs::read_to_string(s.root("c").join("ran.txt")).unwrap_or_default();
            text.lines().filter(|l| *l == format!("ran-{round}")).count()
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while ran(&s) == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(ran(&s), 1, "round {round}: the command ran once");
    }
    eprintln!("command holds resumed by two servers: 12 rounds, {conflicts} refused as elsewhere");
    let _ = a.finish();
    let _ = b.finish();
}
