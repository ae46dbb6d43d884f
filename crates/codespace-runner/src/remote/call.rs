//! What crosses the worker's socket: one [`Call`] per runner job, its [`Reply`], and the
//! worker's [`Event`]s. Each is the runner's own job, answer or error, unchanged; a
//! workspace is named by its id, a process by its id.

use std::path::PathBuf;
use std::time::Duration;

use codespace_fs::{FsError, RootStatus, Version, Window, WorkspacePath};
use codespace_process::{ProcStatus, ReadChunk, Terminate, WaitFor};
use codespace_watch::{BadCursor, Changes, WatchReport};
use serde::{Deserialize, Serialize};

use crate::{
    FindJob, FindPage, GrepJob, OpenError, PrepareError, ProcessFacts, RunnerError, SpawnJob,
};
use codespace_files::{ApplyOutcome, Found, GrepOutcome, InterruptedFile, PlannedWrite, Undone};
use codespace_process::ProcError;

/// A request to the worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Call {
    /// Opens every `(workspace id, registered root)`, with watchers unless `watch` is false.
    /// The first call of a connection, and only once.
    Open {
        roots: Vec<(String, PathBuf)>,
        watch: bool,
    },
    Read {
        ws: String,
        path: WorkspacePath,
        offset: u64,
        limit: usize,
    },
    /// `progress`: the token the worker's progress events for this call name.
    Find {
        ws: String,
        job: FindJob,
        progress: u64,
    },
    Grep {
        ws: String,
        job: GrepJob,
        progress: u64,
    },
    Versions {
        ws: String,
        paths: Vec<String>,
    },
    Changes {
        ws: String,
        since: Option<String>,
    },
    RootStatus {
        ws: String,
    },
    WatchReport {
        ws: String,
    },
    Prepare {
        ws: String,
        patch: String,
        expected: Vec<(WorkspacePath, Version)>,
    },
    Apply {
        ws: String,
        writes: Vec<PlannedWrite>,
    },
    Survey {
        ws: String,
        files: Vec<InterruptedFile>,
    },
    RollBack {
        ws: String,
        files: Vec<InterruptedFile>,
        found: Vec<Found>,
    },
    PutBack {
        ws: String,
        file: InterruptedFile,
    },
    VersionNow {
        ws: String,
        path: WorkspacePath,
    },
    ClearTempFiles {
        ws: String,
        paths: Vec<String>,
    },
    /// Starts a command under the id the gateway chose.
    Spawn {
        ws: String,
        id: String,
        job: SpawnJob,
    },
    WriteStdin {
        id: String,
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
        close: bool,
    },
    ReadOutput {
        id: String,
        cursor: u64,
        max: usize,
    },
    Status {
        id: String,
    },
    Wait {
        id: String,
        what: WaitFor,
        limit: Duration,
    },
    Resize {
        id: String,
        rows: u16,
        cols: u16,
    },
    Terminate {
        id: String,
    },
    /// Kills every live command's whole tree (the gateway is shutting down).
    Shutdown,
}

/// What the worker opened: each workspace's canonical root, and its process limits.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Opened {
    pub(crate) roots: Vec<(String, PathBuf)>,
    pub(crate) facts: ProcessFacts,
}

/// The worker's answer to a [`Call`], in the variant of that call.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Reply {
    Opened(Result<Opened, OpenError>),
    Window(Result<Window, RunnerError>),
    Found(Result<FindPage, RunnerError>),
    Grep(Result<GrepOutcome, RunnerError>),
    Versions(Result<Vec<Result<Version, FsError>>, RunnerError>),
    Changes(Result<Result<Option<Changes>, BadCursor>, RunnerError>),
    RootStatus(Option<RootStatus>),
    WatchReport(Option<WatchReport>),
    Prepared(Result<Vec<PlannedWrite>, PrepareError>),
    Applied(Result<ApplyOutcome, RunnerError>),
    Surveyed(Result<Vec<Found>, RunnerError>),
    RolledBack(Result<Vec<Undone>, RunnerError>),
    PutBack(Result<Undone, RunnerError>),
    Version(Result<Version, RunnerError>),
    Cleared(Result<(), RunnerError>),
    Spawned(Result<(), ProcError>),
    Done(Result<(), ProcError>),
    Output(Result<ReadChunk, ProcError>),
    Status(Result<ProcStatus, ProcError>),
    Terminated(Result<Terminate, ProcError>),
    /// The call does not fit this worker's state (a second `Open`, or a job before it).
    Refused(String),
}

/// What the worker says unasked.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Event {
    /// The process and its whole tree are gone: the gateway releases its lease.
    ProcessExited { id: String },
    /// How far a walk or search of the call with this progress token has come.
    Progress { token: u64, entries: u64, files_searched: u64 },
}
