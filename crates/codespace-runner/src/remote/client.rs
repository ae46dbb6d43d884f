//! [`SocketRunner`]: the gateway's side of the worker's socket. Every job is one call with a
//! deadline; the answer is the worker's, unchanged, and a failure of the socket itself is
//! classified exactly ([`Transport`]): never sent (nothing ran), lost after sending (it may
//! have run), or past its deadline. There is no reconnect: once the connection is lost the
//! runner is gone, and every lease a process held is released.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::{Duration, Instant};

use codespace_process::ExitWatch;
use tokio::net::UnixStream;
use tokio::sync::{mpsc, watch};

use super::messages::{Event, Reply, Request};
use crate::ops::{self, Opened};
use crate::{ProcessFacts, RunnerError, Transport};
use codespace_wire::{self as wire, CallError};

/// How long a call may go unanswered before it is `TIMEOUT` (beyond its own wait).
pub const CALL_DEADLINE: Duration = Duration::from_secs(120);

/// Why the runner could not be reached at start.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("runner worker: {0}")]
    Handshake(#[from] wire::HandshakeError),
    #[error("runner worker: opening the workspaces: {0}")]
    Call(Transport),
    #[error("{0}")]
    Open(crate::OpenError),
    #[error("runner worker: {0}")]
    Protocol(String),
}

/// The runner in a worker process, over a Unix socket.
pub struct SocketRunner {
    client: wire::Client<Request, Reply, Event>,
    pub(super) handle: tokio::runtime::Handle,
    /// Each workspace's canonical root, as the worker opened it (a reopen replaces them).
    roots: RwLock<BTreeMap<String, PathBuf>>,
    facts: ProcessFacts,
    processes: Arc<Mutex<Processes>>,
    lost: watch::Receiver<bool>,
}

/// What the gateway knows of the worker's processes (an exit watch per id it started) and
/// of its running walks (the caller's counters per progress token).
#[derive(Default)]
struct Processes {
    exits: HashMap<String, (watch::Sender<bool>, Option<Instant>)>,
    walks: HashMap<u64, codespace_fs::Progress>,
    next_walk: u64,
    lost: bool,
}

impl std::fmt::Debug for SocketRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SocketRunner").field("roots", &self.roots).finish_non_exhaustive()
    }
}

impl SocketRunner {
    /// Shakes hands on `stream` and has the worker open `roots`.
    pub async fn connect(
        stream: UnixStream,
        build: &str,
        roots: &[(String, PathBuf)],
        watch: bool,
    ) -> Result<SocketRunner, ConnectError> {
        let (client, events) = wire::Client::connect(stream, build).await?;
        let open = ops::Open { roots: roots.to_vec(), watch };
        let request = Request::of(open, 0);
        let reply = client.call(request, CALL_DEADLINE).await.map_err(transport);
        let Opened { roots, facts } = match Reply::answer::<ops::Open>(reply) {
            Ok(Ok(opened)) => opened,
            Ok(Err(e)) => return Err(ConnectError::Open(e)),
            Err(RunnerError::Transport(t)) => return Err(ConnectError::Call(t)),
            Err(other) => return Err(ConnectError::Protocol(other.to_string())),
        };
        let processes = Arc::new(Mutex::new(Processes::default()));
        let (lost_tx, lost) = watch::channel(false);
        tokio::spawn(follow(events, Arc::clone(&processes), lost_tx));
        Ok(SocketRunner {
            client,
            handle: tokio::runtime::Handle::current(),
            roots: RwLock::new(roots.into_iter().collect()),
            facts,
            processes,
            lost,
        })
    }

    /// Whether the connection to the worker is lost.
    pub fn is_lost(&self) -> bool {
        *self.lost.borrow()
    }

    /// Resolves once the connection to the worker is lost.
    pub async fn lost(&self) {
        let mut lost = self.lost.clone();
        let _ = lost.wait_for(|l| *l).await;
    }

    pub fn root_path(&self, id: &str) -> Option<PathBuf> {
        self.roots.read().unwrap_or_else(PoisonError::into_inner).get(id).cloned()
    }

    /// The roots the worker holds after a reopen.
    pub(crate) fn set_roots(&self, roots: &[(String, PathBuf)]) {
        *self.roots.write().unwrap_or_else(PoisonError::into_inner) =
            roots.iter().cloned().collect();
    }

    pub fn process_facts(&self) -> ProcessFacts {
        self.facts
    }

    /// One request, answered or classified.
    pub(crate) async fn call<J: ops::Job>(&self, job: J, walk: u64) -> Result<Reply, Transport> {
        let deadline = CALL_DEADLINE + job.wait();
        self.client.call(Request::of(job, walk), deadline).await.map_err(transport)
    }

