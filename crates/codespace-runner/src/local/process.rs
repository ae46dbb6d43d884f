//! The process jobs of [`LocalRunner`]: the supervisor's, with the command started in the
//! workspace's pinned root directory (through its descriptor, never its path).

use std::sync::Arc;

use codespace_process::{ProcError, ProcStatus, SpawnRequest, Spawned, Terminate};

use super::LocalRunner;
use crate::ops::{self, Run};
use crate::{RunnerError, SpawnJob};

impl LocalRunner {
    /// Starts a command in workspace `ws`, under `id` when the caller chose one.
    pub async fn spawn_as(
        &self,
        ws: &str,
        id: Option<String>,
        job: SpawnJob,
    ) -> Result<Spawned, RunnerError> {
        // A replaced root is refused, never followed: the command would start in a
        // directory the operator no longer sees.
        let w = self.opened(ws)?;
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
            kill_grace: job.kill_grace,
            sandbox: job.sandbox,
            external: job.external,
        };
        Ok(self.supervisor.spawn_as(id, req).await?)
    }
}

impl Run<ops::WriteStdin> for LocalRunner {
    async fn run(&self, job: ops::WriteStdin) -> Result<(), RunnerError> {
        Ok(self.supervisor.write_stdin(&job.id, &job.data, job.close)?)
    }
}

impl Run<ops::ReadOutput> for LocalRunner {
    async fn run(&self, job: ops::ReadOutput) -> Result<ops::OutputRead, RunnerError> {
        let (chunk, status) = self.supervisor.read_with_status(&job.id, job.cursor, job.max)?;
        Ok(ops::OutputRead { chunk, status: Box::new(status) })
    }
}

impl Run<ops::Status> for LocalRunner {
    async fn run(&self, job: ops::Status) -> Result<ProcStatus, RunnerError> {
        Ok(self.supervisor.status(&job.id)?)
    }
}

impl Run<ops::Wait> for LocalRunner {
    async fn run(&self, job: ops::Wait) -> Result<(), RunnerError> {
        Ok(self.supervisor.wait(&job.id, job.what, job.limit).await?)
    }
}

impl Run<ops::Resize> for LocalRunner {
    async fn run(&self, job: ops::Resize) -> Result<(), RunnerError> {
        Ok(self.supervisor.resize(&job.id, job.rows, job.cols)?)
    }
}

impl Run<ops::Terminate> for LocalRunner {
    async fn run(&self, job: ops::Terminate) -> Result<Terminate, RunnerError> {
        Ok(self.supervisor.terminate(&job.id, job.grace)?)
    }
}

impl Run<ops::Shutdown> for LocalRunner {
    /// Ends every live command's whole tree, each with its grace.
    async fn run(&self, _: ops::Shutdown) -> Result<(), RunnerError> {
        self.supervisor.shutdown().await;
        Ok(())
    }
}
