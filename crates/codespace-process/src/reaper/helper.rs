//! The spawn helper: started once per supervisor (`<reaper_arg> --helper <HelperArgs>`, the
//! message in hex), it forks a reaper shim for every request the supervisor sends over its
//! socket, so a command costs one exec (its own) instead of two.
//!
//! A request is one message on the socket, a [`HelperRequest`] (the shim's arguments and
//! the command's environment) with five descriptors: the command's stdin, stdout and
//! stderr (the terminal three times), the report pipe's write end and the working
//! directory. The helper forks; the child takes the descriptors and the environment, makes
//! itself the terminal's session leader in tty mode, and runs the shim exactly as an
//! exec'd shim would, its parent (the helper) in place of the supervisor. The helper
//! answers with a [`HelperReply`]: `Forked` with a pidfd of the shim, or `Failed`.
//!
//! Asked for a spare instead ([`HelperAsk::Spare`]), the helper forks a child that arms
//! its parent-death signal and waits on a socket pair of its own; the answer carries the
//! child's pidfd and the supervisor's end of that pair. The supervisor later sends the
//! spare one [`HelperRequest`] with the same five descriptors, and it runs the shim from
//! there exactly as a child forked for that request would; at end of file (the supervisor
//! let it go) it exits. A spawn that finds a spare costs neither a fork nor a helper
//! round trip before its command's own.
//!
//! The helper dies with the supervisor's spawner thread (`PR_SET_PDEATHSIG(SIGKILL)`) and
//! exits at end of file on its socket; either way every shim's own parent-death signal
//! then makes it kill its tree.

use std::ffi::OsString;
use std::os::fd::{AsFd as _, BorrowedFd, FromRawFd as _, IntoRawFd as _, OwnedFd};

use codespace_sandbox::envelope::{self, EnvelopeError};
use codespace_sandbox::fdpass;
use codespace_sandbox::sys::{self, Forked};
use rustix::process::{PidfdFlags, Signal, WaitOptions};

use super::run;
use crate::shim_messages::{
    EXIT_BAD_ARGS, EXIT_ORPHANED, HelperArgs, HelperAsk, HelperReply, HelperRequest,
};

/// The largest request (the shim's arguments and the command's environment).
const MAX_MESSAGE: usize = 1 << 20;

/// The helper role, from start to end; `args` follow `--helper`.
#[expect(unsafe_code, reason = "adopts the socket passed by number")]
pub(super) fn helper_main(args: &[OsString]) -> i32 {
    let args = match envelope::from_args::<HelperArgs>(args) {
        Ok(args) if args.ppid > 0 && args.socket_fd > 2 => args,
        _ => return EXIT_BAD_ARGS,
    };
    if rustix::process::set_parent_process_death_signal(Some(Signal::KILL)).is_err()
        || rustix::process::getppid().map(|p| p.as_raw_nonzero().get() as u32) != Some(args.ppid)
    {
        return EXIT_ORPHANED;
    }
    // SAFETY: the number was passed by the supervisor, which inherited nothing else to us
    // there; nothing else in this process owns it.
    let socket = unsafe { OwnedFd::from_raw_fd(args.socket_fd) };
    let _ = rustix::io::fcntl_setfd(&socket, rustix::io::FdFlags::CLOEXEC);
    let mut buf = vec![0u8; MAX_MESSAGE];
    loop {
        let reply = match fdpass::recv(socket.as_fd(), &mut buf) {
            Ok(Some((len, fds))) => serve(&socket, &buf[..len], fds),
            Ok(None) => return 0,
            Err(_) => Err(libc::EINVAL),
        };
        match reply {
            Ok((pid, fds)) => {
                let fds: Vec<BorrowedFd<'_>> = fds.iter().map(|fd| fd.as_fd()).collect();
                answer(socket.as_fd(), HelperReply::Forked { pid }, &fds);
            }
            Err(errno) => answer(socket.as_fd(), HelperReply::Failed { errno }, &[]),
        }
        reap_exited();
    }
}

/// Sends `reply` (with the shim's pidfd, and a spare's socket); unchecked: a supervisor
/// that stopped listening times out and drops the helper.
fn answer(socket: BorrowedFd<'_>, reply: HelperReply, fds: &[BorrowedFd<'_>]) {
    if let Ok(bytes) = envelope::encode(&reply) {
        let _ = fdpass::send(socket, &bytes, fds);
    }
}

/// One message: a request (the shim forked for it) or a spare; returns the child's pid and
/// what goes back with the answer (its pidfd, and a spare's socket), or an errno (`EPROTO`
/// for a message of another version).
fn serve(socket: &OwnedFd, msg: &[u8], fds: Vec<OwnedFd>) -> Result<(u32, Vec<OwnedFd>), i32> {
    let ask: HelperAsk = envelope::decode(msg).map_err(|e| match e {
        EnvelopeError::Version { .. } => libc::EPROTO,
        EnvelopeError::Malformed(_) => libc::EINVAL,
    })?;
    match ask {
        HelperAsk::Spawn(request) => {
            let parts: [OwnedFd; 5] = fds.try_into().map_err(|_| libc::EINVAL)?;
            fork_shim(socket, *request, parts).map(|(pid, pidfd)| (pid, vec![pidfd]))
        }
        HelperAsk::Spare => spare(socket),
    }
}

