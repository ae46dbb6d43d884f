//! The per-command reaper shim: the `codespace` binary re-executed as
//! `codespace __codespace-reaper …` (see [`crate::shim_messages`] for its arguments, descriptors
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
//! 2. Enters its working directory through the inherited descriptor (`fchdir`, never a
//!    path), moves its report pipe to fd 3 (close-on-exec) and closes everything above it.
//! 3. Becomes a child subreaper, so every orphan of the command's tree (a `setsid` daemon,
//!    a double fork) is reparented to the shim instead of to init.
//! 4. Unconfined, looks `argv[0]` up on the child's `PATH` in its own working directory
//!    ([`codespace_sandbox::PathSearch`]); sandboxed, the launcher does that inside the private root instead, so
//!    only what the command can see matches. Starts the command (no shell) in its own process group with the signal mask cleared,
//!    `PR_SET_PDEATHSIG(SIGKILL)` armed, and, on a terminal, as the foreground group.
//!    With a sandbox policy, that child calls [`codespace_sandbox::launch`] instead of
//!    exec'ing (namespaces, a private root, Landlock, seccomp, no capabilities; the child
//!    then ends exactly as the command does); if any step fails, nothing is exec'd and the
//!    shim reports `failed` with the step and reason (sent back on a private close-on-exec
//!    pipe), so nothing runs unsandboxed. With an external policy instead (the pod is the
//!    boundary), the shim first confines itself ([`codespace_sandbox::confine`]: no new
//!    privileges, Landlock and seccomp as asked, no capabilities), so the command inherits
//!    it; a failure is reported the same way and nothing runs.
//!    Then it points its own fds 0-2 at `/dev/null`, holding no end of the command's stdio.
//! 5. Waits. A term request (SIGUSR1 from the supervisor, when it ends the command with a
//!    grace) sends SIGTERM (and SIGCONT) to every descendant, once. A kill request (SIGTERM
//!    from the supervisor once the grace is over, or the parent-death signal, SIGHUP when
//!    the terminal's master closes, SIGINT, SIGQUIT) sends SIGKILL to every descendant.
//! 6. Once the command's main process is reaped it reports the status, then kills and
//!    reaps descendants until none is left (bounded at 10 s), and exits.

mod command;
mod fds;
mod helper;
mod reap;
mod signals;

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write as _};

use rustix::process::{Signal, WaitStatus};

pub(crate) use self::fds::REPORT_FD;

/// The argument (right after the role argument) that starts the spawn helper instead of a
/// shim.
pub(crate) const HELPER_ARG: &str = "--helper";
use codespace_sandbox::PathSearch;
use codespace_sandbox::sys::{self, Disposition};

use self::signals::{SignalSet, Wake};
use crate::shim_messages::{EXIT_BAD_ARGS, EXIT_ORPHANED, EXIT_SPAWN_FAILED, ShimArgs, ShimReport};

/// Entry point of the reaper role. `args` are the process arguments *after* the role
/// argument (`__codespace-reaper`). Call it first thing in `main`, before any thread, file
/// or runtime exists: the shim assumes it is single-threaded and owns every descriptor
/// above 2.
#[expect(
    clippy::disallowed_methods,
    reason = "the shim, a process of its own, exits with its command's status"
)]
pub fn reaper_main(args: Vec<OsString>) -> ! {
    if args.first().is_some_and(|a| a == HELPER_ARG) {
        std::process::exit(helper::helper_main(&args[1..]));
    }
    let code = match ShimArgs::from_args(&args) {
        Ok(args) => run(&args),
        Err(msg) => {
            let _ = writeln!(io::stderr(), "codespace reaper: {msg}");
            EXIT_BAD_ARGS
        }
    };
    std::process::exit(code)
}

