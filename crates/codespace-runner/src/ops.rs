//! Every runner operation, declared once in the table below: its job (a serde struct, what
//! the gateway asks and what crosses the worker's socket), its answer, how long past the call
//! deadline it may take, and how a runner runs it (on the caller's task, on a blocking thread,
//! as a walk that can be cancelled and reports progress, or by the worker itself). From the
//! table come the job types, [`Job`], the [`Op`] tag, [`AnyJob`] and [`AnyAnswer`] (a job and
//! its answer as they cross the worker's socket, encoded once inside their frame), and the
//! worker's dispatch. A runner implements each job once ([`Run`], [`RunBlocking`], [`RunWalk`]);
//! [`crate::Runner`] hands any job to the runner in use.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use codespace_files::{
    ApplyOutcome, Found, GrepOutcome, InterruptedFile, PlannedWrite, RevertFile, Undone,
};
use codespace_fs::{Cancel, FsError, Progress, Window, WorkspacePath};
use codespace_process::{ProcStatus, ReadChunk, WaitFor};
use codespace_types::Version;
use codespace_watch::BadCursor;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::SpawnJob;
use crate::remote::{Reply, Worker};
use crate::{FindJob, FindPage, GrepJob, OpenError, PrepareError, ProcessFacts, RunnerError};

/// One runner operation: the job is the request, `Answer` what comes back.
pub trait Job: Serialize + DeserializeOwned + std::fmt::Debug + Send + 'static {
    /// The tag a request for this job carries on the worker's socket.
    const OP: Op;
    /// The job's answer, as the runner gives it (a refusal included).
    type Answer: Serialize + DeserializeOwned + std::fmt::Debug + Send + 'static;
    /// How much longer than the call deadline its answer may take (a wait, a walk's budget).
    fn wait(&self) -> Duration;
    /// The job as a request on the worker's socket carries it.
    fn into_any(self) -> AnyJob;
    /// Its answer as it crosses the worker's socket.
    fn any_answer(answer: Self::Answer) -> AnyAnswer;
    /// Its answer out of `any`; `any` back when it is another operation's.
    fn answer_of(any: AnyAnswer) -> Result<Self::Answer, AnyAnswer>;
}

/// A job a runner answers on the caller's task.
pub trait Run<J: Job> {
    fn run(&self, job: J) -> impl Future<Output = J::Answer> + Send;
}

/// A job whose work blocks (the patch transaction's disk steps): call it from a blocking
/// thread.
pub trait RunBlocking<J: Job> {
    fn run_blocking(&self, job: J) -> J::Answer;
}

/// A walk: `cancel` stops it (its answer is then incomplete), `progress` counts its work.
pub trait RunWalk<J: Job> {
    fn run_walk(
        &self,
        job: J,
        cancel: Cancel,
        progress: Progress,
    ) -> impl Future<Output = J::Answer> + Send;
}

/// A failed call's answer, for a job whose answer is a `Result` that can hold the runner's
/// error (every job but [`Open`]).
pub trait Failed {
    fn failed(e: RunnerError) -> Self;
}

impl<T, E: From<RunnerError>> Failed for Result<T, E> {
    fn failed(e: RunnerError) -> Self {
        Err(e.into())
    }
}

