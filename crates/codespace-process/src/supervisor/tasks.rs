//! The per-process tasks on the caller's tokio runtime:
//! - the **pump** copies the output stream (one pipe for stdout+stderr, or the PTY master)
//!   into the ring until end of file (EIO on a PTY master is end of file);
//! - the **stdin writer** writes queued input in order, then flushes;
//! - the **supervision** task waits for the shim, fires the time limit and kill requests
//!   (SIGUSR1 to the shim, which sends SIGTERM to the tree, when the kill leaves a grace;
//!   SIGTERM to the shim, which sends SIGKILL to the tree, once the grace is over; SIGKILL
//!   to the shim if it has not exited 5 s after that), reads the shim's final report, and
//!   records the outcome.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use codespace_sandbox::envelope;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::net::unix::pipe;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::handle::{Finalizer, Intent, Proc, Stdin, StdinMsg, StdinQueue};
use crate::shim::ShimGuard;
use crate::shim_messages::ShimReport;
use crate::spawn::CommandIo;

/// SIGTERM to the shim (kill the tree), then SIGKILL to the shim if it is still there
/// after this.
const KILL_ESCALATION: Duration = Duration::from_secs(5);
/// After the shim is reaped, how long the output pump may take to drain.
const PUMP_GRACE: Duration = Duration::from_secs(2);
/// Read size of the output pump.
const PUMP_CHUNK: usize = 64 * 1024;

/// Starts the stdin writer and the output pump of a new handle; returns the pump.
pub(super) fn start_io(io: CommandIo, stdin: StdinQueue, proc: &Arc<Proc>) -> JoinHandle<()> {
    let StdinQueue { rx, backlog } = stdin;
    match io {
        CommandIo::Pipes { stdin, output } => {
            tokio::spawn(write_stdin_task(stdin, rx, backlog, Arc::clone(proc)));
            tokio::spawn(pump_task(output, Arc::clone(proc)))
        }
        CommandIo::Pty { pty, .. } => {
            let (reader, writer) = pty.into_split();
            tokio::spawn(write_stdin_task(writer, rx, backlog, Arc::clone(proc)));
            tokio::spawn(pump_task(reader, Arc::clone(proc)))
        }
    }
}

/// The next well-formed report, or `None` at end of file (or once the stream is past
/// reading: a frame longer than any report).
pub(super) async fn next_report(reports: &mut BufReader<pipe::Receiver>) -> Option<ShimReport> {
    let mut body = Vec::new();
    loop {
        let mut len = [0u8; 4];
        reports.read_exact(&mut len).await.ok()?;
        let len = u32::from_le_bytes(len);
        if len > envelope::MAX_FRAME {
            return None;
        }
        body.resize(len as usize, 0);
        reports.read_exact(&mut body).await.ok()?;
        // A report this build cannot read is skipped, as a malformed line was.
        if let Ok(report) = envelope::decode(&body) {
            return Some(report);
        }
    }
}

/// Stops a shim whose command never became a handle: SIGTERM (it kills whatever it
/// started), then SIGKILL if it lingers.
pub(super) async fn stop_shim(shim: &mut ShimGuard) {
    shim.request_kill();
    if tokio::time::timeout(KILL_ESCALATION, shim.wait()).await.is_err() {
        shim.start_kill();
        shim.wait().await;
    }
}

async fn pump_task<R: AsyncRead + Unpin>(mut reader: R, proc: Arc<Proc>) {
    let mut buf = vec![0u8; PUMP_CHUNK];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                proc.state().output.push(&buf[..n]);
                proc.progress.send_replace(());
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // EIO from a PTY master once the last slave descriptor closed: end of output.
            Err(_) => break,
        }
    }
    proc.state().pump_done = true;
    proc.progress.send_replace(());
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

/// The supervision task: runs until the shim is reaped and its reports are read, then
/// finalizes the handle.
pub(super) async fn supervise(
    finalizer: Finalizer,
    shim: ShimGuard,
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
    let (report, ()) = tokio::join!(final_report, wait_shim(shim, &proc, timeout));
    if tokio::time::timeout(PUMP_GRACE, &mut pump).await.is_err() {
        // Something outside the tree still holds the output open (only possible if the
        // shim itself was SIGKILLed): stop collecting rather than wait forever.
        pump.abort();
    }
    proc.finalize(report, &finalizer.clock);
}

/// Where a kill the supervisor started stands.
#[derive(Default)]
struct Kill {
    /// The shim was asked to send SIGTERM to the tree.
    termed: bool,
    /// When the tree gets SIGKILL.
    at: Option<tokio::time::Instant>,
    /// The shim was asked to send SIGKILL to the tree.
    killed: bool,
    /// When the shim itself gets SIGKILL, should it still be there.
    escalate_at: Option<tokio::time::Instant>,
    shim_killed: bool,
}

/// Waits for the shim to be reaped, firing the time limit and kill requests meanwhile.
async fn wait_shim(mut shim: ShimGuard, proc: &Proc, timeout: Duration) {
    let deadline = tokio::time::Instant::now().checked_add(timeout);
    let mut timed_out = false;
    let mut kill = Kill::default();
    loop {
        // The handlers below run only after `wait()` returned Pending, i.e. while the
        // shim is not yet reaped, so its pid still names it.
        tokio::select! {
            () = shim.wait() => break,
            () = sleep_until(deadline), if !timed_out => {
                timed_out = true;
                proc.request_kill(Intent::Timeout, proc.kill_grace);
            }
            () = proc.kill.notified() => {
                // The soonest SIGKILL asked for so far; SIGTERM first if it leaves a grace.
                kill.at = proc.kill_at();
                if !kill.termed && kill.at.is_some_and(|at| at > tokio::time::Instant::now()) {
                    kill.termed = true;
                    shim.request_term();
                }
            }
            () = sleep_until(kill.at), if kill.at.is_some() && !kill.killed => {
                kill.killed = true;
                shim.request_kill();
                kill.escalate_at = Some(tokio::time::Instant::now() + KILL_ESCALATION);
            }
            () = sleep_until(kill.escalate_at), if kill.escalate_at.is_some() && !kill.shim_killed => {
                kill.shim_killed = true;
                shim.start_kill();
            }
        }
    }
}
