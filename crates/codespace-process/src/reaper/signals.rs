//! The shim's signal handling: the blocked set it waits on with `sigtimedwait`, and the
//! dispositions it changes. rustix has no safe wrapper for signal masks or dispositions
//! outside its libc-free runtime module, so these are the libc calls left.

use std::io;
use std::mem::MaybeUninit;
use std::ptr;
use std::time::Duration;

/// Signals that ask the shim to kill the command's tree.
const KILL_REQUESTS: [i32; 4] = [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT];

/// What woke the shim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wake {
    /// SIGCHLD: some child changed state.
    Child,
    /// One of [`KILL_REQUESTS`].
    KillRequest,
    /// The timeout passed, or the wait failed.
    Nothing,
}

/// SIGCHLD and the kill requests, the set the shim blocks and waits on.
pub(super) struct SignalSet(libc::sigset_t);

impl SignalSet {
    #[allow(unsafe_code)]
    pub(super) fn shim() -> Self {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: sigemptyset initialises the set in place; sigaddset only sets bits in it.
        unsafe {
            libc::sigemptyset(set.as_mut_ptr());
            libc::sigaddset(set.as_mut_ptr(), libc::SIGCHLD);
            for sig in KILL_REQUESTS {
                libc::sigaddset(set.as_mut_ptr(), sig);
            }
            Self(set.assume_init())
        }
    }

    /// The empty set.
    #[allow(unsafe_code)]
    pub(super) fn empty() -> Self {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: sigemptyset initialises the set in place.
        unsafe {
            libc::sigemptyset(set.as_mut_ptr());
            Self(set.assume_init())
        }
    }

    /// Blocks these signals (added to the mask), so they queue for [`Self::wait`].
    pub(super) fn block(&self) {
        set_mask(libc::SIG_BLOCK, self);
    }

    /// Makes this the whole mask (an empty set unblocks everything).
    pub(super) fn set_as_mask(&self) {
        set_mask(libc::SIG_SETMASK, self);
    }

    /// Waits for one signal of the set (all blocked), up to `timeout` if given.
    #[allow(unsafe_code)]
    pub(super) fn wait(&self, timeout: Option<Duration>) -> Wake {
        let ts = timeout.map(|t| libc::timespec {
            tv_sec: t.as_secs() as libc::time_t,
            tv_nsec: t.subsec_nanos() as libc::c_long,
        });
        let ts_ptr = ts.as_ref().map_or(ptr::null(), ptr::from_ref);
        loop {
            // SAFETY: the set is initialised and blocked; a null siginfo pointer is allowed,
            // and a null timeout (or `ts`, which outlives the call) is what sigwaitinfo uses.
            let rc = unsafe { libc::sigtimedwait(&self.0, ptr::null_mut(), ts_ptr) };
            if rc == libc::SIGCHLD {
                return Wake::Child;
            }
            if rc > 0 {
                return Wake::KillRequest;
            }
            if timeout.is_none() && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
            {
                continue;
            }
            return Wake::Nothing;
        }
    }
}

#[allow(unsafe_code)]
fn set_mask(how: libc::c_int, set: &SignalSet) {
    // SAFETY: `set` is an initialised sigset; the previous mask is not requested. Only the
    // calling thread's mask changes (the shim and its forks are single-threaded).
    unsafe { libc::sigprocmask(how, &set.0, ptr::null_mut()) };
}

/// How a signal is disposed of; no handler code is ever installed.
#[derive(Debug, Clone, Copy)]
pub(super) enum Disposition {
    Ignore,
    Default,
}

/// Sets the disposition of `signal`. Async-signal-safe (used between fork and exec).
#[allow(unsafe_code)]
pub(super) fn set_disposition(signal: libc::c_int, disposition: Disposition) {
    let handler = match disposition {
        Disposition::Ignore => libc::SIG_IGN,
        Disposition::Default => libc::SIG_DFL,
    };
    // SAFETY: SIG_IGN and SIG_DFL are not handler functions, so no code is installed.
    unsafe { libc::signal(signal, handler) };
}
