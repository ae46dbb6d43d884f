//! [`StoreError`]: every way a ledger call can fail.
//!
//! A missing operation is not an error of the read calls (`get` and `get_by_key` return
//! `Ok(None)`), and no storage failure is ever reported as one: an I/O error, a busy
//! database or a corrupt row each has its own variant, so the gateway can give each its
//! honest wire code.

use std::io;
use std::path::PathBuf;

use rusqlite::ErrorCode;

use crate::model::OpStatus;

/// A ledger failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The ledger file or its directory could not be created, opened or inspected.
    #[error("cannot open the operations ledger {}: {source}", path.display())]
    Open {
        /// The ledger path as given.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: io::Error,
    },
    /// SQLite failed while opening, configuring or migrating the ledger.
    #[error("cannot open the operations ledger {} ({step}): {source}", path.display())]
    OpenDatabase {
        /// The ledger path as given (`:memory:` for an in-memory ledger).
        path: PathBuf,
        /// What open was doing: `open`, `journal_mode=WAL`, `configure`,
        /// `integrity_check`, `migrate`.
        step: &'static str,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// The ledger location or file failed a hygiene check and was not used: a symlink, a
    /// network filesystem, a WAL without its database, a corrupt database, a database of
    /// another application or of a newer schema.
    #[error("refusing the operations ledger {}: {reason}", path.display())]
    Refused {
        /// The ledger path as given.
        path: PathBuf,
        /// What was wrong and what the operator can do about it.
        reason: String,
    },
    /// The database stayed locked by another writer past the busy timeout. Retryable.
    #[error("the operations ledger is busy (locked by another writer past the busy timeout)")]
    Busy(#[source] rusqlite::Error),
    /// An earlier write hit a storage failure (I/O error, disk full, corruption); this
    /// handle refuses writes until the ledger is reopened (an operator action).
    #[error("the operations ledger is degraded after a storage failure ({cause}); reopen it")]
    Degraded {
        /// The failure that degraded the ledger.
        cause: String,
    },
    /// SQLite failed during a call.
    #[error("operations ledger error: {0}")]
    Sqlite(#[source] rusqlite::Error),
    /// A stored row holds a value this build cannot read.
    #[error("operations ledger row {operation_id} is corrupt: {detail}")]
    CorruptRow {
        /// The operation the row belongs to.
        operation_id: String,
        /// Which column held what.
        detail: String,
    },
    /// A mutating call named an operation id that has no row (a caller bug, not a
    /// lookup miss: lookups return `Ok(None)`).
    #[error("no operation {operation_id} in the ledger to update")]
    UnknownOperation {
        /// The id given.
        operation_id: String,
    },
    /// A revert's plan could not claim the operation it reverts: another revert holds it
    /// (`by`), or it is not `applied`.
    #[error("{}", already_reverted(operation_id, *status, by.as_deref()))]
    AlreadyReverted {
        /// The operation to revert.
        operation_id: String,
        /// Its status.
        status: OpStatus,
        /// The revert that holds it.
        by: Option<String>,
    },
    /// `finish_draft` or `recover` on a row that already has a terminal status;
    /// the stored result is left untouched.
    #[error("operation {operation_id} is already finished as {status}")]
    AlreadyFinished {
        /// The id given.
        operation_id: String,
        /// Its stored terminal status.
        status: OpStatus,
    },
    /// A row of this id belongs to another instance (a live server's work, or a reserved
    /// id it recorded first); it is left untouched.
    #[error(
        "operation {operation_id} belongs to {}; it was left untouched",
        owner.as_deref().unwrap_or("no running server")
    )]
    NotOwner {
        /// The id given.
        operation_id: String,
        /// Its stored owner.
        owner: Option<String>,
    },
    /// The undo log beside the ledger could not be written, read or cleaned.
    #[error("undo log {}: cannot {op}: {source}", path.display())]
    Undo {
        /// The file or directory of the log.
        path: PathBuf,
        /// What the log was doing: `create`, `write`, `fsync`, `rename`, `read`, ...
        op: &'static str,
        /// The underlying I/O error.
        #[source]
        source: io::Error,
    },
    /// An argument the ledger cannot store faithfully (a non-terminal status given to
    /// `finish`, a malformed planned file).
    #[error("invalid ledger input: {reason}")]
    InvalidInput {
        /// What was wrong.
        reason: String,
    },
}

impl StoreError {
    /// True when the same call may succeed if retried later (only [`StoreError::Busy`]).
    pub fn is_retryable(&self) -> bool {
        matches!(self, StoreError::Busy(_))
    }
}

/// Whether a SQLite failure means the storage itself is unreliable (D5): after one of
/// these a handle refuses further writes.
pub(crate) fn is_storage_failure(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(
            ErrorCode::SystemIoFailure
                | ErrorCode::DiskFull
                | ErrorCode::DatabaseCorrupt
                | ErrorCode::NotADatabase
        )
    )
}

/// Whether a SQLite failure is lock contention that outlasted the busy timeout.
pub(crate) fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(error.sqlite_error_code(), Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        if is_busy(&error) { StoreError::Busy(error) } else { StoreError::Sqlite(error) }
    }
}

fn already_reverted(operation_id: &str, status: OpStatus, by: Option<&str>) -> String {
    match by {
        Some(by) => format!("operation {operation_id} is already reverted by {by}"),
        None => format!("operation {operation_id} is {status}, not applied: nothing to revert"),
    }
}
