//! Every raw kernel call of the sandbox and of the reaper shim that rustix has no safe
//! wrapper for: `fork`, `clone` into new namespaces, `execv`, `_exit`, signal dispositions,
//! masks and waits, raising a fatal signal, `fchdir` on an inherited number and taking
//! over an inherited descriptor table, plus rustix's `unshare`, which is `unsafe` for a
//! flag never passed here. `fork`, `clone` and the descriptor take-over stay `unsafe fn`s,
//! since only the caller knows what its child may still do or what it owns.

use std::ffi::{CStr, CString};
use std::io;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::os::fd::{FromRawFd as _, OwnedFd, RawFd};
use std::ptr;
use std::time::Duration;

use rustix::process::{Pid, Resource, Rlimit};
use rustix::thread::UnshareFlags;

/// Which side of a fork the caller is on.
pub enum Forked {
    /// The new process.
    Child,
    /// The calling process, with the child's pid.
    Parent(Pid),
}

/// `fork()`.
///
/// # Safety
/// In a process that may have other threads, the child may only make async-signal-safe
/// calls (raw system calls, no allocation) until it execs or exits.
#[expect(unsafe_code, reason = "fork has no safe wrapper: the caller vouches for the child")]
pub unsafe fn fork() -> io::Result<Forked> {
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
#[expect(unsafe_code, reason = "a raw clone syscall: the caller vouches for the child")]
pub unsafe fn clone_into_namespaces(namespaces: libc::c_int) -> io::Result<Forked> {
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
    // Zero, the child's view, is no pid.
    Ok(Pid::from_raw(pid).map_or(Forked::Child, Forked::Parent))
}

/// `unshare` of namespaces only: `UnshareFlags::FILES`, the one flag that makes rustix's
/// call unsafe, is never passed.
#[expect(unsafe_code, reason = "rustix marks unshare unsafe for the FILES flag, masked here")]
pub fn unshare_namespaces(flags: UnshareFlags) -> rustix::io::Result<()> {
    // SAFETY: without `FILES` the call cannot split this process's descriptor table from
    // another thread's.
    unsafe { rustix::thread::unshare_unsafe(flags.difference(UnshareFlags::FILES)) }
}

/// Ends the process at once: no unwinding, destructors or `atexit` handlers (every caller
/// is a fork of a process whose buffers and handlers are not its own to run).
#[expect(unsafe_code, reason = "_exit has no safe wrapper in std or rustix")]
pub fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` takes no pointer and is async-signal-safe.
    unsafe { libc::_exit(code) }
}

/// How a signal is disposed of; no handler code is ever installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// `SIG_IGN`.
    Ignore,
    /// `SIG_DFL`.
    Default,
}

/// Sets the disposition of `signal`. Async-signal-safe (used between fork and exec).
#[expect(unsafe_code, reason = "signal dispositions have no safe wrapper outside rustix's runtime")]
pub fn set_disposition(signal: libc::c_int, disposition: Disposition) {
    let action = match disposition {
        Disposition::Ignore => libc::SIG_IGN,
        Disposition::Default => libc::SIG_DFL,
    };
    // SAFETY: installs no handler code, only SIG_IGN or SIG_DFL.
    unsafe { libc::signal(signal, action) };
}

/// A set of signals, for the calling thread's mask and for synchronous waits.
pub struct SignalSet(libc::sigset_t);

impl SignalSet {
    /// The set of `signals` (empty for none).
    #[expect(unsafe_code, reason = "sigset_t is built in place by libc")]
    pub fn of(signals: &[libc::c_int]) -> Self {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: sigemptyset initialises the set in place before sigaddset sets bits in it
        // or it is read.
        unsafe {
            libc::sigemptyset(set.as_mut_ptr());
            for signal in signals {
                libc::sigaddset(set.as_mut_ptr(), *signal);
            }
            Self(set.assume_init())
        }
    }

    /// Blocks these signals (added to the mask), so they queue for [`Self::wait`].
    pub fn block(&self) {
        self.mask(libc::SIG_BLOCK);
    }

    /// Unblocks these signals (removed from the mask).
    pub fn unblock(&self) {
        self.mask(libc::SIG_UNBLOCK);
    }

    /// Makes this the whole mask (an empty set unblocks everything).
    pub fn set_as_mask(&self) {
        self.mask(libc::SIG_SETMASK);
    }

    #[expect(unsafe_code, reason = "sigprocmask has no safe wrapper outside rustix's runtime")]
    fn mask(&self, how: libc::c_int) {
        // SAFETY: the set is initialised; the previous mask is not requested. Only the
        // calling thread's mask changes.
        unsafe { libc::sigprocmask(how, &self.0, ptr::null_mut()) };
    }

    /// Waits for one signal of the set (all blocked), up to `timeout` if given: the
    /// signal, or `None` once the timeout passed or the wait failed. Without a timeout an
    /// interrupted wait is resumed.
    #[expect(unsafe_code, reason = "sigtimedwait has no safe wrapper outside rustix's runtime")]
    pub fn wait(&self, timeout: Option<Duration>) -> Option<libc::c_int> {
        let ts = timeout.map(|t| libc::timespec {
            tv_sec: t.as_secs() as libc::time_t,
            tv_nsec: t.subsec_nanos() as libc::c_long,
        });
        let ts_ptr = ts.as_ref().map_or(ptr::null(), ptr::from_ref);
        loop {
            // SAFETY: the set is initialised; a null siginfo pointer is allowed, and a null
            // timeout (or `ts`, which outlives the call) is what sigwaitinfo uses.
            let rc = unsafe { libc::sigtimedwait(&self.0, ptr::null_mut(), ts_ptr) };
            if rc > 0 {
                return Some(rc);
            }
            if timeout.is_none() && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
            {
                continue;
            }
            return None;
        }
    }
}

/// Ends the process by `signal`, with no core file: the default action restored, the
/// signal unblocked and raised. Exits `128 + signal` should the process survive it.
#[expect(unsafe_code, reason = "kill of an arbitrary signal number has no safe wrapper")]
pub fn die_by(signal: libc::c_int) -> ! {
    let no_core = Rlimit { current: Some(0), maximum: Some(0) };
    // Best effort, as the signal itself is: the process ends either way.
    let _ = rustix::process::setrlimit(Resource::Core, no_core);
    set_disposition(signal, Disposition::Default);
    SignalSet::of(&[signal]).unblock();
    let me = rustix::process::getpid().as_raw_nonzero().get();
    // SAFETY: kill changes only this process. (rustix's `Signal` cannot hold an arbitrary
    // number safely.)
    unsafe { libc::kill(me, signal) };
    exit_now(128 + signal)
}

/// `fchdir` onto the inherited descriptor number `fd`.
#[expect(
    unsafe_code,
    reason = "rustix's fchdir needs a borrowed descriptor, which an unchecked number cannot be"
)]
pub fn fchdir_raw(fd: RawFd) -> io::Result<()> {
    // SAFETY: fchdir takes a plain number and changes only this process's working
    // directory; a number that is not an open directory fails (EBADF, ENOTDIR).
    if unsafe { libc::fchdir(fd) } == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// Closes every descriptor from `lowest` up except `keep`, and owns `keep` if it is open
/// (and at least `lowest`). Kernels before 5.9 lack `close_range`: the open descriptors
/// are then listed from `/proc/self/fd` and closed one by one.
///
/// # Safety
/// Nothing in this process owns a descriptor at or above `lowest` but what `keep` names,
/// which nothing owns either: a single-threaded process's first act on what it inherited.
#[expect(unsafe_code, reason = "closing and adopting descriptors by number")]
#[expect(clippy::disallowed_methods, reason = "lists /proc/self/fd, not a workspace")]
pub unsafe fn keep_only_fd(lowest: RawFd, keep: RawFd) -> Option<OwnedFd> {
    let lowest = u32::try_from(lowest).unwrap_or(0);
    let kept = u32::try_from(keep).ok().filter(|fd| *fd >= lowest);
    // (1, 0) is an empty range: it closes nothing.
    let ranges = match kept {
        Some(k) if k > lowest => [(lowest, k - 1), (k.saturating_add(1), u32::MAX)],
        Some(k) => [(1, 0), (k.saturating_add(1), u32::MAX)],
        None => [(lowest, u32::MAX), (1, 0)],
    };
    // SAFETY: the caller's contract: nothing in this process owns a descriptor in these
    // ranges, so no Rust object is left holding a closed one; F_GETFD only asks whether
    // `keep` is open, and if it is nothing owns it but the returned `OwnedFd`.
    unsafe {
        for (first, last) in ranges.into_iter().filter(|(f, l)| f <= l) {
            if libc::syscall(libc::SYS_close_range, first, last, 0u32) == 0 {
                continue;
            }
            let open: Vec<u32> = std::fs::read_dir("/proc/self/fd")
                .map(|dir| {
                    dir.flatten()
                        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
                        .filter(|fd| (first..=last).contains(fd))
                        .collect()
                })
                .unwrap_or_default();
            for fd in open {
                // The listing's own descriptor is already closed (EBADF, ignored).
                libc::close(fd as RawFd);
            }
        }
        let keep = kept? as RawFd;
        if libc::fcntl(keep, libc::F_GETFD) < 0 {
            return None;
        }
        Some(OwnedFd::from_raw_fd(keep))
    }
}

/// An argument vector for [`execv`]: pointers into live strings, ending with null.
pub struct ExecArgs<'a> {
    ptrs: Vec<*const libc::c_char>,
    strings: PhantomData<&'a [CString]>,
}

impl<'a> ExecArgs<'a> {
    /// Pointers to `argv`'s strings, which outlive them.
    pub fn new(argv: &'a [CString]) -> Self {
        let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(ptr::null());
        Self { ptrs, strings: PhantomData }
    }
}

/// `execv(exe, argv)` with this process's environment; returns only with its error.
#[expect(unsafe_code, reason = "execv has no safe wrapper that keeps the environment")]
pub fn execv(exe: &CStr, argv: &ExecArgs<'_>) -> io::Error {
    // SAFETY: `exe` is NUL-terminated; `argv` points into strings that outlive it and ends
    // with a null pointer (its constructor's invariant); `environ` is this process's.
    unsafe { libc::execv(exe.as_ptr(), argv.ptrs.as_ptr()) };
    io::Error::last_os_error()
}
