//! The per-command reaper shim: the `codespace` binary re-executed as
//! `codespace __codespace-reaper …` (see [`crate::protocol`] for its arguments, descriptors
//! and reports).
//!
//! The shim is single-threaded and event-driven by `sigwaitinfo`: every signal it cares
//! about is blocked and collected synchronously, so there is no handler and no race
//! between a kill request and a child's exit.
//!
//! 1. In pipe mode becomes a session leader (no controlling terminal). Arms
//!    `PR_SET_PDEATHSIG(SIGTERM)` and checks that its parent is still the supervisor.
//!    The death signal follows the supervisor's *spawner thread*, which lives as long as the
//!    supervisor, so a SIGKILLed server turns into a SIGTERM here.
//! 2. Moves its report pipe to fd 3 (close-on-exec) and closes everything above it.
//! 3. Becomes a child subreaper, so every orphan of the command's tree (a `setsid` daemon,
//!    a double fork) is reparented to the shim instead of to init.
//! 4. Starts the command (no shell) in its own process group with the signal mask cleared,
//!    `PR_SET_PDEATHSIG(SIGKILL)` armed, and, on a terminal, as the foreground group.
//!    With a sandbox policy, that child calls [`codespace_sandbox::launch`] instead of
//!    exec'ing (namespaces, a private root, Landlock, seccomp, no capabilities; the child
//!    then ends exactly as the command does); if any step fails, nothing is exec'd and the
//!    shim reports `failed` with the step and reason (sent back on a private close-on-exec
//!    pipe), so nothing runs unsandboxed.
//!    Then it points its own fds 0-2 at `/dev/null`, holding no end of the command's stdio.
//! 5. Waits. A kill request (SIGTERM from the supervisor or the parent-death signal, SIGHUP
//!    when the terminal's master closes, SIGINT, SIGQUIT) sends SIGKILL to every descendant.
//! 6. Once the command's main process is reaped it reports the status, then kills and
//!    reaps descendants until none is left (bounded at 10 s), and exits.

// The shim is where this crate talks to the kernel directly: signal masks, sigwaitinfo,
// close_range and the pre-exec hook of the command.
#![allow(unsafe_code)]

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write as _};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::os::unix::process::CommandExt as _;
use std::ptr;
use std::time::{Duration, Instant};

use rustix::io::FdFlags;
use rustix::pipe::PipeFlags;
use rustix::process::{Pid, Signal, WaitOptions, WaitStatus};

use crate::protocol::{EXIT_BAD_ARGS, EXIT_ORPHANED, EXIT_SPAWN_FAILED, ShimArgs, ShimReport};
use crate::tree;

/// The descriptor the supervisor places the report pipe on.
pub(crate) const REPORT_FD: i32 = 3;
/// Signals that ask the shim to kill the command's tree.
const KILL_REQUESTS: [i32; 4] = [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT];
/// Upper bound on the final clean-up (a process stuck in uninterruptible sleep).
const CLEANUP_BOUND: Duration = Duration::from_secs(10);
/// Pause between clean-up passes when no SIGCHLD arrives.
const CLEANUP_PASS: Duration = Duration::from_millis(20);
/// Attempts and pause when `execve` says the program is busy being written (ETXTBSY).
const TXTBSY_RETRIES: u32 = 20;
const TXTBSY_PAUSE: Duration = Duration::from_millis(5);

/// Entry point of the reaper role. `args` are the process arguments *after* the role
/// argument (`__codespace-reaper`). Call it first thing in `main`, before any thread, file
/// or runtime exists: the shim assumes it is single-threaded and owns every descriptor
/// above 2.
pub fn reaper_main(args: Vec<OsString>) -> ! {
    let code = match ShimArgs::decode(args) {
        Ok(args) => run(&args),
        Err(msg) => {
            let _ = writeln!(io::stderr(), "codespace reaper: {msg}");
            EXIT_BAD_ARGS
        }
    };
    std::process::exit(code)
}

