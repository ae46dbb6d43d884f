//! Passing a descriptor between processes over an `AF_UNIX` socket (`SCM_RIGHTS`): how the
//! monitor hands the network namespace it made to the init.

use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};

use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};

use crate::enter::SandboxError;

/// A connected pair of close-on-exec `SOCK_SEQPACKET` sockets.
pub(super) fn socketpair() -> Result<(OwnedFd, OwnedFd), SandboxError> {
    rustix::net::socketpair(AddressFamily::UNIX, SocketType::SEQPACKET, SocketFlags::CLOEXEC, None)
        .map_err(|e| SandboxError::errno("socketpair", e))
}

/// Sends `fd` over `channel` with one data byte. `Ok(false)`: the receiver has already
/// closed its end (it ended first, and its own report says why).
pub(super) fn send_fd(channel: BorrowedFd<'_>, fd: BorrowedFd<'_>) -> Result<bool, SandboxError> {
    let fds = [fd];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(SandboxError::other("send network namespace", "no room for a descriptor"));
    }
    let byte = [0u8; 1];
    match rustix::net::sendmsg(channel, &[IoSlice::new(&byte)], &mut control, SendFlags::NOSIGNAL) {
        Ok(1) => Ok(true),
        Ok(_) => Err(SandboxError::other("send network namespace", "nothing sent")),
        Err(rustix::io::Errno::PIPE | rustix::io::Errno::CONNRESET) => Ok(false),
        Err(e) => Err(SandboxError::errno("send network namespace", e)),
    }
}

/// Receives one descriptor sent by [`send_fd`], close-on-exec.
pub(super) fn receive_fd(channel: BorrowedFd<'_>) -> Result<OwnedFd, SandboxError> {
    let mut byte = [0u8; 1];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let received = rustix::net::recvmsg(
        channel,
        &mut [IoSliceMut::new(&mut byte)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    );
    if !matches!(received, Ok(ref m) if m.bytes == 1) {
        return Err(SandboxError::other("receive network namespace", "the monitor sent none"));
    }
    let fd = control.drain().find_map(|message| match message {
        RecvAncillaryMessage::ScmRights(mut fds) => fds.next(),
        _ => None,
    });
    fd.ok_or_else(|| SandboxError::other("receive network namespace", "no descriptor"))
}
