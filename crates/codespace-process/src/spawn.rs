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
use std::os::fd::{AsFd as _, AsRawFd as _, BorrowedFd, OwnedFd};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::Duration;

use rustix::pipe::PipeFlags;
use rustix::process::Signal;
use tokio::net::unix::pipe;
use tokio::process::Child;
use tokio::sync::oneshot;

use crate::reaper::REPORT_FD;
use crate::shim::{Shim, ShimGuard, watch};
use crate::shim_messages::{HelperAsk, HelperRequest, ShimArgs};
use codespace_sandbox::envelope;

mod helper;

use helper::{Helper, Spare};

/// How long the spawn helper may take to answer a request.
const HELPER_TIMEOUT: Duration = Duration::from_secs(5);

/// `PATH` used to resolve `argv[0]` when the request's environment has none.
pub const DEFAULT_PATH: &str = "/usr/bin:/bin:/usr/sbin:/sbin";

/// The `PATH` the shim looks `argv[0]` up on: the request's own (the last one if it sets
/// several, as the child will see), or [`DEFAULT_PATH`].
pub(crate) fn search_path(env: &[(String, String)]) -> &str {
    env.iter().rev().find(|(k, _)| k == "PATH").map_or(DEFAULT_PATH, |(_, v)| v)
}

type Job = Box<dyn FnOnce(&mut Option<Helper>) + Send + 'static>;

/// The long-lived thread every shim is forked from (started on first use), and the spare
/// shim the spawn helper forked ahead for the next spawn.
#[derive(Default)]
pub(crate) struct Spawner {
    tx: Mutex<Option<mpsc::Sender<Job>>>,
    spare: Arc<Mutex<Option<Spare>>>,
}

