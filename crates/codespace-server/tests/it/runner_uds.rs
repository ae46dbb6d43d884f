//! The runner in a worker process (`--runner uds`, `--runner-socket`): what the worker may
//! see, what a lost answer becomes, what a killed worker leaves behind, a worker on another
//! protocol, and a worker run as another user. (The whole suite also runs with the worker:
//! `CODESPACE_IT_RUNNER=uds`.)

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::process::alive;
use crate::support::{Env, bin, call, refused};

const OLD: [&str; 3] = ["a old\n", "b old\n", "c old\n"];
const NEW: [&str; 3] = ["a new\n", "b new\n", "c new\n"];

/// A patch that updates a.txt, b.txt and c.txt (three writes).
fn three_file_patch() -> String {
    let mut p = String::from("*** Begin Patch\n");
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        p.push_str(&format!(
            "*** Update File: {name}.txt\n@@\n-{}+{}",
            OLD[i].trim_end().to_owned() + "\n",
            NEW[i].trim_end().to_owned() + "\n"
        ));
    }
    p.push_str("*** End Patch\n");
    p
}

fn contents(root: &Path) -> Vec<String> {
    ["a", "b", "c"]
        .iter()
        .map(|n| std::fs::read_to_string(root.join(format!("{n}.txt"))).unwrap())
        .collect()
}

fn three_files(env: &mut Env) -> PathBuf {
    let root = env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    for (i, n) in ["a", "b", "c"].iter().enumerate() {
        std::fs::write(root.join(format!("{n}.txt")), OLD[i]).unwrap();
    }
    root
}

