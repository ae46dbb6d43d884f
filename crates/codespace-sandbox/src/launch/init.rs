//! The init, PID 1 of the new namespaces: it waits for its id maps, builds the root, caps
//! `pid_max`, joins the network namespace it is sent, forks the command and reaps until the
//! command ends. Also the command itself, which restricts itself and execs.

use std::convert::Infallible;
use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsFd as _, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use rustix::process::Signal;
use rustix::thread::LinkNameSpaceType;
use seccompiler::BpfProgram;

use super::exec::Program;
use super::{EXIT_FAILED, fail, root, status, write_file};
use crate::enter::{SandboxError, Visible, enter, seccomp_programs};
use crate::fdpass;
use crate::policy::SandboxPolicy;
use crate::sys::{self, Disposition, ExecArgs, Forked};

/// What the init and the command need, checked and built in the monitor before anything
/// changes, so a malformed policy, argument or filter fails first.
pub(super) struct CommandSpec {
    cwd: PathBuf,
    program: Program,
    argv: Vec<CString>,
    filters: Vec<BpfProgram>,
}

impl CommandSpec {
    pub(super) fn new(
        policy: &SandboxPolicy,
        search_path: &OsStr,
        argv: &[OsString],
    ) -> Result<Self, SandboxError> {
        let lists = [&policy.read_roots, &policy.writable_roots, &policy.masked];
        if let Some(p) = lists.iter().flat_map(|l| l.iter()).find(|p| !p.is_absolute()) {
            return Err(SandboxError::other("policy", format!("{} is not absolute", p.display())));
        }
        // With a workdir the inherited directory is never looked up by path (its path may
        // name another directory by now, or nothing).
        let cwd = match &policy.workdir {
            Some(workdir) => workdir.clone(),
            None => std::env::current_dir().map_err(|e| SandboxError::io("cwd", &e))?,
        };
        let argv0 = argv.first().ok_or_else(|| SandboxError::other("argv", "empty"))?;
        let program = Program::new(argv0, search_path)?;
        let argv = argv.iter().map(|a| cstring("argv", a)).collect::<Result<Vec<_>, _>>()?;
        let filters = seccomp_programs(policy.network)?;
        Ok(Self { cwd, program, argv, filters })
    }
}

/// The init's ends of the channels to the monitor.
pub(super) struct InitEnds {
    /// Readable once the monitor has written the init's id maps.
    pub(super) sync_r: OwnedFd,
    /// Where the init writes how the command ended.
    pub(super) status_w: OwnedFd,
    /// Where the network namespace arrives, under `restricted`.
    pub(super) netns: Option<OwnedFd>,
}

/// PID 1 of the new namespaces, from start to end.
#[expect(unsafe_code, reason = "forks the command")]
pub(super) fn run(
    policy: &SandboxPolicy,
    spec: &CommandSpec,
    ends: InitEnds,
    report: OwnedFd,
) -> ! {
    let InitEnds { sync_r, status_w, netns } = ends;
    // Dies with the monitor; nothing would be left to report a failure to arm it to.
    let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
    let mut byte = [0u8; 1];
    if !matches!(rustix::io::read(&sync_r, &mut byte), Ok(1)) {
        // The monitor is gone (or failed to write the maps and killed us anyway).
        sys::exit_now(EXIT_FAILED)
    }
    drop(sync_r);
    let visible = prepare(policy, &spec.cwd, netns).unwrap_or_else(|e| fail(report.as_fd(), &e));
    // SAFETY: this process is single-threaded (a clone of the single-threaded monitor), so
    // the child may allocate; it only runs `command` and exits.
    match unsafe { sys::fork() } {
        Err(e) => fail(report.as_fd(), &SandboxError::io("fork command", &e)),
        Ok(Forked::Child) => {
            drop(status_w);
            let Err(e) = command(policy, &visible, spec);
            fail(report.as_fd(), &e)
        }
        Ok(Forked::Parent(child)) => {
            drop(report);
            let ended = status::reap_until(child);
            status::send(status_w.as_fd(), ended);
            // The kernel kills every other process of this PID namespace when its init exits.
            sys::exit_now(0)
        }
    }
}

/// Everything the init does before it forks the command. Returns the canonical roots
/// for Landlock.
fn prepare(
    policy: &SandboxPolicy,
    cwd: &Path,
    netns: Option<OwnedFd>,
) -> Result<Visible, SandboxError> {
    let visible = root::build(policy, cwd)?;
    write_file("pid_max", "/proc/sys/kernel/pid_max", &policy.max_pids.to_string())?;
    // No nested user namespace (what bwrap's --disable-userns does): the limit of this
    // user namespace counts the ones made inside it, and the command, holding no
    // capability here, cannot raise it again.
    write_file("max_user_namespaces", "/proc/sys/user/max_user_namespaces", "0")?;
    if let Some(channel) = netns {
        let netns = receive_network_namespace(channel.as_fd())?;
        rustix::thread::move_into_link_name_space(netns.as_fd(), Some(LinkNameSpaceType::Network))
            .map_err(|e| SandboxError::errno("join network namespace", e))?;
    }
    Ok(visible)
}

/// Receives the network namespace the monitor made (one byte and one descriptor).
fn receive_network_namespace(channel: BorrowedFd<'_>) -> Result<OwnedFd, SandboxError> {
    let step = "receive network namespace";
    let mut byte = [0u8; 1];
    match fdpass::recv(channel, &mut byte) {
        Ok(Some((1, fds))) => {
            fds.into_iter().next().ok_or_else(|| SandboxError::other(step, "no descriptor"))
        }
        _ => Err(SandboxError::other(step, "the monitor sent none")),
    }
}

/// The command: restricts itself, then looks its program up and execs it, inside its root.
fn command(
    policy: &SandboxPolicy,
    visible: &Visible,
    spec: &CommandSpec,
) -> Result<Infallible, SandboxError> {
    // The shim ignores SIGPIPE and ignored signals survive exec; the command gets the
    // default, as it would unsandboxed.
    sys::set_disposition(libc::SIGPIPE, Disposition::Default);
    enter(policy, visible, &spec.filters)?;
    Err(spec.program.exec(&ExecArgs::new(&spec.argv)))
}

fn cstring(step: &'static str, s: &OsStr) -> Result<CString, SandboxError> {
    CString::new(s.as_bytes()).map_err(|_| SandboxError::other(step, "contains NUL"))
}
