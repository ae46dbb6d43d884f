//! What the reaper shim does with a sandbox policy, alone, for the sandbox's tests: runs one
//! command under [`codespace_sandbox::launch`] in a fork of this process and ends as the
//! command did. Its one argument is `(SandboxPolicy, argv)` as a
//! [`codespace_sandbox::envelope`] message; the command inherits this process's stdio,
//! working directory and environment, and `argv[0]` is looked up on its `PATH`. A start
//! that fails is reported on stderr as `launch failed: <errno> <message>` with exit 127.
//! Like the shim, it first closes every descriptor above 2 it inherited.

use std::ffi::OsString;
use std::os::fd::OwnedFd;

use codespace_sandbox::sys::{self, Forked};
use codespace_sandbox::{LaunchFailure, SandboxPolicy, envelope};
use rustix::pipe::PipeFlags;
use rustix::process::WaitOptions;

#[expect(clippy::disallowed_methods, reason = "an example reads PATH and picks its exit code")]
#[expect(unsafe_code, reason = "closes every inherited descriptor above 2, as the shim does")]
fn main() {
    // SAFETY: first thing in a single-threaded process: nothing owns a descriptor above 2
    // yet (what is there leaked from the caller, cargo's jobserver say).
    let _ = unsafe { sys::keep_only_fd(3, -1) };
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let (policy, argv): (SandboxPolicy, Vec<OsString>) = match envelope::from_args(&args) {
        Ok(message) => message,
        Err(e) => {
            eprintln!("run_sandboxed: {e}");
            std::process::exit(2)
        }
    };
    let search_path = std::env::var_os("PATH").unwrap_or_default();
    let code = run(&policy, &search_path, &argv);
    std::process::exit(code)
}

/// Forks, launches in the child, and mirrors how the command ended.
#[expect(unsafe_code, reason = "forks this single-threaded process for the launcher")]
fn run(policy: &SandboxPolicy, search_path: &OsString, argv: &[OsString]) -> i32 {
    let Ok((read, write)) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC) else { return 2 };
    // SAFETY: this process is single-threaded (no runtime, no thread started), so the
    // child may allocate; it never returns from `launch`.
    match unsafe { sys::fork() } {
        Err(_) => 2,
        Ok(Forked::Child) => {
            drop(read);
            codespace_sandbox::launch(policy, search_path, argv, write)
        }
        Ok(Forked::Parent(monitor)) => {
            drop(write);
            let report = read_to_end(&read);
            let status = rustix::process::waitpid(Some(monitor), WaitOptions::empty());
            if !report.is_empty() {
                let failure: Result<LaunchFailure, _> = envelope::decode(&report);
                match failure {
                    Ok(f) => eprintln!("launch failed: {} {}", f.errno, f.message),
                    Err(e) => eprintln!("launch failed: 0 unreadable report: {e}"),
                }
                return 127;
            }
            match status {
                Ok(Some((_, status))) => match status.terminating_signal() {
                    Some(signal) => sys::die_by(signal),
                    None => status.exit_status().unwrap_or(0),
                },
                _ => 2,
            }
        }
    }
}

fn read_to_end(read: &OwnedFd) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match rustix::io::read(read, &mut buf) {
            Ok(0) | Err(_) => return bytes,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
        }
    }
}
