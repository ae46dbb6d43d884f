//! The launcher: three processes between the reaper shim and the command.
//!
//! - The *monitor* (the process [`launch`] is called in, a fresh fork of the shim) starts
//!   in the host's namespaces. It clones the *init* into new user, mount, PID and IPC
//!   namespaces and writes the init's uid and gid maps from outside (the caller's own ids
//!   mapped to themselves, `setgroups` denied). Under [`NetworkPolicy::Restricted`] it then
//!   joins the init's user namespace, makes a network namespace there while the init builds
//!   the root (the slowest namespace to create), and passes it over a socket. It then waits
//!   and finally exits exactly as the command did: with its exit code, or by raising its
//!   fatal signal. It holds none of the command's stdio and ignores the terminal's
//!   signals (SIGTERM among them), so only the command reacts to them: when the shim
//!   ends a command with a grace, its SIGTERM reaches every process of the tree from
//!   outside the namespace, the monitor and the init (PID 1, which has no handler and so
//!   is not stopped by it) stay, and a command that dies of it is mirrored as dying of
//!   SIGTERM; SIGKILL after the grace ends the monitor and the init too.
//! - The *init* is PID 1 of the new PID namespace, dies with the monitor
//!   (`PR_SET_PDEATHSIG(SIGKILL)`), and builds the command's root: a tmpfs holding read-only
//!   binds of the system directories, a read-only `/sys`, a fresh `/proc`, a minimal `/dev`,
//!   a private `/tmp`, and the policy's roots at their canonical paths, every read-only
//!   bind `nosuid`; the masked paths and the host's password hashes covered; then
//!   `pivot_root` and the old root detached. It caps the namespace's `pid_max` (Linux
//!   6.14+), joins the network namespace it was sent (under `Restricted`), forks the
//!   command, reaps every orphan, and when the command ends passes its status to the
//!   monitor and exits, which makes the kernel kill whatever is left in the namespace. The
//!   monitor ends as soon as it has the status; the shim adopts and reaps the init while
//!   the namespaces are torn down.
//! - The *command* restricts itself ([`crate::enter`]: no-new-privs, Landlock, seccomp, no
//!   capabilities), looks its program up on its `PATH` inside the root and execs it.
//!
//! Every failure before the exec is written to the report pipe as a [`LaunchFailure`] (in
//! the [`crate::envelope`]) and the process exits 127; the pipe is close-on-exec everywhere and each stage closes its copy
//! once the next one holds it, so end of file with nothing read means the command's exec
//! succeeded. Nothing runs unsandboxed as a fallback.
//!
//! Modules: [`monitor`] and [`init`] are the processes (the command is the init's child),
//! [`exec`] tries the command's `PATH` candidates from inside its own world,
//! [`root`] assembles the new root from [`mounts`], [`crate::fdpass`] carries the network
//! namespace and [`status`] the command's end from one process to the next.
//!
//! [`NetworkPolicy::Restricted`]: crate::policy::NetworkPolicy::Restricted

mod exec;
mod init;
mod monitor;
mod mounts;
mod root;
mod status;

use std::ffi::{OsStr, OsString};
use std::os::fd::{BorrowedFd, OwnedFd};

use crate::enter::SandboxError;
use crate::policy::SandboxPolicy;

pub(crate) use root::SYSTEM_DIRS;

/// Exit status of a stage that failed before the command's exec.
const EXIT_FAILED: i32 = 127;

/// Runs `argv` under `policy`, in the calling process (the monitor). Never returns.
/// `argv[0]` is looked up on `search_path` (the command's `PATH`) inside the private root,
/// as `execvp` would, so only what the sandbox shows can match. Call it in a
/// single-threaded process whose fds 0-2 are the command's stdio, its
/// working directory the command's, and its environment the command's; `report` is the
/// write end of a close-on-exec pipe (see the module docs for what it carries), which the
/// launcher takes over.
pub fn launch(
    policy: &SandboxPolicy,
    search_path: &OsStr,
    argv: &[OsString],
    report: OwnedFd,
) -> ! {
    monitor::run(policy, search_path, argv, report)
}

/// Writes `text` to the kernel file at `path` (an id map, `pid_max`).
#[expect(clippy::disallowed_methods, reason = "writes the kernel's /proc files (id maps, pid_max)")]
fn write_file(step: &'static str, path: &str, text: &str) -> Result<(), SandboxError> {
    std::fs::write(path, text).map_err(|e| SandboxError::io(step, &e))
}

/// Why the command was not started, as written on the launcher's report pipe (the pipe's
/// only message; end of file with nothing read means the command's exec succeeded).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LaunchFailure {
    /// The kernel's errno when there is one (0 otherwise).
    pub errno: i32,
    /// What failed and why (`sandbox <step>: <message>`).
    pub message: String,
}

impl LaunchFailure {
    /// Writes this failure on `report` (one `write`; unchecked, as nothing is left to tell
    /// of a failed report: the shim then sees a bare exit).
    pub fn send(&self, report: BorrowedFd<'_>) {
        if let Ok(bytes) = crate::envelope::encode(self) {
            let _ = rustix::io::write(report, &bytes);
        }
    }
}

/// Writes `e` on the report pipe and exits without running anything.
fn fail(report: BorrowedFd<'_>, e: &SandboxError) -> ! {
    LaunchFailure { errno: e.errno, message: e.to_string() }.send(report);
    crate::sys::exit_now(EXIT_FAILED)
}
