//! The spawn helper: shims are forked by one pre-started helper (the command's exec is the
//! only one), a helper that died is replaced, and with the helper off every shim is
//! exec'd directly and still owns its tree.
#![expect(clippy::disallowed_methods, reason = "tests read the helper's and shims' /proc entries")]

use std::time::Duration;

use codespace_process::{Supervisor, Terminate};
use codespace_types::Termination;

use crate::support::*;

fn parent_of(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
    rest.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0)
}

fn cmdline(pid: u32) -> Vec<u8> {
    std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()
}

/// The live children of `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|child| parent_of(*child) == pid)
        .collect()
}

/// Starts `sleep <marker>`; returns the handle, the shim's pid and the shim's parent.
async fn sleeper(sup: &Supervisor) -> (codespace_process::Spawned, String, u32, u32) {
    let m = marker();
    let spawned = sup.spawn(req(&["sleep", &m])).await.unwrap();
    wait_started(&[&m]).await;
    let shim = parent_of(pids_with_arg(&m)[0]);
    (spawned, m, shim, parent_of(shim))
}

#[tokio::test]
async fn shims_are_forked_by_the_helper_and_a_dead_helper_is_replaced() {
    let sup = supervisor();
    let (first, m, shim, helper) = sleeper(&sup).await;
    assert_ne!(helper, std::process::id(), "the shim is the helper's child, not ours");
    assert_eq!(parent_of(helper), std::process::id());
    assert!(cmdline(helper).split(|b| *b == 0).any(|a| a == b"--helper"));
    assert!(cmdline(shim).split(|b| *b == 0).any(|a| a == b"--helper"), "forked, not exec'd");
    // Killing the helper takes its shims' trees with it (their parent-death signal).
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(helper as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    assert_gone(&[&m], Duration::from_secs(5)).await;
    wait_exit(&sup, &first).await;
    // The next spawns work: the first may fall back to an exec'd shim, then a new helper.
    for _ in 0..2 {
        let (out, status) = {
            let (status, out) = run(&sup, req(&["echo", "again"])).await;
            (out, status)
        };
        assert_eq!((status.termination, status.exit_code), (Some(Termination::Exited), Some(0)));
        assert_eq!(lossy(&out), "again\n");
    }
    let (second, m2, _, helper2) = sleeper(&sup).await;
    assert_ne!(helper2, helper);
    assert_ne!(helper2, std::process::id());
    assert_eq!(sup.terminate(&second.id, None).unwrap(), Terminate::Sent { grace: Duration::ZERO });
    assert_gone(&[&m2], Duration::from_secs(5)).await;
}

/// The helper keeps a shim forked ahead: the next command runs under that spare, which
/// was waiting before the command was asked for.
#[tokio::test]
async fn the_next_command_runs_under_the_spare_forked_ahead() {
    let sup = supervisor();
    let (first, m, shim, helper) = sleeper(&sup).await;
    let mut spare = None;
    let found = eventually(PATIENCE, || {
        spare = children_of(helper).into_iter().find(|p| *p != shim);
        spare.is_some()
    });
    assert!(found.is_some(), "no spare beside shim {shim} under helper {helper}");
    let spare = spare.unwrap();
    assert!(cmdline(spare).split(|b| *b == 0).any(|a| a == b"--helper"), "a fork of the helper");
    let (second, m2, shim2, helper2) = sleeper(&sup).await;
    assert_eq!((shim2, helper2), (spare, helper), "the second shim is the spare");
    for spawned in [&first, &second] {
        let ended = sup.terminate(&spawned.id, None).unwrap();
        assert_eq!(ended, Terminate::Sent { grace: Duration::ZERO });
    }
    assert_gone(&[&m, &m2], Duration::from_secs(5)).await;
}

#[tokio::test]
async fn without_the_helper_each_shim_is_execd_and_owns_its_tree() {
    let mut config = config();
    config.spawn_helper = false;
    let sup = Supervisor::new(config);
    let (spawned, m, shim, parent) = sleeper(&sup).await;
    assert_eq!(parent, std::process::id());
    assert!(!cmdline(shim).split(|b| *b == 0).any(|a| a == b"--helper"));
    let (esc, fg) = (marker(), marker());
    let script = format!("setsid sh -c 'sleep {esc}' & sleep {fg}");
    let tree = sup.spawn(req(&["sh", "-c", &script])).await.unwrap();
    wait_started(&[&esc, &fg]).await;
    assert_eq!(sup.terminate(&tree.id, None).unwrap(), Terminate::Sent { grace: Duration::ZERO });
    assert_gone(&[&esc, &fg], Duration::from_secs(5)).await;
    assert_eq!(wait_exit(&sup, &tree).await.termination, Some(Termination::Terminated));
    assert_eq!(
        sup.terminate(&spawned.id, None).unwrap(),
        Terminate::Sent { grace: Duration::ZERO }
    );
    assert_gone(&[&m], Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_helper_that_stops_answering_is_replaced_and_the_spawn_still_runs() {
    let sup = supervisor();
    let (first, m, _, helper) = sleeper(&sup).await;
    let pid = rustix::process::Pid::from_raw(helper as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::STOP).unwrap();
    // This spawn goes to the spare the helper forked before it stopped (or, without one,
    // times out at the stopped helper and execs its shim directly); the next spare's
    // request then times out, and the stopped helper is dropped.
    let (status, out) = run(&sup, req(&["echo", "still"])).await;
    assert_eq!((status.termination, lossy(&out)), (Some(Termination::Exited), "still\n".into()));
    // The stopped helper was killed, and with it the shim it had forked and its tree.
    assert_gone(&[&m], Duration::from_secs(10)).await;
    wait_exit(&sup, &first).await;
    let (_, _, _, next) = sleeper(&sup).await;
    assert_ne!(next, helper);
}
