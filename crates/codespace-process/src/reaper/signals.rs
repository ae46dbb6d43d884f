//! The shim's signals: the set it blocks and waits on with `sigtimedwait`, and what woke
//! it. The raw calls are `codespace_sandbox::sys`'s.

use std::time::Duration;

pub(super) use codespace_sandbox::sys::SignalSet;

/// Signals that ask the shim to kill the command's tree.
const KILL_REQUESTS: [i32; 4] = [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT];
/// The signal that asks the shim to send SIGTERM to the command's tree (a grace begins; the
/// supervisor sends a kill request when it is over).
const TERM_REQUEST: i32 = libc::SIGUSR1;

/// What woke the shim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wake {
    /// SIGCHLD: some child changed state.
    Child,
    /// One of [`KILL_REQUESTS`].
    KillRequest,
    /// [`TERM_REQUEST`].
    TermRequest,
    /// The timeout passed, or the wait failed.
    Nothing,
}

/// SIGCHLD and the kill and term requests, the set the shim blocks and waits on.
pub(super) fn shim_set() -> SignalSet {
    let [a, b, c, d] = KILL_REQUESTS;
    SignalSet::of(&[libc::SIGCHLD, TERM_REQUEST, a, b, c, d])
}

/// Waits for one signal of `set` (all blocked), up to `timeout` if given.
pub(super) fn wait(set: &SignalSet, timeout: Option<Duration>) -> Wake {
    match set.wait(timeout) {
        Some(libc::SIGCHLD) => Wake::Child,
        Some(TERM_REQUEST) => Wake::TermRequest,
        Some(_) => Wake::KillRequest,
        None => Wake::Nothing,
    }
}