impl Spawner {
    /// The spare, if one is ready (taken: each serves one spawn).
    fn take_spare(&self) -> Option<Spare> {
        self.spare.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// Has the helper fork the next spare, on the spawner thread, unless one is ready or no
    /// helper runs; a helper that fails the request is dropped (and replaced on the next
    /// spawn). Nobody waits for it.
    fn refill(&self) {
        let slot = Arc::clone(&self.spare);
        let _ = self.submit(Box::new(move |helper| {
            if slot.lock().unwrap_or_else(PoisonError::into_inner).is_some() {
                return;
            }
            let Some(h) = helper.as_ref() else { return };
            match h.spare() {
                Ok(spare) => *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(spare),
                Err(_) => *helper = None,
            }
        }));
    }

    fn submit(&self, job: Job) -> io::Result<()> {
        let mut tx = self.tx.lock().unwrap_or_else(PoisonError::into_inner);
        if tx.is_none() {
            let (sender, jobs) = mpsc::channel::<Job>();
            std::thread::Builder::new().name("codespace-spawner".into()).spawn(move || {
                // The spawn helper, started by the first job; it lives as long as this thread.
                let mut helper: Option<Helper> = None;
                for job in jobs {
                    // A panicking job must not end this thread: its exit would deliver the
                    // parent-death signal to every running shim.
                    let run = std::panic::AssertUnwindSafe(|| job(&mut helper));
                    let _ = std::panic::catch_unwind(run);
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

/// What the command reads and writes through.
pub(crate) enum CommandIo {
    Pipes {
        stdin: pipe::Sender,
        output: pipe::Receiver,
    },
    /// `control` is a duplicate of the master for resize and VEOF, taken by the supervisor.
    Pty {
        pty: pty_process::Pty,
        control: Option<OwnedFd>,
    },
}

/// A started shim, before its `started` report was read.
pub(crate) struct RunningShim {
    pub(crate) shim: ShimGuard,
    pub(crate) reports: pipe::Receiver,
    pub(crate) io: CommandIo,
}

pub(crate) struct ShimSpec<'a> {
    pub(crate) reaper_exe: &'a Path,
    pub(crate) reaper_arg: &'a OsString,
    /// Whether to start the shim through the spawn helper.
    pub(crate) helper: bool,
    pub(crate) search_path: &'a str,
    pub(crate) argv: &'a [String],
    pub(crate) env: &'a [(String, String)],
    /// The working directory, entered by the shim through this descriptor.
    pub(crate) cwd: OwnedFd,
    pub(crate) tty: bool,
    pub(crate) sandbox: Option<codespace_sandbox::SandboxPolicy>,
    pub(crate) external: Option<codespace_sandbox::ExternalPolicy>,
    pub(crate) rows: u16,
    pub(crate) cols: u16,
}

/// Starts the shim with stdio wired and the report pipe passed: handed to the spare the
/// spawn helper forked ahead when there is one (from the calling task: no fork and no
/// helper round trip before the command's own), else, on the spawner thread, forked by the
/// spawn helper when it runs (one exec per command: its own), else started with
/// `posix_spawn`; then the helper forks the next spare, off this spawn's path. Every descriptor made here is close-on-exec; the parent's copies of
/// the child ends (output pipe write end, stdin read end, terminal slave, report pipe write
/// end) close as soon as the shim holds them: end of file there means the tree is gone.
pub(crate) async fn start_shim(
    spawner: &Spawner,
    mut spec: ShimSpec<'_>,
) -> io::Result<RunningShim> {
    let (report_r, report_w) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC)?;
    // Above 2, so the child's stdio cannot land on them.
    let report_w = above_stdio(report_w)?;
    let cwd = rustix::io::fcntl_dupfd_cloexec(&spec.cwd, REPORT_FD)?;
    let reports = pipe::Receiver::from_owned_fd(report_r)?;
    let shim = ShimArgs {
        ppid: std::process::id(),
        report_fd: report_w.as_raw_fd(),
        cwd_fd: cwd.as_raw_fd(),
        tty: spec.tty,
        sandbox: spec.sandbox.take(),
        external: spec.external.take(),
        search_path: spec.search_path.into(),
        argv: spec.argv.iter().map(OsString::from).collect(),
    };
    let env = spec.env.iter().map(|(k, v)| (k.into(), v.into())).collect();
    let request = spec.helper.then(|| HelperRequest { shim: shim.clone(), env });
    let spare = request.as_ref().and_then(|_| spawner.take_spare());
    let args = shim.to_args().map_err(io::Error::other)?;
    let handle = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
    let (tx, rx) = oneshot::channel::<io::Result<Started>>();
    let delivery = Delivery { handle, report_w, cwd, tx, request };
    let (launch, parts) = if spec.tty {
        pty_job(&spec, &args, delivery, spare)?
    } else {
        pipe_job(&spec, &args, delivery, spare)?
    };
    let started = match launch {
        Launch::Spare(pidfd) => Started::Pidfd(pidfd),
        Launch::Job(job) => {
            spawner.submit(job)?;
            rx.await.map_err(|_| io::Error::other("the spawner dropped the job"))??
        }
    };
    if spec.helper {
        spawner.refill();
    }
    let shim = ShimGuard {
        shim: match started {
            Started::Child(child) => Shim::Child(child),
            Started::Pidfd(fd) => Shim::Pidfd { fd: watch(fd)?, exited: false },
        },
    };
    let io = match parts {
        Parts::Pty { pty, control } => CommandIo::Pty { pty, control: Some(control) },
        Parts::Pipes { stdin, output } => CommandIo::Pipes { stdin, output },
    };
    Ok(RunningShim { shim, reports, io })
}

/// How a shim is being started: already, by a spare (its pidfd), or by a job for the
/// spawner thread.
enum Launch {
    Spare(OwnedFd),
    Job(Job),
}

/// The command's ends the supervisor keeps, until the shim has started.
enum Parts {
    Pipes { stdin: pipe::Sender, output: pipe::Receiver },
    Pty { pty: pty_process::Pty, control: OwnedFd },
}

/// How a shim was started: by `posix_spawn` (a child of ours) or by the helper (its pidfd).
enum Started {
    Child(Child),
    Pidfd(OwnedFd),
}

/// What a spawn job needs besides its command: the runtime its child is registered with,
/// the report pipe's write end and the working directory to pass, the helper request, and
/// where to deliver the shim.
struct Delivery {
    handle: tokio::runtime::Handle,
    report_w: OwnedFd,
    cwd: OwnedFd,
    tx: oneshot::Sender<io::Result<Started>>,
    /// The request to the spawn helper (or a spare); `None` starts the shim directly.
    request: Option<HelperRequest>,
}

impl Delivery {
    /// Lets both passed descriptors cross the shim's exec (see [`inheritable`]).
    fn pass(&self) -> io::Result<()> {
        inheritable(&self.report_w).and_then(|()| inheritable(&self.cwd))
    }

    /// Hands the request to `spare` with these stdio ends; `None` when there is no spare or
    /// it could not take it (it is then let go, and the shim is started another way).
    fn through_spare(&self, spare: Option<Spare>, stdio: [BorrowedFd<'_>; 3]) -> Option<OwnedFd> {
        let (spare, request) = (spare?, self.request.as_ref()?);
        let bytes = envelope::encode(request).ok()?;
        let fds = [stdio[0], stdio[1], stdio[2], self.report_w.as_fd(), self.cwd.as_fd()];
        spare.start(&bytes, &fds).ok()
    }

    /// Asks the helper (started now if needed) to fork the shim with these stdio ends.
    fn through_helper(
        &self,
        helper: &mut Option<Helper>,
        reaper: (&Path, &OsString),
        stdio: [BorrowedFd<'_>; 3],
    ) -> io::Result<OwnedFd> {
        let Some(request) = &self.request else {
            return Err(io::Error::other("the spawn helper is off"));
        };
        let request = envelope::encode(&HelperAsk::Spawn(Box::new(request.clone())))
            .map_err(io::Error::other)?;
        if helper.is_none() {
            *helper = Some(Helper::start(reaper.0, reaper.1)?);
        }
        let fds = [stdio[0], stdio[1], stdio[2], self.report_w.as_fd(), self.cwd.as_fd()];
        let result = helper
            .as_ref()
            .map_or_else(|| Err(io::Error::other("no helper")), |h| h.spawn(&request, &fds));
        if result.is_err() {
            // A helper that fails is replaced on the next spawn; this one falls back.
            *helper = None;
        }
        result
    }
}

/// `fd`, or a close-on-exec duplicate of it at 3 or above when it is one of 0-2.
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() <= 2 { Ok(rustix::io::fcntl_dupfd_cloexec(&fd, REPORT_FD)?) } else { Ok(fd) }
}

/// The job that starts a shim on a fresh terminal (the slave becomes its stdio and
/// controlling terminal).
fn pty_job(
    spec: &ShimSpec<'_>,
    args: &[OsString],
    d: Delivery,
    spare: Option<Spare>,
) -> io::Result<(Launch, Parts)> {
    let (pty, pts) = pty_process::open().map_err(io::Error::other)?;
    pty.resize(pty_process::Size::new(spec.rows, spec.cols)).map_err(io::Error::other)?;
    let control = rustix::io::fcntl_dupfd_cloexec(&pty, 0)?;
    if let Some(pidfd) = d.through_spare(spare, [pts.as_fd(); 3]) {
        return Ok((Launch::Spare(pidfd), Parts::Pty { pty, control }));
    }
    let reaper = (spec.reaper_exe.to_owned(), spec.reaper_arg.clone());
    let cmd = pty_process::Command::new(spec.reaper_exe)
        .arg(spec.reaper_arg)
        .args(args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .kill_on_drop(false);
    let job: Job = Box::new(move |helper| {
        let _runtime = d.handle.enter();
        let slave = pts.as_fd();
        let result = match d.through_helper(helper, (&reaper.0, &reaper.1), [slave; 3]) {
            Ok(pidfd) => Ok(Started::Pidfd(pidfd)),
            // `spawn` consumes the command and the slave: both are closed when it returns.
            Err(_) => {
                d.pass().and_then(|()| cmd.spawn(pts).map_err(io::Error::other)).map(Started::Child)
            }
        };
        drop(d.report_w);
        drop(d.cwd);
        deliver(d.tx, result);
    });
    Ok((Launch::Job(job), Parts::Pty { pty, control }))
}

/// The job that starts a shim on pipes: stdin, and one pipe for stdout and stderr.
#[expect(clippy::disallowed_methods, reason = "starts a shim")]
fn pipe_job(
    spec: &ShimSpec<'_>,
    args: &[OsString],
    d: Delivery,
    spare: Option<Spare>,
) -> io::Result<(Launch, Parts)> {
    let (out_r, out_w) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC)?;
    let (in_r, in_w) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC)?;
    let output = pipe::Receiver::from_owned_fd(out_r)?;
    let stdin = pipe::Sender::from_owned_fd(in_w)?;
    if let Some(pidfd) = d.through_spare(spare, [in_r.as_fd(), out_w.as_fd(), out_w.as_fd()]) {
        return Ok((Launch::Spare(pidfd), Parts::Pipes { stdin, output }));
    }
    let reaper = (spec.reaper_exe.to_owned(), spec.reaper_arg.clone());
    let mut cmd = tokio::process::Command::new(spec.reaper_exe);
    cmd.arg(spec.reaper_arg).args(args).env_clear().envs(spec.env.iter().map(|(k, v)| (k, v)));
    cmd.kill_on_drop(false);
    let job: Job = Box::new(move |helper| {
        let _runtime = d.handle.enter();
        let stdio = [in_r.as_fd(), out_w.as_fd(), out_w.as_fd()];
        let result = match d.through_helper(helper, (&reaper.0, &reaper.1), stdio) {
            Ok(pidfd) => Ok(Started::Pidfd(pidfd)),
            Err(_) => spawn_directly(&mut cmd, &d, in_r, out_w).map(Started::Child),
        };
        drop(cmd);
        drop(d.report_w);
        drop(d.cwd);
        deliver(d.tx, result);
    });
    Ok((Launch::Job(job), Parts::Pipes { stdin, output }))
}

/// Starts a pipe-mode shim with `posix_spawn`: no pre-exec hook, so std uses `posix_spawn`
/// (a vfork) instead of forking the whole multi-threaded server; the shim makes its own
/// session. The parent's copies of the child's ends are closed when this returns.
fn spawn_directly(
    cmd: &mut tokio::process::Command,
    d: &Delivery,
    stdin: OwnedFd,
    out_w: OwnedFd,
) -> io::Result<Child> {
    let err_w = out_w.try_clone()?;
    // One pipe for both streams, so their interleaving is the order of the writes.
    cmd.stdin(Stdio::from(stdin)).stdout(Stdio::from(out_w)).stderr(Stdio::from(err_w));
    d.pass()?;
    let child = cmd.spawn();
    // The command keeps the Stdio ends until it is dropped: replace them so they close now.
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    child
}

/// Hands the spawned shim to the awaiting task, or stops it if that task is gone.
fn deliver(tx: oneshot::Sender<io::Result<Started>>, result: io::Result<Started>) {
    if let Err(Ok(started)) = tx.send(result) {
        match started {
            Started::Child(child) => drop(ShimGuard { shim: Shim::Child(child) }),
            Started::Pidfd(fd) => {
                let _ = rustix::process::pidfd_send_signal(&fd, Signal::TERM);
            }
        }
    }
}

/// Lets a passed descriptor (the report pipe's write end, the working directory) cross the
/// shim's exec. Called on the spawner thread right before the spawn, and the descriptor is
/// closed right after it: the spawner is the only thread of the server that starts
/// processes, so no other child can inherit it.
fn inheritable(report_w: &OwnedFd) -> io::Result<()> {
    rustix::io::fcntl_setfd(report_w, rustix::io::FdFlags::empty()).map_err(io::Error::from)
}
