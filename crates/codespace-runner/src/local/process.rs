//! The process jobs of [`LocalRunner`]: the supervisor's, with the command started in the
//! workspace's pinned root directory (through its descriptor, never its path).

use std::sync::Arc;
use std::time::Duration;

use codespace_process::{ProcStatus, ReadChunk, SpawnRequest, Spawned, Terminate, WaitFor};

use super::LocalRunner;
use crate::SpawnJob;
use codespace_process::ProcError;

impl LocalRunner {
    /// Starts a command in workspace `ws`.
    pub async fn spawn(&self, ws: &str, job: SpawnJob) -> Result<Spawned, ProcError> {
        self.spawn_as(ws, None, job).await
    }

    /// [`LocalRunner::spawn`] under an id the caller chose.
    pub async fn spawn_as(
        &self,
        ws: &str,
        id: Option<String>,
        job: SpawnJob,
    ) -> Result<Spawned, ProcError> {
        let w = self
            .workspaces
            .get(ws)
            .ok_or_else(|| ProcError::SpawnFailed(format!("workspace {ws:?} is not open here")))?;
        // A replaced root is logged, never followed: the command starts in the directory
        // pinned at start, through its descriptor.
        if w.root.status() != codespace_fs::RootStatus::Current {
            tracing::warn!(
                workspace = ws,
                root = %w.root.path().display(),
                status = ?w.root.status(),
                "the workspace root path no longer names the directory opened at start; the command starts in that directory"
            );
        }
        let cwd_dir = w
            .root
            .dir_handle()
            .map_err(|e| ProcError::SpawnFailed(format!("the workspace root: {e}")))?;
        let req = SpawnRequest {
            argv: job.argv,
            cwd: w.root.path().to_path_buf(),
            cwd_dir: Some(Arc::new(cwd_dir)),
            env: job.env,
            tty: job.tty,
            timeout: job.timeout,
            sandbox: job.sandbox,
        };
        self.supervisor.spawn_as(id, req).await
    }

    pub fn write_stdin(&self, id: &str, data: &[u8], close: bool) -> Result<(), ProcError> {
        self.supervisor.write_stdin(id, data, close)
    }

    pub fn read_output(&self, id: &str, cursor: u64, max: usize) -> Result<ReadChunk, ProcError> {
        self.supervisor.read(id, cursor, max)
    }

    pub fn status(&self, id: &str) -> Result<ProcStatus, ProcError> {
        self.supervisor.status(id)
    }

    pub async fn wait(&self, id: &str, what: WaitFor, limit: Duration) -> Result<(), ProcError> {
        self.supervisor.wait(id, what, limit).await
    }

    pub fn resize(&self, id: &str, rows: u16, cols: u16) -> Result<(), ProcError> {
        self.supervisor.resize(id, rows, cols)
    }

    pub fn terminate(&self, id: &str) -> Result<Terminate, ProcError> {
        self.supervisor.terminate(id)
    }

    /// Kills every live command's whole tree.
    pub async fn shutdown(&self) {
        self.supervisor.shutdown().await;
    }
}
