//! Waiting out other writers: the busy handler every connection installs, and the retry
//! for open-time statements that fail fast instead of calling it.

use std::time::{Duration, Instant};

use uuid::Uuid;

use crate::error::is_busy;

/// How long a writer waits for another writer's lock before giving up with `Busy`.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The busy handler: retry for up to [`BUSY_TIMEOUT`], sleeping 0.2 to 2 ms (jittered)
/// between attempts.
///
/// SQLite's own `busy_timeout` handler backs off to 100 ms sleeps after the first 300 ms
/// of waiting, so under steady contention a writer that has waited long polls rarely and
/// keeps losing the lock to newcomers: with 24 handles writing at once it was measured
/// waiting 3.5 s, close to failing with `SQLITE_BUSY`. Short, jittered polls keep the
/// wait close to the queue length times one commit.
pub(super) fn busy_waiter() -> impl FnMut(i32) -> bool + Send + 'static {
    let mut started = Instant::now();
    let mut state = Uuid::new_v4().as_u64_pair().0 | 1;
    move |attempt| {
        if attempt == 0 {
            started = Instant::now();
        }
        if started.elapsed() >= BUSY_TIMEOUT {
            return false;
        }
        // xorshift64: cheap jitter, so waiters do not poll in lockstep.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        std::thread::sleep(Duration::from_micros(200 + state % 1800));
        true
    }
}

/// Repeats `step` while it fails with `SQLITE_BUSY`, for up to [`BUSY_TIMEOUT`]: for the
/// open-time statements SQLite may fail fast instead of calling the busy handler.
pub(super) fn retry_busy<T>(mut step: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let started = Instant::now();
    loop {
        match step() {
            Err(error) if is_busy(&error) && started.elapsed() < BUSY_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(2));
            }
            other => return other,
        }
    }
}
