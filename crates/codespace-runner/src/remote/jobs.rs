//! Every runner job of [`SocketRunner`]: one call each, its answer unpacked, a socket
//! failure returned as [`Transport`] inside the job's own error.

use std::time::Duration;

use codespace_fs::{Cancel, FsError, Progress, RootStatus, Version, Window, WorkspacePath};
use codespace_process::{ProcStatus, ReadChunk, Terminate, WaitFor};
use codespace_watch::{BadCursor, Changes, WatchReport};

use super::call::{Call, Reply};
use super::client::{SocketRunner, mismatched};
use crate::{FindJob, FindPage, GrepJob, PrepareError, RunnerError, SpawnJob, Started};
use codespace_files::{ApplyOutcome, Found, GrepOutcome, InterruptedFile, PlannedWrite, Undone};

/// Unpacks the reply of `$call` as `Reply::$variant`, or turns anything else into an error.
macro_rules! expect_reply {
    ($reply:expr, $variant:ident) => {
        match $reply {
            Ok(Reply::$variant(answer)) => answer,
            Ok(other) => return Err(mismatched(other).into()),
            Err(transport) => return Err(RunnerError::Transport(transport).into()),
        }
    };
}

impl SocketRunner {
    pub async fn read(
        &self,
        ws: &str,
        path: WorkspacePath,
        offset: u64,
        limit: usize,
    ) -> Result<Window, RunnerError> {
        let call = Call::Read { ws: ws.to_owned(), path, offset, limit };
        expect_reply!(self.call(call, Duration::ZERO).await, Window)
    }

    pub async fn find(
        &self,
        ws: &str,
        job: FindJob,
        cancel: Cancel,
        counts: Progress,
    ) -> Result<FindPage, RunnerError> {
        let budget = job.walk.budget;
        let walk = self.start_walk(counts);
        let call = Call::Find { ws: ws.to_owned(), job, progress: walk.token };
        let reply = self.call_cancellable(call, budget, cancel).await;
        drop(walk);
        expect_reply!(reply, Found)
    }

    pub async fn grep(
        &self,
        ws: &str,
        job: GrepJob,
        cancel: Cancel,
        counts: Progress,
    ) -> Result<GrepOutcome, RunnerError> {
        let budget = job.walk.budget;
        let walk = self.start_walk(counts);
        let call = Call::Grep { ws: ws.to_owned(), job, progress: walk.token };
        let reply = self.call_cancellable(call, budget, cancel).await;
        drop(walk);
        expect_reply!(reply, Grep)
    }

    pub async fn versions(
        &self,
        ws: &str,
        paths: Vec<String>,
    ) -> Result<Vec<Result<Version, FsError>>, RunnerError> {
        let call = Call::Versions { ws: ws.to_owned(), paths };
        expect_reply!(self.call(call, Duration::ZERO).await, Versions)
    }

    pub async fn changes(
        &self,
        ws: &str,
        since: Option<String>,
    ) -> Result<Result<Option<Changes>, BadCursor>, RunnerError> {
        let call = Call::Changes { ws: ws.to_owned(), since };
        // It may wait for the watcher to start and for its cookie.
        expect_reply!(self.call(call, codespace_watch::START_WAIT).await, Changes)
    }

    pub async fn root_status(&self, ws: &str) -> Result<Option<RootStatus>, RunnerError> {
        let call = Call::RootStatus { ws: ws.to_owned() };
        Ok(expect_reply!(self.call(call, Duration::ZERO).await, RootStatus))
    }

    pub async fn watch_report(&self, ws: &str) -> Result<Option<WatchReport>, RunnerError> {
        let call = Call::WatchReport { ws: ws.to_owned() };
        Ok(expect_reply!(self.call(call, Duration::ZERO).await, WatchReport))
    }

    pub fn prepare(
        &self,
        ws: &str,
        patch: &str,
        expected: &[(WorkspacePath, Version)],
    ) -> Result<Vec<PlannedWrite>, PrepareError> {
        let call = Call::Prepare {
            ws: ws.to_owned(),
            patch: patch.to_owned(),
            expected: expected.to_vec(),
        };
        expect_reply!(self.call_blocking(call), Prepared)
    }

    pub fn apply(&self, ws: &str, writes: &[PlannedWrite]) -> Result<ApplyOutcome, RunnerError> {
        let call = Call::Apply { ws: ws.to_owned(), writes: writes.to_vec() };
        expect_reply!(self.call_blocking(call), Applied)
    }

