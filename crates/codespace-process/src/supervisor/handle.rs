//! One process's handle: its shared state (output ring, stdin, exit, terminal control) and
//! the transitions on it (kill intent, finalization).

use std::os::fd::OwnedFd;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::{Notify, mpsc, watch};

use super::config::Clock;
use crate::output::Output;
use crate::shim_messages::ShimReport;
use crate::types::signal_info;
use codespace_types::{SignalInfo, Termination};

pub(super) struct Proc {
    pub(super) tty: bool,
    pub(super) started_at_ms: u64,
    /// Wakes the supervision task to kill the tree.
    pub(super) kill: Notify,
    pub(super) exit_tx: watch::Sender<bool>,
    /// Bumped on every change a waiting reader cares about: new output, the end of the
    /// output, the exit. Waiters subscribe, then check the state, so no bump is missed.
    pub(super) progress: watch::Sender<()>,
    /// The time limit this process runs under.
    pub(super) timeout: Duration,
    /// SIGTERM to SIGKILL when the supervisor ends the tree; the most a terminate asks.
    pub(super) kill_grace: Duration,
    state: Mutex<State>,
}

pub(super) struct State {
    pub(super) output: Output,
    pub(super) pump_done: bool,
    pub(super) intent: Option<Intent>,
    /// When whatever is left of the tree gets SIGKILL: the soonest any kill request asked.
    pub(super) kill_at: Option<tokio::time::Instant>,
    pub(super) exit: Option<ExitInfo>,
    pub(super) stdin: Stdin,
    /// A duplicate of the PTY master, for resize and the VEOF character; dropped at exit.
    pub(super) control: Option<OwnedFd>,
    /// A read at the end of a timed-out process's output has reported the timeout (once).
    pub(super) timeout_reported: bool,
}

/// Why CodeSpace killed a tree; the first one recorded wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Intent {
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

pub(super) struct ExitInfo {
    pub(super) termination: Termination,
    pub(super) exit_code: Option<i32>,
    pub(super) signal: Option<SignalInfo>,
    pub(super) exited_at_ms: u64,
    pub(super) completed_at: Instant,
}

pub(super) enum Stdin {
    Open { tx: mpsc::UnboundedSender<StdinMsg>, backlog: Arc<AtomicUsize>, at_line_start: bool },
    Closed,
    Failed(String),
    Gone,
}

pub(super) enum StdinMsg {
    Data(Vec<u8>),
    Close,
}

/// The receiving side of a new handle's stdin, for its writer task.
pub(super) struct StdinQueue {
    pub(super) rx: mpsc::UnboundedReceiver<StdinMsg>,
    pub(super) backlog: Arc<AtomicUsize>,
}

/// A poisoned lock only means a panic elsewhere; the state itself stays consistent.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(super) fn unix_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl State {
    /// The tree is gone and the pump has drained (or was stopped): no byte can follow.
    pub(super) fn output_complete(&self) -> bool {
        self.exit.is_some() && self.pump_done
    }
}

impl Proc {
    /// A running handle with an empty output and open stdin, plus its stdin queue and the
    /// receiving end of its exit flag.
    pub(super) fn start(
        tty: bool,
        timeout: Duration,
        kill_grace: Duration,
        output: Output,
        control: Option<OwnedFd>,
    ) -> (Arc<Proc>, StdinQueue, watch::Receiver<bool>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let backlog = Arc::new(AtomicUsize::new(0));
        let (exit_tx, exit_rx) = watch::channel(false);
        let proc = Arc::new(Proc {
            tty,
            started_at_ms: unix_ms(),
            kill: Notify::new(),
            exit_tx,
            progress: watch::Sender::new(()),
            timeout,
            kill_grace,
            state: Mutex::new(State {
                output,
                pump_done: false,
                intent: None,
                kill_at: None,
                exit: None,
                stdin: Stdin::Open { tx, backlog: Arc::clone(&backlog), at_line_start: true },
                control,
                timeout_reported: false,
            }),
        });
        (proc, StdinQueue { rx, backlog }, exit_rx)
    }

    pub(super) fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Records the intent (the first one wins) and that the tree gets SIGKILL `grace` from
    /// now (a later request may bring that closer, never push it back), and wakes the
    /// supervision task. False when the process had already exited.
    pub(super) fn request_kill(&self, intent: Intent, grace: Duration) -> bool {
        let at = tokio::time::Instant::now() + grace;
        {
            let mut st = self.state();
            if st.exit.is_some() {
                return false;
            }
            st.intent.get_or_insert(intent);
            st.kill_at = Some(st.kill_at.map_or(at, |earlier| earlier.min(at)));
        }
        self.kill.notify_one();
        true
    }

    /// When the tree gets SIGKILL, once a kill was requested.
    pub(super) fn kill_at(&self) -> Option<tokio::time::Instant> {
        self.state().kill_at
    }

    /// Records how the process ended (once; later calls do nothing) and fires its exit
    /// watch. `report` is the shim's last report, `None` if it sent none.
    pub(super) fn finalize(&self, report: Option<ShimReport>, clock: &Clock) {
        let mut st = self.state();
        if st.exit.is_some() {
            return;
        }
        let (termination, exit_code, signal) = ending(report, st.intent);
        st.exit = Some(ExitInfo {
            termination,
            exit_code,
            signal,
            exited_at_ms: unix_ms(),
            completed_at: clock.now(),
        });
        st.pump_done = true;
        match st.stdin {
            Stdin::Closed => {}
            Stdin::Open { .. } | Stdin::Failed(_) | Stdin::Gone => st.stdin = Stdin::Gone,
        }
        st.control = None;
        drop(st);
        self.exit_tx.send_replace(true);
        self.progress.send_replace(());
    }
}

/// How a process ended, from the shim's last report and the supervisor's own kill intent.
fn ending(
    report: Option<ShimReport>,
    intent: Option<Intent>,
) -> (Termination, Option<i32>, Option<SignalInfo>) {
    match (report, intent) {
        // It ended after the shim had our request: report why we sent it, and how it ended
        // (SIGTERM, SIGKILL once the grace ran out, or the exit code its handler chose).
        (Some(ShimReport::Exited { code, requested: true }), Some(intent)) => {
            (intent.termination(), Some(code), None)
        }
        (Some(ShimReport::Signaled { signal, requested: true }), Some(intent)) => {
            (intent.termination(), None, Some(signal_info(signal)))
        }
        (Some(ShimReport::Exited { code, .. }), _) => (Termination::Exited, Some(code), None),
        (Some(ShimReport::Signaled { signal, .. }), _) => {
            (Termination::Signaled, None, Some(signal_info(signal)))
        }
        // No final status (the shim vanished): only our own intent can explain the end.
        (Some(ShimReport::Started { .. } | ShimReport::Failed { .. }) | None, intent) => {
            (intent.map_or(Termination::Unknown, Intent::termination), None, None)
        }
    }
}

/// Marks the process exited if the supervision task ends without doing it (cancelled at
/// runtime shutdown, or a panic), so no lease waits forever.
pub(super) struct Finalizer {
    pub(super) proc: Arc<Proc>,
    pub(super) clock: Clock,
}

impl Drop for Finalizer {
    fn drop(&mut self) {
        self.proc.finalize(None, &self.clock);
    }
}