/// The pid of the worker a server started (its child running `worker`).
fn worker_of(server: u32) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found = alive(" worker --socket ").into_iter().find(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            after.split_whitespace().nth(1) == Some(&server.to_string())
        });
        if let Some(pid) = found {
            return pid;
        }
        assert!(Instant::now() < deadline, "server {server} started no worker");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_gone(pid: u32, limit: Duration) {
    let deadline = Instant::now() + limit;
    while Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default().contains(") Z")
    {
        assert!(Instant::now() < deadline, "process {pid} still alive after {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_for_file(path: &Path, limit: Duration, what: &str) {
    let deadline = Instant::now() + limit;
    while !path.exists() {
        assert!(Instant::now() < deadline, "{what}: {} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A started worker holds no secret and no descriptor of the server's, and lives in a
/// private directory; tools work through it.
#[tokio::test]
async fn a_started_worker_is_private_and_holds_no_secret() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    std::fs::write(root.join("hello.txt"), "hello\n").unwrap();
    let token = "tok-3b6f0c1e9d2a47d8";
    let (client, server) =
        env.stdio_with(&[("CODESPACE_RUNNER", "uds"), ("CODESPACE_TOKEN", token)]).await;
    let r = call(&client, "read", json!({"workspace_id": "w", "path": "hello.txt"})).await.unwrap();
    assert_eq!(r["content"], "hello\n");
    let info = call(&client, "workspace_info", json!({"workspace_id": "w"})).await.unwrap();
    assert_eq!(
        (info["runner"]["mode"].clone(), info["runner"]["state"].clone()),
        (json!("uds"), json!("serving")),
        "{info}"
    );
    let worker = worker_of(server);
    let environ = std::fs::read(format!("/proc/{worker}/environ")).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    assert!(!environ.contains(token), "the worker's environment holds the token: {environ}");
    assert!(!environ.contains("XDG_STATE_HOME"), "{environ}");
    let cmdline = std::fs::read(format!("/proc/{worker}/cmdline")).unwrap();
    let args: Vec<String> =
        cmdline.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
    let socket = PathBuf::from(&args[args.iter().position(|a| a == "--socket").unwrap() + 1]);
    let dir = socket.parent().unwrap();
    assert!(dir.starts_with(env.state()), "{}", dir.display());
    let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "{}", dir.display());
    // Nothing of the server's state is open in the worker: not the ledger, not its
    // directory; stdin is /dev/null.
    for fd in std::fs::read_dir(format!("/proc/{worker}/fd")).unwrap() {
        let target = std::fs::read_link(fd.unwrap().path()).unwrap_or_default();
        let target = target.to_string_lossy().into_owned();
        assert!(
            !target.contains("operations.sqlite3") && !target.contains("/state/codespace/ledger"),
            "the worker holds {target}"
        );
    }
    let stdin = std::fs::read_link(format!("/proc/{worker}/fd/0")).unwrap();
    assert_eq!(stdin, Path::new("/dev/null"));
    // The worker and the server are two processes: the command's parent chain has the worker.
    let exec = call(
        &client,
        "exec_command",
        json!({"workspace_id": "w", "command": ["sh", "-c", "echo $PPID"]}),
    )
    .await
    .unwrap();
    assert_eq!(exec["dispatch_status"], "confirmed");
    client.cancel().await.unwrap();
    wait_gone(worker, Duration::from_secs(10));
    assert!(!dir.exists(), "the worker's directory outlives the server: {}", dir.display());
}

/// Kill -9 the worker before the first write, between two, and after the last: the server
/// exits non-zero, the next start settles the operation from the disk (all old, or all new
/// when every write had landed), and a replay under the same key never applies twice.
#[tokio::test]
async fn a_worker_killed_mid_patch_leaves_no_half_applied_operation() {
    for (stall, expect_new) in [("0", false), ("1", false), ("", true)] {
        let mut env = Env::new();
        let root = three_files(&mut env);
        let marker = env.path().join("stalled");
        let vars = [
            ("CODESPACE_RUNNER", "uds"),
            ("CODESPACE_TEST_WORKER_STALL_AT", stall),
            ("CODESPACE_TEST_WORKER_MARKER", marker.to_str().unwrap()),
        ];
        let (client, server) = env.stdio_with(&vars).await;
        let args = json!({"workspace_id": "w", "patch": three_file_patch(), "operation_key": "k1"});
        let stop = {
            let marker = marker.clone();
            tokio::task::spawn_blocking(move || {
                wait_for_file(
                    &marker,
                    Duration::from_secs(20),
                    "the worker never stopped at its write (a test-hooks build?)",
                );
                let worker = worker_of(server);
                rustix::process::kill_process(
                    rustix::process::Pid::from_raw(worker as i32).unwrap(),
                    rustix::process::Signal::KILL,
                )
                .unwrap();
            })
        };
        // The server cannot serve without its worker: it ends, and the call with it.
        let pending = crate::support::try_call(&client, "apply_patch", args.clone());
        let (_, stopped) =
            tokio::join!(tokio::time::timeout(Duration::from_secs(30), pending), stop);
        stopped.unwrap();
        wait_gone(server, Duration::from_secs(10));
        drop(client);

        let client = env.stdio_with(&[("CODESPACE_RUNNER", "uds")]).await.0;
        let status =
            call(&client, "operation_status", json!({"workspace_id": "w", "operation_key": "k1"}))
                .await
                .unwrap();
        let want = if expect_new { "applied" } else { "failed_rolled_back" };
        assert_eq!(status["status"], want, "stall {stall:?}: {status}");
        assert_eq!(status["recovered"], true, "{status}");
        let files = if expect_new { NEW } else { OLD };
        assert_eq!(contents(&root), files, "stall {stall:?}");
        let again = call(&client, "apply_patch", args.clone()).await.unwrap();
        assert_eq!(again["replayed"], true, "{again}");
        assert_eq!(again["operation_id"], status["operation_id"]);
        assert_eq!(contents(&root), files, "a replay applied again (stall {stall:?})");
    }
}

/// A worker started separately (`codespace worker --socket`), with a fault.
fn external_worker(env: &Env, fault: Option<&str>) -> (Child, PathBuf) {
    match fault {
        Some(kind) => external_worker_with(env, &[("CODESPACE_TEST_WORKER_HANG_UP", kind)]),
        None => external_worker_with(env, &[]),
    }
}

/// [`external_worker`] with these fault variables.
fn external_worker_with(env: &Env, faults: &[(&str, &str)]) -> (Child, PathBuf) {
    let socket = env.path().join("worker.sock");
    let mut cmd = env.command();
    cmd.arg("worker").arg("--socket").arg(&socket).stdin(Stdio::null()).stdout(Stdio::null());
    cmd.envs(faults.iter().copied());
    let child = cmd.spawn().unwrap();
    wait_for_file(&socket, Duration::from_secs(10), "the worker never listened");
    (child, socket)
}

/// The connection drops after the patch was sent and ran, before its answer: the caller
/// hears `unknown` (never `rejected`), the ledger keeps it unfinished, the server keeps
/// serving and says plainly that its runner is gone (`TIMEOUT`), and the next start
/// settles it from the disk; a replay under the same key does not apply it again.
#[tokio::test]
async fn a_lost_answer_is_unknown_then_settled_from_the_disk() {
    let mut env = Env::new();
    let root = three_files(&mut env);
    let (mut worker, socket) = external_worker(&env, Some("apply"));
    let (client, _) =
        env.stdio_with(&[("CODESPACE_RUNNER_SOCKET", socket.to_str().unwrap())]).await;
    let args = json!({"workspace_id": "w", "patch": three_file_patch(), "operation_key": "k2"});
    let r = call(&client, "apply_patch", args.clone()).await.unwrap();
    assert_eq!(r["status"], "unknown", "{r}");
    assert!(r["failure"].as_str().unwrap().contains("may have run"), "{r}");
    assert_eq!(contents(&root), NEW, "the worker ran the patch before hanging up");
    let status = call(&client, "operation_status", json!({"operation_id": r["operation_id"]}))
        .await
        .unwrap();
    assert_eq!(status["status"], "unknown", "{status}");
    // No reconnect: every file tool says the runner is gone, and nothing runs.
    let e =
        refused(&client, "read", json!({"workspace_id": "w", "path": "a.txt"}), "TIMEOUT").await;
    assert!(e["message"].as_str().unwrap().contains("nothing ran"), "{e}");
    let info = call(&client, "workspace_info", json!({})).await.unwrap();
    assert_eq!(info["runner"]["mode"], "uds", "{info}");
    assert_eq!(info["runner"]["state"], "lost", "{info}");
    client.cancel().await.unwrap();
    assert!(worker.wait().unwrap().success(), "the worker ends when its gateway connection does");

    let (_worker, socket) = {
        std::fs::remove_file(&socket).ok();
        external_worker(&env, None)
    };
    let client = env.stdio_with(&[("CODESPACE_RUNNER_SOCKET", socket.to_str().unwrap())]).await.0;
    let status = call(&client, "operation_status", json!({"operation_id": r["operation_id"]}))
        .await
        .unwrap();
    assert_eq!(status["status"], "applied", "{status}");
    let again = call(&client, "apply_patch", args).await.unwrap();
    assert_eq!(
        (again["replayed"].clone(), again["status"].clone()),
        (json!(true), json!("applied"))
    );
    assert_eq!(contents(&root), NEW);
}

/// The spawn's answer is lost: `dispatch_status: "unknown"`, with the id the command would
/// have, never a second start.
#[tokio::test]
async fn a_lost_spawn_answer_says_dispatch_unknown() {
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    let (mut worker, socket) = external_worker(&env, Some("spawn"));
    let (client, _) =
        env.stdio_with(&[("CODESPACE_RUNNER_SOCKET", socket.to_str().unwrap())]).await;
    let r = call(&client, "exec_command", json!({"workspace_id": "w", "command": ["sleep", "30"]}))
        .await
        .unwrap();
    assert_eq!(r["dispatch_status"], "unknown", "{r}");
    assert!(r["process_id"].as_str().unwrap().starts_with("proc-"), "{r}");
    // The worker saw its gateway go and killed what it started.
    assert!(worker.wait().unwrap().success());
    assert!(alive("sleep 30").is_empty(), "{:?}", alive("sleep 30"));
}

/// A worker on another protocol version is a clear start error naming both versions.
#[test]
fn a_worker_on_another_protocol_is_refused_naming_both() {
    let env = {
        let mut env = Env::new();
        env.workspace("w", json!({}));
        env
    };
    let socket = env.path().join("other.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let fake = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        stream.set_nonblocking(true).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let stream = tokio::net::UnixStream::from_std(stream).unwrap();
            let mut options = codespace_wire::ServeOptions::new("9.9.9-other");
            options.protocol = 99;
            let (_tx, rx) = tokio::sync::mpsc::unbounded_channel::<()>();
            let handler = |_: (), _, _| async {};
            let _ = codespace_wire::serve::<(), (), (), _, _>(stream, options, handler, rx).await;
        });
    });
    let out = env
        .command()
        .arg("serve")
        .arg("--config")
        .arg(env.config())
        .env("CODESPACE_RUNNER_SOCKET", &socket)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    fake.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("99") && stderr.contains(&codespace_wire::PROTOCOL.to_string()),
        "{stderr}"
    );
    assert!(stderr.contains("9.9.9-other"), "{stderr}");
}

