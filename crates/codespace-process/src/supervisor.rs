//! The [`Supervisor`]: the table of process handles and the tasks that feed them.
//!
//! Per process there are three tasks on the caller's tokio runtime:
//! - the **pump** copies the output stream (one pipe for stdout+stderr, or the PTY master)
//!   into the ring until end of file (EIO on a PTY master is end of file);
//! - the **stdin writer** writes queued input in order, then flushes;
//! - the **supervision** task waits for the shim, fires the time limit and kill requests
//!   (SIGTERM to the shim, SIGKILL to the shim if it has not exited 5 s later), reads the
//!   shim's final report, and records the outcome.
//!
//! Lock order: the table lock, then a process's state lock; never the reverse.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rustix::termios::SpecialCodeIndex;
use tokio::io::{
    AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, BufReader,
};
use tokio::net::unix::pipe;
use tokio::sync::{Notify, mpsc, watch};
use tokio::task::JoinHandle;

use crate::error::ProcError;
use crate::protocol::ShimReport;
use crate::ring::Ring;
use crate::spawn::{self, CommandIo, LaunchSpec, ShimGuard, Spawner};
use crate::types::{
    ExitWatch, ProcStatus, ReadChunk, RunState, SignalInfo, SpawnRequest, Spawned, Terminate,
    Termination,
};

/// The hidden argument that selects the reaper role of the `codespace` binary.
pub const REAPER_ARG: &str = "__codespace-reaper";
/// Default live-process limit (`CODESPACE_MAX_PROCESSES`).
pub const DEFAULT_MAX_LIVE: usize = 8;
/// Default output ring size per process.
pub const DEFAULT_RING_BYTES: usize = 256 * 1024;
/// Default retention of a completed handle.
pub const DEFAULT_COMPLETED_TTL: Duration = Duration::from_secs(15 * 60);
/// Default number of completed handles kept.
pub const DEFAULT_MAX_COMPLETED: usize = 64;
/// Initial terminal size of a PTY process.
pub const TTY_ROWS: u16 = 24;
/// Initial terminal size of a PTY process.
pub const TTY_COLS: u16 = 80;

/// How long the shim may take to report that the command started.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// SIGTERM to the shim, then SIGKILL to the shim if it is still there after this.
const KILL_ESCALATION: Duration = Duration::from_secs(5);
/// After the shim is reaped, how long the output pump may take to drain.
const PUMP_GRACE: Duration = Duration::from_secs(2);
/// How long [`Supervisor::shutdown`] waits for the trees to go.
const SHUTDOWN_BOUND: Duration = Duration::from_secs(8);
/// Input queued for a process but not yet written, at most.
const MAX_STDIN_BACKLOG: usize = 4 * 1024 * 1024;
/// Read size of the output pump.
const PUMP_CHUNK: usize = 64 * 1024;

/// The time source of handle retention. Injectable so eviction by age is testable.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> Instant + Send + Sync>);

impl Clock {
    /// `Instant::now`.
    pub fn system() -> Self {
        Self(Arc::new(Instant::now))
    }

    /// Any monotonic time source, e.g. `Instant::now` plus an offset a test advances.
    pub fn from_fn(now: impl Fn() -> Instant + Send + Sync + 'static) -> Self {
        Self(Arc::new(now))
    }

    fn now(&self) -> Instant {
        (self.0)()
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::system()
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Clock")
    }
}

/// Supervisor settings. [`SupervisorConfig::new`] fills in the defaults.
#[derive(Debug, Clone)]
pub struct SupervisorConfig {
    /// The binary that runs [`crate::reaper_main`] when given `reaper_arg` (the server's
    /// own executable).
    pub reaper_exe: PathBuf,
    /// The role argument, [`REAPER_ARG`].
    pub reaper_arg: OsString,
    /// Live plus reserved processes at most.
    pub max_live: usize,
    /// Output ring size per process.
    pub ring_bytes: usize,
    /// Completed handles are evicted this long after they exited.
    pub completed_ttl: Duration,
    /// Completed handles kept at most (oldest evicted first).
    pub max_completed: usize,
    /// Time source of retention.
    pub clock: Clock,
}

