//! The runner in a worker process (`--runner uds`, `--runner-socket`): what the worker may
//! see, what a killed worker leaves behind, a worker on another protocol, and a worker run
//! as another user. (What a lost answer or a killed patch becomes is in `runner_faults.rs`;
//! the whole suite also runs with the worker: `CODESPACE_IT_RUNNER=uds`.)

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::process::alive;
use crate::support::{Env, bin, call};

pub(crate) const OLD: [&str; 3] = ["a old\n", "b old\n", "c old\n"];
pub(crate) const NEW: [&str; 3] = ["a new\n", "b new\n", "c new\n"];

/// A patch that updates a.txt, b.txt and c.txt (three writes).
pub(crate) fn three_file_patch() -> String {
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

pub(crate) fn contents(root: &Path) -> Vec<String> {
    ["a", "b", "c"]
        .iter()
        .map(|n| std::fs::read_to_string(root.join(format!("{n}.txt"))).unwrap())
        .collect()
}

pub(crate) fn three_files(env: &mut Env) -> PathBuf {
    let root = env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    for (i, n) in ["a", "b", "c"].iter().enumerate() {
        std::fs::write(root.join(format!("{n}.txt")), OLD[i]).unwrap();
    }
    root
}

/// The pid of the worker a server started (its child running `worker`).
pub(crate) fn worker_of(server: u32) -> u32 {
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

pub(crate) fn wait_gone(pid: u32, limit: Duration) {
    let deadline = Instant::now() + limit;
    while Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default().contains(") Z")
    {
        assert!(Instant::now() < deadline, "process {pid} still alive after {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub(crate) fn wait_for_file(path: &Path, limit: Duration, what: &str) {
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
