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

use super::messages::{Event, Reply, Request};
use crate::LocalRunner;
use crate::ops::{self, Job, Opened, Run, RunBlocking, RunWalk};
use codespace_fs::Progress;
use codespace_wire::{self as wire, Cancelled, ServeOptions};

/// How often a running walk's counts are sent.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// The worker's state over its one connection.
pub(crate) struct Worker {
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
    match welcome_gateway(stream, &build).await {
        Ok(Some(welcomed)) => serve_gateway(welcomed, supervisor, build, faults).await,
        Ok(None) => Ok(()),
        Err(e) => Err(e),
    }
}

/// A connection whose peer passed the handshake as a gateway of this build.
#[derive(Debug)]
pub struct WelcomedGateway(wire::Welcomed);

/// The handshake alone (see [`wire::welcome`]): a peer that is not a gateway of this build
/// is refused within the handshake timeout, having sent at most a handshake-sized frame;
/// `None` when it left before saying anything.
pub async fn welcome_gateway(
    stream: UnixStream,
    build: &str,
) -> Result<Option<WelcomedGateway>, wire::ServeError> {
    let options = ServeOptions::new(build);
    let welcomed = wire::welcome::<Request, Reply, Event>(stream, &options).await?;
    Ok(welcomed.map(WelcomedGateway))
}

/// Serves a gateway that passed [`welcome_gateway`] until it goes away, then kills every
/// process started for it.
pub async fn serve_gateway(
    WelcomedGateway(welcomed): WelcomedGateway,
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
    let handler = move |request: Request, _deadline: Instant, cancelled: Cancelled| {
        let worker = Arc::clone(&worker);
        async move { ops::serve(&worker, request.job, request.walk, cancelled).await }
    };
    let served = wire::serve_welcomed(welcomed, options, handler, rx).await;
    // The gateway is gone (or broke the protocol): nothing started for it may outlive it.
    supervisor.shutdown().await;
    served
}

impl Worker {
    fn runner(&self) -> Result<Arc<LocalRunner>, Reply> {
        self.runner.get().cloned().ok_or_else(|| Reply::Refused("no workspace is open yet".into()))
    }

    /// Runs a job on the caller's task.
    pub(crate) async fn run<J: Job>(&self, job: J) -> Reply
    where
        LocalRunner: Run<J>,
    {
        match self.runner() {
            Ok(r) => Reply::of::<J>(r.run(job).await),
            Err(refused) => refused,
        }
    }

    /// Runs a job that blocks (the patch transaction's disk steps) on a blocking thread.
    pub(crate) async fn blocking<J: Job>(&self, job: J) -> Reply
    where
        LocalRunner: RunBlocking<J>,
    {
        let r = match self.runner() {
            Ok(r) => r,
            Err(refused) => return refused,
        };
        match tokio::task::spawn_blocking(move || Reply::of::<J>(r.run_blocking(job))).await {
            Ok(reply) => reply,
            Err(e) => Reply::Refused(format!("runner task failed: {e}")),
        }
    }

    /// Runs a walk: the gateway's cancel stops it, and its counts are sent every
    /// [`PROGRESS_EVERY`] under the request's token.
    pub(crate) async fn walk<J: Job>(&self, job: J, token: u64, cancelled: Cancelled) -> Reply
    where
        LocalRunner: RunWalk<J>,
    {
        let r = match self.runner() {
            Ok(r) => r,
            Err(refused) => return refused,
        };
        let (cancel, watcher) = cancel_on(cancelled);
        let (counts, ticker) = self.report(token);
        let answer = r.run_walk(job, cancel, counts).await;
        watcher.abort();
        ticker.abort();
        Reply::of::<J>(answer)
    }

    /// Runs one of the worker's own jobs (opening the workspaces, starting a command).
    pub(crate) async fn own<J: Job>(&self, job: J) -> Reply
    where
        Worker: Own<J>,
    {
        Own::own(self, job).await
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
}

/// A job the worker answers itself rather than its runner.
pub(crate) trait Own<J: Job> {
    fn own(&self, job: J) -> impl std::future::Future<Output = Reply> + Send;
}

impl Own<ops::Open> for Worker {
    async fn own(&self, ops::Open { roots, watch }: ops::Open) -> Reply {
        if self.runner.get().is_some() {
            return Reply::Refused("the workspaces are already open".into());
        }
        let opened = LocalRunner::open(&roots, Arc::clone(&self.supervisor), watch).map(|r| {
            let roots = roots
                .iter()
                .filter_map(|(id, _)| r.root_path(id).map(|p| (id.clone(), p)))
                .collect();
            let facts = r.process_facts();
            stall(&r, &self.faults);
            let _ = self.runner.set(Arc::new(r));
            Opened { roots, facts }
        });
        Reply::of::<ops::Open>(opened)
    }
}

impl Own<ops::Spawn> for Worker {
    /// Starts the command and, once it and its tree are gone, says so.
    async fn own(&self, ops::Spawn { ws, id, job }: ops::Spawn) -> Reply {
        let r = match self.runner() {
            Ok(r) => r,
            Err(refused) => return refused,
        };
        let started: Result<(), crate::RunnerError> = match r.spawn_as(&ws, Some(id), job).await {
            Ok(spawned) => {
                let events = self.events.clone();
                tokio::spawn(async move {
                    spawned.exited.wait().await;
                    let _ = events.send(Event::ProcessExited { id: spawned.id });
                });
                Ok(())
            }
            Err(e) => Err(e),
        };
        Reply::of::<ops::Spawn>(started)
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
fn hang_up(faults: &WorkerFaults) -> Option<wire::HangUp<Request>> {
    if !cfg!(feature = "test-hooks") {
        return None;
    }
    let kind = faults.hang_up_after.clone()?;
    let fired = Arc::new(std::sync::atomic::AtomicBool::new(false));
    Some(Arc::new(move |request: &Request| {
        let matches = matches!(
            (kind.as_str(), request.job.op()),
            ("apply", ops::Op::Apply) | ("spawn", ops::Op::Spawn)
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
