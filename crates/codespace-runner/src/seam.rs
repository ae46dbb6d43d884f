//! [`Runner`]: the one interface between the gateway and the machine. The gateway keeps
//! policy, limits, leases, the ledger and holds; everything that touches a workspace file
//! or a process goes through here, as plain jobs and answers.

use std::path::Path;
use std::time::Duration;

use codespace_fs::{Cancel, FsError, Progress, RootStatus, Version, Window, WorkspacePath};
use codespace_process::{ProcStatus, ReadChunk, SandboxPolicy, Spawned, Terminate, WaitFor};
use codespace_watch::{BadCursor, Changes, WatchReport};

use crate::{
    ApplyOutcome, FindJob, FindPage, Found, GrepJob, GrepOutcome, InterruptedFile, LocalRunner,
    PlannedWrite, PrepareError, ProcError, RunnerError, Undone,
};

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
}

impl Runner {
    /// The canonical root of workspace `id`, as the runner opened it.
    pub fn root_path(&self, id: &str) -> Option<&Path> {
        match self {
            Runner::Local(r) => r.root_path(id),
        }
    }

    pub fn root_status(&self, id: &str) -> Option<RootStatus> {
        match self {
            Runner::Local(r) => r.root_status(id),
        }
    }

    pub fn watch_report(&self, id: &str) -> Option<WatchReport> {
        match self {
            Runner::Local(r) => r.watch_report(id),
        }
    }

    pub async fn read(
        &self,
        ws: &str,
        path: WorkspacePath,
        offset: u64,
        limit: usize,
    ) -> Result<Window, RunnerError> {
        match self {
            Runner::Local(r) => r.read(ws, path, offset, limit).await,
        }
    }

    pub async fn find(
        &self,
        ws: &str,
        job: FindJob,
        cancel: Cancel,
        progress: Progress,
    ) -> Result<FindPage, RunnerError> {
        match self {
            Runner::Local(r) => r.find(ws, job, cancel, progress).await,
        }
    }

    pub async fn grep(
        &self,
        ws: &str,
        job: GrepJob,
        cancel: Cancel,
        progress: Progress,
    ) -> Result<GrepOutcome, RunnerError> {
        match self {
            Runner::Local(r) => r.grep(ws, job, cancel, progress).await,
        }
    }

    pub async fn versions(
        &self,
        ws: &str,
        paths: Vec<String>,
    ) -> Result<Vec<Result<Version, FsError>>, RunnerError> {
        match self {
            Runner::Local(r) => r.versions(ws, paths).await,
        }
    }

    pub async fn changes(
        &self,
        ws: &str,
        since: Option<String>,
    ) -> Result<Result<Option<Changes>, BadCursor>, RunnerError> {
        match self {
            Runner::Local(r) => r.changes(ws, since).await,
        }
    }

    /// Blocks: call it from a blocking thread.
    pub fn prepare(
        &self,
        ws: &str,
        patch: &str,
        expected: &[(WorkspacePath, Version)],
    ) -> Result<Vec<PlannedWrite>, PrepareError> {
        match self {
            Runner::Local(r) => r.prepare(ws, patch, expected),
        }
    }

    /// Blocks: call it from a blocking thread.
    pub fn apply(&self, ws: &str, writes: &[PlannedWrite]) -> Result<ApplyOutcome, RunnerError> {
        match self {
            Runner::Local(r) => r.apply(ws, writes),
        }
    }

    /// Blocks: call it from a blocking thread.
    pub fn survey(&self, ws: &str, files: &[InterruptedFile]) -> Result<Vec<Found>, RunnerError> {
        match self {
            Runner::Local(r) => r.survey(ws, files),
        }
    }

    /// Blocks: call it from a blocking thread.
    pub fn roll_back(
        &self,
        ws: &str,
        files: &[InterruptedFile],
        found: &[Found],
    ) -> Result<Vec<Undone>, RunnerError> {
        match self {
            Runner::Local(r) => r.roll_back(ws, files, found),
        }
    }

    /// The version of one path on the disk, never from a cache. Blocks.
    pub fn version_now(&self, ws: &str, path: &WorkspacePath) -> Result<Version, RunnerError> {
        match self {
            Runner::Local(r) => r.version_now(ws, path),
        }
    }

    /// Removes what an interrupted write left beside `paths`. Blocks.
    pub fn clear_temp_files(&self, ws: &str, paths: &[String]) -> Result<(), RunnerError> {
        match self {
            Runner::Local(r) => r.clear_temp_files(ws, paths),
        }
    }

    /// Blocks: call it from a blocking thread.
    pub fn put_back(&self, ws: &str, file: &InterruptedFile) -> Result<Undone, RunnerError> {
        match self {
            Runner::Local(r) => r.put_back(ws, file),
        }
    }

    pub fn process_facts(&self) -> ProcessFacts {
        match self {
            Runner::Local(r) => {
                let c = r.supervisor().config();
                ProcessFacts {
                    max_live: c.max_live as u64,
                    ring_bytes: c.ring_bytes as u64,
                    retained_bytes: c.retained_bytes(),
                    completed_ttl: c.completed_ttl,
                    max_completed: c.max_completed as u64,
                }
            }
        }
    }

    pub async fn spawn(&self, ws: &str, job: SpawnJob) -> Result<Spawned, ProcError> {
        match self {
            Runner::Local(r) => r.spawn(ws, job).await,
        }
    }

    pub async fn write_stdin(&self, id: &str, data: &[u8], close: bool) -> Result<(), ProcError> {
        match self {
            Runner::Local(r) => r.write_stdin(id, data, close),
        }
    }

    pub async fn read_output(
        &self,
        id: &str,
        cursor: u64,
        max: usize,
    ) -> Result<ReadChunk, ProcError> {
        match self {
            Runner::Local(r) => r.read_output(id, cursor, max),
        }
    }

    pub async fn status(&self, id: &str) -> Result<ProcStatus, ProcError> {
        match self {
            Runner::Local(r) => r.status(id),
        }
    }

    /// Whether the runner still keeps process `id` (live, or completed and not yet evicted).
    pub fn knows(&self, id: &str) -> bool {
        match self {
            Runner::Local(r) => r.status(id).is_ok(),
        }
    }

    pub async fn wait(&self, id: &str, what: WaitFor, limit: Duration) -> Result<(), ProcError> {
        match self {
            Runner::Local(r) => r.wait(id, what, limit).await,
        }
    }

    pub async fn resize(&self, id: &str, rows: u16, cols: u16) -> Result<(), ProcError> {
        match self {
            Runner::Local(r) => r.resize(id, rows, cols),
        }
    }

    pub async fn terminate(&self, id: &str) -> Result<Terminate, ProcError> {
        match self {
            Runner::Local(r) => r.terminate(id),
        }
    }

    /// Runs `hook` in every later patch between its last write and its verification.
    #[cfg(feature = "test-hooks")]
    pub fn set_written_hook(&self, hook: Option<crate::Hook>) {
        match self {
            Runner::Local(r) => r.set_written_hook(hook),
        }
    }

    /// The watcher of workspace `id`, for tests that force an overflow, a resync, a
    /// restart or a failed start.
    #[cfg(feature = "test-hooks")]
    pub fn workspace_watch(
        &self,
        id: &str,
    ) -> Option<std::sync::Arc<codespace_watch::WorkspaceWatch>> {
        match self {
            Runner::Local(r) => r.workspace_watch(id),
        }
    }

    /// Kills every live command's whole tree.
    pub async fn shutdown(&self) {
        match self {
            Runner::Local(r) => r.shutdown().await,
        }
    }
}
