//! Reaping the shim's children and killing the command's remaining tree.

use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitOptions, WaitStatus};

use super::signals::SignalSet;
use crate::tree;

/// Upper bound on the final clean-up (a process stuck in uninterruptible sleep).
const CLEANUP_BOUND: Duration = Duration::from_secs(10);
/// Pause between clean-up passes when no SIGCHLD arrives.
const CLEANUP_PASS: Duration = Duration::from_millis(20);

/// Reaps every exited child without blocking; returns `main`'s status if it was among them.
pub(super) fn reap(main: Option<u32>) -> Option<WaitStatus> {
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
            Ok(None) | Err(_) => return found,
        }
    }
}

/// One pass: SIGKILL to every descendant found now. Returns how many were found.
///
/// Direct children cannot be recycled before the shim reaps them, and orphans are
/// reparented to the shim, so nearly every pid signalled is one the shim holds. A deeper
/// descendant reaped by its own parent between the listing and the kill is the one window
/// left; its pid would have to be reused within microseconds.
pub(super) fn kill_descendants() -> usize {
    let pids = tree::descendants(std::process::id());
    for pid in &pids {
        if let Some(pid) = i32::try_from(*pid).ok().and_then(Pid::from_raw) {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
    }
    pids.len()
}

/// Kills and reaps until no descendant is left (bounded by [`CLEANUP_BOUND`]).
pub(super) fn clean_up(set: &SignalSet) {
    let deadline = Instant::now() + CLEANUP_BOUND;
    loop {
        reap(None);
        if kill_descendants() == 0 || Instant::now() >= deadline {
            return;
        }
        let _ = set.wait(Some(CLEANUP_PASS));
    }
}