fn run(args: &ShimArgs) -> i32 {
    // Pipe mode: the shim's own session, so the command never shares the server's
    // controlling terminal (in tty mode the PTY spawn made the terminal ours already).
    if !args.tty {
        let _ = rustix::process::setsid();
    }
    if rustix::process::set_parent_process_death_signal(Some(Signal::TERM)).is_err() {
        return EXIT_ORPHANED;
    }
    if rustix::process::getppid().map(|p| p.as_raw_nonzero().get() as u32) != Some(args.ppid) {
        return EXIT_ORPHANED;
    }
    let set = signal_set();
    block(&set);
    ignore_sigpipe();
    let mut report = take_report_fd(args.report_fd);
    close_fds_from(REPORT_FD + 1);

    if let Err(e) = rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
        let e = io::Error::from(e);
        send(&mut report, &failed("PR_SET_CHILD_SUBREAPER", &e));
        return EXIT_SPAWN_FAILED;
    }

    let main = match &args.sandbox {
        Some(policy) => spawn_sandboxed(args, policy),
        None => spawn_plain(args),
    };
    let main = match main {
        Ok(pid) => pid,
        Err(line) => {
            send(&mut report, &line);
            return EXIT_SPAWN_FAILED;
        }
    };
    send(&mut report, &ShimReport::Started { pid: main });
    detach_stdio();

    let mut requested = false;
    let status = loop {
        match wait_signal(&set, None) {
            Some(libc::SIGCHLD) => {
                if let Some(status) = reap(Some(main)) {
                    break status;
                }
            }
            Some(_) => {
                // A kill request. If the command already finished on its own, its status is
                // the truth; otherwise kill the tree and wait for the main process's SIGCHLD.
                if let Some(status) = reap(Some(main)) {
                    break status;
                }
                requested = true;
                kill_descendants();
            }
            None => {}
        }
    };

    let (line, code) = if let Some(signal) = status.terminating_signal() {
        (ShimReport::Signaled { signal, requested }, 128 + signal)
    } else {
        let code = status.exit_status().unwrap_or(1);
        (ShimReport::Exited { code, requested }, code)
    };
    send(&mut report, &line);
    clean_up(&set);
    code
}

/// Starts the command directly (no sandbox) in its own process group.
fn spawn_plain(args: &ShimArgs) -> Result<u32, ShimReport> {
    let mut cmd = std::process::Command::new(&args.exe);
    cmd.arg0(&args.argv[0]).args(&args.argv[1..]);
    let tty = args.tty;
    // SAFETY: the hook runs in the forked child before exec and makes only
    // async-signal-safe calls (setpgid, prctl, signal, tcsetpgrp, getpid, sigprocmask)
    // that affect that child alone.
    unsafe { cmd.pre_exec(move || command_pre_exec(tty)) };
    let mut busy_retries = 0;
    loop {
        match cmd.spawn() {
            // Dropping the std handle neither kills nor waits: the shim reaps by pid.
            Ok(child) => return Ok(child.id()),
            // ETXTBSY: the file was just written and some process forked meanwhile still
            // holds the write descriptor until its own exec (a race every forking server
            // has). It clears within microseconds, so retry briefly before giving up.
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && busy_retries < TXTBSY_RETRIES => {
                busy_retries += 1;
                std::thread::sleep(TXTBSY_PAUSE);
            }
            Err(e) => return Err(failed(&args.exe.to_string_lossy(), &e)),
        }
    }
}

