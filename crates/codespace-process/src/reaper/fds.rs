//! The shim's descriptors: entering the inherited working directory, adopting the report
//! pipe at fd 3, closing whatever leaked from the server, and detaching its own stdio once
//! the command holds it. The raw calls are `codespace_sandbox::sys`'s.

use std::fs::File;
use std::os::fd::{AsRawFd as _, RawFd};

use codespace_sandbox::sys;
use rustix::io::FdFlags;

/// The descriptor the shim keeps its report pipe on.
pub(crate) const REPORT_FD: RawFd = 3;

/// Closes every descriptor from 3 up except `inherited`, then takes ownership of
/// `inherited` (the report pipe the supervisor passed) and moves it to [`REPORT_FD`],
/// close-on-exec. `None` when nothing is open there.
#[expect(unsafe_code, reason = "takes over the descriptor table the shim inherited")]
pub(super) fn adopt_report_fd(inherited: RawFd) -> Option<File> {
    // SAFETY: this runs first thing in the single-threaded shim, before anything owns a
    // descriptor above 2 (std's own are 0-2); the inherited number is the report pipe the
    // supervisor passed, owned by nothing here. Out-of-range values were refused by the
    // argument decoder; they only close.
    let fd = unsafe { sys::keep_only_fd(REPORT_FD, inherited) }?;
    let fd = if fd.as_raw_fd() == REPORT_FD {
        rustix::io::fcntl_setfd(&fd, FdFlags::CLOEXEC).ok()?;
        fd
    } else {
        // Every descriptor from 3 to `inherited` is closed, so the lowest free one at or
        // above 3 is 3 itself.
        rustix::io::fcntl_dupfd_cloexec(&fd, REPORT_FD).ok()?
    };
    Some(File::from(fd))
}

/// `fchdir` onto the inherited directory descriptor `fd` (closed later with the rest).
pub(super) fn enter_dir(fd: RawFd) -> std::io::Result<()> {
    sys::fchdir_raw(fd)
}

/// Points the shim's own fds 0-2 at `/dev/null` once the command has them, so the shim
/// holds no end of the command's stdin (a command that closes its stdin makes the
/// supervisor's writes fail with EPIPE) nor of its output or terminal.
#[expect(clippy::disallowed_methods, reason = "opens /dev/null")]
pub(super) fn detach_stdio() {
    let Ok(null) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null") else {
        return;
    };
    // dup2 atomically replaces each; the std stdio handles that name them stay valid (they
    // now reach /dev/null, and the shim writes nothing to them anyway).
    let _ = rustix::stdio::dup2_stdin(&null);
    let _ = rustix::stdio::dup2_stdout(&null);
    let _ = rustix::stdio::dup2_stderr(&null);
}
