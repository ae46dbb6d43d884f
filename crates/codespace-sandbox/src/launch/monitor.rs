//! The monitor: the process [`super::launch`] runs in. It clones the init into new
//! namespaces, writes the init's id maps from the host's side, makes the network namespace
//! under `restricted`, and ends exactly as the command did.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd as _, BorrowedFd, OwnedFd};
use std::path::Path;

use codespace_types::NetworkPolicy;
use rustix::fs::{Mode, OFlags};
use rustix::pipe::PipeFlags;
use rustix::process::{Pid, Signal};
use rustix::thread::{LinkNameSpaceType, UnshareFlags};

use super::init::{CommandSpec, InitEnds};
use super::status::{self, Ended};
use super::{fail, init, write_file};
use crate::enter::SandboxError;
use crate::fdpass;
use crate::policy::SandboxPolicy;
use crate::sys::{self, Disposition, Forked};

/// The namespaces the init is cloned into (a network namespace comes later, if at all).
const NAMESPACES: libc::c_int =
    libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;

/// What a terminal or a user sends the monitor's process group (hangup, ^C, ^\, job
/// control): ignored, so only the command decides how to react; SIGKILL still ends it.
const TERMINAL_SIGNALS: [libc::c_int; 10] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
    libc::SIGPIPE,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

/// The monitor, from start to end; `report` as [`super::launch`] takes it.
#[expect(unsafe_code, reason = "clones the init into its namespaces")]
pub(super) fn run(
    policy: &SandboxPolicy,
    search_path: &OsStr,
    argv: &[OsString],
    report: OwnedFd,
) -> ! {
    let spec = or_fail(CommandSpec::new(policy, search_path, argv), report.as_fd());
    let uid = rustix::process::geteuid().as_raw();
    let gid = rustix::process::getegid().as_raw();
    let channels = or_fail(Channels::new(policy.network), report.as_fd());
    // SAFETY: this process is single-threaded (a fork of the shim), so the child may
    // allocate; it never returns from `init::run`, and the init never raises a signal or
    // takes an owner-checked lock (see `clone_into_namespaces`); the command it forks with
    // glibc's `fork` is exact again.
    let init = match unsafe { sys::clone_into_namespaces(NAMESPACES) } {
        Err(e) => fail(report.as_fd(), &SandboxError::io("clone namespaces", &e)),
        Ok(Forked::Child) => init::run(policy, &spec, channels.into_init(), report),
        Ok(Forked::Parent(pid)) => pid,
    };
    let status_r = or_fail(start_init(init, channels.into_monitor(), uid, gid), report.as_fd());
    drop(report);
    detach_stdio();
    for signal in TERMINAL_SIGNALS {
        sys::set_disposition(signal, Disposition::Ignore);
    }
    mirror(init, status_r.as_fd())
}

/// The value of `result`, or its error on the report pipe and the end of the process.
fn or_fail<T>(result: Result<T, SandboxError>, report: BorrowedFd<'_>) -> T {
    result.unwrap_or_else(|e| fail(report, &e))
}

/// The pipes (and under `restricted` the socket) between the monitor and the init, made
/// before the clone; each side then keeps only its own ends.
struct Channels {
    /// The monitor's go-ahead once the init's maps are written.
    sync: (OwnedFd, OwnedFd),
    /// How the command ended, from the init.
    status: (OwnedFd, OwnedFd),
    /// The network namespace, from the monitor (monitor's end first).
    netns: Option<(OwnedFd, OwnedFd)>,
}

impl Channels {
    fn new(network: NetworkPolicy) -> Result<Self, SandboxError> {
        let pipe = || {
            rustix::pipe::pipe_with(PipeFlags::CLOEXEC).map_err(|e| SandboxError::errno("pipe", e))
        };
        let (sync, status) = (pipe()?, pipe()?);
        // Under `restricted` the monitor makes the network namespace while the init builds
        // the root (creating one takes most of a millisecond), and hands it over here.
        let netns = match network {
            NetworkPolicy::Restricted => {
                Some(fdpass::socketpair().map_err(|e| SandboxError::io("socketpair", &e))?)
            }
            NetworkPolicy::Enabled => None,
        };
        Ok(Self { sync, status, netns })
    }

    /// The init's ends; the monitor's are closed in the init.
    fn into_init(self) -> InitEnds {
        InitEnds { sync_r: self.sync.0, status_w: self.status.1, netns: self.netns.map(|n| n.1) }
    }

    /// The monitor's ends; the init's are closed in the monitor.
    fn into_monitor(self) -> MonitorEnds {
        MonitorEnds { sync_w: self.sync.1, status_r: self.status.0, netns: self.netns.map(|n| n.0) }
    }
}

/// The monitor's ends of [`Channels`].
struct MonitorEnds {
    sync_w: OwnedFd,
    status_r: OwnedFd,
    netns: Option<OwnedFd>,
}