/// `--runner-socket` to a worker run as another user (nobody): files and commands work
/// through it, what it writes is that user's, and it can read neither the ledger nor the
/// token file, which stay with the server.
#[tokio::test]
async fn a_worker_run_as_another_user_cannot_read_the_ledger_or_token() {
    if rustix::process::getuid().as_raw() != 0 {
        assert!(
            std::env::var_os("CODESPACE_REQUIRE_SANDBOX").is_none(),
            "running a worker as another user needs root"
        );
        eprintln!(
            "SKIPPED (not root): a_worker_run_as_another_user_cannot_read_the_ledger_or_token"
        );
        return;
    }
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    std::fs::write(root.join("mine.txt"), "shared\n").unwrap();
    // The workspace is the other user's to use; the state directory stays private (0700).
    for dir in [env.path(), &env.path().join("ws"), &root] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    std::fs::set_permissions(root.join("mine.txt"), std::fs::Permissions::from_mode(0o666))
        .unwrap();
    let sockets = env.path().join("sockets");
    std::fs::create_dir(&sockets).unwrap();
    std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o777)).unwrap();
    let socket = sockets.join("nobody.sock");
    let mut worker = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(bin())
        .arg("worker")
        .arg("--socket")
        .arg(&socket)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_file(&socket, Duration::from_secs(10), "the nobody worker never listened");
    let token_file = env.path().join("token");
    std::fs::write(&token_file, "tok-nobody-must-not-see\n").unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (client, _) =
        env.stdio_with(&[("CODESPACE_RUNNER_SOCKET", socket.to_str().unwrap())]).await;
    let r = call(&client, "read", json!({"workspace_id": "w", "path": "mine.txt"})).await.unwrap();
    assert_eq!(r["content"], "shared\n");
    let patch = "*** Begin Patch\n*** Add File: made.txt\n+by nobody\n*** End Patch\n";
    let p =
        call(&client, "apply_patch", json!({"workspace_id": "w", "patch": patch})).await.unwrap();
    assert_eq!(p["status"], "applied", "{p}");
    let made = std::fs::metadata(root.join("made.txt")).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&made), 65534, "the worker wrote it");
    let ledger = env.state().join("codespace/operations.sqlite3");
    assert!(ledger.is_file(), "the ledger file");
    for secret in [&ledger, &token_file] {
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--", "cat"])
            .arg(secret)
            .output()
            .unwrap();
        assert!(!out.status.success(), "nobody can read {}", secret.display());
    }
    client.cancel().await.unwrap();
    assert!(worker.wait().unwrap().success());
}

