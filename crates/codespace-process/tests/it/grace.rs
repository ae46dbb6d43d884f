//! The grace before the kill through the supervisor: SIGTERM to the whole tree first (a
//! trap runs, and the status names SIGTERM, in the sandbox too, across the init and the
//! monitor), SIGKILL after the grace to what ignores it, and a second terminate that
//! shortens a grace under way.

use std::time::{Duration, Instant};

use codespace_process::{SpawnRequest, Terminate};
use codespace_types::{NetworkPolicy, SignalInfo, Termination};

use crate::sandbox::{sandboxed, workspace};
use crate::support::*;

const TRAP: &str = "trap 'echo trapped; trap - TERM; kill -TERM $$' TERM; echo ready; \
                    while :; do sleep 0.1; done";

fn named(number: i32, name: &str) -> Option<SignalInfo> {
    Some(SignalInfo { number, name: Some(name.to_owned()) })
}

/// Terminates `r` once it said `ready` with `grace`; returns its status and output.
async fn terminated(
    mut r: SpawnRequest,
    grace: Duration,
) -> (codespace_process::ProcStatus, String) {
    r.kill_grace = grace;
    let sup = supervisor();
    let spawned = sup.spawn(r).await.unwrap();
    wait_output(&sup, &spawned.id, |o| o.contains("ready")).await;
    assert_eq!(sup.terminate(&spawned.id, None).unwrap(), Terminate::Sent { grace });
    let status = wait_exit(&sup, &spawned).await;
    (status, lossy(&read_all(&sup, &spawned.id).await))
}

#[tokio::test]
async fn a_trap_runs_and_sigterm_is_reported_in_and_out_of_the_sandbox() {
    let ws = workspace();
    let requests = [
        ("unconfined", req(&["sh", "-c", TRAP])),
        ("sandboxed", sandboxed(&["sh", "-c", TRAP], &[ws.path()], NetworkPolicy::Restricted)),
    ];
    for (what, r) in requests {
        let (status, out) = terminated(r, Duration::from_secs(10)).await;
        assert!(out.contains("trapped"), "{what}: {out:?}");
        assert_eq!(status.termination, Some(Termination::Terminated), "{what}");
        assert_eq!((status.exit_code, status.signal), (None, named(15, "SIGTERM")), "{what}");
    }
}

#[tokio::test]
async fn what_ignores_sigterm_gets_sigkill_after_the_grace_in_and_out_of_the_sandbox() {
    let ws = workspace();
    let script = "trap '' TERM; echo ready; sleep 1000";
    let requests = [
        ("unconfined", req(&["sh", "-c", script])),
        ("sandboxed", sandboxed(&["sh", "-c", script], &[ws.path()], NetworkPolicy::Restricted)),
    ];
    for (what, r) in requests {
        let started = Instant::now();
        let (status, _) = terminated(r, Duration::from_millis(700)).await;
        assert!(started.elapsed() >= Duration::from_millis(700), "{what}: before the grace");
        assert_eq!(status.termination, Some(Termination::Terminated), "{what}");
        assert_eq!((status.exit_code, status.signal), (None, named(9, "SIGKILL")), "{what}");
    }
}

#[tokio::test]
async fn a_second_terminate_shortens_the_grace_and_a_longer_one_is_cut() {
    let sup = supervisor();
    let mut r = req(&["sh", "-c", "trap '' TERM; echo ready; sleep 1000"]);
    r.kill_grace = Duration::from_secs(60);
    let spawned = sup.spawn(r).await.unwrap();
    wait_output(&sup, &spawned.id, |o| o.contains("ready")).await;
    let asked = sup.terminate(&spawned.id, Some(Duration::from_secs(3600))).unwrap();
    assert_eq!(asked, Terminate::Sent { grace: Duration::from_secs(60) });
    assert_eq!(
        sup.terminate(&spawned.id, Some(Duration::ZERO)).unwrap(),
        Terminate::Sent { grace: Duration::ZERO }
    );
    let status = wait_exit(&sup, &spawned).await;
    assert_eq!(
        (status.termination, status.signal),
        (Some(Termination::Terminated), named(9, "SIGKILL"))
    );
}