/// Writes the init's maps, lets it go on, and under `restricted` sends it its network
/// namespace. Returns the read end of the status pipe; on failure the init is killed.
fn start_init(init: Pid, ends: MonitorEnds, uid: u32, gid: u32) -> Result<OwnedFd, SandboxError> {
    let MonitorEnds { sync_w, status_r, netns } = ends;
    let started = write_maps(init, uid, gid).and_then(|()| release(sync_w)).and_then(|()| {
        netns.map_or(Ok(()), |channel| make_network_namespace(init, channel.as_fd()))
    });
    if let Err(e) = started {
        status::kill_and_reap(init);
        return Err(e);
    }
    Ok(status_r)
}

fn write_maps(init: Pid, uid: u32, gid: u32) -> Result<(), SandboxError> {
    let pid = init.as_raw_nonzero();
    write_file("setgroups", &format!("/proc/{pid}/setgroups"), "deny")?;
    write_file("uid_map", &format!("/proc/{pid}/uid_map"), &format!("{uid} {uid} 1\n"))?;
    write_file("gid_map", &format!("/proc/{pid}/gid_map"), &format!("{gid} {gid} 1\n"))
}

/// Sends the init its go-ahead byte and closes the pipe.
fn release(sync_w: OwnedFd) -> Result<(), SandboxError> {
    match rustix::io::write(&sync_w, b"1") {
        Ok(1) => Ok(()),
        Ok(_) => Err(SandboxError::other("start init", "nothing written")),
        Err(e) => Err(SandboxError::errno("start init", e)),
    }
}

/// Once the init's maps are written: joins the init's user namespace, makes a network
/// namespace owned by it (only a down loopback), and sends that namespace to the init.
/// The monitor needs neither the host's user nor its network namespace afterwards.
fn make_network_namespace(init: Pid, channel: BorrowedFd<'_>) -> Result<(), SandboxError> {
    let userns = open_namespace(&format!("/proc/{}/ns/user", init.as_raw_nonzero()))?;
    // The monitor, the namespace's creator, holds every capability there.
    rustix::thread::move_into_link_name_space(userns.as_fd(), Some(LinkNameSpaceType::User))
        .map_err(|e| SandboxError::errno("join user namespace", e))?;
    drop(userns);
    sys::unshare_namespaces(UnshareFlags::NEWNET)
        .map_err(|e| SandboxError::errno("unshare network namespace", e))?;
    // The kernel clears the parent-death signal on a credential change it deems a privilege
    // change; re-armed so the monitor still dies with the shim (as before, best effort).
    let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
    let netns = open_namespace("/proc/self/ns/net")?;
    // An init that already failed (building the root, say) closed its end: its own report
    // names that step, and the monitor goes on to mirror its end rather than report this.
    match fdpass::send(channel, &[0], &[netns.as_fd()]) {
        Ok(()) => Ok(()),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EPIPE | libc::ECONNRESET)) => Ok(()),
        Err(e) => Err(SandboxError::io("send network namespace", &e)),
    }
}

/// A namespace file opened for `setns` (which refuses `O_PATH` descriptors).
#[expect(clippy::disallowed_methods, reason = "opens a namespace file under /proc")]
fn open_namespace(path: &str) -> Result<OwnedFd, SandboxError> {
    rustix::fs::open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| SandboxError::errno_at("open", Path::new(path), e))
}

/// Points fds 0-2 at `/dev/null`: the monitor holds no end of the command's stdio, so a
/// command closing its stdin or output is seen as such by the supervisor. Best effort: a
/// monitor that keeps a copy only delays that end of file.
#[expect(clippy::disallowed_methods, reason = "opens /dev/null")]
fn detach_stdio() {
    if let Ok(null) = rustix::fs::open("/dev/null", OFlags::RDWR | OFlags::CLOEXEC, Mode::empty()) {
        let _ = rustix::stdio::dup2_stdin(&null);
        let _ = rustix::stdio::dup2_stdout(&null);
        let _ = rustix::stdio::dup2_stderr(&null);
    }
}

/// Ends the monitor as the command ended, once the init says how.
fn mirror(init: Pid, status_r: BorrowedFd<'_>) -> ! {
    // The init writes the command's status and then exits; tearing its namespaces down
    // takes a while, so the status is read first and the monitor ends at once. The shim,
    // a child subreaper, adopts the exiting init and reaps it (it waits for the whole tree
    // before it reports the end of the tree).
    let ended = status::receive(status_r).unwrap_or_else(|| {
        // The init died before it could say (killed from outside): mirror it.
        status::wait_for(init)
    });
    match ended {
        Ended::Exited(code) => sys::exit_now(code),
        Ended::Signaled(signal) => sys::die_by(signal),
    }
}