/// SIGTERM or SIGKILL to a server whose worker runs a daemonizing command (a `setsid`
/// escapee), or SIGKILL to the worker itself: 2 s later nothing of the command is left.
#[tokio::test]
async fn a_killed_server_or_worker_leaves_no_command_behind() {
    for (i, (target, signal)) in [
        ("server", rustix::process::Signal::TERM),
        ("server", rustix::process::Signal::KILL),
        ("worker", rustix::process::Signal::KILL),
    ]
    .into_iter()
    .enumerate()
    {
        let mut env = Env::new();
        env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
        let (client, server) = env.stdio_with(&[("CODESPACE_RUNNER", "uds")]).await;
        let (escapee, child) = (format!("sleep 1000.44{i}"), format!("sleep 1000.45{i}"));
        let script = format!("setsid sh -c '{escapee}' & {child}");
        let r = call(
            &client,
            "exec_command",
            json!({"workspace_id": "w", "command": ["sh", "-c", script]}),
        )
        .await
        .unwrap();
        assert_eq!(r["dispatch_status"], "confirmed");
        let deadline = Instant::now() + Duration::from_secs(10);
        while alive(&escapee).is_empty() || alive(&child).is_empty() {
            assert!(Instant::now() < deadline, "the command never started");
            std::thread::sleep(Duration::from_millis(20));
        }
        let pid = if target == "server" { server } else { worker_of(server) };
        rustix::process::kill_process(rustix::process::Pid::from_raw(pid as i32).unwrap(), signal)
            .unwrap();
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(
            alive(&escapee).is_empty() && alive(&child).is_empty(),
            "{target} {signal:?}: left {:?} {:?}",
            alive(&escapee),
            alive(&child)
        );
        drop(client);
    }
}

