//! The sandbox through the supervisor: what only the reaper shim and the supervisor add
//! (a PTY, killing the sandboxed tree, signal reports, a spawn failure for a sandbox that
//! cannot be entered), and the helpers the namespace tests share. What the sandbox itself
//! enforces is tested in `codespace-sandbox`'s own tests.
//!
//! These tests never skip: a host that cannot enforce the sandbox fails them, loudly
//! (`CODESPACE_REQUIRE_SANDBOX=1` in CI only makes the message say so).
#![expect(
    clippy::disallowed_methods,
    reason = "tests build fixtures on the host, read the outcome and read CODESPACE_REQUIRE_SANDBOX"
)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use codespace_process::{ProcError, SpawnRequest, Terminate};
use codespace_sandbox::SandboxPolicy;
use codespace_types::{NetworkPolicy, Termination};
use rustix::process::Signal;

use crate::support::{
    assert_gone, lossy, marker, req, run, supervisor, tty_req, wait_exit, wait_started,
};

pub(crate) const PYTHON: &str = "/usr/bin/python3";

/// Fails the test (never skips) when this host cannot enforce the sandbox.
fn require_sandbox() {
    let p = codespace_sandbox::probe();
    let ok = p.landlock_abi.is_some_and(|v| v >= 7)
        && p.seccomp_filter
        && p.user_and_network_namespaces
        && p.mount_and_pid_namespaces;
    let required = std::env::var("CODESPACE_REQUIRE_SANDBOX").is_ok_and(|v| v == "1");
    assert!(
        ok,
        "this host cannot enforce the command sandbox (need Landlock ABI >= 7, seccomp filters, \
         user + network + mount + PID namespaces with a per-namespace pid_max): {p:?}; CODESPACE_REQUIRE_SANDBOX={required}. The sandbox \
         tests fail rather than skip."
    );
}

/// The pid cap of the tests' policies (the fork-bomb test sets its own).
const TEST_MAX_PIDS: u32 = 1024;

fn policy(read: &[&Path], write: &[&Path], network: NetworkPolicy) -> SandboxPolicy {
    SandboxPolicy {
        read_roots: read.iter().map(|p| p.to_path_buf()).collect(),
        writable_roots: write.iter().map(|p| p.to_path_buf()).collect(),
        masked: vec![],
        network,
        max_pids: TEST_MAX_PIDS,
        workdir: None,
    }
}

/// `argv` under a policy with `roots` writable, started in the first root.
pub(crate) fn sandboxed(argv: &[&str], roots: &[&Path], network: NetworkPolicy) -> SpawnRequest {
    with_policy(argv, policy(&[], roots, network))
}

fn with_policy(argv: &[&str], policy: SandboxPolicy) -> SpawnRequest {
    require_sandbox();
    let mut r = req(argv);
    if let Some(root) = policy.writable_roots.first().or(policy.read_roots.first()) {
        r.cwd = root.clone();
    }
    r.sandbox = Some(policy);
    r
}

/// A scratch workspace under the host's `/tmp` (so host-`/tmp` cases are siblings of it).
pub(crate) fn workspace() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("codespace-sbx-ws-").tempdir_in("/tmp").unwrap()
}

/// A path outside every writable root, cleaned up by the test.
fn outside(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("codespace-sbx-{}-{name}", std::process::id()))
}

pub(crate) async fn output_of(r: SpawnRequest) -> (Option<i32>, String) {
    let sup = supervisor();
    let (status, out) = run(&sup, r).await;
    (status.exit_code, lossy(&out))
}

pub(crate) fn has_line(out: &str, line: &str) -> bool {
    out.lines().any(|l| l.trim() == line)
}

