//! The worker: this binary in its runner role, serving one gateway over one connection.
//! It opens the workspaces the gateway names, runs every job on its own [`LocalRunner`],
//! says when a process is gone, and when the connection ends, however it ends, kills every
//! process it started (subtree and all) before it returns.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use codespace_fs::Cancel;
use codespace_process::Supervisor;
use tokio::net::UnixStream;
use tokio::sync::mpsc;

use super::call::{Call, Event, Opened, Reply};
use crate::LocalRunner;
use codespace_fs::Progress;
use codespace_wire::{self as wire, Cancelled, ServeOptions};

/// How often a running walk's counts are sent.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// The worker's state over its one connection.
struct Worker {
    supervisor: Arc<Supervisor>,
    runner: OnceLock<Arc<LocalRunner>>,
    events: mpsc::UnboundedSender<Event>,
    faults: WorkerFaults,
}

/// Faults a test can ask a worker for (they act only in a build with the `test-hooks`
/// feature): stop a patch at a write and leave a marker file, or hang up after running a
/// call without answering it.
#[derive(Debug, Clone, Default)]
pub struct WorkerFaults {
    /// Stop before the patch write numbered this (0: before the first), forever, once
    /// `marker` exists; `None` with a marker: stop between the last write and the check.
    pub stall_at: Option<usize>,
    pub marker: Option<std::path::PathBuf>,
    /// Close the connection after running the first call of this kind (`apply`, `spawn`)
    /// instead of answering it.
    pub hang_up_after: Option<String>,
}

/// Serves one gateway on `stream` until it goes away, then kills every process started for
/// it. `build` is this binary's version, sent in the handshake.
pub async fn serve_worker(
    stream: UnixStream,
    supervisor: Arc<Supervisor>,
    build: String,
    faults: WorkerFaults,
) -> Result<(), wire::ServeError> {
    let (events, rx) = mpsc::unbounded_channel();
    let worker = Arc::new(Worker {
        supervisor: Arc::clone(&supervisor),
        runner: OnceLock::new(),
        events,
        faults: faults.clone(),
    });
    let mut options = ServeOptions::new(build);
    options.hang_up = hang_up(&faults);
    let handler = move |call: Call, deadline: Instant, cancelled: Cancelled| {
        let worker = Arc::clone(&worker);
        async move { worker.answer(call, deadline, cancelled).await }
    };
    let served = wire::serve(stream, options, handler, rx).await;
    // The gateway is gone (or broke the protocol): nothing started for it may outlive it.
    supervisor.shutdown().await;
    served
}

impl Worker {
    fn runner(&self) -> Result<Arc<LocalRunner>, Reply> {
        self.runner.get().cloned().ok_or_else(|| Reply::Refused("no workspace is open yet".into()))
    }

    async fn answer(&self, call: Call, _deadline: Instant, cancelled: Cancelled) -> Reply {
        if let Call::Open { roots, watch } = call {
            return self.open(&roots, watch);
        }
        let r = match self.runner() {
            Ok(r) => r,
            Err(refused) => return refused,
        };
        match call {
            Call::Open { .. } => Reply::Refused("the workspaces are already open".into()),
            Call::Read { ws, path, offset, limit } => {
                Reply::Window(r.read(&ws, path, offset, limit).await)
            }
            Call::Find { ws, job, progress } => {
                let (cancel, watcher) = cancel_on(cancelled);
                let (counts, ticker) = self.report(progress);
                let found = r.find(&ws, job, cancel, counts).await;
                watcher.abort();
                ticker.abort();
                Reply::Found(found)
            }
            Call::Grep { ws, job, progress } => {
                let (cancel, watcher) = cancel_on(cancelled);
                let (counts, ticker) = self.report(progress);
                let found = r.grep(&ws, job, cancel, counts).await;
                watcher.abort();
                ticker.abort();
                Reply::Grep(found)
            }
            Call::Versions { ws, paths } => Reply::Versions(r.versions(&ws, paths).await),
            Call::Changes { ws, since } => Reply::Changes(r.changes(&ws, since).await),
            Call::RootStatus { ws } => Reply::RootStatus(r.root_status(&ws)),
            Call::WatchReport { ws } => Reply::WatchReport(r.watch_report(&ws)),
            Call::Spawn { ws, id, job } => Reply::Spawned(self.spawn(&r, &ws, id, job).await),
            Call::WriteStdin { id, data, close } => Reply::Done(r.write_stdin(&id, &data, close)),
            Call::ReadOutput { id, cursor, max } => Reply::Output(r.read_output(&id, cursor, max)),
            Call::Status { id } => Reply::Status(r.status(&id)),
            Call::Wait { id, what, limit } => Reply::Done(r.wait(&id, what, limit).await),
            Call::Resize { id, rows, cols } => Reply::Done(r.resize(&id, rows, cols)),
            Call::Terminate { id } => Reply::Terminated(r.terminate(&id)),
            Call::Shutdown => {
                r.shutdown().await;
                Reply::Done(Ok(()))
            }
            blocking_call => blocking(r, blocking_call).await,
        }
    }

