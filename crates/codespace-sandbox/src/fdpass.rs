//! Messages with descriptors between processes: one `SOCK_SEQPACKET` datagram per
//! message, the descriptors passed with `SCM_RIGHTS`. The supervisor and its spawn helper
//! talk over it, and the launcher's monitor hands the network namespace it made to the
//! init with it.

use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};

use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags,
    SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};

/// Descriptors one message carries at most.
pub const MAX_FDS: usize = 8;

/// A connected pair of close-on-exec `SOCK_SEQPACKET` sockets.
pub fn socketpair() -> io::Result<(OwnedFd, OwnedFd)> {
    let (a, b) = rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?;
    Ok((a, b))
}

/// Sends `payload` (not empty) and `fds` as one message. A peer that closed its end is
/// `EPIPE` (no SIGPIPE is raised).
pub fn send(socket: BorrowedFd<'_>, payload: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if fds.len() > MAX_FDS
        || (!fds.is_empty() && !control.push(SendAncillaryMessage::ScmRights(fds)))
    {
        return Err(io::Error::other("too many descriptors"));
    }
    let sent =
        rustix::net::sendmsg(socket, &[IoSlice::new(payload)], &mut control, SendFlags::NOSIGNAL)?;
    if sent == payload.len() { Ok(()) } else { Err(io::Error::other("message cut short")) }
}

/// Receives one message into `buf`; returns its length and descriptors, `None` at end of
/// file. Descriptors arrive close-on-exec. A message that did not fit is an error.
pub fn recv(socket: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<Option<(usize, Vec<OwnedFd>)>> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let msg = loop {
        match rustix::net::recvmsg(
            socket,
            &mut [IoSliceMut::new(buf)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        ) {
            Err(rustix::io::Errno::INTR) => {}
            other => break other?,
        }
    };
    let fds: Vec<OwnedFd> = control
        .drain()
        .filter_map(|m| match m {
            RecvAncillaryMessage::ScmRights(fds) => Some(fds.collect::<Vec<_>>()),
            _ => None,
        })
        .flatten()
        .collect();
    if msg.bytes == 0 {
        return Ok(None);
    }
    if msg.flags.intersects(ReturnFlags::TRUNC | ReturnFlags::CTRUNC) {
        return Err(io::Error::other("message truncated"));
    }
    Ok(Some((msg.bytes, fds)))
}