impl SupervisorConfig {
    /// The defaults, with `reaper_exe` as the shim binary.
    pub fn new(reaper_exe: impl Into<PathBuf>) -> Self {
        Self {
            reaper_exe: reaper_exe.into(),
            reaper_arg: REAPER_ARG.into(),
            max_live: DEFAULT_MAX_LIVE,
            ring_bytes: DEFAULT_RING_BYTES,
            completed_ttl: DEFAULT_COMPLETED_TTL,
            max_completed: DEFAULT_MAX_COMPLETED,
            clock: Clock::system(),
        }
    }
}

/// The process supervisor. Share it as `Arc<Supervisor>`; dropping the last reference
/// ends its spawner thread, whose exit makes every shim kill its tree.
pub struct Supervisor {
    config: SupervisorConfig,
    table: Mutex<Table>,
    spawner: Spawner,
}

impl fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Supervisor").field("config", &self.config).finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Table {
    procs: HashMap<String, Arc<Proc>>,
    reserved: usize,
    shutting_down: bool,
}

struct Proc {
    tty: bool,
    started_at_ms: u64,
    kill: Notify,
    exit_tx: watch::Sender<bool>,
    state: Mutex<State>,
}

struct State {
    ring: Ring,
    pump_done: bool,
    intent: Option<Intent>,
    exit: Option<ExitInfo>,
    stdin: Stdin,
    /// A duplicate of the PTY master, for resize and the VEOF character; dropped at exit.
    control: Option<OwnedFd>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Intent {
    Timeout,
    Terminated,
}

impl Intent {
    fn termination(self) -> Termination {
        match self {
            Self::Timeout => Termination::Timeout,
            Self::Terminated => Termination::Terminated,
        }
    }
}

struct ExitInfo {
    termination: Termination,
    exit_code: Option<i32>,
    signal: Option<SignalInfo>,
    exited_at_ms: u64,
    completed_at: Instant,
}

enum Stdin {
    Open { tx: mpsc::UnboundedSender<StdinMsg>, backlog: Arc<AtomicUsize>, at_line_start: bool },
    Closed,
    Failed(String),
    Gone,
}

enum StdinMsg {
    Data(Vec<u8>),
    Close,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn unix_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl State {
    /// The tree is gone and the pump has drained (or was stopped): no byte can follow.
    fn output_complete(&self) -> bool {
        self.exit.is_some() && self.pump_done
    }
}

impl Proc {
    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Records the intent (the first one wins) and wakes the supervision task. False when
    /// the process had already exited.
    fn request_kill(&self, intent: Intent) -> bool {
        {
            let mut st = self.state();
            if st.exit.is_some() {
                return false;
            }
            st.intent.get_or_insert(intent);
        }
        self.kill.notify_one();
        true
    }

    fn finalize(&self, report: Option<ShimReport>, clock: &Clock) {
        let mut st = self.state();
        if st.exit.is_some() {
            return;
        }
        let intent = st.intent;
        let (termination, exit_code, signal) = match report {
            Some(ShimReport::Exited { code, .. }) => (Termination::Exited, Some(code), None),
            // Our SIGKILL is what killed it: report why we sent it.
            Some(ShimReport::Signaled { signal, requested: true })
                if signal == libc::SIGKILL && intent.is_some() =>
            {
                (intent.map_or(Termination::Unknown, Intent::termination), None, None)
            }
            Some(ShimReport::Signaled { signal, .. }) => {
                (Termination::Signaled, None, Some(SignalInfo::new(signal)))
            }
            _ => (intent.map_or(Termination::Unknown, Intent::termination), None, None),
        };
        st.exit = Some(ExitInfo {
            termination,
            exit_code,
            signal,
            exited_at_ms: unix_ms(),
            completed_at: clock.now(),
        });
        st.pump_done = true;
        if !matches!(st.stdin, Stdin::Closed) {
            st.stdin = Stdin::Gone;
        }
        st.control = None;
        drop(st);
        self.exit_tx.send_replace(true);
    }
}

/// Marks the process exited if the supervision task ends without doing it (cancelled at
/// runtime shutdown, or a panic), so no lease waits forever.
struct Finalizer {
    proc: Arc<Proc>,
    clock: Clock,
}

impl Drop for Finalizer {
    fn drop(&mut self) {
        self.proc.finalize(None, &self.clock);
    }
}

/// A reserved slot, released on drop unless the process was inserted.
struct Reservation<'a> {
    table: &'a Mutex<Table>,
    live: bool,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.live {
            lock(self.table).reserved -= 1;
        }
    }
}

