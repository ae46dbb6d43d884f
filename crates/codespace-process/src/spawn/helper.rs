//! The spawn helper as the supervisor holds it (started once from the spawner thread, so it
//! dies with it), and the spare shims it forks ahead.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd as _, AsRawFd as _, BorrowedFd, OwnedFd};
use std::path::Path;
use std::process::Stdio;

use codespace_sandbox::{envelope, fdpass};
use rustix::net::sockopt::Timeout;

use super::{HELPER_TIMEOUT, above_stdio, inheritable};
use crate::reaper::HELPER_ARG;
use crate::shim_messages::{HelperArgs, HelperAsk, HelperReply};

/// A shim the spawn helper forked ahead (see `reaper/helper.rs`): its pidfd, and the
/// supervisor's end (non-blocking) of the socket it waits on for its request.
pub(crate) struct Spare {
    pidfd: OwnedFd,
    socket: OwnedFd,
}

impl Spare {
    /// Hands the spare its request and the five descriptors; returns its pidfd. Never
    /// blocks: the spare's fresh socket takes the one message at once, or the send fails
    /// and the caller starts the shim another way.
    pub(super) fn start(self, request: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<OwnedFd> {
        fdpass::send(self.socket.as_fd(), request, fds)?;
        Ok(self.pidfd)
    }
}

/// The spawn helper: a process started once (`<reaper_exe> <reaper_arg> --helper …`) from
/// the spawner thread, so it dies with it, that forks every shim (see `reaper/helper.rs`).
pub(crate) struct Helper {
    socket: OwnedFd,
    child: std::process::Child,
}

impl Helper {
    #[expect(clippy::disallowed_methods, reason = "starts the spawn helper")]
    pub(super) fn start(reaper_exe: &Path, reaper_arg: &OsString) -> io::Result<Helper> {
        let (ours, theirs) = fdpass::socketpair()?;
        // A helper that stops answering (stopped, wedged) must not stall every spawn: the
        // request then fails, the helper is dropped, and the shim is exec'd instead.
        for id in [Timeout::Send, Timeout::Recv] {
            rustix::net::sockopt::set_socket_timeout(&ours, id, Some(HELPER_TIMEOUT))?;
        }
        let theirs = above_stdio(theirs)?;
        inheritable(&theirs)?;
        let helper = HelperArgs { ppid: std::process::id(), socket_fd: theirs.as_raw_fd() };
        let args = envelope::to_args(&helper).map_err(io::Error::other)?;
        let child = std::process::Command::new(reaper_exe)
            .arg(reaper_arg)
            .arg(HELPER_ARG)
            .args(args)
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        drop(theirs);
        Ok(Helper { socket: ours, child: child? })
    }

    /// Sends one request; returns the pidfd of the shim the helper forked.
    pub(super) fn spawn(&self, request: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<OwnedFd> {
        fdpass::send(self.socket.as_fd(), request, fds)?;
        let mut buf = [0u8; 64];
        let Some((len, mut received)) = fdpass::recv(self.socket.as_fd(), &mut buf)? else {
            return Err(io::Error::other("the spawn helper is gone"));
        };
        match (envelope::decode(&buf[..len]).map_err(io::Error::other)?, received.pop()) {
            (HelperReply::Forked { .. }, Some(pidfd)) => Ok(pidfd),
            (HelperReply::Forked { .. }, None) => Err(io::Error::from_raw_os_error(libc::EIO)),
            (HelperReply::Failed { errno }, _) => Err(io::Error::from_raw_os_error(errno)),
        }
    }

    /// Has the helper fork a spare shim; returns it (its pidfd and its socket, made
    /// non-blocking).
    pub(super) fn spare(&self) -> io::Result<Spare> {
        let ask = envelope::encode(&HelperAsk::Spare).map_err(io::Error::other)?;
        fdpass::send(self.socket.as_fd(), &ask, &[])?;
        let mut buf = [0u8; 64];
        let Some((len, received)) = fdpass::recv(self.socket.as_fd(), &mut buf)? else {
            return Err(io::Error::other("the spawn helper is gone"));
        };
        match envelope::decode(&buf[..len]).map_err(io::Error::other)? {
            HelperReply::Forked { .. } => {
                let Ok([pidfd, socket]) = <[OwnedFd; 2]>::try_from(received) else {
                    return Err(io::Error::from_raw_os_error(libc::EIO));
                };
                rustix::io::ioctl_fionbio(&socket, true)?;
                Ok(Spare { pidfd, socket })
            }
            HelperReply::Failed { errno } => Err(io::Error::from_raw_os_error(errno)),
        }
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        // Its socket closes with it: it exits (its shims then kill their trees).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