    fn open(&self, roots: &[(String, std::path::PathBuf)], watch: bool) -> Reply {
        if self.runner.get().is_some() {
            return Reply::Refused("the workspaces are already open".into());
        }
        let opened = LocalRunner::open(roots, Arc::clone(&self.supervisor), watch).map(|r| {
            let roots = roots
                .iter()
                .filter_map(|(id, _)| r.root_path(id).map(|p| (id.clone(), p.to_path_buf())))
                .collect();
            let facts = r.process_facts();
            stall(&r, &self.faults);
            let _ = self.runner.set(Arc::new(r));
            Opened { roots, facts }
        });
        Reply::Opened(opened)
    }

    /// Counters for a walk, and the task that reports them every [`PROGRESS_EVERY`] while
    /// they move (aborted once the call is answered).
    fn report(&self, token: u64) -> (Progress, tokio::task::JoinHandle<()>) {
        let counts = Progress::new();
        let (seen, events) = (counts.clone(), self.events.clone());
        let ticker = tokio::spawn(async move {
            let mut last = (0, 0);
            loop {
                tokio::time::sleep(PROGRESS_EVERY).await;
                let now = (seen.entries(), seen.files_searched());
                if now != last {
                    last = now;
                    let (entries, files_searched) = now;
                    let _ = events.send(Event::Progress { token, entries, files_searched });
                }
            }
        });
        (counts, ticker)
    }

    /// Starts the command and, once it and its tree are gone, says so.
    async fn spawn(
        &self,
        r: &LocalRunner,
        ws: &str,
        id: String,
        job: crate::SpawnJob,
    ) -> Result<(), codespace_process::ProcError> {
        let spawned = r.spawn_as(ws, Some(id), job).await?;
        let events = self.events.clone();
        tokio::spawn(async move {
            spawned.exited.wait().await;
            let _ = events.send(Event::ProcessExited { id: spawned.id });
        });
        Ok(())
    }
}

/// The jobs that block (the patch transaction's disk steps), on a blocking thread.
async fn blocking(r: Arc<LocalRunner>, call: Call) -> Reply {
    let run = move || match call {
        Call::Prepare { ws, patch, expected } => Reply::Prepared(r.prepare(&ws, &patch, &expected)),
        Call::Apply { ws, writes } => Reply::Applied(r.apply(&ws, &writes)),
        Call::Survey { ws, files } => Reply::Surveyed(r.survey(&ws, &files)),
        Call::RollBack { ws, files, found } => Reply::RolledBack(r.roll_back(&ws, &files, &found)),
        Call::PutBack { ws, file } => Reply::PutBack(r.put_back(&ws, &file)),
        Call::VersionNow { ws, path } => Reply::Version(r.version_now(&ws, &path)),
        Call::ClearTempFiles { ws, paths } => Reply::Cleared(r.clear_temp_files(&ws, &paths)),
        other => Reply::Refused(format!("{other:?} is not a blocking job")),
    };
    match tokio::task::spawn_blocking(run).await {
        Ok(reply) => reply,
        Err(e) => Reply::Refused(format!("runner task failed: {e}")),
    }
}

/// A walk's cancel flag raised when the gateway cancels the call, and the task that
/// raises it (aborted once the call is answered).
fn cancel_on(cancelled: Cancelled) -> (Cancel, tokio::task::JoinHandle<()>) {
    let cancel = Cancel::new();
    let flag = cancel.clone();
    let watcher = tokio::spawn(async move {
        cancelled.cancelled().await;
        flag.cancel();
    });
    (cancel, watcher)
}

/// The hook that makes the worker hang up after running a matching call, unanswered.
fn hang_up(faults: &WorkerFaults) -> Option<wire::HangUp<Call>> {
    if !cfg!(feature = "test-hooks") {
        return None;
    }
    let kind = faults.hang_up_after.clone()?;
    let fired = Arc::new(std::sync::atomic::AtomicBool::new(false));
    Some(Arc::new(move |call: &Call| {
        let matches = matches!(
            (kind.as_str(), call),
            ("apply", Call::Apply { .. }) | ("spawn", Call::Spawn { .. })
        );
        matches && !fired.swap(true, std::sync::atomic::Ordering::SeqCst)
    }))
}

/// Installs the stall a test asked for: at the chosen write, the marker appears and the
/// patch never goes on (the test kills the worker there).
#[cfg(feature = "test-hooks")]
fn stall(r: &LocalRunner, faults: &WorkerFaults) {
    let Some(marker) = faults.marker.clone() else { return };
    let stop = move || {
        #[expect(
            clippy::disallowed_methods,
            reason = "a test's marker file, outside every workspace"
        )]
        let _ = std::fs::write(&marker, b"stalled");
        loop {
            std::thread::sleep(std::time::Duration::from_secs(600));
        }
    };
    match faults.stall_at {
        Some(n) => r.set_before_write_hook(Some(Arc::new(move |done| {
            if done == n {
                stop();
            }
        }))),
        None => r.set_written_hook(Some(Arc::new(stop))),
    }
}

#[cfg(not(feature = "test-hooks"))]
fn stall(_: &LocalRunner, _: &WorkerFaults) {}
