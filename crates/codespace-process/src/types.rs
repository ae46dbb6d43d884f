//! The public request and report types of the supervisor.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use codespace_types::{ProcessState, SignalInfo, Termination};
use tokio::sync::watch;

/// What to run. The supervisor adds nothing: `env` is the complete environment the
/// command sees, and `argv[0]` is resolved on *its* `PATH` (or
/// [`DEFAULT_PATH`](crate::DEFAULT_PATH) when `env` has none), relative entries against
/// `cwd`.
#[derive(Debug, Clone)]
pub struct SpawnRequest {
    /// The command; no shell is interposed. `argv[0]` must be non-empty.
    pub argv: Vec<String>,
    /// The working directory (made absolute against the server's own if relative), used
    /// only without `cwd_dir`: it is then opened once, at the spawn.
    pub cwd: PathBuf,
    /// The working directory as a directory descriptor the caller opened earlier (a
    /// workspace root pinned at start): the shim enters it with `fchdir`, so a path
    /// renamed or replaced by a symlink since does not move the command.
    pub cwd_dir: Option<Arc<OwnedFd>>,
    /// The complete, clean environment of the command.
    pub env: Vec<(String, String)>,
    /// Run on a fresh pseudo-terminal of 24 rows by 80 columns instead of pipes.
    pub tty: bool,
    /// Wall-clock limit; at expiry the whole tree is ended (SIGTERM, then SIGKILL after
    /// `kill_grace`) and the termination is [`Termination::Timeout`]. Must be non-zero.
    pub timeout: Duration,
    /// How long a kill the supervisor starts (the time limit, [`Supervisor::terminate`],
    /// [`Supervisor::shutdown`]) waits between SIGTERM to the whole tree and SIGKILL to
    /// what is left; also the most a terminate may ask for. Zero: SIGKILL at once.
    ///
    /// [`Supervisor::terminate`]: crate::Supervisor::terminate
    /// [`Supervisor::shutdown`]: crate::Supervisor::shutdown
    pub kill_grace: Duration,
    /// Run under this Linux sandbox (namespaces, a private root, Landlock, seccomp, no
    /// capabilities), built by [`codespace_sandbox::launch`]. If it cannot be entered the
    /// command does not run: [`ProcError::SpawnFailed`](crate::ProcError::SpawnFailed).
    /// `None` runs the command unconfined.
    pub sandbox: Option<codespace_sandbox::SandboxPolicy>,
    /// Run without namespaces but confined by [`codespace_sandbox::confine`] (no new
    /// privileges, Landlock and seccomp as the policy asks, no capabilities), for a
    /// workspace whose isolation boundary is the pod or VM. If that cannot be applied the
    /// command does not run. Never set together with `sandbox`.
    pub external: Option<codespace_sandbox::ExternalPolicy>,
}

/// A started process.
#[derive(Debug)]
pub struct Spawned {
    /// The minted handle, `proc-<uuid v4>`.
    pub id: String,
    /// Resolves once the process and every descendant are gone, however it ended
    /// (exit, signal, timeout, terminate, shutdown): the moment to release a lease.
    pub exited: ExitWatch,
}

/// Observes the end of one process. Cheap to clone; every clone sees the same event.
#[derive(Debug, Clone)]
pub struct ExitWatch(pub(crate) watch::Receiver<bool>);

impl ExitWatch {
    /// A watch fed by someone else (the runner's client, from the worker's exit events):
    /// `true` once the process and its tree are gone.
    pub fn from_receiver(rx: watch::Receiver<bool>) -> ExitWatch {
        ExitWatch(rx)
    }

    /// Whether the process has already been reported exited.
    pub fn has_exited(&self) -> bool {
        *self.0.borrow()
    }

    /// Waits until the process has been reported exited.
    pub async fn wait(mut self) {
        // A dropped sender means the supervision task is gone; it marks the process exited
        // before it goes, so either way there is nothing left to wait for.
        let _ = self.0.wait_for(|exited| *exited).await;
    }
}

