//! Subscriptions: a bounded queue of events per subscriber. A subscriber that falls more
//! than [`SUBSCRIBER_BUFFER`] events behind loses them and receives one `ResyncRequired`
//! with `seq` 0 in their place: lag is never a silent skip.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::event::{EventKind, WatchEvent};

/// Events a subscriber may fall behind by.
pub const SUBSCRIBER_BUFFER: usize = 512;

#[derive(Debug, Default)]
struct Queue {
    events: VecDeque<WatchEvent>,
    /// Events were dropped: the next receive is a local `ResyncRequired` of this epoch.
    lagged_in: Option<u64>,
    closed: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `ev`, or marks the subscriber lagged when it is full.
    pub(crate) fn push(&self, ev: &WatchEvent) {
        let mut q = self.lock();
        if q.lagged_in.is_some() {
            return;
        }
        if q.events.len() >= SUBSCRIBER_BUFFER {
            q.events.clear();
            q.lagged_in = Some(ev.epoch);
        } else {
            q.events.push_back(ev.clone());
        }
        drop(q);
        self.ready.notify_all();
    }

    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }
}

/// One subscriber's end. Dropping it unsubscribes.
#[derive(Debug)]
pub struct Subscription {
    pub(crate) shared: Arc<Shared>,
}

/// Why [`Subscription::recv_timeout`] returned no event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RecvError {
    #[error("no event within the wait")]
    Timeout,
    /// The watcher was dropped.
    #[error("the watcher is closed")]
    WatchClosed,
}

impl Subscription {
    /// The next event, waiting up to `wait`.
    pub fn recv_timeout(&self, wait: Duration) -> Result<WatchEvent, RecvError> {
        let end = Instant::now() + wait;
        let mut q = self.shared.lock();
        loop {
            if let Some(epoch) = q.lagged_in.take() {
                return Ok(WatchEvent { epoch, seq: 0, kind: EventKind::ResyncRequired });
            }
            if let Some(ev) = q.events.pop_front() {
                return Ok(ev);
            }
            if q.closed {
                return Err(RecvError::WatchClosed);
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(RecvError::Timeout);
            }
            q = self.shared.ready.wait_timeout(q, left).unwrap_or_else(PoisonError::into_inner).0;
        }
    }
}

#[cfg(test)]
mod tests;
