//! The spawn helper: started once per supervisor (`<reaper_arg> --helper --ppid=<pid>
//! --socket-fd=<fd>`), it forks a reaper shim for every request the supervisor sends over
//! its socket, so a command costs one exec (its own) instead of two.
//!
//! A request is one message: `p` (pipes) or `t` (terminal), then NUL-terminated strings,
//! the count of the shim's arguments first, the arguments (as [`ShimArgs::encode`] makes
//! them) and the command's environment (`NAME=value`), with five descriptors: the
//! command's stdin, stdout and stderr (the terminal three times), the report pipe's write
//! end and the working directory. The helper forks; the child takes the descriptors and
//! the environment, makes itself the terminal's session leader in `t` mode, and runs the
//! shim exactly as an exec'd shim would, its parent (the helper) in place of the
//! supervisor. The helper answers `<pid>` with a pidfd of the shim, or `e<errno>`.
//!
//! The helper dies with the supervisor's spawner thread (`PR_SET_PDEATHSIG(SIGKILL)`) and
//! exits at end of file on its socket; either way every shim's own parent-death signal
//! then makes it kill its tree.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd as _, FromRawFd as _, IntoRawFd as _, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt as _;

use codespace_sandbox::sys::{self, Forked};
use rustix::process::{PidfdFlags, Signal, WaitOptions};

use super::run;
use crate::shim_messages::{EXIT_BAD_ARGS, EXIT_ORPHANED, ShimArgs};
use codespace_sandbox::fdpass;

/// The largest request (the shim's arguments and the command's environment).
const MAX_MESSAGE: usize = 1 << 20;

/// The helper's arguments, after `--helper`.
struct HelperArgs {
    ppid: u32,
    socket: RawFd,
}

fn parse(args: &[OsString]) -> Option<HelperArgs> {
    let value =
        |name: &str| args.iter().find_map(|a| a.to_str()?.strip_prefix(name)?.parse::<i64>().ok());
    let ppid = u32::try_from(value("--ppid=")?).ok().filter(|p| *p > 0)?;
    let socket = RawFd::try_from(value("--socket-fd=")?).ok().filter(|fd| *fd > 2)?;
    Some(HelperArgs { ppid, socket })
}

/// The helper role, from start to end; `args` follow `--helper`.
#[expect(unsafe_code, reason = "adopts the socket passed by number")]
pub(super) fn helper_main(args: &[OsString]) -> i32 {
    let Some(args) = parse(args) else { return EXIT_BAD_ARGS };
    if rustix::process::set_parent_process_death_signal(Some(Signal::KILL)).is_err()
        || rustix::process::getppid().map(|p| p.as_raw_nonzero().get() as u32) != Some(args.ppid)
    {
        return EXIT_ORPHANED;
    }
    // SAFETY: the number was passed by the supervisor, which inherited nothing else to us
    // there; nothing else in this process owns it.
    let socket = unsafe { OwnedFd::from_raw_fd(args.socket) };
    let _ = rustix::io::fcntl_setfd(&socket, rustix::io::FdFlags::CLOEXEC);
    let mut buf = vec![0u8; MAX_MESSAGE];
    loop {
        let (len, fds) = match fdpass::recv(socket.as_fd(), &mut buf) {
            Ok(Some(got)) => got,
            Ok(None) => return 0,
            Err(_) => {
                let _ = fdpass::send(socket.as_fd(), b"e22", &[]);
                continue;
            }
        };
        let reply = serve(&socket, &buf[..len], fds);
        match reply {
            Ok((pid, pidfd)) => {
                let text = pid.to_string();
                let _ = fdpass::send(socket.as_fd(), text.as_bytes(), &[pidfd.as_fd()]);
            }
            Err(errno) => {
                let _ = fdpass::send(socket.as_fd(), format!("e{errno}").as_bytes(), &[]);
            }
        }
        reap_exited();
    }
}

/// One request: forks the shim; returns its pid and a pidfd of it, or an errno.
#[expect(unsafe_code, reason = "forks the shim")]
fn serve(socket: &OwnedFd, msg: &[u8], fds: Vec<OwnedFd>) -> Result<(u32, OwnedFd), i32> {
    let request = Request::decode(msg).ok_or(libc::EINVAL)?;
    let [stdin, stdout, stderr, report, cwd]: [OwnedFd; 5] =
        fds.try_into().map_err(|_| libc::EINVAL)?;
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
fn shim(
    socket: &OwnedFd,
    request: Request,
    helper: u32,
    stdio: [OwnedFd; 3],
    report: OwnedFd,
    cwd: OwnedFd,
) -> i32 {
    // The child keeps nothing of the helper's: its socket is closed with every other
    // descriptor above 2 by the shim (close-on-exec would only act at exec).
    let _ = socket;
    let Ok(mut args) = ShimArgs::decode(request.args) else { return EXIT_BAD_ARGS };
    if request.tty {
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
    for (name, value) in request.env {
        // SAFETY: as above.
        unsafe { std::env::set_var(name, value) };
    }
    args.ppid = helper;
    // The shim takes both over by number (it moves the report pipe to fd 3 and closes the
    // rest above 2).
    args.report_fd = report.into_raw_fd();
    args.cwd_fd = cwd.into_raw_fd();
    run(&args)
}

/// Reaps every shim that has exited (their pidfds stay valid for the supervisor).
fn reap_exited() {
    while let Ok(Some(_)) = rustix::process::wait(WaitOptions::NOHANG) {}
}

/// A request to the helper.
pub(crate) struct Request {
    tty: bool,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
}

impl Request {
    /// Encodes a request (the supervisor's side).
    pub(crate) fn encode(tty: bool, args: &[OsString], env: &[(String, String)]) -> Vec<u8> {
        let mut out = vec![if tty { b't' } else { b'p' }];
        let mut field = |bytes: &[u8]| {
            out.extend_from_slice(bytes);
            out.push(0);
        };
        field(args.len().to_string().as_bytes());
        for a in args {
            field(a.as_bytes());
        }
        for (k, v) in env {
            field(format!("{k}={v}").as_bytes());
        }
        out
    }

    fn decode(msg: &[u8]) -> Option<Request> {
        let (&mode, rest) = msg.split_first()?;
        let tty = match mode {
            b't' => true,
            b'p' => false,
            _ => return None,
        };
        let mut fields = rest.strip_suffix(&[0])?.split(|b| *b == 0);
        let count: usize = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
        let args: Vec<OsString> =
            fields.by_ref().take(count).map(|f| OsStr::from_bytes(f).to_owned()).collect();
        if args.len() != count {
            return None;
        }
        let env = fields
            .map(|f| {
                let at = f.iter().position(|b| *b == b'=')?;
                Some((
                    OsStr::from_bytes(&f[..at]).to_owned(),
                    OsStr::from_bytes(&f[at + 1..]).to_owned(),
                ))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Request { tty, args, env })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip() {
        let args: Vec<OsString> = ["--a=1", "", "x y"].iter().map(OsString::from).collect();
        let env = vec![("PATH".to_owned(), "/bin".to_owned()), ("E".to_owned(), "a=b".to_owned())];
        let msg = Request::encode(true, &args, &env);
        let got = Request::decode(&msg).unwrap();
        assert!(got.tty);
        assert_eq!(got.args, args);
        assert_eq!(got.env, vec![("PATH".into(), "/bin".into()), ("E".into(), "a=b".into())]);
        assert!(Request::decode(b"x1\0a\0").is_none());
        assert!(Request::decode(b"p2\0a\0").is_none());
    }
}