    pub fn survey(&self, ws: &str, files: &[InterruptedFile]) -> Result<Vec<Found>, RunnerError> {
        let call = Call::Survey { ws: ws.to_owned(), files: files.to_vec() };
        expect_reply!(self.call_blocking(call), Surveyed)
    }

    pub fn roll_back(
        &self,
        ws: &str,
        files: &[InterruptedFile],
        found: &[Found],
    ) -> Result<Vec<Undone>, RunnerError> {
        let call =
            Call::RollBack { ws: ws.to_owned(), files: files.to_vec(), found: found.to_vec() };
        expect_reply!(self.call_blocking(call), RolledBack)
    }

    pub fn put_back(&self, ws: &str, file: &InterruptedFile) -> Result<Undone, RunnerError> {
        let call = Call::PutBack { ws: ws.to_owned(), file: file.clone() };
        expect_reply!(self.call_blocking(call), PutBack)
    }

    pub fn version_now(&self, ws: &str, path: &WorkspacePath) -> Result<Version, RunnerError> {
        let call = Call::VersionNow { ws: ws.to_owned(), path: path.clone() };
        expect_reply!(self.call_blocking(call), Version)
    }

    pub fn clear_temp_files(&self, ws: &str, paths: &[String]) -> Result<(), RunnerError> {
        let call = Call::ClearTempFiles { ws: ws.to_owned(), paths: paths.to_vec() };
        expect_reply!(self.call_blocking(call), Cleared)
    }

    /// Starts a command under an id chosen here, so that an answer lost on the way back
    /// still names the process to ask about (`dispatch_status: "unknown"`).
    pub async fn spawn(&self, ws: &str, job: SpawnJob) -> Result<Started, RunnerError> {
        let id = format!("proc-{}", uuid::Uuid::new_v4());
        // Watched before the call, so an exit event that overtakes the answer is not lost.
        let exited = self.watch_exit(&id);
        let call = Call::Spawn { ws: ws.to_owned(), id: id.clone(), job };
        match self.call(call, Duration::ZERO).await {
            Ok(Reply::Spawned(Ok(()))) => Ok(Started { id, exited, confirmed: true }),
            Ok(Reply::Spawned(Err(e))) => {
                self.forget(&id);
                Err(RunnerError::Process(e))
            }
            Ok(other) => {
                self.forget(&id);
                Err(mismatched(other))
            }
            Err(transport @ crate::Transport::NotSent { .. }) => {
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
        }
    }

    pub async fn write_stdin(&self, id: &str, data: &[u8], close: bool) -> Result<(), RunnerError> {
        let call = Call::WriteStdin { id: id.to_owned(), data: data.to_vec(), close };
        expect_reply!(self.call(call, Duration::ZERO).await, Done).map_err(RunnerError::Process)
    }

    pub async fn read_output(
        &self,
        id: &str,
        cursor: u64,
        max: usize,
    ) -> Result<ReadChunk, RunnerError> {
        let call = Call::ReadOutput { id: id.to_owned(), cursor, max };
        expect_reply!(self.call(call, Duration::ZERO).await, Output).map_err(RunnerError::Process)
    }

    pub async fn status(&self, id: &str) -> Result<ProcStatus, RunnerError> {
        let call = Call::Status { id: id.to_owned() };
        expect_reply!(self.call(call, Duration::ZERO).await, Status).map_err(RunnerError::Process)
    }

    pub async fn wait(&self, id: &str, what: WaitFor, limit: Duration) -> Result<(), RunnerError> {
        let call = Call::Wait { id: id.to_owned(), what, limit };
        expect_reply!(self.call(call, limit).await, Done).map_err(RunnerError::Process)
    }

    pub async fn resize(&self, id: &str, rows: u16, cols: u16) -> Result<(), RunnerError> {
        let call = Call::Resize { id: id.to_owned(), rows, cols };
        expect_reply!(self.call(call, Duration::ZERO).await, Done).map_err(RunnerError::Process)
    }

    /// Has the worker kill every live command's whole tree, and waits for it (a lost worker
    /// has killed them already).
    pub async fn shutdown(&self) {
        let _ = self.call(Call::Shutdown, Duration::from_secs(10)).await;
    }

    pub async fn terminate(&self, id: &str) -> Result<Terminate, RunnerError> {
        let call = Call::Terminate { id: id.to_owned() };
        expect_reply!(self.call(call, Duration::ZERO).await, Terminated)
            .map_err(RunnerError::Process)
    }
}