/// Forks a spare: a child that waits on its own socket for the request it then runs as
/// its shim. Returns its pid, its pidfd and the supervisor's end of its socket.
#[expect(unsafe_code, reason = "forks the spare")]
#[expect(
    clippy::disallowed_methods,
    reason = "a forked shim, a process of its own, exits with its command's status"
)]
fn spare(socket: &OwnedFd) -> Result<(u32, Vec<OwnedFd>), i32> {
    let errno = |e: std::io::Error| e.raw_os_error().unwrap_or(libc::EIO);
    let (supervisor_end, spare_end) = fdpass::socketpair().map_err(errno)?;
    let helper = rustix::process::getpid().as_raw_nonzero().get() as u32;
    // SAFETY: the helper is single-threaded, so the child may run any code; it never
    // returns to the helper's loop (it runs the shim or exits).
    let forked = unsafe { sys::fork() };
    match forked.map_err(errno)? {
        Forked::Child => {
            drop(supervisor_end);
            std::process::exit(wait_as_spare(socket, &spare_end, helper))
        }
        Forked::Parent(pid) => {
            drop(spare_end);
            let pidfd = rustix::process::pidfd_open(pid, PidfdFlags::empty())
                .map_err(|e| e.raw_os_error())?;
            Ok((pid.as_raw_nonzero().get() as u32, vec![pidfd, supervisor_end]))
        }
    }
}

/// In a spare: dies with the helper, waits for its one request, then runs it as its shim
/// (0 at end of file: the supervisor let it go unused).
fn wait_as_spare(socket: &OwnedFd, own: &OwnedFd, helper: u32) -> i32 {
    if rustix::process::set_parent_process_death_signal(Some(Signal::KILL)).is_err()
        || rustix::process::getppid().map(|p| p.as_raw_nonzero().get() as u32) != Some(helper)
    {
        return EXIT_ORPHANED;
    }
    let mut buf = vec![0u8; MAX_MESSAGE];
    let (len, fds) = loop {
        match fdpass::recv(own.as_fd(), &mut buf) {
            Ok(Some(got)) => break got,
            Ok(None) => return 0,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return EXIT_BAD_ARGS,
        }
    };
    let Ok(request) = envelope::decode::<HelperRequest>(&buf[..len]) else {
        return EXIT_BAD_ARGS;
    };
    let Ok([stdin, stdout, stderr, report, cwd]) = <[OwnedFd; 5]>::try_from(fds) else {
        return EXIT_BAD_ARGS;
    };
    drop(buf);
    shim(socket, request, helper, [stdin, stdout, stderr], report, cwd)
}

/// One request: forks the shim; returns its pid and a pidfd of it, or an errno.
#[expect(unsafe_code, reason = "forks the shim")]
#[expect(
    clippy::disallowed_methods,
    reason = "a forked shim, a process of its own, exits with its command's status"
)]
fn fork_shim(
    socket: &OwnedFd,
    request: HelperRequest,
    [stdin, stdout, stderr, report, cwd]: [OwnedFd; 5],
) -> Result<(u32, OwnedFd), i32> {
    // The shim checks its parent against this pid once its parent-death signal is armed, so
    // a helper that died meanwhile (with the supervisor) cannot leave a command running.
    let helper = rustix::process::getpid().as_raw_nonzero().get() as u32;
    // SAFETY: the helper is single-threaded, so the child may run any code; it never
    // returns to the helper's loop (it runs the shim and exits).
    let forked = unsafe { sys::fork() };
    match forked.map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))? {
        Forked::Child => {
            let code = shim(socket, request, helper, [stdin, stdout, stderr], report, cwd);
            std::process::exit(code)
        }
        Forked::Parent(pid) => {
            let pidfd = rustix::process::pidfd_open(pid, PidfdFlags::empty())
                .map_err(|e| e.raw_os_error())?;
            Ok((pid.as_raw_nonzero().get() as u32, pidfd))
        }
    }
}

/// In the forked child: becomes the shim of the request and runs it.
#[expect(unsafe_code, reason = "replaces the environment of a single-threaded fork")]
#[expect(
    clippy::disallowed_methods,
    reason = "a forked shim takes the command's environment, as an exec'd one inherits it"
)]
fn shim(
    socket: &OwnedFd,
    request: HelperRequest,
    helper: u32,
    stdio: [OwnedFd; 3],
    report: OwnedFd,
    cwd: OwnedFd,
) -> i32 {
    // The child keeps nothing of the helper's: its socket is closed with every other
    // descriptor above 2 by the shim (close-on-exec would only act at exec).
    let _ = socket;
    let HelperRequest { shim: mut args, env } = request;
    if args.tty {
        let _ = rustix::process::setsid();
        if rustix::process::ioctl_tiocsctty(&stdio[0]).is_err() {
            return EXIT_BAD_ARGS;
        }
    }
    let [stdin, stdout, stderr] = stdio;
    if rustix::stdio::dup2_stdin(&stdin).is_err()
        || rustix::stdio::dup2_stdout(&stdout).is_err()
        || rustix::stdio::dup2_stderr(&stderr).is_err()
    {
        return EXIT_BAD_ARGS;
    }
    drop((stdin, stdout, stderr));
    for (name, _) in std::env::vars_os() {
        // SAFETY: this forked child is single-threaded: nothing reads the environment
        // concurrently.
        unsafe { std::env::remove_var(name) };
    }
    for (name, value) in env {
        // SAFETY: as above.
        unsafe { std::env::set_var(name, value) };
    }
    args.ppid = helper;
    // The shim takes both over by number (it moves the report pipe to fd 3 and closes the
    // rest above 2).
    args.report_fd = report.into_raw_fd();
    args.cwd_fd = cwd.into_raw_fd();
    if args.check().is_err() {
        return EXIT_BAD_ARGS;
    }
    run(&args)
}

/// Reaps every shim that has exited (their pidfds stay valid for the supervisor).
fn reap_exited() {
    while let Ok(Some(_)) = rustix::process::wait(WaitOptions::NOHANG) {}
}
