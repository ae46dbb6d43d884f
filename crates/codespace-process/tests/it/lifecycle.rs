//! Termination of whole trees: timeout with a grandchild holding the pipe (R1), setsid and
//! double-fork escapees (R2), a SIGKILLed supervisor (R2b), terminate, signals, shutdown,
//! the live limit and retention.
#![expect(
    clippy::disallowed_methods,
    reason = "the test re-runs itself as a child supervisor to kill it"
)]

use std::io::{BufRead as _, BufReader};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use codespace_process::{Clock, ProcError, Supervisor, Terminate};
use codespace_types::{ProcessState, SignalInfo, Termination};

use crate::support::*;

fn sigkill() -> SignalInfo {
    SignalInfo { number: 9, name: Some("SIGKILL".to_owned()) }
}

/// The catalogue's bound: nothing of the tree is left 2 s after the kill.
const GONE_WITHIN: Duration = Duration::from_secs(2);

#[tokio::test]
async fn r1_timeout_with_a_grandchild_holding_the_pipe_kills_everything_promptly() {
    let sup = supervisor();
    let (bg, fg) = (marker(), marker());
    let mut r = req(&["sh", "-c", &format!("sleep {bg} & sleep {fg}")]);
    r.timeout = Duration::from_secs(1);
    let start = Instant::now();
    let spawned = sup.spawn(r).await.unwrap();
    let status = wait_exit(&sup, &spawned).await;
    let took = start.elapsed();
    assert_eq!(status.termination, Some(Termination::Timeout));
    assert_eq!((status.exit_code, status.signal), (None, Some(sigkill())));
    assert!(status.eof, "the pipe is closed once the tree is gone");
    assert!(took < Duration::from_secs(3), "returned after {took:?}, limit 1 s + grace");
    let gone = assert_gone(&[&bg, &fg], GONE_WITHIN).await;
    eprintln!("R1: timeout 1 s, reported exited after {took:?}, tree gone +{gone:?}");
    assert_eq!(sup.live(), 0);
}

async fn terminate_tree(script: String, markers: &[&str]) -> Duration {
    let sup = supervisor();
    let spawned = sup.spawn(req(&["sh", "-c", &script])).await.unwrap();
    wait_started(markers).await;
    let start = Instant::now();
    assert_eq!(
        sup.terminate(&spawned.id, None).unwrap(),
        Terminate::Sent { grace: Duration::ZERO }
    );
    let gone = assert_gone(markers, GONE_WITHIN).await;
    let status = wait_exit(&sup, &spawned).await;
    assert_eq!(status.termination, Some(Termination::Terminated));
    assert_eq!((status.exit_code, status.signal), (None, Some(sigkill())));
    let total = start.elapsed();
    assert!(total < GONE_WITHIN + Duration::from_secs(1), "{total:?}");
    gone
}

#[tokio::test]
async fn r2_a_setsid_escapee_dies_with_its_command() {
    let (esc, fg) = (marker(), marker());
    let took =
        terminate_tree(format!("setsid sh -c 'sleep {esc}' & sleep {fg}"), &[&esc, &fg]).await;
    eprintln!("R2 setsid escapee: gone {took:?} after terminate");
}

#[tokio::test]
async fn r2_a_double_forked_daemon_dies_with_its_command() {
    let (esc, fg) = (marker(), marker());
    let took = terminate_tree(format!("(sh -c 'sleep {esc} &') ; sleep {fg}"), &[&esc, &fg]).await;
    eprintln!("R2 double fork: gone {took:?} after terminate");
}

#[tokio::test]
async fn r2_a_background_job_within_the_group_dies_with_its_command() {
    let (bg, fg) = (marker(), marker());
    let took = terminate_tree(format!("sleep {bg} & sleep {fg}"), &[&bg, &fg]).await;
    eprintln!("R2 in-group background job: gone {took:?} after terminate");
}

