//! [`Runner`]: the one interface between the gateway and the machine. The gateway keeps
//! policy, limits, leases, the ledger and holds; everything that touches a workspace file
//! or a process goes through here, as plain jobs and answers.

use std::path::Path;
use std::time::Duration;

use codespace_fs::{Cancel, FsError, Progress, RootStatus, Version, Window, WorkspacePath};
use codespace_process::{ProcStatus, ReadChunk, SandboxPolicy, Terminate, WaitFor};
use codespace_watch::{BadCursor, Changes, WatchReport};

use crate::remote::SocketRunner;
use crate::{FindJob, FindPage, GrepJob, LocalRunner, PrepareError, RunnerError};
use codespace_files::{ApplyOutcome, Found, GrepOutcome, InterruptedFile, PlannedWrite, Undone};

/// A command to start in a workspace: everything but the workspace's directory, which the
/// runner holds.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SpawnJob {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub tty: bool,
    pub timeout: Duration,
    pub sandbox: Option<SandboxPolicy>,
}

/// A command the runner started, or may have started.
#[derive(Debug)]
pub struct Started {
    pub id: String,
    /// Turns `true` once the process and its tree are known gone.
    pub exited: codespace_process::ExitWatch,
    /// False when the runner's answer was lost: the command may be running, and `exited`
    /// turns `true` only once the runner says it is not (or the runner is gone).
    pub confirmed: bool,
}

/// The process limits the runner's supervisor enforces, as `workspace_info` shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcessFacts {
    pub max_live: u64,
    pub ring_bytes: u64,
    pub retained_bytes: u64,
    pub completed_ttl: Duration,
    pub max_completed: u64,
}

/// The runner the gateway talks to.
#[derive(Debug)]
pub enum Runner {
    /// In this process.
    Local(LocalRunner),
    /// In a worker process, over a Unix socket.
    Socket(SocketRunner),
}

/// Dispatches one job to the runner in use.
macro_rules! each {
    ($self:ident, $l:ident => $local:expr, $s:ident => $socket:expr) => {
        match $self {
            Runner::Local($l) => $local,
            Runner::Socket($s) => $socket,
        }
    };
}

impl Runner {
    /// The canonical root of workspace `id`, as the runner opened it.
    pub fn root_path(&self, id: &str) -> Option<&Path> {
        each!(self, r => r.root_path(id), r => r.root_path(id))
    }

    /// Whether the root path still names the directory opened at start.
    pub async fn root_status(&self, id: &str) -> Result<Option<RootStatus>, RunnerError> {
        each!(self, r => Ok(r.root_status(id)), r => r.root_status(id).await)
    }

    /// What the watcher of workspace `id` reports (`None`: watching is off).
    pub async fn watch_report(&self, id: &str) -> Result<Option<WatchReport>, RunnerError> {
        each!(self, r => Ok(r.watch_report(id)), r => r.watch_report(id).await)
    }

    pub async fn read(
        &self,
        ws: &str,
        path: WorkspacePath,
        offset: u64,
        limit: usize,
    ) -> Result<Window, RunnerError> {
        each!(self, r => r.read(ws, path, offset, limit).await,
              r => r.read(ws, path, offset, limit).await)
    }

    /// `progress`: a worker's counts arrive every 100 ms.
    pub async fn find(
        &self,
        ws: &str,
        job: FindJob,
        cancel: Cancel,
        progress: Progress,
    ) -> Result<FindPage, RunnerError> {
        each!(self, r => r.find(ws, job, cancel, progress).await, r => r.find(ws, job, cancel, progress).await)
    }

    /// `progress`: a worker's counts arrive every 100 ms.
    pub async fn grep(
        &self,
        ws: &str,
        job: GrepJob,
        cancel: Cancel,
        progress: Progress,
    ) -> Result<GrepOutcome, RunnerError> {
        each!(self, r => r.grep(ws, job, cancel, progress).await, r => r.grep(ws, job, cancel, progress).await)
    }

    pub async fn versions(
        &self,
        ws: &str,
        paths: Vec<String>,
    ) -> Result<Vec<Result<Version, FsError>>, RunnerError> {
        each!(self, r => r.versions(ws, paths).await, r => r.versions(ws, paths).await)
    }

    pub async fn changes(
        &self,
        ws: &str,
        since: Option<String>,
    ) -> Result<Result<Option<Changes>, BadCursor>, RunnerError> {
        each!(self, r => r.changes(ws, since).await, r => r.changes(ws, since).await)
    }

    /// Blocks: call it from a blocking thread.
    pub fn prepare(
        &self,
        ws: &str,
        patch: &str,
        expected: &[(WorkspacePath, Version)],
    ) -> Result<Vec<PlannedWrite>, PrepareError> {
        each!(self, r => r.prepare(ws, patch, expected), r => r.prepare(ws, patch, expected))
    }

