//! A started reaper shim as the supervisor holds it (its own child, or the spawn helper's
//! known by a pidfd), and the signals the supervisor sends it: SIGUSR1 "send your tree
//! SIGTERM", SIGTERM "kill your tree with SIGKILL, then exit", and SIGKILL for a shim that
//! does not exit.

use std::io;
use std::os::fd::OwnedFd;

use rustix::process::Signal;
use tokio::io::unix::AsyncFd;
use tokio::process::Child;

/// A started shim: a child of the supervisor (started directly), or a child of the spawn
/// helper, known by its pidfd.
pub(crate) enum Shim {
    Child(Child),
    Pidfd { fd: AsyncFd<OwnedFd>, exited: bool },
}

/// A shim that is sent SIGTERM (so it kills its tree) if dropped before it exited.
pub(crate) struct ShimGuard {
    pub(crate) shim: Shim,
}

impl ShimGuard {
    /// SIGTERM to the shim: "kill your tree, then exit". A no-op once it has exited (a
    /// reaped child has no pid, and a pidfd never names another process).
    pub(crate) fn request_kill(&self) {
        self.signal(Signal::TERM);
    }

    /// SIGUSR1 to the shim: "send your tree SIGTERM" (the start of a grace). A no-op once
    /// it has exited.
    pub(crate) fn request_term(&self) {
        self.signal(Signal::USR1);
    }

    /// SIGKILL to the shim itself.
    pub(crate) fn start_kill(&mut self) {
        match &mut self.shim {
            Shim::Child(child) => {
                let _ = child.start_kill();
            }
            Shim::Pidfd { .. } => self.signal(Signal::KILL),
        }
    }

    fn signal(&self, signal: Signal) {
        match &self.shim {
            Shim::Child(child) => {
                if let Some(pid) = child.id().and_then(|p| rustix::process::Pid::from_raw(p as i32))
                {
                    let _ = rustix::process::kill_process(pid, signal);
                }
            }
            Shim::Pidfd { fd, exited } => {
                if !*exited {
                    let _ = rustix::process::pidfd_send_signal(fd.get_ref(), signal);
                }
            }
        }
    }

    /// Waits until the shim has exited.
    pub(crate) async fn wait(&mut self) {
        match &mut self.shim {
            Shim::Child(child) => {
                let _ = child.wait().await;
            }
            Shim::Pidfd { fd, exited } => {
                if !*exited {
                    // A pidfd turns readable once its process has exited; a failure to
                    // watch it is taken as the end too, rather than waiting forever.
                    let _ = fd.readable().await;
                    *exited = true;
                }
            }
        }
    }
}

impl Drop for ShimGuard {
    fn drop(&mut self) {
        // tokio reaps a dropped child in the background, the helper its own; the SIGTERM
        // makes it exit.
        self.request_kill();
    }
}

/// Registers a pidfd with the runtime, to learn when its process exits.
#[expect(unsafe_code, reason = "tokio's registration of a raw descriptor is unsafe")]
pub(crate) fn watch(pidfd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: the `OwnedFd` is moved in, so the descriptor stays open and the same for the
    // `AsyncFd`'s whole life.
    unsafe { AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE) }
        .map_err(|e| e.into_parts().1)
}
