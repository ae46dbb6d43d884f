//! [`Runner`]: the one interface between the gateway and the machine. The gateway keeps
//! policy, limits, leases, the ledger and holds; everything that touches a workspace file
//! or a process goes through here, as the jobs and answers of [`crate::ops`].

use std::path::PathBuf;
use std::time::Duration;

use codespace_fs::{Cancel, Progress};
use codespace_process::{ExternalPolicy, SandboxPolicy};

use crate::ops::{self, Failed, Job, Run, RunBlocking, RunWalk};
use crate::remote::SocketRunner;
use crate::{LocalRunner, RunnerError};

/// A command to start in a workspace: everything but the workspace's directory, which the
/// runner holds.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SpawnJob {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub tty: bool,
    pub timeout: Duration,
    /// SIGTERM to SIGKILL when the command is ended; the most a terminate may ask for.
    pub kill_grace: Duration,
    pub sandbox: Option<SandboxPolicy>,
    /// Confinement without namespaces, for an externally isolated workspace.
    pub external: Option<ExternalPolicy>,
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

/// The runner's counters since it started (the server's metrics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunnerCounters {
    /// Watcher resyncs, every workspace's together.
    pub watcher_resyncs: u64,
    /// Command output written to spill files.
    pub spilled_bytes: u64,
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
    /// Runs `job` on the runner in use.
    pub async fn run<J: Job>(&self, job: J) -> J::Answer
    where
        LocalRunner: Run<J>,
        J::Answer: Failed,
    {
        each!(self, r => r.run(job).await, r => r.run(job).await)
    }

    /// Runs a job that blocks: call it from a blocking thread.
    pub fn run_blocking<J: Job>(&self, job: J) -> J::Answer
    where
        LocalRunner: RunBlocking<J>,
        J::Answer: Failed,
    {
        each!(self, r => r.run_blocking(job), r => r.run_blocking(job))
    }

    /// Runs a walk: `cancel` stops it, `progress` counts its work (a worker's counts
    /// arrive every 100 ms).
    pub async fn walk<J: Job>(&self, job: J, cancel: Cancel, progress: Progress) -> J::Answer
    where
        LocalRunner: RunWalk<J>,
        J::Answer: Failed,
    {
        each!(self, r => r.run_walk(job, cancel, progress).await,
              r => r.walk(job, cancel, progress).await)
    }

    /// Waits until `job.what` happened or `job.limit` passed. A worker's command's exit is
    /// waited for on the `ProcessExited` event it pushes, never by a call on its socket.
    pub async fn wait(&self, job: ops::Wait) -> Result<(), RunnerError> {
        each!(self, r => r.run(job).await, r => r.wait(job).await)
    }

    /// The canonical root of workspace `id`, as the runner holds it now.
    pub fn root_path(&self, id: &str) -> Option<PathBuf> {
        each!(self, r => r.root_path(id), r => r.root_path(id))
    }

    /// Opens the workspaces again for a reloaded registry ([`ops::Reopen`]), in this process
    /// or in the worker: call it from a blocking thread. A refusal, or a worker that could
    /// not be asked, changes nothing this side.
    pub fn reopen(
        &self,
        job: ops::Reopen,
    ) -> Result<Result<ops::Reopened, crate::OpenError>, RunnerError> {
        let answer = self.run_blocking(job);
        if let (Runner::Socket(s), Ok(Ok(reopened))) = (self, &answer) {
            s.set_roots(&reopened.roots);
        }
        answer
    }

    pub fn process_facts(&self) -> ProcessFacts {
        each!(self, r => r.process_facts(), r => r.process_facts())
    }

    /// Starts a command in workspace `ws`.
    pub async fn spawn(&self, ws: &str, job: SpawnJob) -> Result<Started, RunnerError> {
        each!(self,
            r => r.spawn_as(ws, None, job).await
                .map(|s| Started { id: s.id, exited: s.exited, confirmed: true }),
            r => r.spawn(ws, job).await)
    }

    /// Whether the runner may still keep process `id` (live, or completed and not yet
    /// evicted).
    pub fn knows(&self, id: &str) -> bool {
        each!(self, r => r.supervisor().status(id).is_ok(), r => r.knows(id))
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

    /// Ends every live command's whole tree, each with its grace (a worker also does it by
    /// itself when its gateway goes).
    pub async fn shutdown(&self) {
        let _ = self.run(ops::Shutdown {}).await;
    }
}
