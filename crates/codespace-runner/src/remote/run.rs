//! Every job of [`SocketRunner`], through one request each: the answer is taken straight
//! out as the job's answer type, and a socket failure is returned as [`Transport`] inside the
//! job's own error.

use codespace_fs::{Cancel, Progress};

use super::client::SocketRunner;
use super::messages::Reply;
use crate::ops::{self, Failed, Job};
use crate::{RunnerError, SpawnJob, Started, Transport, WaitFor};

impl SocketRunner {
    /// Runs `job` in the worker.
    pub async fn run<J: Job>(&self, job: J) -> J::Answer
    where
        J::Answer: Failed,
    {
        Reply::unpack::<J>(self.call(job, 0).await)
    }

    /// [`SocketRunner::run`] from a thread that may block (never an async worker thread).
    pub fn run_blocking<J: Job>(&self, job: J) -> J::Answer
    where
        J::Answer: Failed,
    {
        self.handle.block_on(self.run(job))
    }

    /// Runs a walk in the worker: its progress events raise `counts`, and raising `cancel`
    /// tells the worker, whose (early, incomplete) answer is still awaited.
    pub async fn walk<J: Job>(&self, job: J, cancel: Cancel, counts: Progress) -> J::Answer
    where
        J::Answer: Failed,
    {
        let walk = self.start_walk(counts);
        let reply = self.call_cancellable(job, walk.token, cancel).await;
        drop(walk);
        Reply::unpack::<J>(reply)
    }

    /// Waits for `job.what`: a command started here is known gone from the worker's
    /// `ProcessExited` event (or the worker's end), so a wait for its exit is not a call on
    /// the socket; a wait for output, or for a command not started here, is.
    pub async fn wait(&self, job: ops::Wait) -> Result<(), RunnerError> {
        if job.what == WaitFor::Exit
            && let Some(exited) = self.exit_watch(&job.id)
        {
            let _ = tokio::time::timeout(job.limit, exited.wait()).await;
            return Ok(());
        }
        self.run(job).await
    }

    /// Starts a command under an id chosen here, so that an answer lost on the way back
    /// still names the process to ask about (`dispatch_status: "unknown"`).
    pub async fn spawn(&self, ws: &str, job: SpawnJob) -> Result<Started, RunnerError> {
        let id = format!("proc-{}", uuid::Uuid::new_v4());
        // Watched before the call, so an exit event that overtakes the answer is not lost.
        let exited = self.watch_exit(&id);
        let spawn = ops::Spawn { ws: ws.to_owned(), id: id.clone(), job };
        match self.call(spawn, 0).await {
            Err(transport @ Transport::NotSent { .. }) => {
                self.forget(&id);
                Err(RunnerError::Transport(transport))
            }
            // It may be running: the caller keeps the lease until its exit is seen, the
            // worker says it never started, or the worker is gone.
            Err(transport) => {
                tracing::warn!(process_id = %id, %transport, "a command may have started");
                self.confirm_later(&id);
                Ok(Started { id, exited, confirmed: false })
            }
            Ok(reply) => match Reply::unpack::<ops::Spawn>(Ok(reply)) {
                Ok(()) => Ok(Started { id, exited, confirmed: true }),
                Err(e) => {
                    self.forget(&id);
                    Err(e)
                }
            },
        }
    }

    /// Has the worker kill every live command's whole tree, and waits for it (a lost worker
    /// has killed them already).
    pub async fn shutdown(&self) {
        let _ = self.run(ops::Shutdown {}).await;
    }
}
