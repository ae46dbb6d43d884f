//! Opening a ledger: the file (hygiene checks, WAL, `synchronous=FULL`, integrity check,
//! migrations) or a fresh in-memory one, and the per-connection configuration.

use std::path::Path;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::Store;
use super::busy::{busy_waiter, retry_busy};
use crate::error::StoreError;
use crate::hygiene;
use crate::migrate::{self, MigrateError};
use crate::undo::UndoLog;

impl Store {
    /// Opens (creating if needed) the ledger file at `path`.
    ///
    /// Missing parent directories are created `0700` and the file `0600`; the undo log's
    /// directory `<path>.undo` is created `0700` beside it. The ledger is
    /// refused ([`StoreError::Refused`]) when the path or a sidecar is a symlink, when it
    /// is on a network filesystem, when the database is empty or missing beside a
    /// non-empty `-wal`, when `PRAGMA integrity_check` is not `ok`, or when the file is
    /// another application's database or a newer schema. Pending migrations are applied.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        hygiene::prepare(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let mut conn = Connection::open_with_flags(path, flags)
            .map_err(|source| open_failure(path, "open", source))?;
        conn.busy_handler(Some(busy_waiter()))
            .map_err(|source| open_failure(path, "busy handler", source))?;
        enable_wal(&conn, path)?;
        configure(&conn).map_err(|source| open_failure(path, "configure", source))?;
        let synchronous: i64 = conn
            .pragma_query_value(None, "synchronous", |row| row.get(0))
            .map_err(|source| open_failure(path, "configure", source))?;
        if synchronous != 2 {
            return Err(refused(
                path,
                format!("synchronous=FULL did not take (it reads {synchronous})"),
            ));
        }
        let report = retry_busy(|| integrity_report(&conn))
            .map_err(|source| open_failure(path, "integrity_check", source))?;
        if report != "ok" {
            return Err(refused(path, format!("PRAGMA integrity_check failed: {report}")));
        }
        migrate::migrate(&mut conn).map_err(|error| migrate_failure(path, error))?;
        let reader = open_reader(path)?;
        let undo = UndoLog::beside(path);
        undo.create()?;
        Ok(Store::new(conn, Some(reader), Some(path.to_owned()), undo))
    }

    /// Opens a fresh, empty in-memory ledger (the explicit `--operations-db :memory:`
    /// opt-out) with its undo log in a private temporary directory: nothing survives the
    /// process.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let path = Path::new(":memory:");
        let mut conn =
            Connection::open_in_memory().map_err(|source| open_failure(path, "open", source))?;
        configure(&conn).map_err(|source| open_failure(path, "configure", source))?;
        migrate::migrate(&mut conn).map_err(|error| migrate_failure(path, error))?;
        Ok(Store::new(conn, None, None, UndoLog::temporary()?))
    }

    /// The schema version (`PRAGMA user_version`); [`crate::SCHEMA_VERSION`] once open.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        self.read(|conn| {
            let version: u32 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
            Ok(version)
        })
    }

    /// `PRAGMA integrity_check`, its rows joined by newlines: `ok` for a sound database.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        self.read(|conn| Ok(integrity_report(conn)?))
    }
}

/// Switches the file to WAL, or refuses it when SQLite cannot.
fn enable_wal(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    // Switching a fresh file to WAL can report SQLITE_BUSY without calling the busy
    // handler while another connection is switching it too; retry like the handler.
    let mode: String =
        retry_busy(|| conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0)))
            .map_err(|source| open_failure(path, "journal_mode=WAL", source))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(refused(
            path,
            format!("SQLite could not enable WAL here (journal_mode stayed {mode})"),
        ));
    }
    Ok(())
}

/// The read-only connection of a file ledger, opened once the file is checked, in WAL mode
/// and migrated.
fn open_reader(path: &Path) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let mut conn = Connection::open_with_flags(path, flags)
        .map_err(|source| open_failure(path, "open the reader", source))?;
    conn.busy_handler(Some(busy_waiter()))
        .map_err(|source| open_failure(path, "busy handler", source))?;
    configure(&conn).map_err(|source| open_failure(path, "configure the reader", source))?;
    Ok(conn)
}

/// Per-connection settings for both file and in-memory ledgers.
fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // The schema is ours alone: no SQL function in it may run with side effects.
    conn.pragma_update(None, "trusted_schema", "OFF")?;
    // Plans never depend on bound values: without this, SQLite marks statements whose
    // plan could use a bound value to be prepared again on every new binding, and the
    // cached statements of every patch were re-parsed each time.
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

fn integrity_report(conn: &Connection) -> rusqlite::Result<String> {
    let mut statement = conn.prepare("PRAGMA integrity_check")?;
    let rows = statement.query_map([], |row| row.get::<_, String>(0))?;
    let lines = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(lines.join("\n"))
}

fn refused(path: &Path, reason: String) -> StoreError {
    StoreError::Refused { path: path.to_owned(), reason }
}

/// An open-time SQLite failure: a file that is not a database (or is corrupt) is a
/// refusal; anything else an open failure naming the path.
fn open_failure(path: &Path, step: &'static str, source: rusqlite::Error) -> StoreError {
    match source.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            refused(path, format!("not a sound SQLite database ({source})"))
        }
        _ => StoreError::OpenDatabase { path: path.to_owned(), step, source },
    }
}

fn migrate_failure(path: &Path, error: MigrateError) -> StoreError {
    match error {
        MigrateError::Sqlite(source) => open_failure(path, "migrate", source),
        MigrateError::Refused(reason) => refused(path, reason),
    }
}
