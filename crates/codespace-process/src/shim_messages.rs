//! What the reaper shim is told and what it reports, as messages in
//! [`codespace_sandbox::envelope`] (postcard behind one version number; a message of
//! another version is refused with an error that names both).
//!
//! # Arguments
//! The shim is told [`ShimArgs`]: by the spawn helper, which forks it, in its
//! [`HelperRequest`] (see `reaper/helper.rs`: it then substitutes its own pid and the
//! descriptor numbers the shim received); without the helper as its command line,
//! `<reaper_exe> <reaper_arg>` followed by the message in hex
//! ([`codespace_sandbox::envelope::to_args`]). [`crate::reaper_main`] receives everything
//! after `<reaper_arg>`; a message it cannot read or that fails [`ShimArgs::check`] is
//! refused with the reason on stderr (exit [`EXIT_BAD_ARGS`]). The fields:
//! - `ppid`: the supervisor's pid (non-zero). The shim arms `PR_SET_PDEATHSIG(SIGTERM)`
//!   and then checks that its parent is still this pid, so a supervisor that died before
//!   the arming cannot leave the command running.
//! - `report_fd`: the descriptor (3 or above) the report pipe's write end is inherited on.
//!   Passing its number, rather than moving it in a pre-exec hook, lets the supervisor
//!   start pipe-mode shims with `posix_spawn` (no fork of the server's address space).
//! - `cwd_fd`: a directory descriptor (3 or above, not the report descriptor) inherited the
//!   same way: the shim's first act is `fchdir` onto it, so the command's working
//!   directory is the directory the supervisor was handed (a workspace root opened at
//!   start), never looked up by path at spawn time.
//! - `tty`: the shim's stdio is the terminal and the command's process group is made the
//!   terminal's foreground group.
//! - `sandbox`: a [`SandboxPolicy`] (checked with [`SandboxPolicy::check`]), or none. With
//!   a policy the shim forks and calls [`codespace_sandbox::launch`], which builds the
//!   command's namespaces and root and execs it; if any step fails the command does not
//!   run and the shim reports `Failed`.
//! - `search_path`: the child's `PATH`. `argv[0]` is looked up on it with
//!   [`codespace_sandbox::PathSearch`] (relative entries, and a relative `argv[0]`
//!   containing `/`, against the command's working directory): by the shim, already in
//!   that directory, without a sandbox; by the launcher inside the private root with one,
//!   so only what the command can see matches. A program that is not found is reported as
//!   `Failed` (sandboxed, with the `PATH` entries the host has but the sandbox hides).
//! - `argv`: the command's argv exactly as requested (at least `argv0`).
//!
//! # Descriptors
//! fd 0-2 are the command's stdio (pipes, or the terminal). The shim enters `cwd_fd` and
//! closes it with every other descriptor above 2 but the report pipe; it moves the report
//! pipe's write end from `report_fd` to fd 3, marks it close-on-exec and closes every fd
//! above it, so the command itself sees only 0-2. In pipe mode the shim makes itself a
//! session leader first thing (in tty mode the PTY spawn already did, with the terminal as
//! its controlling terminal).
//!
//! # Reports
//! One frame each ([`codespace_sandbox::envelope::frame`]) of a [`ShimReport`] on fd 3, in
//! this order: `Started` or `Failed`, then `Exited` or `Signaled` once the command's main
//! process is reaped. `requested` is true when a kill request (SIGTERM, SIGHUP, SIGINT or
//! SIGQUIT to the shim) arrived before the main process was reaped. The shim then kills
//! and reaps every remaining descendant and exits; end of file on fd 3 (the shim's exit)
//! means the whole tree is gone.
//!
//! # Exit status of the shim
//! Informational only (the supervisor trusts the reports): the command's exit code, or
//! 128 + its signal, [`EXIT_SPAWN_FAILED`] when the command could not be started,
//! [`EXIT_ORPHANED`] when the supervisor was already gone, [`EXIT_BAD_ARGS`] for a
//! malformed invocation.

use std::ffi::OsString;

use codespace_sandbox::envelope::{self, EnvelopeError};
use codespace_sandbox::{ExternalPolicy, SandboxPolicy};

/// The shim could not start the command (also sent as a `Failed` report).
pub(crate) const EXIT_SPAWN_FAILED: i32 = 127;
/// The supervisor was gone before the shim armed its parent-death signal.
pub(crate) const EXIT_ORPHANED: i32 = 125;
/// The shim was invoked with arguments it does not understand.
pub(crate) const EXIT_BAD_ARGS: i32 = 124;