fn run(args: &ShimArgs) -> i32 {
    let (set, mut report) = match prepare(args) {
        Ok(prepared) => prepared,
        Err(code) => return code,
    };
    // Unconfined, the program is looked up here, in the command's working directory;
    // sandboxed, the launcher looks it up inside the private root the command will see.
    let main = match &args.sandbox {
        Some(policy) => command::spawn_sandboxed(args, policy, &mut report),
        None => PathSearch::new(&args.argv[0], &args.search_path)
            .find()
            .map_err(|e| ShimReport::Failed { errno: e.errno, message: e.message })
            .and_then(|exe| confine(args).map(|()| exe))
            .and_then(|exe| command::spawn_plain(args, &exe)),
    };
    let main = match main {
        Ok(pid) => pid,
        Err(line) => {
            send(&mut report, &line);
            return EXIT_SPAWN_FAILED;
        }
    };
    send(&mut report, &ShimReport::Started { pid: main });
    fds::detach_stdio();

    let (status, requested) = wait_main(&set, main);
    let (line, code) = if let Some(signal) = status.terminating_signal() {
        (ShimReport::Signaled { signal, requested }, 128 + signal)
    } else {
        let code = status.exit_status().unwrap_or(1);
        (ShimReport::Exited { code, requested }, code)
    };
    send(&mut report, &line);
    reap::clean_up(&set);
    code
}

/// Under an external policy, confines the shim itself (and so the command and everything
/// it starts) before the command starts; a failure is the command's spawn failure.
fn confine(args: &ShimArgs) -> Result<(), ShimReport> {
    let Some(policy) = &args.external else { return Ok(()) };
    codespace_sandbox::confine(policy).map_err(|e| ShimReport::Failed {
        errno: e.errno,
        message: format!("{}: {e}", args.argv[0].to_string_lossy()),
    })
}

/// Steps 1-3 of the module docs: session, parent-death signal, signal mask, descriptors,
/// subreaper. Returns the blocked set and the report pipe, or the shim's exit code.
fn prepare(args: &ShimArgs) -> Result<(SignalSet, Option<File>), i32> {
    // Pipe mode: the shim's own session, so the command never shares the server's
    // controlling terminal (in tty mode the PTY spawn made the terminal ours already).
    if !args.tty {
        let _ = rustix::process::setsid();
    }
    if rustix::process::set_parent_process_death_signal(Some(Signal::TERM)).is_err() {
        return Err(EXIT_ORPHANED);
    }
    if rustix::process::getppid().map(|p| p.as_raw_nonzero().get() as u32) != Some(args.ppid) {
        return Err(EXIT_ORPHANED);
    }
    let set = signals::shim_set();
    set.block();
    sys::set_disposition(libc::SIGPIPE, Disposition::Ignore);
    // Before the descriptor is closed with everything else above 2.
    let entered = fds::enter_dir(args.cwd_fd);
    let mut report = fds::adopt_report_fd(args.report_fd);
    if let Err(e) = entered {
        send(&mut report, &command::failed("working directory", &e));
        return Err(EXIT_SPAWN_FAILED);
    }
    if let Err(e) = rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
        send(&mut report, &command::failed("PR_SET_CHILD_SUBREAPER", &io::Error::from(e)));
        return Err(EXIT_SPAWN_FAILED);
    }
    Ok((set, report))
}

/// Waits for the command's main process; returns its status and whether a kill or term
/// request arrived before it was reaped.
fn wait_main(set: &SignalSet, main: u32) -> (WaitStatus, bool) {
    let mut requested = false;
    let mut termed = false;
    loop {
        let wake = signals::wait(set, None);
        // If the command already finished on its own, its status is the truth; otherwise
        // signal the tree and wait for the main process's SIGCHLD.
        if let Some(status) = reap::reap(Some(main)) {
            return (status, requested);
        }
        match wake {
            Wake::Child | Wake::Nothing => {}
            Wake::KillRequest => {
                requested = true;
                reap::kill_descendants();
            }
            // Once: a handler (a shell's TERM trap) runs once, not at every request.
            Wake::TermRequest if !termed => {
                requested = true;
                termed = true;
                reap::term_descendants();
            }
            Wake::TermRequest => requested = true,
        }
    }
}

fn send(report: &mut Option<File>, line: &ShimReport) {
    if let Some(f) = report.as_mut() {
        // A vanished supervisor (EPIPE) must not stop the clean-up, so errors are dropped.
        let _ = f.write_all(&line.frame());
    }
}
