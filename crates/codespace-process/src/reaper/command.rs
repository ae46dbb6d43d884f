//! Starting the command from the shim: directly (std's spawn with a pre-exec hook), or
//! through [`codespace_sandbox::launch`] in a fork of the shim.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd as _, OwnedFd};
use std::os::unix::process::CommandExt as _;
use std::path::Path;

use codespace_sandbox::sys::{self, Disposition, Forked, SignalSet};
use codespace_sandbox::{LaunchFailure, TXTBSY_PAUSE, TXTBSY_RETRIES, envelope};
use rustix::pipe::PipeFlags;
use rustix::process::{Signal, WaitOptions};

use crate::shim_messages::{EXIT_SPAWN_FAILED, ShimArgs, ShimReport};

/// Starts the command directly (no sandbox) in its own process group.
#[expect(unsafe_code, reason = "installs the pre-exec hook")]
#[expect(clippy::disallowed_methods, reason = "the shim starts the unconfined command")]
pub(super) fn spawn_plain(args: &ShimArgs, exe: &Path) -> Result<u32, ShimReport> {
    let mut cmd = std::process::Command::new(exe);
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
            // ETXTBSY clears within microseconds: retry briefly before giving up.
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && busy_retries < TXTBSY_RETRIES => {
                busy_retries += 1;
                std::thread::sleep(TXTBSY_PAUSE);
            }
            Err(e) => return Err(failed(&exe.to_string_lossy(), &e)),
        }
    }
}

/// Starts the command through [`codespace_sandbox::launch`] in a fork of the shim, which
/// looks the program up inside the private root. The
/// launcher's close-on-exec report pipe reaches end of file with nothing written once the
/// command itself has exec'd; otherwise it carries a [`LaunchFailure`], and the command
/// never ran. The pid returned is the launcher's monitor, which ends exactly as the command did.
#[expect(unsafe_code, reason = "forks the shim for the launcher")]
pub(super) fn spawn_sandboxed(
    args: &ShimArgs,
    policy: &codespace_sandbox::SandboxPolicy,
    report: &mut Option<File>,
) -> Result<u32, ShimReport> {
    let (read, write) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC)
        .map_err(|e| failed("sandbox report pipe", &io::Error::from(e)))?;
    // SAFETY: the shim is single-threaded (see `reaper_main`), so the child may allocate
    // and run any code; it never returns to the shim's own logic (it launches or exits).
    let forked = unsafe { sys::fork() };
    let pid = match forked.map_err(|e| failed("fork", &e))? {
        Forked::Child => {
            // The launcher uses neither the shim's report pipe nor this pipe's read end.
            drop(report.take());
            drop(read);
            if let Err(e) = command_pre_exec(args.tty) {
                let errno = e.raw_os_error().unwrap_or(0);
                LaunchFailure { errno, message: format!("pre-exec: {e}") }.send(write.as_fd());
                sys::exit_now(EXIT_SPAWN_FAILED);
            }
            codespace_sandbox::launch(policy, &args.search_path, &args.argv, write)
        }
        Forked::Parent(pid) => pid,
    };
    drop(write);
    let failure = match read_to_end(&read) {
        Ok(bytes) if bytes.is_empty() => return Ok(pid.as_raw_nonzero().get() as u32),
        Ok(bytes) => envelope::decode(&bytes).unwrap_or_else(|e| LaunchFailure {
            errno: 0,
            message: format!("unreadable sandbox report: {e}"),
        }),
        Err(e) => LaunchFailure {
            errno: e.raw_os_error(),
            message: format!("reading the sandbox report: {e}"),
        },
    };
    // Reaps the launcher, which exits right after a failed report.
    let _ = rustix::process::waitpid(Some(pid), WaitOptions::empty());
    Err(ShimReport::Failed {
        errno: failure.errno,
        message: format!("{}: {}", args.argv[0].to_string_lossy(), failure.message),
    })
}

/// Everything the launcher wrote before its pipe closed.
fn read_to_end(read: &OwnedFd) -> Result<Vec<u8>, rustix::io::Errno> {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match rustix::io::read(read, &mut buf) {
            Ok(0) => return Ok(bytes),
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
}

pub(super) fn failed(what: &str, e: &io::Error) -> ShimReport {
    ShimReport::Failed { errno: e.raw_os_error().unwrap_or(0), message: format!("{what}: {e}") }
}

/// Runs in the command's child between fork and exec; every call is async-signal-safe and
/// changes only that child.
fn command_pre_exec(tty: bool) -> io::Result<()> {
    rustix::process::setpgid(None, None)?;
    // Best effort: if the shim is ever killed outright, the command dies with it.
    let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
    if tty {
        // Become the terminal's foreground group, or the command would be stopped by
        // SIGTTIN on its first read. tcsetpgrp from a background group raises SIGTTOU,
        // hence the temporary SIG_IGN (restored so the command inherits the default).
        sys::set_disposition(libc::SIGTTOU, Disposition::Ignore);
        let set = rustix::termios::tcsetpgrp(rustix::stdio::stdin(), rustix::process::getpid());
        sys::set_disposition(libc::SIGTTOU, Disposition::Default);
        set?;
    }
    SignalSet::of(&[]).set_as_mask();
    Ok(())
}