/// What a shim is told (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct ShimArgs {
    pub(crate) ppid: u32,
    /// The descriptor the shim inherits its report pipe on (moved to fd 3 at once).
    pub(crate) report_fd: i32,
    /// The directory descriptor the shim inherits and enters (then closes).
    pub(crate) cwd_fd: i32,
    pub(crate) tty: bool,
    pub(crate) sandbox: Option<SandboxPolicy>,
    /// Confinement without namespaces (never with `sandbox`).
    pub(crate) external: Option<ExternalPolicy>,
    /// The child's `PATH`, on which `argv[0]` is looked up.
    pub(crate) search_path: OsString,
    pub(crate) argv: Vec<OsString>,
}

impl ShimArgs {
    /// The command line of a shim started directly.
    pub(crate) fn to_args(&self) -> Result<Vec<OsString>, EnvelopeError> {
        envelope::to_args(self)
    }

    /// The arguments a shim was started with, checked.
    pub(crate) fn from_args(args: &[OsString]) -> Result<Self, String> {
        let args: Self = envelope::from_args(args).map_err(|e| e.to_string())?;
        args.check()?;
        Ok(args)
    }

    /// Refuses what a well-formed message may still get wrong: a zero `ppid`, a descriptor
    /// below 3, the same descriptor twice, an empty `argv`, an unsound policy.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.ppid == 0 {
            return Err("ppid must not be 0".into());
        }
        if self.report_fd < 3 || self.cwd_fd < 3 {
            return Err("report_fd and cwd_fd must be 3 or above".into());
        }
        if self.cwd_fd == self.report_fd {
            return Err("cwd_fd and report_fd must differ".into());
        }
        if self.argv.is_empty() {
            return Err("argv must not be empty".into());
        }
        if self.sandbox.is_some() && self.external.is_some() {
            return Err("a sandbox and an external policy are exclusive".into());
        }
        if let Some(p) = &self.external {
            p.check().map_err(|e| format!("external: {e}"))?;
        }
        self.sandbox.as_ref().map_or(Ok(()), |p| p.check().map_err(|e| format!("sandbox: {e}")))
    }
}

/// What the supervisor asks its spawn helper: fork a shim with these arguments and the
/// command's environment; five descriptors come with it (stdin, stdout, stderr, the
/// report pipe's write end, the working directory).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct HelperRequest {
    pub(crate) shim: ShimArgs,
    pub(crate) env: Vec<(OsString, OsString)>,
}

/// What the supervisor asks its spawn helper: fork a shim for a request now, or fork a
/// spare shim that waits on a socket of its own for the request a later spawn sends it
/// directly (the same [`HelperRequest`] with the same five descriptors), so that spawn
/// costs no fork and no helper round trip of its own.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum HelperAsk {
    Spawn(Box<HelperRequest>),
    Spare,
}

/// The spawn helper's answer; a pidfd of the shim comes with `Forked` (and, for a spare,
/// the supervisor's end of the spare's socket after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum HelperReply {
    Forked { pid: u32 },
    Failed { errno: i32 },
}

/// The spawn helper's own arguments, after `--helper`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct HelperArgs {
    /// The supervisor's pid.
    pub(crate) ppid: u32,
    /// The helper's end of its socket (above 2).
    pub(crate) socket_fd: i32,
}

/// One report the shim writes on its report descriptor.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum ShimReport {
    Started { pid: u32 },
    Failed { errno: i32, message: String },
    Exited { code: i32, requested: bool },
    Signaled { signal: i32, requested: bool },
}

impl ShimReport {
    /// The frame to write. A `Failed` message keeps to one line (control characters become
    /// spaces), as it always has.
    pub(crate) fn frame(&self) -> Vec<u8> {
        let one_line;
        let report = match self {
            Self::Failed { errno, message } => {
                let message = message.chars().map(|c| if c.is_control() { ' ' } else { c });
                one_line = Self::Failed { errno: *errno, message: message.collect() };
                &one_line
            }
            other => other,
        };
        // A report always fits a frame but for an enormous message, which is cut.
        envelope::frame(report).unwrap_or_else(|_| {
            let cut = ShimReport::Failed { errno: 0, message: "report too large".into() };
            envelope::frame(&cut).unwrap_or_default()
        })
    }
}

#[cfg(test)]
mod tests;
