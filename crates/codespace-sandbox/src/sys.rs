//! The crate's kernel calls that rustix has no safe wrapper for: `fork` and `_exit`, plus
//! rustix's `unshare`, which is `unsafe` for a flag the crate never passes. `fork` stays
//! an `unsafe fn`, since only the caller knows what its child may still do.

use std::io;

use rustix::process::Pid;
use rustix::thread::UnshareFlags;

/// Which side of a fork the caller is on.
pub(crate) enum Forked {
    Child,
    Parent(Pid),
}

/// `fork()`.
///
/// # Safety
/// In a process that may have other threads, the child may only make async-signal-safe
/// calls (raw system calls, no allocation) until it execs or exits.
#[allow(unsafe_code)]
pub(crate) unsafe fn fork() -> io::Result<Forked> {
    // SAFETY: fork takes no argument; the caller upholds what the child may do.
    let pid = unsafe { libc::fork() };
    forked(pid.into())
}

fn forked(pid: libc::c_long) -> io::Result<Forked> {
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    let pid = i32::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::ERANGE))?;
    Ok(Pid::from_raw(pid).map_or(Forked::Child, Forked::Parent))
}

/// `unshare` of namespaces only: `UnshareFlags::FILES`, the one flag that makes rustix's
/// call unsafe, is never passed.
#[allow(unsafe_code)]
pub(crate) fn unshare_namespaces(flags: UnshareFlags) -> rustix::io::Result<()> {
    // SAFETY: without `FILES` the call cannot split this process's descriptor table from
    // another thread's.
    unsafe { rustix::thread::unshare_unsafe(flags.difference(UnshareFlags::FILES)) }
}

/// Ends the process at once: no unwinding, destructors or `atexit` handlers (every caller
/// is a fork of a process whose buffers and handlers are not its own to run).
#[allow(unsafe_code)]
pub(crate) fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` takes no pointer and is async-signal-safe.
    unsafe { libc::_exit(code) }
}