    /// Blocks: call it from a blocking thread.
    pub fn apply(&self, ws: &str, writes: &[PlannedWrite]) -> Result<ApplyOutcome, RunnerError> {
        each!(self, r => r.apply(ws, writes), r => r.apply(ws, writes))
    }

    /// Blocks: call it from a blocking thread.
    pub fn survey(&self, ws: &str, files: &[InterruptedFile]) -> Result<Vec<Found>, RunnerError> {
        each!(self, r => r.survey(ws, files), r => r.survey(ws, files))
    }

    /// Blocks: call it from a blocking thread.
    pub fn roll_back(
        &self,
        ws: &str,
        files: &[InterruptedFile],
        found: &[Found],
    ) -> Result<Vec<Undone>, RunnerError> {
        each!(self, r => r.roll_back(ws, files, found), r => r.roll_back(ws, files, found))
    }

    /// The version of one path on the disk, never from a cache. Blocks.
    pub fn version_now(&self, ws: &str, path: &WorkspacePath) -> Result<Version, RunnerError> {
        each!(self, r => r.version_now(ws, path), r => r.version_now(ws, path))
    }

    /// Removes what an interrupted write left beside `paths`. Blocks.
    pub fn clear_temp_files(&self, ws: &str, paths: &[String]) -> Result<(), RunnerError> {
        each!(self, r => r.clear_temp_files(ws, paths), r => r.clear_temp_files(ws, paths))
    }

    /// Blocks: call it from a blocking thread.
    pub fn put_back(&self, ws: &str, file: &InterruptedFile) -> Result<Undone, RunnerError> {
        each!(self, r => r.put_back(ws, file), r => r.put_back(ws, file))
    }

    pub fn process_facts(&self) -> ProcessFacts {
        each!(self, r => r.process_facts(), r => r.process_facts())
    }

    /// Starts a command in workspace `ws`.
    pub async fn spawn(&self, ws: &str, job: SpawnJob) -> Result<Started, RunnerError> {
        each!(self,
            r => r.spawn(ws, job).await
                .map(|s| Started { id: s.id, exited: s.exited, confirmed: true })
                .map_err(RunnerError::Process),
            r => r.spawn(ws, job).await)
    }

    pub async fn write_stdin(&self, id: &str, data: &[u8], close: bool) -> Result<(), RunnerError> {
        each!(self, r => r.write_stdin(id, data, close).map_err(RunnerError::Process),
              r => r.write_stdin(id, data, close).await)
    }

    pub async fn read_output(
        &self,
        id: &str,
        cursor: u64,
        max: usize,
    ) -> Result<ReadChunk, RunnerError> {
        each!(self, r => r.read_output(id, cursor, max).map_err(RunnerError::Process),
              r => r.read_output(id, cursor, max).await)
    }

    pub async fn status(&self, id: &str) -> Result<ProcStatus, RunnerError> {
        each!(self, r => r.status(id).map_err(RunnerError::Process), r => r.status(id).await)
    }

    /// Whether the runner may still keep process `id` (live, or completed and not yet
    /// evicted).
    pub fn knows(&self, id: &str) -> bool {
        each!(self, r => r.status(id).is_ok(), r => r.knows(id))
    }

    pub async fn wait(&self, id: &str, what: WaitFor, limit: Duration) -> Result<(), RunnerError> {
        each!(self, r => r.wait(id, what, limit).await.map_err(RunnerError::Process),
              r => r.wait(id, what, limit).await)
    }

    pub async fn resize(&self, id: &str, rows: u16, cols: u16) -> Result<(), RunnerError> {
        each!(self, r => r.resize(id, rows, cols).map_err(RunnerError::Process),
              r => r.resize(id, rows, cols).await)
    }

    pub async fn terminate(&self, id: &str) -> Result<Terminate, RunnerError> {
        each!(self, r => r.terminate(id).map_err(RunnerError::Process), r => r.terminate(id).await)
    }

    /// Runs `hook` in every later patch between its last write and its verification (the
    /// runner in this process only).
    #[cfg(feature = "test-hooks")]
    pub fn set_written_hook(&self, hook: Option<crate::Hook>) {
        if let Runner::Local(r) = self {
            r.set_written_hook(hook);
        }
    }

    /// The watcher of workspace `id` (the runner in this process only), for tests that
    /// force an overflow, a resync, a restart or a failed start.
    #[cfg(feature = "test-hooks")]
    pub fn workspace_watch(
        &self,
        id: &str,
    ) -> Option<std::sync::Arc<codespace_watch::WorkspaceWatch>> {
        match self {
            Runner::Local(r) => r.workspace_watch(id),
            Runner::Socket(_) => None,
        }
    }

    /// Kills every live command's whole tree (a worker also does it by itself when its
    /// gateway goes).
    pub async fn shutdown(&self) {
        each!(self, r => r.shutdown().await, r => r.shutdown().await)
    }
}
