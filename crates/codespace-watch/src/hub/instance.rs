//! The hub's inotify instance and its event thread: the thread waits on the queue and on a
//! pipe whose write end the instance holds, so dropping the instance (the hub gone, or the
//! queue unreadable) ends the thread without a record to wake it.

use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Weak};

use rustix::event::{PollFd, PollFlags, poll};
use rustix::fs::inotify::{self, CreateFlags, WatchFlags};
use rustix::io::Errno;
use rustix::pipe::{PipeFlags, pipe_with};

use super::Core;
use crate::translate::{READ_BUFFER, read_batch};
use crate::tree::EVENTS;

/// The one inotify instance of a hub.
pub(super) struct Instance {
    pub(super) id: u64,
    fd: Arc<OwnedFd>,
    /// Dropping it wakes the event thread, which then ends.
    _wake: OwnedFd,
}

impl Instance {
    /// A new inotify instance and its event thread.
    pub(super) fn open(id: u64, core: Weak<Core>) -> Result<Instance, String> {
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).map_err(|e| {
            let limit = if e == Errno::MFILE {
                " (the per-user limit fs.inotify.max_user_instances, or the open file limit)"
            } else {
                ""
            };
            format!("inotify_init1 failed: {e}{limit}")
        })?;
        let fd = Arc::new(fd);
        let (woken, wake) = pipe_with(PipeFlags::CLOEXEC)
            .map_err(|e| format!("no pipe for the watcher's thread: {e}"))?;
        let queue = Arc::clone(&fd);
        std::thread::Builder::new()
            .name("codespace-watch".to_owned())
            .spawn(move || run(&core, &queue, &woken, id))
            .map_err(|e| format!("no thread for the watcher: {e}"))?;
        Ok(Instance { id, fd, _wake: wake })
    }

    /// Adds (or finds, keeping the same mask) the watch on the directory `magic` names.
    pub(super) fn add_watch(&self, magic: &str) -> Result<i32, Errno> {
        inotify::add_watch(&*self.fd, magic, EVENTS | WatchFlags::ONLYDIR)
    }

    pub(super) fn remove_watch(&self, wd: i32) {
        // EINVAL: the kernel removed it already (the directory was deleted).
        let _gone = inotify::remove_watch(&*self.fd, wd);
    }
}

/// The event thread: each read's records routed under the hub's lock, until the instance
/// is dropped or reading fails.
fn run(core: &Weak<Core>, fd: &OwnedFd, woken: &OwnedFd, id: u64) {
    let mut buf = vec![MaybeUninit::<u8>::uninit(); READ_BUFFER];
    loop {
        let mut fds = [PollFd::new(fd, PollFlags::IN), PollFd::new(woken, PollFlags::IN)];
        match poll(&mut fds, None) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(e) => return lost(core, id, e),
        }
        if !fds[1].revents().is_empty() {
            return;
        }
        let records = match read_batch(fd.as_fd(), &mut buf) {
            Ok(records) => records,
            Err(Errno::INTR | Errno::AGAIN) => continue,
            Err(e) => return lost(core, id, e),
        };
        let Some(core) = core.upgrade() else { return };
        let mut state = core.lock();
        if state.instance.as_ref().is_none_or(|i| i.id != id) {
            return;
        }
        state.route(&records);
    }
}

/// Reading the queue failed: every workspace stops, and the next start opens a new
/// instance.
fn lost(core: &Weak<Core>, id: u64, e: Errno) {
    tracing::warn!(error = %e, "reading the inotify queue failed");
    let Some(core) = core.upgrade() else { return };
    let mut state = core.lock();
    if state.instance.as_ref().is_some_and(|i| i.id == id) {
        state.lost_instance();
    }
}
