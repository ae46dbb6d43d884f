//! The [`Supervisor`]: the public API over the process table. Starting a process is in
//! `start`, waiting for output or the exit in `wait`, the handle's state in `handle`, the
//! table in `table`, the per-process tasks in `tasks`, the settings in `config`.
//!
//! Lock order: the table lock, then a process's state lock; never the reverse.

mod config;
mod handle;
mod start;
mod table;
mod tasks;
mod wait;

use std::fmt;
use std::os::fd::OwnedFd;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rustix::termios::SpecialCodeIndex;

pub use self::config::{
    Clock, DEFAULT_COMPLETED_TTL, DEFAULT_MAX_COMPLETED, DEFAULT_MAX_LIVE, DEFAULT_RING_BYTES,
    DEFAULT_SPILL_BYTES, REAPER_ARG, SupervisorConfig, TTY_COLS, TTY_ROWS,
};
use self::handle::{Intent, Proc, State, Stdin, StdinMsg, lock};
use self::table::Table;
use crate::error::ProcError;
use crate::output::Output;
use crate::spawn::Spawner;
use crate::spill::{self, SpillDir};
use crate::types::{ExitWatch, ProcStatus, ReadChunk, Terminate};
use codespace_types::{ProcessState, Termination};

/// The longest grace [`Supervisor::shutdown`] gives a command between SIGTERM and SIGKILL,
/// whatever its own, so that a server asked to stop does stop.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// How long [`Supervisor::shutdown`] waits for the trees to go in all: the grace, then the
/// time SIGKILL and the reapers take.
pub const SHUTDOWN_LIMIT: Duration = Duration::from_secs(13);
/// Input queued for a process but not yet written, at most.
const MAX_STDIN_BACKLOG: usize = 4 * 1024 * 1024;

/// The process supervisor. Share it as `Arc<Supervisor>`; dropping the last reference
/// ends its spawner thread, whose exit makes every shim kill its tree.
pub struct Supervisor {
    config: SupervisorConfig,
    table: Mutex<Table>,
    spawner: Spawner,
    /// This supervisor's spill directory, made on first need (`None` if it cannot be).
    spill: OnceLock<Option<Arc<SpillDir>>>,
}

impl fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Supervisor").field("config", &self.config).finish_non_exhaustive()
    }
}

impl Supervisor {
    /// A supervisor with no process. Threads are started on first spawn. With a spill
    /// directory, whatever supervisors that are gone left in it is removed now.
    pub fn new(config: SupervisorConfig) -> Arc<Supervisor> {
        if let Some(dir) = &config.spill_dir {
            spill::sweep(dir);
        }
        Arc::new(Supervisor {
            config,
            table: Mutex::new(Table::default()),
            spawner: Spawner::default(),
            spill: OnceLock::new(),
        })
    }

    /// An empty output for a new process: the ring, and the spill file's place and cap.
    fn new_output(&self) -> Output {
        let cap = self.config.retained_bytes();
        let dir = self.config.spill_dir.as_deref().filter(|_| cap > self.config.ring_bytes as u64);
        let spill = dir.and_then(|dir| {
            self.spill.get_or_init(|| SpillDir::create(dir).ok()).as_ref().map(Arc::clone)
        });
        Output::new(self.config.ring_bytes, spill.map(|dir| (dir, cap)))
    }

    /// The configuration.
    pub fn config(&self) -> &SupervisorConfig {
        &self.config
    }

