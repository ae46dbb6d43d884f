//! Starting a reaper shim: its arguments, wiring its descriptors, and forking it from
//! the supervisor's dedicated spawner thread.
//!
//! Why a dedicated thread: `PR_SET_PDEATHSIG` fires when the *thread* that forked the shim
//! exits, not the process. Forking from a tokio worker or blocking-pool thread would tie
//! every command's life to that thread's (the blocking pool retires idle threads after
//! seconds). The spawner thread lives exactly as long as the [`Spawner`], i.e. the
//! supervisor, so the death signal means "the supervisor is gone".

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Mutex, PoisonError, mpsc};

use rustix::pipe::PipeFlags;
use rustix::process::Signal;
use tokio::net::unix::pipe;
use tokio::process::{Child, ChildStdin};
use tokio::sync::oneshot;

use crate::protocol::ShimArgs;
use crate::reaper::REPORT_FD;

/// `PATH` used to resolve `argv[0]` when the request's environment has none.
pub const DEFAULT_PATH: &str = "/usr/bin:/bin:/usr/sbin:/sbin";

/// The `PATH` the shim looks `argv[0]` up on: the request's own (the last one if it sets
/// several, as the child will see), or [`DEFAULT_PATH`].
pub(crate) fn search_path(env: &[(String, String)]) -> &str {
    env.iter().rev().find(|(k, _)| k == "PATH").map_or(DEFAULT_PATH, |(_, v)| v)
}

type Job = Box<dyn FnOnce() + Send + 'static>;

/// The long-lived thread every shim is forked from (started on first use).
#[derive(Default)]
pub(crate) struct Spawner {
    tx: Mutex<Option<mpsc::Sender<Job>>>,
}

impl Spawner {
    fn submit(&self, job: Job) -> io::Result<()> {
        let mut tx = self.tx.lock().unwrap_or_else(PoisonError::into_inner);
        if tx.is_none() {
            let (sender, jobs) = mpsc::channel::<Job>();
            std::thread::Builder::new().name("codespace-spawner".into()).spawn(move || {
                for job in jobs {
                    // A panicking job must not end this thread: its exit would deliver the
                    // parent-death signal to every running shim.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                }
            })?;
            *tx = Some(sender);
        }
        match tx.as_ref().map(|sender| sender.send(job)) {
            Some(Ok(())) => Ok(()),
            // The thread is gone (it never ends on its own): start a new one next time.
            Some(Err(_)) | None => {
                *tx = None;
                Err(io::Error::other("the spawner thread is gone"))
            }
        }
    }
}

/// A shim child that is sent SIGTERM (so it kills its tree) if dropped before it was reaped.
pub(crate) struct ShimGuard {
    pub(crate) child: Child,
}

impl ShimGuard {
    /// SIGTERM to the shim: "kill your tree, then exit". A no-op once it has been reaped
    /// (`Child::id` is `None` then, so a recycled pid is never signalled).
    pub(crate) fn request_kill(&self) {
        if let Some(pid) = self.child.id().and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
            let _ = rustix::process::kill_process(pid, Signal::TERM);
        }
    }
}

impl Drop for ShimGuard {
    fn drop(&mut self) {
        // tokio reaps a dropped child in the background; the SIGTERM makes it exit.
        self.request_kill();
    }
}

/// What the command reads and writes through.
pub(crate) enum CommandIo {
    Pipes {
        stdin: ChildStdin,
        output: pipe::Receiver,
    },
    /// `control` is a duplicate of the master for resize and VEOF, taken by the supervisor.
    Pty {
        pty: pty_process::Pty,
        control: Option<OwnedFd>,
    },
}

/// A started shim, before its `started` report was read.
pub(crate) struct Launched {
    pub(crate) shim: ShimGuard,
    pub(crate) reports: pipe::Receiver,
    pub(crate) io: CommandIo,
}

pub(crate) struct LaunchSpec<'a> {
    pub(crate) reaper_exe: &'a Path,
    pub(crate) reaper_arg: &'a OsString,
    pub(crate) search_path: &'a str,
    pub(crate) argv: &'a [String],
    pub(crate) env: &'a [(String, String)],
    /// The working directory, entered by the shim through this descriptor.
    pub(crate) cwd: OwnedFd,
    pub(crate) tty: bool,
    pub(crate) sandbox: Option<codespace_sandbox::SandboxPolicy>,
    pub(crate) rows: u16,
    pub(crate) cols: u16,
}