/// Starts the command through [`codespace_sandbox::launch`] in a fork of the shim. The
/// launcher's close-on-exec report pipe reaches end of file with nothing written once the
/// command itself has exec'd; otherwise it carries `<errno> <why>`, and the command never
/// ran. The pid returned is the launcher's monitor, which ends exactly as the command did.
fn spawn_sandboxed(
    args: &ShimArgs,
    policy: &codespace_sandbox::SandboxPolicy,
) -> Result<u32, ShimReport> {
    let (read, write) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC)
        .map_err(|e| failed("sandbox report pipe", &io::Error::from(e)))?;
    // SAFETY: fork in the single-threaded shim (see `reaper_main`), so the child may
    // allocate; it never returns from this block.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(failed("fork", &io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: in the child: closes the shim's report pipe and the read end, which the
        // launcher does not use, and exits without unwinding if the pre-exec setup fails.
        unsafe {
            libc::close(REPORT_FD);
            libc::close(read.as_raw_fd());
            if let Err(e) = command_pre_exec(args.tty) {
                let text = format!("{} pre-exec: {e}", e.raw_os_error().unwrap_or(0));
                libc::write(write.as_raw_fd(), text.as_ptr().cast(), text.len());
                libc::_exit(EXIT_SPAWN_FAILED);
            }
        }
        codespace_sandbox::launch(policy, args.exe.as_os_str(), &args.argv, write.as_raw_fd())
    }
    drop(write);
    let mut text = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match rustix::io::read(&read, &mut buf) {
            Ok(0) => break,
            Ok(n) => text.extend_from_slice(&buf[..n]),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => {
                text = format!("{} reading the sandbox report: {e}", e.raw_os_error()).into_bytes();
                break;
            }
        }
    }
    if text.is_empty() {
        return Ok(pid as u32);
    }
    let mut status = 0;
    // SAFETY: reaps the launcher forked above, which exits right after a failed report.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let text = String::from_utf8_lossy(&text);
    let (errno, why) = text.split_once(' ').unwrap_or(("0", &text));
    Err(ShimReport::Failed {
        errno: errno.parse().unwrap_or(0),
        message: format!("{}: {why}", args.exe.to_string_lossy()),
    })
}

fn failed(what: &str, e: &io::Error) -> ShimReport {
    ShimReport::Failed { errno: e.raw_os_error().unwrap_or(0), message: format!("{what}: {e}") }
}

fn send(report: &mut Option<File>, line: &ShimReport) {
    if let Some(f) = report.as_mut() {
        // A vanished supervisor (EPIPE) must not stop the clean-up, so errors are dropped.
        let _ = f.write_all(line.encode().as_bytes());
    }
}

/// Points the shim's own fds 0-2 at `/dev/null` once the command has them, so the shim
/// holds no end of the command's stdin (a command that closes its stdin makes the
/// supervisor's writes fail with EPIPE) nor of its output or terminal.
fn detach_stdio() {
    let Ok(null) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null") else {
        return;
    };
    for fd in 0..3 {
        // SAFETY: dup2 atomically replaces fds 0-2; the std stdio handles that name them stay
        // valid (they now reach /dev/null, and the shim writes nothing to them anyway).
        unsafe { libc::dup2(null.as_raw_fd(), fd) };
    }
}

/// Runs in the command's child between fork and exec.
fn command_pre_exec(tty: bool) -> io::Result<()> {
    // SAFETY: each call is async-signal-safe, takes no pointer except to the local empty
    // set, and changes only this (child) process.
    unsafe {
        if libc::setpgid(0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        // Best effort: if the shim is ever killed outright, the command dies with it.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
        if tty {
            // Become the terminal's foreground group, or the command would be stopped by
            // SIGTTIN on its first read. tcsetpgrp from a background group raises SIGTTOU,
            // hence the temporary SIG_IGN (restored so the command inherits the default).
            libc::signal(libc::SIGTTOU, libc::SIG_IGN);
            let rc = libc::tcsetpgrp(0, libc::getpid());
            let err = io::Error::last_os_error();
            libc::signal(libc::SIGTTOU, libc::SIG_DFL);
            if rc != 0 {
                return Err(err);
            }
        }
        let mut empty = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(empty.as_mut_ptr());
        libc::sigprocmask(libc::SIG_SETMASK, empty.as_ptr(), ptr::null_mut());
    }
    Ok(())
}

fn signal_set() -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set in place; sigaddset only sets bits in it.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        libc::sigaddset(set.as_mut_ptr(), libc::SIGCHLD);
        for sig in KILL_REQUESTS {
            libc::sigaddset(set.as_mut_ptr(), sig);
        }
        set.assume_init()
    }
}

fn block(set: &libc::sigset_t) {
    // SAFETY: `set` is an initialised sigset; the previous mask is not requested.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, set, ptr::null_mut()) };
}

