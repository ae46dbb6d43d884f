//! How the command ended: read from a wait status, carried from the init to the monitor in
//! five bytes (a tag and a little-endian value), and waited for when the init cannot say.

use std::os::fd::BorrowedFd;

use rustix::io::Errno;
use rustix::process::{Pid, Signal, WaitOptions, WaitStatus};

use super::EXIT_FAILED;

const TAG_EXITED: u8 = b'x';
const TAG_SIGNALED: u8 = b's';

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ended {
    /// With this exit code.
    Exited(i32),
    /// By this signal.
    Signaled(i32),
}

impl Ended {
    fn from_wait(status: WaitStatus) -> Self {
        match status.terminating_signal() {
            Some(signal) => Self::Signaled(signal),
            // Without WUNTRACED or WCONTINUED a status that is not a signal is an exit.
            None => Self::Exited(status.exit_status().unwrap_or(0)),
        }
    }

    fn encode(self) -> [u8; 5] {
        let (tag, value) = match self {
            Self::Exited(code) => (TAG_EXITED, code),
            Self::Signaled(signal) => (TAG_SIGNALED, signal),
        };
        let v = value.to_le_bytes();
        [tag, v[0], v[1], v[2], v[3]]
    }

    fn decode(bytes: &[u8]) -> Option<Self> {
        let [tag, a, b, c, d] = *bytes else { return None };
        let value = i32::from_le_bytes([a, b, c, d]);
        match tag {
            TAG_EXITED => Some(Self::Exited(value)),
            TAG_SIGNALED => Some(Self::Signaled(value)),
            _ => None,
        }
    }
}

/// Writes `ended` on the status pipe. Unchecked: the init exits next either way, and the
/// monitor then mirrors the init instead.
pub(super) fn send(status_w: BorrowedFd<'_>, ended: Ended) {
    let _ = rustix::io::write(status_w, &ended.encode());
}

/// Reads what [`send`] wrote; `None` when the init ended without writing it.
pub(super) fn receive(status_r: BorrowedFd<'_>) -> Option<Ended> {
    let mut buf = [0u8; 5];
    let n = loop {
        match rustix::io::read(status_r, &mut buf) {
            Err(Errno::INTR) => {}
            Ok(n) => break n,
            Err(_) => break 0,
        }
    };
    Ended::decode(&buf[..n])
}

/// In the init: reaps every child (orphans are reparented to it) until `command` ends.
pub(super) fn reap_until(command: Pid) -> Ended {
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((pid, status))) if pid == command => return Ended::from_wait(status),
            Ok(_) | Err(Errno::INTR) => {}
            Err(_) => return Ended::Exited(EXIT_FAILED),
        }
    }
}

/// How `child` ended; an exit of 0 if it cannot be waited for.
pub(super) fn wait_for(child: Pid) -> Ended {
    loop {
        match rustix::process::waitpid(Some(child), WaitOptions::empty()) {
            Ok(Some((pid, status))) if pid == child => return Ended::from_wait(status),
            Ok(_) | Err(Errno::INTR) => {}
            Err(_) => return Ended::Exited(0),
        }
    }
}

/// Kills `child` and reaps it (a start that failed half way).
pub(super) fn kill_and_reap(child: Pid) {
    // Both best effort: the monitor reports the failure and exits next.
    let _ = rustix::process::kill_process(child, Signal::KILL);
    let _ = rustix::process::waitpid(Some(child), WaitOptions::empty());
}

#[cfg(test)]
mod tests;
