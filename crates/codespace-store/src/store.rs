//! [`Store`]: one SQLite connection behind a mutex, and the transactions every ledger call
//! runs in; for a file ledger, a second, read-only connection for the snapshots a file or
//! process call takes (the coordination hint), so that they never wait behind a commit.
//!
//! Every write is one `BEGIN IMMEDIATE` transaction, so a writer takes the database lock
//! before it reads anything and never has to upgrade a read lock (the upgrade is what
//! returns `SQLITE_BUSY` without waiting); with the 5 s busy timeout, contention between
//! handles and processes waits instead of failing. With WAL and `synchronous=FULL`, a
//! call that returned `Ok` has been fsynced to the WAL and survives a crash or power loss.
//!
//! Reads run in a deferred transaction, so a record's row, plan and events come from one
//! snapshot even while other handles write.
//!
//! # Layout
//! - `open`: opening a file or in-memory ledger, its configuration and open-time checks.
//! - `holds`: confirmation holds (the `approvals` table): create or reuse, read, list, state
//!   changes.
//! - `busy`: [`BUSY_TIMEOUT`], the busy handler and the open-time retry.
//! - `drafts`: operations minted in memory, planned or finished in one transaction each.
//! - `operations`: `recover`, and closing a row; an operator's `restored` note.
//! - `owners`: this process's instance, the liveness of another, and taking over the work
//!   of a dead one.
//! - `plans`: writing a plan's files and reading them back.
//! - `events`: appending and reading an operation's history.
//! - `queries`: `get`, `get_by_key`, `unfinished`: whole records.
//! - `retention`: the undo records' bound: oldest first, by age and total bytes.
//! - `undo_rows`: the old content the plan's transaction stored, read back or written out.
//! - `works`: works and intents, read and changed in one transaction by the gateway
//!   (`works/statements.rs`: the SQL; `works/columns.rs`: stored columns into rows).
//! - `tally`: how many holds wait for a person and instructions for the agent (metrics).
//! - `tasks`: the tasks of the MCP Tasks extension: created before the client hears of
//!   them, settled once, taken over from a dead owner.
//! - `sql`: the column texts of statuses, kinds, event names and versions, both ways.

mod busy;
mod drafts;
mod events;
mod holds;
mod open;
mod operations;
mod owners;
mod plans;
mod queries;
mod retention;
mod sql;
mod stamp;
mod tally;
mod tasks;
mod undo_rows;
mod works;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use rusqlite::{Connection, TransactionBehavior};

pub use busy::BUSY_TIMEOUT;
pub use drafts::{Draft, Drafted};
pub use owners::KEPT_ENDED_INSTANCES;
pub use stamp::ChangeStamp;
pub use tally::Tally;
pub use tasks::{TaskRow, TaskSettle};
pub use works::{IntentRow, WorkRow, Works};

use crate::error::{StoreError, is_storage_failure};
use crate::instance::Instance;
use crate::model::Retention;
use crate::undo::UndoLog;

/// The durable ledger of patch operations.
///
/// `Send + Sync`: calls from many threads are serialised on the one connection; separate
/// handles (and processes) on the same file are serialised by SQLite's locks.
pub struct Store {
    /// Read-only, for [`Store::change_stamp`] and [`Store::works_read`]: in WAL mode a
    /// reader never waits for a writer, so these do not queue behind a commit's fsync or a
    /// write lock another process holds. `None` in memory (a second connection would open
    /// another, empty database). Declared before `inner` so that it is closed first: the
    /// last connection to close checkpoints the WAL into the database and removes it, and
    /// a read-only one cannot.
    reader: Option<Mutex<Connection>>,
    inner: Mutex<Inner>,
    path: Option<PathBuf>,
    undo: UndoLog,
    /// The bound [`Store::prune_undo`] keeps undo records within.
    retention: Retention,
    /// The directory of instance locks beside the ledger file; `None` in memory.
    owners: Option<PathBuf>,
    /// This process's instance, once [`Store::start_instance`] made it one: the owner of
    /// the work it records.
    instance: OnceLock<Instance>,
    /// Told how long each write transaction took, body and commit (its fsync) together.
    commit_observer: OnceLock<CommitObserver>,
}

/// What [`Store::observe_commits`] is given: called with each write transaction's time.
pub type CommitObserver = Box<dyn Fn(std::time::Duration) + Send + Sync>;

struct Inner {
    conn: Connection,
    /// Set after a storage failure (I/O error, disk full, corruption): writes are refused
    /// from then on (security case D5).
    degraded: Option<String>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Store {
    fn new(
        conn: Connection,
        reader: Option<Connection>,
        path: Option<PathBuf>,
        undo: UndoLog,
    ) -> Store {
        let inner = Mutex::new(Inner { conn, degraded: None });
        let owners = path.as_deref().map(crate::instance::beside);
        Store {
            inner,
            reader: reader.map(Mutex::new),
            path,
            undo,
            retention: Retention::default(),
            owners,
            instance: OnceLock::new(),
            commit_observer: OnceLock::new(),
        }
    }

    /// Has `observer` told how long each write transaction takes from now on (set once; a
    /// later call is ignored).
    pub fn observe_commits(&self, observer: CommitObserver) {
        let _ = self.commit_observer.set(observer);
    }

    /// Sets the bound undo records are kept within (the default: [`Retention::default`]).
    pub fn set_retention(&mut self, retention: Retention) {
        self.retention = retention;
    }

    /// The bound undo records are kept within.
    pub fn retention(&self) -> Retention {
        self.retention
    }

    /// The undo log that belongs to this ledger.
    pub fn undo(&self) -> &UndoLog {
        &self.undo
    }

    /// The file this ledger was opened from; `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The cause, when an earlier storage failure made this handle refuse writes.
    pub fn degraded(&self) -> Option<String> {
        self.lock().degraded.clone()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while the lock was held dropped its transaction, which rolled back.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The read-only connection, when this ledger has one.
    fn lock_reader(&self) -> Option<MutexGuard<'_, Connection>> {
        self.reader.as_ref().map(|r| r.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction and commits it; refused on a
    /// degraded handle; a storage failure degrades the handle.
    fn write<T>(
        &self,
        body: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut inner = self.lock();
        if let Some(cause) = &inner.degraded {
            return Err(StoreError::Degraded { cause: cause.clone() });
        }
        let started = std::time::Instant::now();
        let result = in_transaction(&mut inner.conn, TransactionBehavior::Immediate, body);
        note_failure(&mut inner, &result);
        drop(inner);
        if let Some(observe) = self.commit_observer.get() {
            observe(started.elapsed());
        }
        result
    }

    /// Runs `body` in one deferred (read) transaction.
    fn read<T>(
        &self,
        body: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut inner = self.lock();
        let result = in_transaction(&mut inner.conn, TransactionBehavior::Deferred, body);
        note_failure(&mut inner, &result);
        result
    }
}

fn in_transaction<T>(
    conn: &mut Connection,
    behavior: TransactionBehavior,
    body: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let tx = conn.transaction_with_behavior(behavior)?;
    let value = body(&tx)?;
    tx.commit()?;
    Ok(value)
}

fn note_failure<T>(inner: &mut Inner, result: &Result<T, StoreError>) {
    if let Err(StoreError::Sqlite(error)) = result
        && is_storage_failure(error)
        && inner.degraded.is_none()
    {
        inner.degraded = Some(error.to_string());
    }
}

#[cfg(test)]
mod tests;