/// R3 through the supervisor: a real fork bomb under the sandbox's pid cap, terminated while
/// it runs, leaves nothing behind, and the supervisor keeps serving meanwhile.
#[tokio::test]
async fn a_sandboxed_fork_bomb_is_killable() {
    let ws = workspace();
    let mut p = policy(&[], &[ws.path()], NetworkPolicy::Restricted);
    p.max_pids = 400;
    // A real fork bomb, terminated while it runs.
    let sup = supervisor();
    let m = marker();
    let bomb = format!("b() {{ b | b & }}; b; sleep {m}");
    let spawned = sup.spawn(with_policy(&["bash", "-c", &bomb], p)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (status, out) = run(&sup, req(&["echo", "still-serving"])).await;
    assert_eq!((status.exit_code, lossy(&out).trim()), (Some(0), "still-serving"));
    assert_eq!(
        sup.terminate(&spawned.id, None).unwrap(),
        Terminate::Sent { grace: Duration::ZERO }
    );
    assert_eq!(wait_exit(&sup, &spawned).await.termination, Some(Termination::Terminated));
    assert_gone(&[&m], Duration::from_secs(5)).await;
}

/// F8: a sandbox that cannot be entered is a spawn failure naming the step; the command never
/// runs (no weaker fallback).
#[tokio::test]
async fn unenterable_sandbox_is_a_spawn_failure() {
    let ws = workspace();
    let marker = outside(ws.path(), "ran");
    let missing = ws.path().join("does-not-exist");
    let mut r = sandboxed(
        &["touch", marker.to_str().unwrap()],
        &[&missing, ws.path()],
        NetworkPolicy::Restricted,
    );
    r.cwd = ws.path().to_path_buf();
    let sup = supervisor();
    match sup.spawn(r).await {
        Err(ProcError::SpawnFailed(msg)) => {
            assert!(msg.contains("sandbox root"), "{msg}");
            assert!(msg.contains("does-not-exist"), "{msg}");
        }
        other => panic!("expected SpawnFailed, got {other:?}"),
    }
    assert!(!marker.exists(), "the command ran unsandboxed");
}

/// A PTY works through the sandbox: size, `/dev/tty` writes, stdin-free output.
#[tokio::test]
async fn pty_works_under_the_sandbox() {
    require_sandbox();
    let ws = workspace();
    let mut r = tty_req(&["sh", "-c", "stty size; echo via-tty > /dev/tty; echo done"]);
    r.cwd = ws.path().to_path_buf();
    r.sandbox = Some(policy(&[], &[ws.path()], NetworkPolicy::Restricted));
    let (code, out) = output_of(r).await;
    assert_eq!(code, Some(0), "{out}");
    for line in ["24 80", "via-tty", "done"] {
        assert!(has_line(&out, line), "missing {line:?} in {out:?}");
    }

    // Resize and stdin reach the command through the launcher; its exit code comes back.
    let mut r = tty_req(&["sh", "-c", "stty size; read line; echo got=$line; stty size; exit 3"]);
    r.cwd = ws.path().to_path_buf();
    r.sandbox = Some(policy(&[], &[ws.path()], NetworkPolicy::Restricted));
    let sup = supervisor();
    let spawned = sup.spawn(r).await.unwrap();
    crate::support::wait_output(&sup, &spawned.id, |t| t.contains("24 80\r\n")).await;
    sup.resize(&spawned.id, 40, 120).unwrap();
    sup.write_stdin(&spawned.id, b"hi\n", false).unwrap();
    let status = wait_exit(&sup, &spawned).await;
    let out = lossy(&crate::support::read_all(&sup, &spawned.id).await);
    assert_eq!(status.exit_code, Some(3), "{out}");
    for line in ["got=hi", "40 120"] {
        assert!(has_line(&out, line), "missing {line:?} in {out:?}");
    }
}

/// R1/R2 under the sandbox: the shim (outside the Landlock domain) still kills the whole
/// sandboxed tree, a signal death is reported as such, and the command's parent-death
/// signal survives the namespace and capability changes (a SIGKILLed shim takes it along).
#[tokio::test]
async fn sandboxed_trees_are_killed_and_signals_reported() {
    let ws = workspace();
    let policy = |argv: &[&str]| sandboxed(argv, &[ws.path()], NetworkPolicy::Restricted);
    let sup = supervisor();

    let (status, _) = run(&sup, policy(&["sh", "-c", "kill -TERM $$"])).await;
    assert_eq!(status.termination, Some(Termination::Signaled));
    assert_eq!(status.signal.map(|s| s.number), Some(15));

    let (esc, fg) = (marker(), marker());
    let script = format!("setsid sh -c 'sleep {esc}' & sleep {fg}");
    let spawned = sup.spawn(policy(&["sh", "-c", &script])).await.unwrap();
    wait_started(&[&esc, &fg]).await;
    assert_eq!(
        sup.terminate(&spawned.id, None).unwrap(),
        Terminate::Sent { grace: Duration::ZERO }
    );
    assert_gone(&[&esc, &fg], Duration::from_secs(5)).await;
    assert_eq!(wait_exit(&sup, &spawned).await.termination, Some(Termination::Terminated));

    let m = marker();
    let spawned = sup.spawn(policy(&["sleep", &m])).await.unwrap();
    wait_started(&[&m]).await;
    let shim = shim_of(&m);
    rustix::process::kill_process(rustix::process::Pid::from_raw(shim).unwrap(), Signal::KILL)
        .unwrap();
    assert_gone(&[&m], Duration::from_secs(5)).await;
    let _ = tokio::time::timeout(Duration::from_secs(5), spawned.exited.wait()).await;
}

/// The pid of the reaper shim of the command `sleep <marker>`: the last of its ancestors
/// below this test process, or below the spawn helper (a child of this process whose
/// forks, the shim among them, all show its `--helper` command line).
fn shim_of(marker: &str) -> i32 {
    let me = std::process::id() as i32;
    let ppid = |pid: i32| -> i32 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let rest = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
        rest.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0)
    };
    let pid =
        *crate::support::pids_with_arg(marker).first().unwrap_or_else(|| panic!("no {marker}"));
    let mut chain = vec![pid as i32];
    while let Some(&last) = chain.last() {
        let parent = ppid(last);
        if parent == me || parent <= 1 {
            break;
        }
        chain.push(parent);
    }
    let top = *chain.last().unwrap();
    let cmdline = std::fs::read(format!("/proc/{top}/cmdline")).unwrap_or_default();
    let helper = cmdline.split(|b| *b == 0).any(|a| a == b"--helper");
    if helper { chain[chain.len() - 2] } else { top }
}
