//! The shim's descriptors: entering the inherited working directory, adopting the report
//! pipe at fd 3, closing whatever leaked from the server, and detaching its own stdio once
//! the command holds it.

use std::fs::File;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};

use rustix::io::FdFlags;

/// The descriptor the shim keeps its report pipe on.
pub(crate) const REPORT_FD: RawFd = 3;

/// Closes every descriptor from 3 up except `inherited`, then takes ownership of
/// `inherited` (the report pipe the supervisor passed) and moves it to [`REPORT_FD`],
/// close-on-exec. `None` when nothing is open there.
pub(super) fn adopt_report_fd(inherited: RawFd) -> Option<File> {
    // Out-of-range values were refused by the argument parser; they only close.
    let keep = u32::try_from(inherited).ok().filter(|fd| *fd >= REPORT_FD as u32);
    match keep {
        Some(keep) => {
            if keep > REPORT_FD as u32 {
                close_fds(REPORT_FD as u32, keep - 1);
            }
            close_fds(keep.saturating_add(1), u32::MAX);
        }
        None => close_fds(REPORT_FD as u32, u32::MAX),
    }
    let fd = take_open_fd(keep? as RawFd)?;
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
#[allow(unsafe_code)]
pub(super) fn enter_dir(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fchdir takes a plain number and changes only this process's working
    // directory; a number that is not an open directory fails (EBADF, ENOTDIR). rustix's
    // fchdir needs a borrowed descriptor, which an unchecked number cannot be.
    if unsafe { libc::fchdir(fd) } == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// Owns `fd` if it is open.
#[allow(unsafe_code)]
fn take_open_fd(fd: RawFd) -> Option<OwnedFd> {
    // SAFETY: F_GETFD only asks whether the number is open; if it is, it is the descriptor
    // the supervisor passed, which nothing else in this single-threaded process owns (every
    // other one at or above 3 was just closed, and std's own are 0-2).
    unsafe {
        if libc::fcntl(fd, libc::F_GETFD) < 0 {
            return None;
        }
        Some(OwnedFd::from_raw_fd(fd))
    }
}

/// Closes every descriptor in `first..=last`, whatever leaked into the shim from the server.
#[allow(unsafe_code)]
fn close_fds(first: u32, last: u32) {
    if first > last {
        return;
    }
    // SAFETY: close_range only closes descriptors. It runs first thing in the shim
    // (single-threaded), before anything owns a descriptor in the range, so no Rust object
    // is left holding a closed descriptor.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) };
    if rc == 0 {
        return;
    }
    // Kernels before 5.9: list the open descriptors, then close them.
    let open: Vec<u32> = std::fs::read_dir("/proc/self/fd")
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
                .filter(|fd| (first..=last).contains(fd))
                .collect()
        })
        .unwrap_or_default();
    for fd in open {
        // SAFETY: as above; the listing's own descriptor is already closed (EBADF, ignored).
        unsafe { libc::close(fd as RawFd) };
    }
}

/// Points the shim's own fds 0-2 at `/dev/null` once the command has them, so the shim
/// holds no end of the command's stdin (a command that closes its stdin makes the
/// supervisor's writes fail with EPIPE) nor of its output or terminal.
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