    /// Output bytes written to spill files since this supervisor started (0 before the
    /// first spill, or without a spill directory).
    pub fn spilled_bytes(&self) -> u64 {
        self.spill.get().and_then(Option::as_ref).map_or(0, |d| d.written())
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
                // `Open` cannot reach here; `Gone`, or a failed write the exit explains.
                Stdin::Failed(_) | Stdin::Gone | Stdin::Open { .. } => ProcError::NotRunning,
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

    /// Reads retained output from absolute `cursor`, at most `max_bytes` of it: the newest
    /// bytes from memory, older ones from the spill file. A cursor
    /// below `retained_from` starts at `retained_from` and sets `output_lost`; a cursor past
    /// the output's end reads an empty chunk at the end, as the reference does. The first
    /// read at the end of the complete output of a process killed at its time limit is
    /// [`ProcError::TimedOut`] (once: later reads say `eof`).
    pub fn read(&self, id: &str, cursor: u64, max_bytes: usize) -> Result<ReadChunk, ProcError> {
        let proc = self.get(id)?;
        read_at(&proc, &mut proc.state(), cursor, max_bytes)
    }

    /// The state of a process.
    pub fn status(&self, id: &str) -> Result<ProcStatus, ProcError> {
        let proc = self.get(id)?;
        Ok(status_of(&proc, &proc.state()))
    }

    /// [`Supervisor::read`] and [`Supervisor::status`] taken together under one lock, so
    /// they agree: a chunk at `eof` comes with the exit, and an `exited` state with every
    /// byte there is.
    pub fn read_with_status(
        &self,
        id: &str,
        cursor: u64,
        max_bytes: usize,
    ) -> Result<(ReadChunk, ProcStatus), ProcError> {
        let proc = self.get(id)?;
        let mut st = proc.state();
        let chunk = read_at(&proc, &mut st, cursor, max_bytes)?;
        Ok((chunk, status_of(&proc, &st)))
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

    /// Ends the process's whole tree: SIGTERM to every process of it now, SIGKILL to
    /// whatever is left `grace` later (the process's own grace when `None`, and never more:
    /// a longer one is cut to it; zero kills at once). The termination is then
    /// `terminated`, unless the command had already ended on its own by the time the
    /// request arrived. A second request may shorten the grace, never lengthen it.
    pub fn terminate(&self, id: &str, grace: Option<Duration>) -> Result<Terminate, ProcError> {
        let proc = self.get(id)?;
        let grace = grace.map_or(proc.kill_grace, |g| g.min(proc.kill_grace));
        Ok(if proc.request_kill(Intent::Terminated, grace) {
            Terminate::Sent { grace }
        } else {
            Terminate::AlreadyExited
        })
    }

    /// Ends every live tree at once, each with its own grace cut to [`SHUTDOWN_GRACE`]
    /// (SIGTERM to all now, SIGKILL to what is left after it), waits for them to go (at
    /// most [`SHUTDOWN_LIMIT`] in all), and refuses further spawns from the start. For
    /// stdio EOF, SIGTERM and SIGINT of the server.
    pub async fn shutdown(&self) {
        let live: Vec<Arc<Proc>> = {
            let mut table = lock(&self.table);
            table.shutting_down = true;
            table.running().cloned().collect()
        };
        for proc in &live {
            proc.request_kill(Intent::Terminated, proc.kill_grace.min(SHUTDOWN_GRACE));
        }
        let deadline = tokio::time::Instant::now() + SHUTDOWN_LIMIT;
        for proc in &live {
            let watch = ExitWatch(proc.exit_tx.subscribe());
            let _ = tokio::time::timeout_at(deadline, watch.wait()).await;
        }
    }

    /// Live processes plus reserved slots.
    pub fn live(&self) -> usize {
        let table = lock(&self.table);
        table.reserved + table.running().count()
    }
}

/// [`Supervisor::read`] on a locked state.
fn read_at(
    proc: &Proc,
    st: &mut State,
    cursor: u64,
    max_bytes: usize,
) -> Result<ReadChunk, ProcError> {
    let total = st.output.total();
    let retained_from = st.output.retained_from();
    // A cursor past the end reads nothing; the reply's cursor is the real end, so the next
    // read resumes there.
    let cursor = cursor.min(total);
    let timed_out = st.exit.as_ref().is_some_and(|e| e.termination == Termination::Timeout);
    if cursor == total && st.output_complete() && timed_out && !st.timeout_reported {
        st.timeout_reported = true;
        return Err(ProcError::TimedOut { limit_secs: proc.timeout.as_secs() });
    }
    let from = cursor.max(retained_from);
    let to = from.saturating_add(max_bytes as u64).min(total);
    let chunk = st.output.copy(from, to);
    // A spill file that could not be read was given up: what it held is lost.
    let retained_from = st.output.retained_from();
    Ok(ReadChunk {
        cursor: to,
        chunk,
        eof: st.output_complete() && to == total,
        output_lost: cursor < retained_from,
        retained_from,
    })
}

/// [`Supervisor::status`] on a locked state.
fn status_of(proc: &Proc, st: &State) -> ProcStatus {
    let exit = st.exit.as_ref();
    ProcStatus {
        state: if exit.is_some() { ProcessState::Exited } else { ProcessState::Running },
        termination: exit.map(|e| e.termination),
        exit_code: exit.and_then(|e| e.exit_code),
        signal: exit.and_then(|e| e.signal.clone()),
        output_total: st.output.total(),
        retained_from: st.output.retained_from(),
        eof: st.output_complete(),
        tty: proc.tty,
        started_at_ms: proc.started_at_ms,
        exited_at_ms: exit.map(|e| e.exited_at_ms),
        timeout: proc.timeout,
    }
}

/// The terminal's VEOF character, ^D when unset.
fn veof_of(control: &OwnedFd) -> u8 {
    rustix::termios::tcgetattr(control)
        .map(|t| t.special_codes[SpecialCodeIndex::VEOF])
        .ok()
        .filter(|c| *c != 0)
        .unwrap_or(0x04)
}
