//! Numbered schema migrations, embedded at compile time from `migrations/NNNN_name.sql`.
//!
//! The schema version is `PRAGMA user_version`; the ledger marks its file with
//! `PRAGMA application_id` so a SQLite file of another program is refused rather than
//! written into. Each migration runs in its own `BEGIN IMMEDIATE` transaction together with
//! the version bump, and the version is re-read inside that transaction, so two processes
//! opening a fresh ledger at once apply each migration exactly once.

use rusqlite::{Connection, TransactionBehavior};

/// One embedded migration.
#[derive(Debug)]
pub(crate) struct Migration {
    /// The `user_version` after it has run (its `NNNN` prefix).
    pub(crate) version: u32,
    /// The file stem, `NNNN_name` (checked against `migrations/` by the tests).
    #[cfg_attr(not(test), expect(dead_code))]
    pub(crate) name: &'static str,
    /// The SQL batch.
    pub(crate) sql: &'static str,
}

/// Every migration, in order; `MIGRATIONS[i].version == i + 1`.
pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "0001_operations",
        sql: include_str!("../migrations/0001_operations.sql"),
    },
    Migration { version: 2, name: "0002_undo", sql: include_str!("../migrations/0002_undo.sql") },
    Migration {
        version: 3,
        name: "0003_approvals",
        sql: include_str!("../migrations/0003_approvals.sql"),
    },
    Migration {
        version: 4,
        name: "0004_undo_content",
        sql: include_str!("../migrations/0004_undo_content.sql"),
    },
    Migration { version: 5, name: "0005_works", sql: include_str!("../migrations/0005_works.sql") },
    Migration {
        version: 6,
        name: "0006_revert",
        sql: include_str!("../migrations/0006_revert.sql"),
    },
    Migration {
        version: 7,
        name: "0007_revert_holds",
        sql: include_str!("../migrations/0007_revert_holds.sql"),
    },
    Migration {
        version: 8,
        name: "0008_undo_bytes",
        sql: include_str!("../migrations/0008_undo_bytes.sql"),
    },
    Migration {
        version: 9,
        name: "0009_seals_and_authors",
        sql: include_str!("../migrations/0009_seals_and_authors.sql"),
    },
    Migration {
        version: 10,
        name: "0010_owners",
        sql: include_str!("../migrations/0010_owners.sql"),
    },
    Migration {
        version: 11,
        name: "0011_tasks",
        sql: include_str!("../migrations/0011_tasks.sql"),
    },
    Migration {
        version: 12,
        name: "0012_task_inputs",
        sql: include_str!("../migrations/0012_task_inputs.sql"),
    },
];

/// The schema version this build migrates to (and the newest it can read).
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// `PRAGMA application_id` of a CodeSpace ledger: ASCII `CSPL`.
pub(crate) const APPLICATION_ID: i32 = 0x4353_504C;

/// Why migrating failed.
#[derive(Debug)]
pub(crate) enum MigrateError {
    /// SQLite failed.
    Sqlite(rusqlite::Error),
    /// The file is not a ledger this build may write (a reason for the operator).
    Refused(String),
}

impl From<rusqlite::Error> for MigrateError {
    fn from(error: rusqlite::Error) -> Self {
        MigrateError::Sqlite(error)
    }
}

/// Reads `(user_version, application_id)`.
fn header(conn: &Connection) -> rusqlite::Result<(i64, i64)> {
    let version = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let application = conn.pragma_query_value(None, "application_id", |row| row.get(0))?;
    Ok((version, application))
}

/// Refuses a file that is not ours or is newer than this build; `Ok(true)` when a
/// migration is still due.
fn check_header(conn: &Connection, version: i64, application: i64) -> Result<bool, MigrateError> {
    if application != 0 && application != i64::from(APPLICATION_ID) {
        return Err(MigrateError::Refused(format!(
            "the file belongs to another application (SQLite application_id {application:#x}, a \
             CodeSpace ledger has {APPLICATION_ID:#x}); choose another --operations-db path"
        )));
    }
    if version > i64::from(SCHEMA_VERSION) {
        return Err(MigrateError::Refused(format!(
            "the ledger has schema version {version}, newer than this build's {SCHEMA_VERSION}; \
             run the newer codespace or give this one another --operations-db path"
        )));
    }
    if version < 0 {
        return Err(MigrateError::Refused(format!("the ledger has schema version {version}")));
    }
    if version == 0 {
        let objects: i64 =
            conn.query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))?;
        if objects > 0 {
            return Err(MigrateError::Refused(format!(
                "the file is a SQLite database with {objects} schema objects but no CodeSpace \
                 schema version; it is not a CodeSpace ledger, choose another --operations-db path"
            )));
        }
    }
    Ok(version < i64::from(SCHEMA_VERSION))
}

/// Brings the database to [`SCHEMA_VERSION`]; returns how many migrations this call ran
/// (zero when another connection ran them first).
pub(crate) fn migrate(conn: &mut Connection) -> Result<u32, MigrateError> {
    // The version and the schema are read in one snapshot: read apart, another connection's
    // first migration could commit in between (version 0, yet tables), and a fresh ledger
    // two handles race to create would be refused as another program's database.
    let due = {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let (version, application) = header(&tx)?;
        check_header(&tx, version, application)?
    };
    if !due {
        return Ok(0);
    }
    let mut applied = 0;
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (version, application) = header(&tx)?;
        if !check_header(&tx, version, application)? {
            tx.commit()?;
            return Ok(applied);
        }
        let Some(migration) = usize::try_from(version).ok().and_then(|v| MIGRATIONS.get(v)) else {
            return Err(MigrateError::Refused(format!("no migration after version {version}")));
        };
        tx.execute_batch(migration.sql)?;
        tx.pragma_update(None, "user_version", migration.version)?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.commit()?;
        applied += 1;
    }
}

#[cfg(test)]
mod tests;