/// A granted hold over three files whose resume lost its answer (the worker runs with
/// `faults`; `interrupt` ends it mid-call): consumed as `unknown`. Returns the env, the
/// workspace, the hold's id, that first answer and the ledger's path.
async fn hold_consumed_as_unknown(
    faults: &[(&str, &str)],
    interrupt: impl FnOnce(&mut Child) + Send + 'static,
) -> (Env, PathBuf, serde_json::Value, serde_json::Value, PathBuf) {
    let mut env = Env::new();
    let config = json!({"profile": "workspace-write", "sandbox": "off", "approvals": "confirm"});
    let root = env.workspace("w", config);
    for (i, n) in ["a", "b", "c"].iter().enumerate() {
        std::fs::write(root.join(format!("{n}.txt")), OLD[i]).unwrap();
    }
    let db = env.path().join("ledger.sqlite3");
    let (worker, socket) = external_worker_with(&env, faults);
    let ledger = ("CODESPACE_OPERATIONS_DB", db.to_str().unwrap());
    let (client, _) =
        env.stdio_with(&[("CODESPACE_RUNNER_SOCKET", socket.to_str().unwrap()), ledger]).await;
    let args = json!({"workspace_id": "w", "patch": three_file_patch()});
    let held = refused(&client, "apply_patch", args, "APPROVAL_REQUIRED").await;
    let id = held["approval_id"].clone();
    let grant = json!({"approval_id": id, "decision": "grant"});
    call(&client, "approval_resolve", grant).await.unwrap();
    let resume = call(&client, "operation_resume", json!({"approval_id": id}));
    let interrupted = tokio::task::spawn_blocking(move || {
        let mut worker = worker;
        interrupt(&mut worker);
        worker
    });
    let (first, worker) = tokio::join!(resume, interrupted);
    let (first, mut worker) = (first.unwrap(), worker.unwrap());
    assert_eq!(first["apply_patch"]["status"], "unknown", "{first}");
    client.cancel().await.unwrap();
    let _ = worker.wait();
    std::fs::remove_file(&socket).ok();
    (env, root, id, first, db)
}

/// After a restart (a fresh worker), resuming the hold twice answers `want` for the same
/// operation, and the ledger keeps that outcome with the hold.
async fn resumes_answer(
    env: &Env,
    id: &serde_json::Value,
    first: &serde_json::Value,
    db: &Path,
    want: &str,
) {
    let (_worker, socket) = external_worker(env, None);
    let ledger = ("CODESPACE_OPERATIONS_DB", db.to_str().unwrap());
    let client =
        env.stdio_with(&[("CODESPACE_RUNNER_SOCKET", socket.to_str().unwrap()), ledger]).await.0;
    for round in 0..2 {
        let again = call(&client, "operation_resume", json!({"approval_id": id})).await.unwrap();
        let patch = &again["apply_patch"];
        assert_eq!(patch["status"], want, "round {round}: {again}");
        assert_eq!(patch["operation_id"], first["apply_patch"]["operation_id"], "{again}");
        assert_eq!(again["state"], "consumed", "{again}");
    }
    let conn = rusqlite::Connection::open(db).unwrap();
    let sql = "SELECT result_json FROM approvals WHERE approval_id = ?1";
    let stored: String = conn.query_row(sql, [id.as_str().unwrap()], |r| r.get(0)).unwrap();
    assert!(stored.contains(&format!(r#""status":"{want}""#)), "{stored}");
}

/// A held patch whose resume lost its answer after the worker ran it is consumed as
/// `unknown`. Once the next start has settled the operation from the disk (applied),
/// resuming the hold again answers that, and keeps saying it; nothing is applied again.
#[tokio::test]
async fn a_hold_consumed_as_unknown_answers_what_recovery_settled() {
    let hang_up = [("CODESPACE_TEST_WORKER_HANG_UP", "apply")];
    let (env, root, id, first, db) = hold_consumed_as_unknown(&hang_up, |_| {}).await;
    assert_eq!(contents(&root), NEW, "the worker ran the patch before hanging up");
    resumes_answer(&env, &id, &first, &db, "applied").await;
    assert_eq!(contents(&root), NEW, "nothing was applied again");
}

/// The same when the worker was killed before its first write: recovery finds every file
/// as it was and rolls the operation back, and the consumed hold answers
/// `failed_rolled_back` (its arguments are gone: a new request needs a new hold).
#[tokio::test]
async fn a_hold_consumed_as_unknown_answers_a_rollback_by_recovery() {
    let marker_dir = tempfile::tempdir().unwrap();
    let marker = marker_dir.path().join("stalled");
    let stall = [
        ("CODESPACE_TEST_WORKER_STALL_AT", "0"),
        ("CODESPACE_TEST_WORKER_MARKER", marker.to_str().unwrap()),
    ];
    let stalled = marker.clone();
    let kill = move |worker: &mut Child| {
        wait_for_file(&stalled, Duration::from_secs(20), "the worker never stopped at its write");
        worker.kill().unwrap();
    };
    let (env, root, id, first, db) = hold_consumed_as_unknown(&stall, kill).await;
    assert_eq!(contents(&root), OLD, "killed before its first write");
    resumes_answer(&env, &id, &first, &db, "failed_rolled_back").await;
    assert_eq!(contents(&root), OLD);
}