fn ignore_sigpipe() {
    // SAFETY: sets the disposition of SIGPIPE to SIG_IGN; no handler code is installed.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}

/// Waits for one signal of `set` (all blocked), up to `timeout` if given.
fn wait_signal(set: &libc::sigset_t, timeout: Option<Duration>) -> Option<i32> {
    loop {
        let rc = match timeout {
            // SAFETY: `set` is initialised and blocked; a null siginfo pointer is allowed.
            None => unsafe { libc::sigwaitinfo(set, ptr::null_mut()) },
            Some(t) => {
                let ts = libc::timespec {
                    tv_sec: t.as_secs() as libc::time_t,
                    tv_nsec: t.subsec_nanos() as libc::c_long,
                };
                // SAFETY: as above; `ts` outlives the call.
                unsafe { libc::sigtimedwait(set, ptr::null_mut(), &ts) }
            }
        };
        if rc > 0 {
            return Some(rc);
        }
        if timeout.is_none() && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        return None;
    }
}

/// Moves the report pipe from `inherited` to fd 3 and takes ownership of it, if the
/// supervisor passed one there.
fn take_report_fd(inherited: i32) -> Option<File> {
    // SAFETY: F_GETFD only asks whether the descriptor is open.
    if unsafe { libc::fcntl(inherited, libc::F_GETFD) } < 0 {
        return None;
    }
    if inherited != REPORT_FD {
        // SAFETY: dup2 onto fd 3 (whatever leaked there from the server is replaced, as
        // every fd above 2 is closed next anyway), then the original is closed; nothing in
        // this single-threaded process owns either descriptor yet.
        unsafe {
            if libc::dup2(inherited, REPORT_FD) < 0 {
                return None;
            }
            libc::close(inherited);
        }
    }
    // SAFETY: fd 3 is open (checked above), holds the report pipe the supervisor passed,
    // and nothing else in this single-threaded process owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(REPORT_FD) };
    let _ = rustix::io::fcntl_setfd(&fd, FdFlags::CLOEXEC);
    Some(File::from(fd))
}

/// Closes every descriptor from `first` up, whatever leaked into the shim from the server.
fn close_fds_from(first: i32) {
    // SAFETY: close_range only closes descriptors. At this point the shim owns nothing at
    // or above `first` (it runs first in `main`, single-threaded), so no Rust object is left
    // holding a closed descriptor.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, first as u32, u32::MAX, 0u32) };
    if rc == 0 {
        return;
    }
    // Kernels before 5.9: list the open descriptors, then close them.
    let open: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
                .filter(|fd| *fd >= first)
                .collect()
        })
        .unwrap_or_default();
    for fd in open {
        // SAFETY: as above; the listing's own descriptor is already closed (EBADF, ignored).
        unsafe { libc::close(fd) };
    }
}

/// Reaps every exited child without blocking; returns `main`'s status if it was among them.
fn reap(main: Option<u32>) -> Option<WaitStatus> {
    let mut found = None;
    loop {
        // `wait` is waitpid(-1): any child. (rustix's `waitpid(None, …)` is pid 0, i.e.
        // only children in the shim's own process group, which the command is not.)
        match rustix::process::wait(WaitOptions::NOHANG) {
            Ok(Some((pid, status))) => {
                if Some(pid.as_raw_nonzero().get() as u32) == main {
                    found = Some(status);
                }
            }
            Err(rustix::io::Errno::INTR) => {}
            Ok(None) | Err(_) => return found,
        }
    }
}

/// One pass: SIGKILL to every descendant found now. Returns how many were found.
///
/// Direct children cannot be recycled before the shim reaps them, and orphans are
/// reparented to the shim, so nearly every pid signalled is one the shim holds. A deeper
/// descendant reaped by its own parent between the listing and the kill is the one window
/// left; its pid would have to be reused within microseconds.
fn kill_descendants() -> usize {
    let pids = tree::descendants(std::process::id());
    for pid in &pids {
        if let Some(pid) = i32::try_from(*pid).ok().and_then(Pid::from_raw) {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
    }
    pids.len()
}

/// Kills and reaps until no descendant is left (bounded by [`CLEANUP_BOUND`]).
fn clean_up(set: &libc::sigset_t) {
    let deadline = Instant::now() + CLEANUP_BOUND;
    loop {
        reap(None);
        if kill_descendants() == 0 || Instant::now() >= deadline {
            return;
        }
        let _ = wait_signal(set, Some(CLEANUP_PASS));
    }
}