/// Forks the shim (on the spawner thread) with stdio wired and the report pipe on fd 3.
/// Every descriptor created here is close-on-exec; the parent's copies of the child ends
/// (output pipe write end, terminal slave, report pipe write end) are closed as soon as the
/// fork is done, so end of file on the parent's ends means the shim and its tree are gone.
pub(crate) async fn launch(spawner: &Spawner, mut spec: LaunchSpec<'_>) -> io::Result<Launched> {
    let (report_r, report_w) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC)?;
    // Above 2, so the child's stdio cannot land on them.
    let report_w = above_stdio(report_w)?;
    let cwd = rustix::io::fcntl_dupfd_cloexec(&spec.cwd, REPORT_FD)?;
    let reports = pipe::Receiver::from_owned_fd(report_r)?;
    let args = ShimArgs {
        ppid: std::process::id(),
        report_fd: report_w.as_raw_fd(),
        cwd_fd: cwd.as_raw_fd(),
        tty: spec.tty,
        sandbox: spec.sandbox.take(),
        search_path: spec.search_path.into(),
        argv: spec.argv.iter().map(OsString::from).collect(),
    }
    .encode();
    let handle = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
    let (tx, rx) = oneshot::channel::<io::Result<Child>>();
    let delivery = Delivery { handle, report_w, cwd, tx };
    let (job, parts) =
        if spec.tty { pty_job(&spec, &args, delivery)? } else { pipe_job(&spec, &args, delivery)? };
    spawner.submit(job)?;
    let child = rx.await.map_err(|_| io::Error::other("the spawner dropped the job"))??;
    let mut shim = ShimGuard { child };
    let io = match parts {
        Parts::Pty { pty, control } => CommandIo::Pty { pty, control: Some(control) },
        Parts::Pipes { output } => {
            let stdin = shim.child.stdin.take().ok_or_else(|| io::Error::other("no stdin pipe"))?;
            CommandIo::Pipes { stdin, output }
        }
    };
    Ok(Launched { shim, reports, io })
}

/// The command's ends the supervisor keeps, until the shim has started.
enum Parts {
    Pipes { output: pipe::Receiver },
    Pty { pty: pty_process::Pty, control: OwnedFd },
}

/// What a spawn job needs besides its command: the runtime its child is registered with,
/// the report pipe's write end and the working directory to pass, and where to deliver the
/// child.
struct Delivery {
    handle: tokio::runtime::Handle,
    report_w: OwnedFd,
    cwd: OwnedFd,
    tx: oneshot::Sender<io::Result<Child>>,
}

impl Delivery {
    /// Lets both passed descriptors cross the shim's exec (see [`inheritable`]).
    fn pass(&self) -> io::Result<()> {
        inheritable(&self.report_w).and_then(|()| inheritable(&self.cwd))
    }
}

/// `fd`, or a close-on-exec duplicate of it at 3 or above when it is one of 0-2.
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() <= 2 { Ok(rustix::io::fcntl_dupfd_cloexec(&fd, REPORT_FD)?) } else { Ok(fd) }
}

/// The job that starts a shim on a fresh terminal (the slave becomes its stdio and
/// controlling terminal).
fn pty_job(spec: &LaunchSpec<'_>, args: &[OsString], d: Delivery) -> io::Result<(Job, Parts)> {
    let (pty, pts) = pty_process::open().map_err(io::Error::other)?;
    pty.resize(pty_process::Size::new(spec.rows, spec.cols)).map_err(io::Error::other)?;
    let control = rustix::io::fcntl_dupfd_cloexec(&pty, 0)?;
    let cmd = pty_process::Command::new(spec.reaper_exe)
        .arg(spec.reaper_arg)
        .args(args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .kill_on_drop(false);
    let job: Job = Box::new(move || {
        let _runtime = d.handle.enter();
        let result = d
            .pass()
            // `spawn` consumes the command and the slave: both are closed when it returns.
            .and_then(|()| cmd.spawn(pts).map_err(io::Error::other));
        drop(d.report_w);
        drop(d.cwd);
        deliver(d.tx, result);
    });
    Ok((job, Parts::Pty { pty, control }))
}

/// The job that starts a shim on pipes: stdin, and one pipe for stdout and stderr.
fn pipe_job(spec: &LaunchSpec<'_>, args: &[OsString], d: Delivery) -> io::Result<(Job, Parts)> {
    let (out_r, out_w) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC)?;
    let output = pipe::Receiver::from_owned_fd(out_r)?;
    let err_w = out_w.try_clone()?;
    let mut cmd = tokio::process::Command::new(spec.reaper_exe);
    cmd.arg(spec.reaper_arg)
        .args(args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        // One pipe for both streams, so their interleaving is the order of the writes.
        .stdout(Stdio::from(out_w))
        .stderr(Stdio::from(err_w))
        .kill_on_drop(false);
    // No pre-exec hook: std then starts the shim with posix_spawn (a vfork), instead of
    // forking the whole multi-threaded server; the shim makes its own session.
    let job: Job = Box::new(move || {
        let _runtime = d.handle.enter();
        let result = d.pass().and_then(|()| cmd.spawn());
        // Closes the parent's copies of the output pipe's write end.
        drop(cmd);
        drop(d.report_w);
        drop(d.cwd);
        deliver(d.tx, result);
    });
    Ok((job, Parts::Pipes { output }))
}

/// Hands the spawned shim to the awaiting task, or kills it if that task is gone.
fn deliver(tx: oneshot::Sender<io::Result<Child>>, result: io::Result<Child>) {
    if let Err(Ok(child)) = tx.send(result) {
        drop(ShimGuard { child });
    }
}

/// Lets a passed descriptor (the report pipe's write end, the working directory) cross the
/// shim's exec. Called on the spawner thread right before the spawn, and the descriptor is
/// closed right after it: the spawner is the only thread of the server that starts
/// processes, so no other child can inherit it.
fn inheritable(report_w: &OwnedFd) -> io::Result<()> {
    rustix::io::fcntl_setfd(report_w, rustix::io::FdFlags::empty()).map_err(io::Error::from)
}