/// One `read` reply.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReadChunk {
    /// The next cursor: the absolute offset just past `chunk`.
    pub cursor: u64,
    /// Raw output bytes (stdout and stderr interleaved as written; a PTY's single stream).
    #[serde(with = "serde_bytes")]
    pub chunk: Vec<u8>,
    /// The output is complete (the process and its tree are gone and every byte was
    /// collected) **and** `cursor` is at its end. Never a success signal.
    pub eof: bool,
    /// The requested cursor was below `retained_from`: the bytes in between were dropped
    /// from the ring and the read started at `retained_from` instead.
    pub output_lost: bool,
    /// The first absolute offset still retained.
    pub retained_from: u64,
}

/// The [`SignalInfo`] of a signal number, with its name when it is a standard one.
pub(crate) fn signal_info(number: i32) -> SignalInfo {
    SignalInfo { number, name: signal_name(number).map(str::to_owned) }
}

/// A status report. Invariants: `Running` has no `termination`, `exit_code`, `signal` or
/// `exited_at_ms`; `Exited` always has a `termination` and `exited_at_ms`. `exit_code` and
/// `signal` say how the main process ended (never both): with [`Termination::Exited`] and
/// [`Termination::Signaled`] on its own; with [`Termination::Terminated`] and
/// [`Termination::Timeout`] after the supervisor's SIGTERM (`signal` SIGTERM when that
/// killed it, SIGKILL when the grace ran out, or the `exit_code` its handler chose), and
/// neither when the status was lost.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcStatus {
    /// Running or exited.
    pub state: ProcessState,
    /// How it ended (exited only).
    pub termination: Option<Termination>,
    /// The exit code, when the main process exited.
    pub exit_code: Option<i32>,
    /// The signal that killed the main process (PTY processes too).
    pub signal: Option<SignalInfo>,
    /// Bytes produced so far.
    pub output_total: u64,
    /// The first retained absolute offset.
    pub retained_from: u64,
    /// Output collection is complete (not a success signal).
    pub eof: bool,
    /// Whether the process runs on a pseudo-terminal.
    pub tty: bool,
    /// Start time, milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    /// Exit time (when the whole tree was gone), milliseconds since the Unix epoch.
    pub exited_at_ms: Option<u64>,
    /// The time limit the process runs under.
    pub timeout: Duration,
}

/// What [`Supervisor::wait`](crate::Supervisor::wait) waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum WaitFor {
    /// At least `min` bytes (taken as 1 when 0) past this absolute cursor, or the exit
    /// (after which no byte can follow).
    Output { cursor: u64, min: u64 },
    /// The exit of the process and its whole tree.
    Exit,
}

/// The outcome of [`Supervisor::terminate`](crate::Supervisor::terminate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Terminate {
    /// SIGTERM went to the whole tree, and SIGKILL follows after `grace` for whatever is
    /// left (at once when `grace` is zero); the process reads as exited (`terminated`)
    /// once its whole tree is gone.
    Sent {
        /// The grace that applies: the one asked for, cut to the process's own.
        grace: Duration,
    },
    /// The process had already exited: nothing was done.
    AlreadyExited,
}

/// The name of a standard Linux signal.
pub fn signal_name(number: i32) -> Option<&'static str> {
    const NAMES: [(i32, &str); 31] = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGTRAP, "SIGTRAP"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGSTKFLT, "SIGSTKFLT"),
        (libc::SIGCHLD, "SIGCHLD"),
        (libc::SIGCONT, "SIGCONT"),
        (libc::SIGSTOP, "SIGSTOP"),
        (libc::SIGTSTP, "SIGTSTP"),
        (libc::SIGTTIN, "SIGTTIN"),
        (libc::SIGTTOU, "SIGTTOU"),
        (libc::SIGURG, "SIGURG"),
        (libc::SIGXCPU, "SIGXCPU"),
        (libc::SIGXFSZ, "SIGXFSZ"),
        (libc::SIGVTALRM, "SIGVTALRM"),
        (libc::SIGPROF, "SIGPROF"),
        (libc::SIGWINCH, "SIGWINCH"),
        (libc::SIGIO, "SIGIO"),
        (libc::SIGPWR, "SIGPWR"),
        (libc::SIGSYS, "SIGSYS"),
    ];
    NAMES.iter().find(|(n, _)| *n == number).map(|(_, name)| *name)
}

#[cfg(test)]
mod tests;
