//! The client connection's shared state: the callers waiting for answers, each frame's
//! progress through the write half, and the reason the connection was lost.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::{FutureExt, SinkExt};
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::oneshot;
use tokio_util::bytes::Bytes;
use tokio_util::codec::{FramedWrite, LengthDelimitedCodec};
use tokio_util::sync::CancellationToken;

use super::CallError;

/// What the clients and the two tasks share.
pub(super) struct Inner<Resp> {
    pub(super) next_id: AtomicU64,
    /// The socket's write half: one frame at a time, in the order the lock is taken (tokio's
    /// mutex is fair), so frames never interleave.
    pub(super) sink: Arc<tokio::sync::Mutex<FramedWrite<OwnedWriteHalf, LengthDelimitedCodec>>>,
    pub(super) state: Mutex<State<Resp>>,
    /// Raised once, when the connection is lost for any reason.
    pub(super) lost: CancellationToken,
}

pub(super) struct State<Resp> {
    /// The callers waiting for an answer, by request id.
    pub(super) calls: HashMap<u64, oneshot::Sender<Resp>>,
    /// The callers waiting for a replayed answer, by request id, oldest first.
    pub(super) replays: HashMap<u64, VecDeque<oneshot::Sender<Option<Resp>>>>,
    /// Why the connection was lost, once it is.
    pub(super) lost: Option<String>,
}

/// A frame to write; `progress` is there when a caller needs to know whether the writing
/// started.
pub(super) struct Outgoing {
    pub(super) bytes: Bytes,
    pub(super) progress: Option<Arc<Progress>>,
}

/// A frame's fate, decided once by whichever comes first: its write starting (its turn on
/// the write half came), or its caller giving up on it (the write is then skipped). That
/// race is what makes
/// "not sent" exact.
pub(super) struct Progress(AtomicU8);

const QUEUED: u8 = 0;
const STARTED: u8 = 1;
const ABANDONED: u8 = 2;

impl Progress {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Progress(AtomicU8::new(QUEUED)))
    }

    /// The write's claim: true when it may write the frame.
    pub(super) fn start(&self) -> bool {
        self.0.compare_exchange(QUEUED, STARTED, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// Whether the write claimed the frame (it may be on the wire, in part or whole).
    pub(super) fn started(&self) -> bool {
        self.0.load(Ordering::Acquire) == STARTED
    }

    /// The caller's claim: true when the frame will never be written.
    pub(super) fn abandon(&self) -> bool {
        self.0.compare_exchange(QUEUED, ABANDONED, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }
}

/// What a caller waits for.
#[derive(Clone, Copy)]
pub(super) enum Waiting {
    Call(u64),
    Replay(u64),
}

impl<Resp> Inner<Resp> {
    pub(super) fn lock(&self) -> MutexGuard<'_, State<Resp>> {
        // The state stays consistent across a panic (every change is one map operation).
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a caller for the answer to `id`, unless the connection is already lost.
    pub(super) fn register(&self, id: u64) -> Result<oneshot::Receiver<Resp>, CallError> {
        let (tx, rx) = oneshot::channel();
        let mut state = self.lock();
        if let Some(reason) = &state.lost {
            return Err(CallError::NotSent { reason: reason.clone() });
        }
        state.calls.insert(id, tx);
        Ok(rx)
    }

    /// Drops a caller that stopped waiting (its receiver is gone already).
    pub(super) fn forget(&self, waiting: Waiting) {
        let mut state = self.lock();
        match waiting {
            Waiting::Call(id) => {
                state.calls.remove(&id);
            }
            Waiting::Replay(id) => {
                if let Some(queue) = state.replays.get_mut(&id) {
                    queue.retain(|tx| !tx.is_closed());
                    if queue.is_empty() {
                        state.replays.remove(&id);
                    }
                }
            }
        }
    }

    /// The error for a caller whose answer will not come because the connection was lost:
    /// whether its frame was started decides between "not sent" and "may have run".
    pub(super) fn lost_error(&self, progress: &Progress) -> CallError {
        let reason =
            self.lock().lost.clone().unwrap_or_else(|| "the connection was lost".to_owned());
        if progress.abandon() {
            CallError::NotSent { reason }
        } else {
            CallError::Ambiguous { reason }
        }
    }

    /// Marks the connection lost (the first reason wins) and fails every waiting caller.
    pub(super) fn lose(&self, reason: String) {
        let waiters = {
            let mut state = self.lock();
            if state.lost.is_none() {
                tracing::warn!(%reason, "runner wire: connection lost");
                state.lost = Some(reason);
            }
            (std::mem::take(&mut state.calls), std::mem::take(&mut state.replays))
        };
        // Dropped outside the lock: each drop wakes a caller, which then takes the lock.
        drop(waiters);
        self.lost.cancel();
    }

    /// The last client is gone (so no caller waits): ends the tasks, which closes the socket.
    pub(super) fn close(&self) {
        let mut state = self.lock();
        if state.lost.is_none() {
            tracing::debug!("runner wire: the last client was dropped; closing the connection");
            state.lost = Some("the client was dropped".to_owned());
        }
        drop(state);
        self.lost.cancel();
    }

    /// Routes an answer to its caller; a late one (its caller timed out) is dropped.
    pub(super) fn answer(&self, id: u64, body: Resp) {
        let mut state = self.lock();
        if let Some(tx) = state.calls.remove(&id) {
            // The caller may have stopped waiting a moment ago; then nobody wants it.
            let _ = tx.send(body);
            return;
        }
        let Some(queue) = state.replays.get_mut(&id) else {
            tracing::debug!(id, "runner wire: late answer dropped");
            return;
        };
        let mut body = Some(body);
        while let Some(tx) = queue.pop_front() {
            match tx.send(body) {
                Ok(()) => break,
                Err(back) => body = back,
            }
        }
        if queue.is_empty() {
            state.replays.remove(&id);
        }
    }

    /// The worker does not have the answer to `id` (any more).
    pub(super) fn no_replay(&self, id: u64) {
        let mut state = self.lock();
        let Some(queue) = state.replays.get_mut(&id) else { return };
        while let Some(tx) = queue.pop_front() {
            if tx.send(None).is_ok() {
                break;
            }
        }
        if queue.is_empty() {
            state.replays.remove(&id);
        }
    }
}

impl<Resp: Send + 'static> Inner<Resp> {
    /// Writes `frame`: on the caller's own thread when the socket takes it at once (no
    /// hand-off to another task, the common case), else in a task that finishes it, so a
    /// frame that has started is never left half-written by a caller that goes away. A
    /// frame whose caller gave up before its turn is skipped.
    pub(super) fn send(self: &Arc<Self>, frame: Outgoing) {
        let (inner, sink) = (Arc::clone(self), Arc::clone(&self.sink));
        let mut write = Box::pin(async move {
            let mut sink = sink.lock_owned().await;
            if let Some(progress) = &frame.progress
                && !progress.start()
            {
                return;
            }
            // A worker that stops reading must not hold the write past the connection's end.
            let sent = tokio::select! {
                biased;
                () = inner.lost.cancelled() => return,
                sent = sink.send(frame.bytes) => sent,
            };
            if let Err(e) = sent {
                inner.lose(format!("writing to the runner worker failed: {e}"));
            }
        });
        if (&mut write).now_or_never().is_none() {
            tokio::spawn(write);
        }
    }
}