/// Declares the operations: `how Name { fields } -> Answer, wait(job) = extra time;`.
macro_rules! ops {
    ($(
        $(#[$doc:meta])*
        $how:ident $name:ident { $($(#[$fmeta:meta])* $field:ident: $fty:ty),* $(,)? }
            -> $answer:ty, wait($job:pat) = $wait:expr;
    )*) => {
        /// Which operation a job is.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        pub enum Op { $($name),* }

        /// Any operation's job, as a request on the worker's socket carries it: encoded once,
        /// inside its frame, its variant the operation's tag.
        #[derive(Debug, Serialize, Deserialize)]
        pub enum AnyJob { $($name($name)),* }

        /// Any operation's answer, as it crosses the worker's socket (encoded once, inside
        /// its frame).
        #[derive(Debug, Serialize, Deserialize)]
        pub enum AnyAnswer { $($name($answer)),* }

        impl AnyJob {
            pub fn op(&self) -> Op {
                match self { $(AnyJob::$name(_) => Op::$name),* }
            }
        }

        impl AnyAnswer {
            pub fn op(&self) -> Op {
                match self { $(AnyAnswer::$name(_) => Op::$name),* }
            }
        }

        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Serialize, Deserialize)]
            pub struct $name { $($(#[$fmeta])* pub $field: $fty),* }

            impl Job for $name {
                const OP: Op = Op::$name;
                type Answer = $answer;
                fn wait(&self) -> Duration {
                    let $job = self;
                    $wait
                }
                fn into_any(self) -> AnyJob {
                    AnyJob::$name(self)
                }
                fn any_answer(answer: $answer) -> AnyAnswer {
                    AnyAnswer::$name(answer)
                }
                fn answer_of(any: AnyAnswer) -> Result<$answer, AnyAnswer> {
                    match any {
                        AnyAnswer::$name(answer) => Ok(answer),
                        other => Err(other),
                    }
                }
            }
        )*

        /// Runs `job` on the worker (`walk`: its progress token), answering its answer.
        pub(crate) async fn serve(
            worker: &Worker,
            job: AnyJob,
            walk: u64,
            cancelled: codespace_wire::Cancelled,
        ) -> Reply {
            match job {
                $(AnyJob::$name(job) => serve_as!($how, worker, $name, job, walk, cancelled),)*
            }
        }
    };
}

/// How the worker runs one kind of job.
macro_rules! serve_as {
    (run, $w:ident, $name:ident, $body:ident, $walk:ident, $cancelled:ident) => {
        $w.run::<$name>($body).await
    };
    (blocking, $w:ident, $name:ident, $body:ident, $walk:ident, $cancelled:ident) => {
        $w.blocking::<$name>($body).await
    };
    (walk, $w:ident, $name:ident, $body:ident, $walk:ident, $cancelled:ident) => {
        $w.walk::<$name>($body, $walk, $cancelled).await
    };
    (worker, $w:ident, $name:ident, $body:ident, $walk:ident, $cancelled:ident) => {
        $w.own::<$name>($body).await
    };
}

const NOW: Duration = Duration::ZERO;

ops! {
    /// Opens every `(workspace id, registered root)`, with watchers unless `watch` is false.
    /// The first request of a connection, and only once.
    worker Open { roots: Vec<(String, PathBuf)>, watch: bool }
        -> Result<Opened, OpenError>, wait(_) = NOW;
    /// Opens the workspaces again for a reloaded registry: a root whose registered path is
    /// unchanged and still names the directory it opened is kept (its watcher too), any other
    /// is opened afresh, and a workspace not named is let go (its watcher stops). Nothing
    /// changes unless every root opens, no two nest and none holds a path of `keep_out`.
    blocking Reopen { roots: Vec<(String, PathBuf)>, keep_out: Vec<PathBuf> }
        -> Result<Result<Reopened, OpenError>, RunnerError>, wait(_) = NOW;
    /// Starts a command under the id the gateway chose; the worker says when it is gone.
    worker Spawn { ws: String, id: String, job: SpawnJob }
        -> Result<(), RunnerError>, wait(_) = NOW;

    /// A window of `path` with the whole file's version.
    run Read { ws: String, path: WorkspacePath, offset: u64, limit: usize }
        -> Result<Window, RunnerError>, wait(_) = NOW;
    /// One page of the matching files.
    walk Find { ws: String, job: FindJob }
        -> Result<FindPage, RunnerError>, wait(f) = f.job.walk.budget;
    /// One page of the matching lines.
    walk Grep { ws: String, job: GrepJob }
        -> Result<GrepOutcome, RunnerError>, wait(g) = g.job.walk.budget;
    /// The version of each path (each its own refusal).
    run Versions { ws: String, paths: Vec<String> }
        -> Result<Vec<Result<Version, FsError>>, RunnerError>, wait(_) = NOW;
    /// What changed since `since` (`None`: watching is off, no list can be vouched for).
    /// It may wait for the watcher to start and for its cookie.
    run Changes { ws: String, since: Option<String> }
        -> Result<Result<Option<codespace_watch::Changes>, BadCursor>, RunnerError>,
        wait(_) = codespace_watch::START_WAIT;
    /// Whether the root path still names the directory opened at start.
    run RootStatus { ws: String }
        -> Result<Option<codespace_types::RootStatus>, RunnerError>, wait(_) = NOW;
    /// The device and inode of the directory opened as the root (`None`: no such
    /// workspace).
    run RootIdentity { ws: String }
        -> Result<Option<(u64, u64)>, RunnerError>, wait(_) = NOW;
    /// What the watcher reports (`None`: watching is off).
    run WatchReport { ws: String }
        -> Result<Option<codespace_watch::WatchReport>, RunnerError>, wait(_) = NOW;
    /// The runner's counters since it started, for the server's metrics.
    run Counters {} -> Result<crate::RunnerCounters, RunnerError>, wait(_) = NOW;

    /// Checks every expected version against the disk, then plans the patch. Writes nothing;
    /// with `hold`, the runner keeps the plan for the `Apply` that names it.
    blocking Prepare {
        ws: String, patch: String, expected: Vec<(WorkspacePath, Version)>, hold: bool
    } -> Result<Planned, PrepareError>, wait(_) = NOW;
    /// Checks every file of an operation to revert against what it left, then plans the
    /// writes back. Writes nothing; with `hold`, the runner keeps a ready plan for `Apply`.
    blocking PrepareRevert { ws: String, files: Vec<RevertFile>, hold: bool }
        -> Result<Reverting, RunnerError>, wait(_) = NOW;
    /// Writes the plan the runner holds under `plan` (taking it): every file or none (rolled
    /// back), or says which it could not restore.
    blocking Apply { ws: String, plan: PlanId }
        -> Result<ApplyOutcome, RunnerError>, wait(_) = NOW;
    /// What each interrupted file holds now.
    blocking Survey { ws: String, files: Vec<InterruptedFile> }
        -> Result<Vec<Found>, RunnerError>, wait(_) = NOW;
    /// Puts every after-version found back to its before-version.
    blocking RollBack { ws: String, files: Vec<InterruptedFile>, found: Vec<Found> }
        -> Result<Vec<Undone>, RunnerError>, wait(_) = NOW;
    /// Puts one file's preserved content back where the path is free.
    blocking PutBack { ws: String, file: InterruptedFile }
        -> Result<Undone, RunnerError>, wait(_) = NOW;
    /// The version of one path on the disk, never from a cache.
    blocking VersionNow { ws: String, path: WorkspacePath }
        -> Result<Version, RunnerError>, wait(_) = NOW;
    /// The first `limit` bytes of one path on the disk with the whole file's version, never
    /// from a cache: what a version conflict's diff goes to.
    blocking ReadNow { ws: String, path: WorkspacePath, limit: usize }
        -> Result<Window, RunnerError>, wait(_) = NOW;
    /// Removes what an interrupted write may have left beside `paths` (best effort).
    blocking ClearTempFiles { ws: String, paths: Vec<String> }
        -> Result<(), RunnerError>, wait(_) = NOW;

    /// Writes to a command's stdin, closing it after when `close`.
    run WriteStdin { id: String, #[serde(with = "serde_bytes")] data: Vec<u8>, close: bool }
        -> Result<(), RunnerError>, wait(_) = NOW;
    /// Up to `max` bytes of output from `cursor`, with the process's state at that moment
    /// (one exchange where a read and a status would be two).
    run ReadOutput { id: String, cursor: u64, max: usize }
        -> Result<OutputRead, RunnerError>, wait(_) = NOW;
    run Status { id: String }
        -> Result<ProcStatus, RunnerError>, wait(_) = NOW;
    /// Waits up to `limit` for output or the exit.
    run Wait { id: String, what: WaitFor, limit: std::time::Duration }
        -> Result<(), RunnerError>, wait(w) = w.limit;
    run Resize { id: String, rows: u16, cols: u16 }
        -> Result<(), RunnerError>, wait(_) = NOW;
    /// Ends the command's whole tree: SIGTERM, then SIGKILL after `grace` (the process's
    /// own when `None`, and never more).
    run Terminate { id: String, grace: Option<Duration> }
        -> Result<codespace_process::Terminate, RunnerError>, wait(_) = NOW;
    /// Ends every live command's whole tree (the gateway is shutting down).
    run Shutdown {}
        -> Result<(), RunnerError>, wait(_) = codespace_process::SHUTDOWN_LIMIT;
}

/// A read of a command's output and its state, taken together: a chunk at `eof` comes with
/// the exit, and an `exited` state with every byte there is.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OutputRead {
    pub chunk: ReadChunk,
    /// Boxed: every answer crosses as one [`AnyAnswer`], as large as its largest.
    pub status: Box<ProcStatus>,
}

/// What a reopen holds now: each workspace's canonical root, and the workspaces whose root
/// was opened afresh (added, moved, or replaced on disk since it was opened).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reopened {
    pub roots: Vec<(String, PathBuf)>,
    pub opened: Vec<String>,
}

/// A plan the runner holds from its `Prepare` to its `Apply` (`local/plans.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanId(pub u64);

/// A planned patch: its writes (what the ledger makes durable before the first of them), and
/// the id the runner holds them under when the `Prepare` asked it to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Planned {
    pub id: Option<PlanId>,
    pub writes: Vec<PlannedWrite>,
}

/// A planned revert: ready (and held, when asked), or refused because these files changed
/// since the operation (nothing may be written).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Reverting {
    Ready(Planned),
    Changed(Vec<codespace_files::Changed>),
}

/// What the worker opened: each workspace's canonical root, and its process limits.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Opened {
    pub roots: Vec<(String, PathBuf)>,
    pub facts: ProcessFacts,
}