#[tokio::test]
async fn leftovers_are_killed_when_the_main_process_exits_by_itself() {
    // The command returns at once but leaves a setsid daemon behind; the shim kills it,
    // and only then is the command reported exited (and its output complete).
    let sup = supervisor();
    let esc = marker();
    let script = format!("setsid sleep {esc} & echo started");
    let spawned = sup.spawn(req(&["sh", "-c", &script])).await.unwrap();
    let status = wait_exit(&sup, &spawned).await;
    assert_eq!(status.termination, Some(Termination::Exited));
    assert_eq!(status.exit_code, Some(0));
    assert!(status.eof);
    assert!(pids_with_arg(&esc).is_empty(), "the daemon outlived its command");
    assert_eq!(lossy(&read_all(&sup, &spawned.id).await), "started\n");
}

#[test]
fn r2b_a_sigkilled_supervisor_takes_every_tree_with_it() {
    let (esc, fg) = (marker(), marker());
    let script = format!("setsid sleep {esc} & sleep {fg}");
    let mut helper = std::process::Command::new(example("supervise"))
        .arg(example("reaper"))
        .args(["hold", "sh", "-c", &script])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(helper.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert!(line.starts_with("ready proc-"), "{line:?}");
    let started =
        eventually(PATIENCE, || !pids_with_arg(&esc).is_empty() && !pids_with_arg(&fg).is_empty());
    assert!(started.is_some(), "the command never started");

    helper.kill().unwrap(); // SIGKILL: no destructor, no shutdown, nothing runs in it.
    helper.wait().unwrap();
    let gone =
        eventually(GONE_WITHIN, || pids_with_arg(&esc).is_empty() && pids_with_arg(&fg).is_empty());
    let left = (pids_with_arg(&esc), pids_with_arg(&fg));
    let gone = gone.unwrap_or_else(|| panic!("survived the supervisor's SIGKILL: {left:?}"));
    eprintln!("R2b: tree gone {gone:?} after the supervisor was SIGKILLed");
}

#[tokio::test]
async fn terminate_on_an_exited_process_is_a_no_op_that_says_so() {
    let sup = supervisor();
    let spawned = sup.spawn(req(&["true"])).await.unwrap();
    wait_exit(&sup, &spawned).await;
    assert_eq!(sup.terminate(&spawned.id, None).unwrap(), Terminate::AlreadyExited);
    let status = sup.status(&spawned.id).unwrap();
    assert_eq!((status.termination, status.exit_code), (Some(Termination::Exited), Some(0)));
    assert_eq!(sup.terminate("proc-unknown", None), Err(ProcError::NotFound));
}

#[tokio::test]
async fn a_signal_death_is_signaled_with_the_real_signal() {
    let sup = supervisor();
    let (status, _) = run(&sup, req(&["sh", "-c", "kill -TERM $$"])).await;
    assert_eq!(status.termination, Some(Termination::Signaled));
    assert_eq!(status.signal, Some(SignalInfo { number: 15, name: Some("SIGTERM".to_owned()) }));
    assert_eq!(status.exit_code, None);

    // A SIGKILL from outside is not CodeSpace's doing: `signaled`, not `terminated`.
    let m = marker();
    let spawned = sup.spawn(req(&["sleep", &m])).await.unwrap();
    wait_started(&[&m]).await;
    for pid in pids_with_arg(&m) {
        rustix::process::kill_process(
            rustix::process::Pid::from_raw(pid as i32).unwrap(),
            rustix::process::Signal::KILL,
        )
        .unwrap();
    }
    let status = wait_exit(&sup, &spawned).await;
    assert_eq!(status.termination, Some(Termination::Signaled));
    assert_eq!(status.signal, Some(SignalInfo { number: 9, name: Some("SIGKILL".to_owned()) }));
}

#[tokio::test]
async fn shutdown_kills_every_tree_and_refuses_new_spawns() {
    let sup = supervisor();
    let (a, b, c) = (marker(), marker(), marker());
    let one = sup.spawn(req(&["sleep", &a])).await.unwrap();
    let two =
        sup.spawn(req(&["sh", "-c", &format!("setsid sleep {b} & sleep {c}")])).await.unwrap();
    wait_started(&[&a, &b, &c]).await;
    assert_eq!(sup.live(), 2);
    let start = Instant::now();
    sup.shutdown().await;
    let took = start.elapsed();
    assert!(one.exited.has_exited() && two.exited.has_exited());
    assert!(
        pids_with_arg(&a).is_empty()
            && pids_with_arg(&b).is_empty()
            && pids_with_arg(&c).is_empty()
    );
    for s in [&one, &two] {
        assert_eq!(sup.status(&s.id).unwrap().termination, Some(Termination::Terminated));
    }
    assert_eq!(sup.live(), 0);
    assert!(matches!(sup.spawn(req(&["true"])).await, Err(ProcError::SpawnFailed(_))));
    eprintln!("shutdown: 2 trees (3 sleeps) gone in {took:?}");
}

#[tokio::test]
async fn over_the_limit_no_child_is_created() {
    let mut config = config();
    config.max_live = 2;
    let sup = Supervisor::new(config);
    let (a, b, c) = (marker(), marker(), marker());
    let first = sup.spawn(req(&["sleep", &a])).await.unwrap();
    let _second = sup.spawn(req(&["sleep", &b])).await.unwrap();
    assert_eq!(sup.live(), 2);
    assert_eq!(sup.spawn(req(&["sleep", &c])).await.unwrap_err(), ProcError::LimitReached);
    wait_started(&[&a, &b]).await;
    assert!(pids_with_arg(&c).is_empty(), "the refused command must not run");
    // Even a bad request over the limit is refused before anything else is looked at.
    assert_eq!(sup.spawn(req(&["no-such-binary"])).await.unwrap_err(), ProcError::LimitReached);

    sup.terminate(&first.id, None).unwrap();
    wait_exit(&sup, &first).await;
    assert_eq!(sup.live(), 1);
    let third = sup.spawn(req(&["sleep", &c])).await.unwrap();
    wait_started(&[&c]).await;
    sup.shutdown().await;
    assert!(third.exited.has_exited());
}

#[tokio::test]
async fn completed_handles_are_evicted_by_count_oldest_first() {
    let mut config = config();
    config.max_completed = 2;
    let sup = Supervisor::new(config);
    let mut ids = Vec::new();
    for _ in 0..3 {
        let s = sup.spawn(req(&["true"])).await.unwrap();
        wait_exit(&sup, &s).await;
        ids.push(s.id);
    }
    assert_eq!(sup.status(&ids[0]), Err(ProcError::NotFound));
    assert_eq!(sup.read(&ids[0], 0, 1), Err(ProcError::NotFound));
    assert_eq!(sup.status(&ids[1]).unwrap().state, ProcessState::Exited);
    assert_eq!(sup.status(&ids[2]).unwrap().state, ProcessState::Exited);
}

#[tokio::test]
async fn completed_handles_are_evicted_by_age_but_running_ones_never() {
    let offset = Arc::new(Mutex::new(Duration::ZERO));
    let mut config = config();
    config.completed_ttl = Duration::from_secs(60);
    let clock_offset = Arc::clone(&offset);
    config.clock = Clock::from_fn(move || Instant::now() + *clock_offset.lock().unwrap());
    let sup = Supervisor::new(config);

    let done = sup.spawn(req(&["true"])).await.unwrap();
    wait_exit(&sup, &done).await;
    let m = marker();
    let running = sup.spawn(req(&["sleep", &m])).await.unwrap();

    *offset.lock().unwrap() += Duration::from_secs(59);
    assert_eq!(sup.status(&done.id).unwrap().state, ProcessState::Exited, "kept within the TTL");
    *offset.lock().unwrap() += Duration::from_secs(2);
    assert_eq!(sup.status(&done.id), Err(ProcError::NotFound), "evicted after the TTL");
    assert_eq!(sup.write_stdin(&done.id, b"x", false), Err(ProcError::NotFound));
    *offset.lock().unwrap() += Duration::from_secs(3600);
    assert_eq!(sup.status(&running.id).unwrap().state, ProcessState::Running);
    sup.terminate(&running.id, None).unwrap();
    wait_exit(&sup, &running).await;
}
