//! [`ProcError`]: every way a supervisor call can fail, one variant per client-visible cause.

/// A failed supervisor call. Each variant names one cause, so the tool layer can map it to
/// one wire code without guessing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum ProcError {
    /// No handle with this id: never minted, or evicted after completion.
    #[error("no such process")]
    NotFound,
    /// Nothing is running for this request: the executable was not found on the child's
    /// `PATH`, is not executable, the working directory is missing, or the reaper shim could
    /// not start the command. No handle exists and no child is left behind.
    #[error("spawn failed: {0}")]
    SpawnFailed(String),
    /// The live-process limit is reached; no child was created.
    #[error("live process limit reached")]
    LimitReached,
    /// `write_stdin` after stdin was closed with `close: true`.
    #[error("stdin is closed")]
    StdinClosed,
    /// The process has exited (stdin write, resize).
    #[error("process is not running")]
    NotRunning,
    /// A terminal operation on a pipe-backed process.
    #[error("process has no terminal")]
    NotTty,
    /// An argument the supervisor refuses (empty argv, a zero terminal size, a cursor past
    /// the end of the output, a NUL byte in argv or env).
    #[error("invalid request: {0}")]
    Invalid(String),
    /// A read at the end of the output of a process killed at its time limit: reported
    /// once, so the caller knows the output stops because of the limit.
    #[error(
        "the command was killed at its time limit of {limit_secs} s; its output ends here and is incomplete"
    )]
    TimedOut { limit_secs: u64 },
    /// An operating-system failure that is none of the above (a stdin pipe write error
    /// while the process still runs, a failed resize ioctl, the stdin backlog being full).
    #[error("I/O error: {0}")]
    Io(String),
}