    /// One request whose caller may give up: when `cancel` is raised the worker is told,
    /// and its (early, incomplete) answer is still awaited.
    pub(crate) async fn call_cancellable<J: ops::Job>(
        &self,
        job: J,
        walk: u64,
        cancel: codespace_fs::Cancel,
    ) -> Result<Reply, Transport> {
        let deadline = CALL_DEADLINE + job.wait();
        let request = Request::of(job, walk);
        let cancelled = async move {
            while !cancel.is_cancelled() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        self.client.call_cancellable(request, deadline, cancelled).await.map_err(transport)
    }

    /// The exit watch of a process started under `id`: it turns `true` when the worker
    /// says the process is gone, or when the worker itself is.
    pub(crate) fn watch_exit(&self, id: &str) -> ExitWatch {
        let mut p = lock(&self.processes);
        let (tx, rx) = watch::channel(p.lost);
        p.exits.insert(id.to_owned(), (tx, None));
        ExitWatch::from_receiver(rx)
    }

    /// The exit watch of a process started here that the worker has not yet forgotten.
    pub(crate) fn exit_watch(&self, id: &str) -> Option<ExitWatch> {
        let p = lock(&self.processes);
        p.exits.get(id).map(|(tx, _)| ExitWatch::from_receiver(tx.subscribe()))
    }

    /// A token under which the worker's progress events raise `counts`, for as long as the
    /// returned guard lives (also when the caller's future is dropped mid-call).
    pub(crate) fn start_walk(&self, counts: codespace_fs::Progress) -> Walk {
        let mut p = lock(&self.processes);
        p.next_walk += 1;
        let token = p.next_walk;
        p.walks.insert(token, counts);
        Walk { token, processes: Arc::clone(&self.processes) }
    }

    /// Stops watching a process that did not start.
    pub(crate) fn forget(&self, id: &str) {
        lock(&self.processes).exits.remove(id);
    }

    /// For a command whose start was not confirmed: asks the worker about it every second
    /// until it is known gone (its exit event, or the worker never heard of it) or the
    /// worker is.
    pub(crate) fn confirm_later(&self, id: &str) {
        let (client, processes, id) =
            (self.client.clone(), Arc::clone(&self.processes), id.to_owned());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let request = Request::of(ops::Status { id: id.clone() }, 0);
                let reply = client.call(request, CALL_DEADLINE).await.map_err(transport);
                let gone = match Reply::unpack::<ops::Status>(reply) {
                    Err(RunnerError::Process(codespace_process::ProcError::NotFound)) => true,
                    Err(RunnerError::Transport(Transport::Timeout { .. })) => false,
                    Err(RunnerError::Transport(_)) => true,
                    Ok(_)
                    | Err(
                        RunnerError::Fs(_)
                        | RunnerError::Files(_)
                        | RunnerError::NoWorkspace { .. }
                        | RunnerError::RootReplaced { .. }
                        | RunnerError::Task { .. }
                        | RunnerError::Process(_),
                    ) => false,
                };
                let mut p = lock(&processes);
                let Some((tx, at)) = p.exits.get_mut(&id) else { return };
                if *tx.borrow() {
                    return;
                }
                if gone {
                    let _ = tx.send(true);
                    *at = Some(Instant::now());
                    return;
                }
            }
        });
    }

    /// Whether process `id` may still be known to the worker: started here, and not gone
    /// for longer than the worker keeps a completed process.
    pub fn knows(&self, id: &str) -> bool {
        let keep = self.facts.completed_ttl;
        let mut p = lock(&self.processes);
        p.exits.retain(|_, (_, gone)| gone.is_none_or(|at| at.elapsed() < keep));
        p.exits.contains_key(id)
    }
}

/// A walk's progress token, forgotten when dropped.
pub(crate) struct Walk {
    pub(crate) token: u64,
    processes: Arc<Mutex<Processes>>,
}

impl Drop for Walk {
    fn drop(&mut self) {
        lock(&self.processes).walks.remove(&self.token);
    }
}

/// Routes the worker's events; when they end, the connection is lost: every process counts
/// as gone (the worker kills them all when its gateway goes) and the runner as lost.
async fn follow(
    mut events: mpsc::UnboundedReceiver<Event>,
    processes: Arc<Mutex<Processes>>,
    lost: watch::Sender<bool>,
) {
    while let Some(event) = events.recv().await {
        match event {
            Event::Progress { token, entries, files_searched } => {
                if let Some(counts) = lock(&processes).walks.get(&token) {
                    counts.catch_up(entries, files_searched);
                }
            }
            Event::ProcessExited { id } => {
                let mut p = lock(&processes);
                if let Some((tx, gone)) = p.exits.get_mut(&id) {
                    let _ = tx.send(true);
                    *gone = Some(Instant::now());
                }
            }
        }
    }
    tracing::error!(
        "the connection to the runner worker is lost: no file or process tool can run until the server is restarted"
    );
    let mut p = lock(&processes);
    p.lost = true;
    for (tx, gone) in p.exits.values_mut() {
        let _ = tx.send(true);
        gone.get_or_insert_with(Instant::now);
    }
    drop(p);
    let _ = lost.send(true);
}

fn lock(p: &Mutex<Processes>) -> MutexGuard<'_, Processes> {
    // Only whole entries are inserted and updated; a panic cannot leave one half-changed.
    p.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A socket failure, as the gateway classifies it.
fn transport(e: CallError) -> Transport {
    match e {
        CallError::NotSent { reason } => Transport::NotSent { reason },
        CallError::TooLarge { bytes } => Transport::NotSent {
            reason: format!("the request is {bytes} bytes, over the frame cap"),
        },
        CallError::Ambiguous { reason } => Transport::Ambiguous { reason },
        CallError::Timeout { after } => Transport::Timeout { secs: after.as_secs() },
    }
}
