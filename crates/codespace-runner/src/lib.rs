//! The runner side of CodeSpace: everything below the gateway that touches a workspace file
//! or a process. Each operation is declared once in [`ops`] (its job and its answer);
//! [`Runner`] is the one interface the gateway talks to and hands any job to the runner in
//! use: [`LocalRunner`] does the work in this process (read windows, versions, find and
//! grep through the watcher's caches, the patch transaction's disk steps through
//! `codespace-files`, the process supervisor), [`SocketRunner`] asks a worker over a Unix
//! socket ([`serve_worker`] is that worker).
//!
//! Architecture Invariant: every byte of a workspace file is reached through
//! `codespace_fs::Root`; this crate never opens a workspace path itself.

mod local;
pub mod ops;
mod remote;
mod seam;
mod walks;

// The words of the `Runner` interface that the gateway names but that live in the crates
// beneath the runner that reach the disk or processes, on which the gateway may not depend.
// The only re-exports across crates the tidy check allows here.
pub use codespace_fs::{Cancel, FsError, Progress, WorkspacePath};
pub use codespace_process::{
    ExternalPolicy, ProcError, SandboxPolicy, TTY_COLS, TTY_ROWS, Terminate, WaitFor,
};
pub use codespace_watch::{BadCursor, Cursor, MAX_VERSION_ENTRIES, WatchReport};
pub use local::{Hook, LocalRunner, OpenError, WriteHook};
pub use remote::{
    CALL_DEADLINE, ConnectError, SocketRunner, WelcomedGateway, WorkerFaults, serve_gateway,
    serve_worker, welcome_gateway,
};
pub use seam::{ProcessFacts, Runner, RunnerCounters, SpawnJob, Started};
pub use walks::{FindJob, FindPage, GrepJob, WalkCaps};

use codespace_files::{FilesError, PlanFailure};
use codespace_types::Version;

/// Why a patch could not be planned: the disk is not at a version the caller expects, the
/// patch does not apply, or the filesystem refused.
#[derive(Debug, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum PrepareError {
    #[error("{path:?} is {actual}, expected_versions says {expected}: nothing was written")]
    VersionConflict { path: String, expected: Version, actual: Version },
    #[error(transparent)]
    Plan(#[from] PlanFailure),
    #[error(transparent)]
    Runner(#[from] RunnerError),
}

/// Why a runner file operation failed.
#[derive(Debug, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum RunnerError {
    #[error(transparent)]
    Fs(#[from] FsError),
    /// A walk, a glob or a search refused.
    #[error(transparent)]
    Files(#[from] FilesError),
    /// The runner does not hold this workspace (the gateway and the runner disagree).
    #[error("workspace {id:?} is not open in the runner")]
    NoWorkspace { id: String },
    /// The workspace's root path no longer names the directory opened at start (deleted and
    /// re-created, moved, or replaced by a symlink): nothing ran, so nothing is read from or
    /// written into a directory the operator no longer sees.
    #[error(
        "the root of workspace {id:?} ({root}) is no longer the directory the server opened at start: it was {how}; nothing ran. The operator must reload the registry (SIGHUP) or restart the server to open the new directory"
    )]
    RootReplaced { id: String, root: String, how: String },
    /// A runner task ended without an answer (it panicked or was cancelled), or the worker
    /// answered out of protocol.
    #[error("runner task failed: {reason}")]
    Task { reason: String },
    /// The process supervisor refused.
    #[error(transparent)]
    Process(#[from] ProcError),
    /// The socket to the runner worker failed.
    #[error(transparent)]
    Transport(#[from] Transport),
}

/// How a call to the runner worker failed on the socket, exactly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum Transport {
    /// The request never left: nothing ran.
    #[error("the runner worker could not be reached ({reason}); nothing ran")]
    NotSent { reason: String },
    /// The request was sent and the connection was lost before the answer: it may have run.
    #[error(
        "the connection to the runner worker was lost after the request was sent ({reason}): it may have run"
    )]
    Ambiguous { reason: String },
    /// The request was sent and its deadline passed without an answer: it may still run.
    #[error("the runner worker did not answer within {secs} s: the request may have run")]
    Timeout { secs: u64 },
}
