//! Reaping the shim's children and killing the command's remaining tree.

use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitOptions, WaitStatus};

use super::signals::{self, SignalSet};
use crate::tree;

/// Upper bound on the final clean-up (a process stuck in uninterruptible sleep).
const CLEANUP_BOUND: Duration = Duration::from_secs(10);
/// Pause between clean-up passes when no SIGCHLD arrives.
const CLEANUP_PASS: Duration = Duration::from_millis(20);

/// Reaps every exited child without blocking; returns `main`'s status if it was among them.
pub(super) fn reap(main: Option<u32>) -> Option<WaitStatus> {
    reap_all(main).0
}

/// Reaps every exited child without blocking: `main`'s status if it was among them, and
/// whether the shim has no child left at all (`ECHILD`). Orphans are reparented to the
/// shim, a child subreaper, so no child left means no descendant left.
fn reap_all(main: Option<u32>) -> (Option<WaitStatus>, bool) {
    let mut found = None;
    loop {
        // `wait` is waitpid(-1): any child. (rustix's `waitpid(None, …)` is pid 0, i.e.
        // only children in the shim's own process group, which the command is not.)
        match rustix::process::wait(WaitOptions::NOHANG) {
            Ok(Some((pid, status))) => {
                if Some(pid.as_raw_nonzero().get() as u32) == main {
                    found = Some(status);
                }
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::CHILD) => return (found, true),
            Ok(None) | Err(_) => return (found, false),
        }
    }
}

/// One pass: SIGKILL to every descendant found now. Returns how many were found.
pub(super) fn kill_descendants() -> usize {
    signal_descendants(&[Signal::KILL])
}

/// SIGTERM to every descendant found now, each followed by SIGCONT so that a stopped one
/// wakes to handle it. The command's init in a sandbox (PID 1 of its namespace, with no
/// handler) and the launcher's monitor (which ignores it) are left as they are by it; the
/// processes of the command are not.
pub(super) fn term_descendants() {
    signal_descendants(&[Signal::TERM, Signal::CONT]);
}

/// Sends `signals` to every descendant found now, in turn; returns how many were found.
///
/// Direct children cannot be recycled before the shim reaps them, and orphans are
/// reparented to the shim, so nearly every pid signalled is one the shim holds. A deeper
/// descendant reaped by its own parent between the listing and the kill is the one window
/// left; its pid would have to be reused within microseconds.
fn signal_descendants(signals: &[Signal]) -> usize {
    let pids = tree::descendants(std::process::id());
    for pid in &pids {
        if let Some(pid) = i32::try_from(*pid).ok().and_then(Pid::from_raw) {
            for signal in signals {
                let _ = rustix::process::kill_process(pid, *signal);
            }
        }
    }
    pids.len()
}

/// Kills and reaps until no descendant is left (bounded by [`CLEANUP_BOUND`]). When the
/// shim has no child left it is done at once, without looking through `/proc`: the end of
/// the tree is reported as soon as its last process is reaped.
pub(super) fn clean_up(set: &SignalSet) {
    let deadline = Instant::now() + CLEANUP_BOUND;
    loop {
        if reap_all(None).1 || kill_descendants() == 0 || Instant::now() >= deadline {
            return;
        }
        let _ = signals::wait(set, Some(CLEANUP_PASS));
    }
}