impl Supervisor {
    /// A supervisor with no process. Threads are started on first spawn.
    pub fn new(config: SupervisorConfig) -> Arc<Supervisor> {
        Arc::new(Supervisor {
            config,
            table: Mutex::new(Table::default()),
            spawner: Spawner::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &SupervisorConfig {
        &self.config
    }

    /// Starts a command under its own reaper shim.
    ///
    /// A slot is reserved first: over the limit the call fails with
    /// [`ProcError::LimitReached`] and no child is created. `argv[0]` is resolved on the
    /// request's `PATH` before anything is forked, so a missing executable is
    /// [`ProcError::SpawnFailed`] with no handle and no child; so is anything the shim
    /// reports it could not do (an `execve` error such as a missing script interpreter).
    /// On success the command runs; `exited` resolves once it and its tree are gone.
    pub async fn spawn(&self, req: SpawnRequest) -> Result<Spawned, ProcError> {
        validate(&req)?;
        let reservation = self.reserve()?;
        let cwd = std::path::absolute(&req.cwd)
            .map_err(|e| ProcError::SpawnFailed(format!("working directory: {e}")))?;
        let exe =
            spawn::resolve_program(&req.argv[0], &req.env, &cwd).map_err(ProcError::SpawnFailed)?;
        let launched = spawn::launch(
            &self.spawner,
            LaunchSpec {
                reaper_exe: &self.config.reaper_exe,
                reaper_arg: &self.config.reaper_arg,
                exe,
                argv: &req.argv,
                env: &req.env,
                cwd: &cwd,
                tty: req.tty,
                sandbox: req.sandbox.clone(),
                rows: TTY_ROWS,
                cols: TTY_COLS,
            },
        )
        .await
        .map_err(|e| ProcError::SpawnFailed(format!("starting the reaper: {e}")))?;

        let mut shim = launched.shim;
        let mut reports = BufReader::new(launched.reports);
        match tokio::time::timeout(HANDSHAKE_TIMEOUT, next_report(&mut reports)).await {
            Ok(Some(ShimReport::Started { .. })) => {}
            outcome => {
                let why = match outcome {
                    Ok(Some(ShimReport::Failed { message, .. })) => message,
                    Err(_) => "the reaper did not report within 10 s".to_owned(),
                    _ => "the reaper exited before starting the command".to_owned(),
                };
                stop_shim(&mut shim).await;
                return Err(ProcError::SpawnFailed(why));
            }
        }

        let (stdin_tx, stdin_rx) = mpsc::unbounded_channel();
        let backlog = Arc::new(AtomicUsize::new(0));
        let (exit_tx, exit_rx) = watch::channel(false);
        let mut io = launched.io;
        let control = match &mut io {
            CommandIo::Pty { control, .. } => control.take(),
            CommandIo::Pipes { .. } => None,
        };
        let proc = Arc::new(Proc {
            tty: req.tty,
            started_at_ms: unix_ms(),
            kill: Notify::new(),
            exit_tx,
            state: Mutex::new(State {
                ring: Ring::new(self.config.ring_bytes),
                pump_done: false,
                intent: None,
                exit: None,
                stdin: Stdin::Open {
                    tx: stdin_tx,
                    backlog: Arc::clone(&backlog),
                    at_line_start: true,
                },
                control,
            }),
        });
        let id = format!("proc-{}", uuid::Uuid::new_v4());
        if !self.commit(reservation, &id, &proc) {
            stop_shim(&mut shim).await;
            return Err(ProcError::SpawnFailed("the supervisor is shutting down".into()));
        }

        let pump = match io {
            CommandIo::Pipes { stdin, output } => {
                tokio::spawn(write_stdin_task(stdin, stdin_rx, backlog, Arc::clone(&proc)));
                tokio::spawn(pump_task(output, Arc::clone(&proc)))
            }
            CommandIo::Pty { pty, .. } => {
                let (reader, writer) = pty.into_split();
                tokio::spawn(write_stdin_task(writer, stdin_rx, backlog, Arc::clone(&proc)));
                tokio::spawn(pump_task(reader, Arc::clone(&proc)))
            }
        };
        let finalizer = Finalizer { proc: Arc::clone(&proc), clock: self.config.clock.clone() };
        tokio::spawn(supervise(finalizer, shim, reports, pump, req.timeout));
        Ok(Spawned { id, exited: ExitWatch(exit_rx) })
    }

    /// Queues `data` for the process's stdin (written in order, then flushed, by its
    /// writer task); `close` then sends end of file. On pipes, close drops the write end. On
    /// a PTY, close sends the terminal's VEOF character (normally ^D): once if the input so
    /// far ends a line (or is empty), twice otherwise (the first ^D only flushes a pending
    /// partial line in canonical mode). A program that switched the terminal to raw mode
    /// sees plain ^D bytes.
    ///
    /// Errors, checked in this order: [`ProcError::NotFound`]; [`ProcError::StdinClosed`]
    /// after an earlier close; [`ProcError::NotRunning`] after exit; [`ProcError::Io`] when
    /// an earlier write failed (the command closed its stdin) or more than 4 MiB is still
    /// queued.
    pub fn write_stdin(&self, id: &str, data: &[u8], close: bool) -> Result<(), ProcError> {
        let proc = self.get(id)?;
        let mut st = proc.state();
        let exited = st.exit.is_some();
        let veof = if close && proc.tty { st.control.as_ref().map(veof_of) } else { None };
        let Stdin::Open { tx, backlog, at_line_start } = &mut st.stdin else {
            return Err(match &st.stdin {
                Stdin::Closed => ProcError::StdinClosed,
                Stdin::Failed(msg) if !exited => ProcError::Io(format!("stdin: {msg}")),
                _ => ProcError::NotRunning,
            });
        };
        if exited {
            return Err(ProcError::NotRunning);
        }
        if !data.is_empty() {
            if backlog.load(Ordering::Acquire) + data.len() > MAX_STDIN_BACKLOG {
                return Err(ProcError::Io(
                    "stdin backlog full: the command is not reading its input".into(),
                ));
            }
            backlog.fetch_add(data.len(), Ordering::AcqRel);
            if tx.send(StdinMsg::Data(data.to_vec())).is_err() {
                return Err(ProcError::NotRunning);
            }
            *at_line_start = matches!(data.last(), Some(b'\n' | b'\r'));
        }
        if close {
            if proc.tty {
                let veof = veof.unwrap_or(0x04);
                let eof = if *at_line_start { vec![veof] } else { vec![veof, veof] };
                backlog.fetch_add(eof.len(), Ordering::AcqRel);
                let _ = tx.send(StdinMsg::Data(eof));
            }
            let _ = tx.send(StdinMsg::Close);
            st.stdin = Stdin::Closed;
        }
        Ok(())
    }

    /// Reads retained output from absolute `cursor`, at most `max_bytes` of it. A cursor
    /// below `retained_from` starts at `retained_from` and sets `output_lost`; a cursor past
    /// the output's end is [`ProcError::Invalid`].
    pub fn read(&self, id: &str, cursor: u64, max_bytes: usize) -> Result<ReadChunk, ProcError> {
        let proc = self.get(id)?;
        let st = proc.state();
        let total = st.ring.total();
        let retained_from = st.ring.retained_from();
        if cursor > total {
            return Err(ProcError::Invalid(format!(
                "cursor {cursor} is past the end of the output ({total})"
            )));
        }
        let from = cursor.max(retained_from);
        let to = from.saturating_add(max_bytes as u64).min(total);
        let chunk = st.ring.copy(from, to);
        Ok(ReadChunk {
            cursor: to,
            chunk,
            eof: st.output_complete() && to == total,
            output_lost: cursor < retained_from,
            retained_from,
        })
    }

    /// The state of a process.
    pub fn status(&self, id: &str) -> Result<ProcStatus, ProcError> {
        let proc = self.get(id)?;
        let st = proc.state();
        let exit = st.exit.as_ref();
        Ok(ProcStatus {
            state: if exit.is_some() { RunState::Exited } else { RunState::Running },
            termination: exit.map(|e| e.termination),
            exit_code: exit.and_then(|e| e.exit_code),
            signal: exit.and_then(|e| e.signal),
            output_total: st.ring.total(),
            retained_from: st.ring.retained_from(),
            eof: st.output_complete(),
            tty: proc.tty,
            started_at_ms: proc.started_at_ms,
            exited_at_ms: exit.map(|e| e.exited_at_ms),
        })
    }

    /// Sets a PTY's size (the foreground process group gets SIGWINCH).
    ///
    /// Errors: [`ProcError::Invalid`] for a zero dimension, [`ProcError::NotFound`],
    /// [`ProcError::NotTty`] for a pipe process, [`ProcError::NotRunning`] after exit,
    /// [`ProcError::Io`] if the ioctl fails.
    pub fn resize(&self, id: &str, rows: u16, cols: u16) -> Result<(), ProcError> {
        if rows == 0 || cols == 0 {
            return Err(ProcError::Invalid("rows and cols must be at least 1".into()));
        }
        let proc = self.get(id)?;
        if !proc.tty {
            return Err(ProcError::NotTty);
        }
        let st = proc.state();
        let Some(control) = st.control.as_ref().filter(|_| st.exit.is_none()) else {
            return Err(ProcError::NotRunning);
        };
        let size =
            rustix::termios::Winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
        rustix::termios::tcsetwinsize(control, size)
            .map_err(|e| ProcError::Io(format!("resize: {e}")))
    }

    /// Kills the process's whole tree. The termination is then `terminated`, unless the
    /// command had already ended on its own by the time the kill arrived.
    pub fn terminate(&self, id: &str) -> Result<Terminate, ProcError> {
        let proc = self.get(id)?;
        Ok(if proc.request_kill(Intent::Terminated) {
            Terminate::Sent
        } else {
            Terminate::AlreadyExited
        })
    }

    /// Kills every live tree and waits for them to go (at most about 8 s), then refuses
    /// further spawns. For stdio EOF, SIGTERM and SIGINT of the server.
    pub async fn shutdown(&self) {
        let live: Vec<Arc<Proc>> = {
            let mut table = lock(&self.table);
            table.shutting_down = true;
            table.procs.values().filter(|p| p.state().exit.is_none()).cloned().collect()
        };
        for proc in &live {
            proc.request_kill(Intent::Terminated);
        }
        let deadline = tokio::time::Instant::now() + SHUTDOWN_BOUND;
        for proc in &live {
            let watch = ExitWatch(proc.exit_tx.subscribe());
            let _ = tokio::time::timeout_at(deadline, watch.wait()).await;
        }
    }

    /// Live processes plus reserved slots.
    pub fn live(&self) -> usize {
        let table = lock(&self.table);
        table.reserved + table.procs.values().filter(|p| p.state().exit.is_none()).count()
    }

    fn reserve(&self) -> Result<Reservation<'_>, ProcError> {
        let mut table = lock(&self.table);
        self.evict(&mut table);
        if table.shutting_down {
            return Err(ProcError::SpawnFailed("the supervisor is shutting down".into()));
        }
        let running = table.procs.values().filter(|p| p.state().exit.is_none()).count();
        if running + table.reserved >= self.config.max_live {
            return Err(ProcError::LimitReached);
        }
        table.reserved += 1;
        Ok(Reservation { table: &self.table, live: true })
    }

    /// Turns the reservation into a live handle. False (and nothing inserted) when the
    /// supervisor began shutting down meanwhile.
    fn commit(&self, mut reservation: Reservation<'_>, id: &str, proc: &Arc<Proc>) -> bool {
        let mut table = lock(&self.table);
        table.reserved -= 1;
        reservation.live = false;
        if table.shutting_down {
            return false;
        }
        table.procs.insert(id.to_owned(), Arc::clone(proc));
        true
    }

    fn get(&self, id: &str) -> Result<Arc<Proc>, ProcError> {
        let mut table = lock(&self.table);
        self.evict(&mut table);
        table.procs.get(id).cloned().ok_or(ProcError::NotFound)
    }

    /// Lazy retention: completed handles older than the TTL go, then the oldest beyond the
    /// count limit. Running handles are never evicted.
    fn evict(&self, table: &mut Table) {
        let now = self.config.clock.now();
        let mut completed: Vec<(Instant, String)> = table
            .procs
            .iter()
            .filter_map(|(id, p)| p.state().exit.as_ref().map(|e| (e.completed_at, id.clone())))
            .collect();
        completed.sort();
        let expired = completed
            .iter()
            .take_while(|(at, _)| now.saturating_duration_since(*at) >= self.config.completed_ttl)
            .count();
        let over = (completed.len() - expired).saturating_sub(self.config.max_completed);
        for (_, id) in completed.iter().take(expired + over) {
            table.procs.remove(id);
        }
    }
}

fn validate(req: &SpawnRequest) -> Result<(), ProcError> {
    let invalid = |m: &str| Err(ProcError::Invalid(m.to_owned()));
    match req.argv.first() {
        None => return invalid("argv is empty"),
        Some(a) if a.is_empty() => return invalid("argv[0] is empty"),
        _ => {}
    }
    if req.argv.iter().any(|a| a.contains('\0')) {
        return invalid("argv contains a NUL byte");
    }
    for (k, v) in &req.env {
        if k.is_empty() || k.contains('=') || k.contains('\0') || v.contains('\0') {
            return Err(ProcError::Invalid(format!("invalid environment variable {k:?}")));
        }
    }
    if req.timeout.is_zero() {
        return invalid("timeout must be positive");
    }
    Ok(())
}

/// The terminal's VEOF character, ^D when unset.
fn veof_of(control: &OwnedFd) -> u8 {
    rustix::termios::tcgetattr(control)
        .map(|t| t.special_codes[SpecialCodeIndex::VEOF])
        .ok()
        .filter(|c| *c != 0)
        .unwrap_or(0x04)
}

async fn next_report(reports: &mut BufReader<pipe::Receiver>) -> Option<ShimReport> {
    let mut line = String::new();
    loop {
        line.clear();
        match reports.read_line(&mut line).await {
            Ok(0) | Err(_) => return None,
            Ok(_) => {
                if let Some(report) = ShimReport::parse(&line) {
                    return Some(report);
                }
            }
        }
    }
}

/// Stops a shim whose command never became a handle: SIGTERM (it kills whatever it
/// started), then SIGKILL if it lingers.
async fn stop_shim(shim: &mut ShimGuard) {
    shim.request_kill();
    if tokio::time::timeout(KILL_ESCALATION, shim.child.wait()).await.is_err() {
        let _ = shim.child.start_kill();
        let _ = shim.child.wait().await;
    }
}

async fn pump_task<R: AsyncRead + Unpin>(mut reader: R, proc: Arc<Proc>) {
    let mut buf = vec![0u8; PUMP_CHUNK];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => proc.state().ring.push(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // EIO from a PTY master once the last slave descriptor closed: end of output.
            Err(_) => break,
        }
    }
    proc.state().pump_done = true;
}

async fn write_stdin_task<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: mpsc::UnboundedReceiver<StdinMsg>,
    backlog: Arc<AtomicUsize>,
    proc: Arc<Proc>,
) {
    while let Some(msg) = rx.recv().await {
        match msg {
            StdinMsg::Data(data) => {
                let result = async {
                    writer.write_all(&data).await?;
                    writer.flush().await
                }
                .await;
                backlog.fetch_sub(data.len(), Ordering::AcqRel);
                if let Err(e) = result {
                    let mut st = proc.state();
                    if matches!(st.stdin, Stdin::Open { .. }) {
                        st.stdin = Stdin::Failed(e.to_string());
                    }
                    return;
                }
            }
            StdinMsg::Close => {
                let _ = writer.shutdown().await;
                return;
            }
        }
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

async fn supervise(
    finalizer: Finalizer,
    mut shim: ShimGuard,
    mut reports: BufReader<pipe::Receiver>,
    mut pump: JoinHandle<()>,
    timeout: Duration,
) {
    let proc = Arc::clone(&finalizer.proc);
    let final_report = async move {
        let mut last = None;
        while let Some(report) = next_report(&mut reports).await {
            last = Some(report);
        }
        last
    };
    let waited = async {
        let deadline = tokio::time::Instant::now().checked_add(timeout);
        let mut timed_out = false;
        let mut escalate_at: Option<tokio::time::Instant> = None;
        let mut shim_killed = false;
        loop {
            // The handlers below run only after `wait()` returned Pending, i.e. while the
            // shim is not yet reaped, so its pid still names it.
            tokio::select! {
                _ = shim.child.wait() => break,
                () = sleep_until(deadline), if !timed_out => {
                    timed_out = true;
                    proc.request_kill(Intent::Timeout);
                }
                () = proc.kill.notified() => {
                    shim.request_kill();
                    escalate_at.get_or_insert(tokio::time::Instant::now() + KILL_ESCALATION);
                }
                () = sleep_until(escalate_at), if escalate_at.is_some() && !shim_killed => {
                    shim_killed = true;
                    let _ = shim.child.start_kill();
                }
            }
        }
    };
    let (report, ()) = tokio::join!(final_report, waited);
    if tokio::time::timeout(PUMP_GRACE, &mut pump).await.is_err() {
        // Something outside the tree still holds the output open (only possible if the
        // shim itself was SIGKILLed): stop collecting rather than wait forever.
        pump.abort();
    }
    proc.finalize(report, &finalizer.clock);
}
