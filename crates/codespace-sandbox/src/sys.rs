//! The crate's kernel calls that rustix has no safe wrapper for: `fork`, `clone` into new
//! namespaces, `execv`, `_exit`, signal dispositions and raising a fatal signal, plus
//! rustix's `unshare`, which is `unsafe` for a flag the crate never passes. `fork` and
//! `clone` stay `unsafe fn`s, since only the caller knows what its child may still do.

use std::ffi::{CStr, CString};
use std::io;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr;

use rustix::process::{Pid, Resource, Rlimit};
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

/// A raw `clone` with no new stack: a `fork` whose child enters the namespaces of
/// `namespaces` (`CLONE_NEW*` flags) and whose exit is signalled with `SIGCHLD`.
///
/// # Safety
/// As for [`fork`]; moreover glibc's cached thread id is stale in the child (only glibc's
/// own fork refreshes it), so the child must never raise a signal or take an
/// owner-checked pthread lock.
#[allow(unsafe_code)]
pub(crate) unsafe fn clone_into_namespaces(namespaces: libc::c_int) -> io::Result<Forked> {
    let flags = (namespaces | libc::SIGCHLD) as libc::c_ulong;
    // SAFETY: no pointer is passed (no new stack, no tid or TLS arguments); the caller
    // upholds what the child may do.
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
    forked(pid)
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

/// Sets the disposition of `signal` to ignored, or back to the default action.
#[allow(unsafe_code)]
pub(crate) fn set_signal_ignored(signal: libc::c_int, ignored: bool) {
    let action = if ignored { libc::SIG_IGN } else { libc::SIG_DFL };
    // SAFETY: installs no handler code, only SIG_IGN or SIG_DFL.
    unsafe { libc::signal(signal, action) };
}

/// Ends the process by `signal`, with no core file: the default action restored, the
/// signal unblocked and raised. Exits `128 + signal` should the process survive it.
#[allow(unsafe_code)]
pub(crate) fn die_by(signal: libc::c_int) -> ! {
    let no_core = Rlimit { current: Some(0), maximum: Some(0) };
    // Best effort, as the signal itself is: the process ends either way.
    let _ = rustix::process::setrlimit(Resource::Core, no_core);
    set_signal_ignored(signal, false);
    let me = rustix::process::getpid().as_raw_nonzero().get();
    // SAFETY: the set is initialised by sigemptyset before it is read; sigprocmask and kill
    // change only this process. (rustix's `Signal` cannot hold an arbitrary number safely.)
    unsafe {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        libc::sigaddset(set.as_mut_ptr(), signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, set.as_ptr(), ptr::null_mut());
        libc::kill(me, signal);
    }
    exit_now(128 + signal)
}

/// An argument vector for [`execv`]: pointers into live strings, ending with null.
pub(crate) struct ExecArgs<'a> {
    ptrs: Vec<*const libc::c_char>,
    strings: PhantomData<&'a [CString]>,
}

impl<'a> ExecArgs<'a> {
    pub(crate) fn new(argv: &'a [CString]) -> Self {
        let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(ptr::null());
        Self { ptrs, strings: PhantomData }
    }
}

/// `execv(exe, argv)` with this process's environment; returns only with its error.
#[allow(unsafe_code)]
pub(crate) fn execv(exe: &CStr, argv: &ExecArgs<'_>) -> io::Error {
    // SAFETY: `exe` is NUL-terminated; `argv` points into strings that outlive it and ends
    // with a null pointer (its constructor's invariant); `environ` is this process's.
    unsafe { libc::execv(exe.as_ptr(), argv.ptrs.as_ptr()) };
    io::Error::last_os_error()
}
