//! [`Store`]: one SQLite connection behind a mutex, and the ledger operations on it.
//!
//! Every write is one `BEGIN IMMEDIATE` transaction, so a writer takes the database lock
//! before it reads anything and never has to upgrade a read lock (the upgrade is what
//! returns `SQLITE_BUSY` without waiting); with the 5 s busy timeout, contention between
//! handles and processes waits instead of failing. With WAL and `synchronous=FULL`, a
//! call that returned `Ok` has been fsynced to the WAL and survives a crash or power loss.
//!
//! Reads run in a deferred transaction, so a record's row, plan and events come from one
//! snapshot even while other handles write.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior, params};
use uuid::Uuid;

use crate::error::{StoreError, is_busy, is_storage_failure};
use crate::hygiene;
use crate::migrate::{self, MigrateError};
use crate::model::{Begin, EVENT_NAMES, Event, OpStatus, OperationRecord, PlannedFile};

/// How long a writer waits for another writer's lock before giving up with `Busy`.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The durable ledger of patch operations.
///
/// `Send + Sync`: calls from many threads are serialised on the one connection; separate
/// handles (and processes) on the same file are serialised by SQLite's locks.
pub struct Store {
    inner: Mutex<Inner>,
    path: Option<PathBuf>,
}

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

const SELECT_OPERATION: &str = "SELECT operation_id, operation_key, workspace_id, fingerprint, \
     status, result_json, created_at, finished_at FROM operations";

impl Store {
    /// Opens (creating if needed) the ledger file at `path`.
    ///
    /// Missing parent directories are created `0700` and the file `0600`. The ledger is
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
        // Switching a fresh file to WAL can report SQLITE_BUSY without calling the busy
        // handler while another connection is switching it too; retry like the handler.
        let mode: String = retry_busy(|| {
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        })
        .map_err(|source| open_failure(path, "journal_mode=WAL", source))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Refused {
                path: path.to_owned(),
                reason: format!("SQLite could not enable WAL here (journal_mode stayed {mode})"),
            });
        }
        configure(&conn).map_err(|source| open_failure(path, "configure", source))?;
        let synchronous: i64 = conn
            .pragma_query_value(None, "synchronous", |row| row.get(0))
            .map_err(|source| open_failure(path, "configure", source))?;
        if synchronous != 2 {
            return Err(StoreError::Refused {
                path: path.to_owned(),
                reason: format!("synchronous=FULL did not take (it reads {synchronous})"),
            });
        }
        let report = retry_busy(|| integrity_report(&conn))
            .map_err(|source| open_failure(path, "integrity_check", source))?;
        if report != "ok" {
            return Err(StoreError::Refused {
                path: path.to_owned(),
                reason: format!("PRAGMA integrity_check failed: {report}"),
            });
        }
        migrate::migrate(&mut conn).map_err(|error| migrate_failure(path, error))?;
        Ok(Store { inner: Mutex::new(Inner { conn, degraded: None }), path: Some(path.to_owned()) })
    }

    /// Opens a fresh, empty in-memory ledger (the explicit `--operations-db :memory:`
    /// opt-out): nothing survives the process.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let path = Path::new(":memory:");
        let mut conn =
            Connection::open_in_memory().map_err(|source| open_failure(path, "open", source))?;
        configure(&conn).map_err(|source| open_failure(path, "configure", source))?;
        migrate::migrate(&mut conn).map_err(|error| migrate_failure(path, error))?;
        Ok(Store { inner: Mutex::new(Inner { conn, degraded: None }), path: None })
    }

    /// The file this ledger was opened from; `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The cause, when an earlier storage failure made this handle refuse writes.
    pub fn degraded(&self) -> Option<String> {
        self.lock().degraded.clone()
    }

    /// The schema version (`PRAGMA user_version`); [`crate::SCHEMA_VERSION`] once open.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        self.read(|conn| {
            let version: u32 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
            Ok(version)
        })
    }

    /// One IMMEDIATE transaction: when `(workspace_id, operation_key)` is known, returns
    /// [`Begin::Replayed`] for an equal fingerprint and [`Begin::KeyConflict`] otherwise,
    /// writing nothing; else inserts a `Pending` row under a minted `op-<uuid v4>` with a
    /// `minted` event and returns [`Begin::Fresh`]. Without a key it is always `Fresh`.
    ///
    /// Keys are unique per workspace: the same key in another workspace is a different
    /// operation. A degraded ledger still answers a replay or conflict from what it holds,
    /// but refuses to mint.
    pub fn begin(
        &self,
        workspace_id: &str,
        operation_key: Option<&str>,
        fingerprint: &str,
        now: i64,
    ) -> Result<Begin, StoreError> {
        non_empty("workspace_id", workspace_id)?;
        non_empty("fingerprint", fingerprint)?;
        if let Some(key) = operation_key {
            non_empty("operation_key", key)?;
        }
        let known = |conn: &Connection| -> Result<Option<Begin>, StoreError> {
            let Some(key) = operation_key else { return Ok(None) };
            Ok(load_by_key(conn, workspace_id, key)?.map(|record| {
                if record.fingerprint == fingerprint {
                    Begin::Replayed(record)
                } else {
                    Begin::KeyConflict(record)
                }
            }))
        };
        if self.degraded().is_some()
            && let Some(begin) = self.read(known)?
        {
            return Ok(begin);
        }
        self.write(|conn| {
            if let Some(begin) = known(conn)? {
                return Ok(begin);
            }
            let operation_id = format!("op-{}", Uuid::new_v4());
            conn.prepare_cached(
                "INSERT INTO operations (operation_id, operation_key, workspace_id, fingerprint, \
                 status, result_json, created_at, finished_at) \
                 VALUES (?1, ?2, ?3, ?4, 'pending', NULL, ?5, NULL)",
            )?
            .execute(params![
                operation_id,
                operation_key,
                workspace_id,
                fingerprint,
                now
            ])?;
            insert_event(conn, &operation_id, now, "minted", None, None)?;
            Ok(Begin::Fresh { operation_id })
        })
    }

    /// Records the plan of a `Pending` operation before its first write: status
    /// `Applying`, the planned files in order, a `planned` event. Durable (fsynced) when
    /// it returns `Ok`.
    ///
    /// Refused for an unknown id, for a row that already has a plan, for a finished row,
    /// and for a malformed planned file (recovery depends on the versions).
    pub fn record_plan(
        &self,
        operation_id: &str,
        plan: &[PlannedFile],
        now: i64,
    ) -> Result<(), StoreError> {
        for file in plan {
            file.validate().map_err(|reason| StoreError::InvalidInput { reason })?;
        }
        self.write(|conn| {
            match current_status(conn, operation_id)? {
                OpStatus::Pending => {}
                OpStatus::Applying => {
                    return Err(StoreError::PlanAlreadyRecorded {
                        operation_id: operation_id.to_owned(),
                    });
                }
                status @ (OpStatus::Checked
                | OpStatus::Applied
                | OpStatus::Rejected
                | OpStatus::FailedRolledBack
                | OpStatus::FailedPartial
                | OpStatus::Unknown) => {
                    return Err(StoreError::AlreadyFinished {
                        operation_id: operation_id.to_owned(),
                        status,
                    });
                }
            }
            conn.prepare_cached(
                "UPDATE operations SET status = 'applying' \
                 WHERE operation_id = ?1 AND status = 'pending'",
            )?
            .execute(params![operation_id])?;
            let mut insert = conn.prepare_cached(
                "INSERT INTO operation_files (operation_id, ordinal, path, kind, before_version, \
                 after_version, move_from) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for (ordinal, file) in plan.iter().enumerate() {
                insert.execute(params![
                    operation_id,
                    ordinal as i64,
                    file.path,
                    file.kind,
                    file.before_version,
                    file.after_version,
                    file.move_from,
                ])?;
            }
            insert_event(conn, operation_id, now, "planned", None, None)?;
            Ok(())
        })
    }

    /// Sets the terminal `status`, the result JSON and `finished_at`, and appends a
    /// `finished` event. `reason` defaults to `unknown` when the status is `Unknown`
    /// (the reference's convention).
    ///
    /// Refused for a non-terminal status, an unknown id, and a row that is already
    /// finished ([`StoreError::AlreadyFinished`]): a stored result is never overwritten.
    pub fn finish(
        &self,
        operation_id: &str,
        status: OpStatus,
        result_json: &str,
        reason: Option<&str>,
        now: i64,
    ) -> Result<(), StoreError> {
        let reason = match (status, reason) {
            (_, Some(reason)) => Some(reason),
            (OpStatus::Unknown, None) => Some("unknown"),
            (_, None) => None,
        };
        self.close(operation_id, status, result_json, "finished", reason, now)
    }

    /// Like [`Store::finish`], but the event is named `recovered` and carries `reason`:
    /// used at start for rows a crash left unfinished, once the disk has been classified.
    pub fn recover(
        &self,
        operation_id: &str,
        status: OpStatus,
        result_json: &str,
        reason: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        self.close(operation_id, status, result_json, "recovered", Some(reason), now)
    }

    /// The operation with this id, or `Ok(None)` when there is none.
    pub fn get(&self, operation_id: &str) -> Result<Option<OperationRecord>, StoreError> {
        self.read(|conn| load_by_id(conn, operation_id))
    }

    /// The operation with this key in this workspace, or `Ok(None)` when there is none.
    pub fn get_by_key(
        &self,
        workspace_id: &str,
        operation_key: &str,
    ) -> Result<Option<OperationRecord>, StoreError> {
        self.read(|conn| load_by_key(conn, workspace_id, operation_key))
    }

    /// Every `Pending` or `Applying` operation, oldest first (by `created_at`, then by
    /// insertion order).
    pub fn unfinished(&self) -> Result<Vec<OperationRecord>, StoreError> {
        self.read(|conn| {
            let sql =
                format!("{SELECT_OPERATION} WHERE finished_at IS NULL ORDER BY created_at, rowid");
            let mut statement = conn.prepare_cached(&sql)?;
            let rows = statement.query_map([], RawOperation::from_row)?;
            let mut records = Vec::new();
            for raw in rows {
                records.push(complete(conn, raw?)?);
            }
            Ok(records)
        })
    }

    /// `PRAGMA integrity_check`, its rows joined by newlines: `ok` for a sound database.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        self.read(|conn| Ok(integrity_report(conn)?))
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while the lock was held dropped its transaction, which rolled back.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
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
        let result = in_transaction(&mut inner.conn, TransactionBehavior::Immediate, body);
        note_failure(&mut inner, &result);
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

    fn close(
        &self,
        operation_id: &str,
        status: OpStatus,
        result_json: &str,
        event: &str,
        reason: Option<&str>,
        now: i64,
    ) -> Result<(), StoreError> {
        if status.is_unfinished() {
            return Err(StoreError::InvalidInput {
                reason: format!("{status} is not a terminal status"),
            });
        }
        self.write(|conn| {
            let stored = current_status(conn, operation_id)?;
            if stored.is_terminal() {
                return Err(StoreError::AlreadyFinished {
                    operation_id: operation_id.to_owned(),
                    status: stored,
                });
            }
            conn.prepare_cached(
                "UPDATE operations SET status = ?2, result_json = ?3, finished_at = ?4 \
                 WHERE operation_id = ?1 AND finished_at IS NULL",
            )?
            .execute(params![operation_id, status.as_str(), result_json, now])?;
            insert_event(conn, operation_id, now, event, Some(status.as_str()), reason)?;
            Ok(())
        })
    }
}

/// The busy handler: retry for up to [`BUSY_TIMEOUT`], sleeping 0.2 to 2 ms (jittered)
/// between attempts.
///
/// SQLite's own `busy_timeout` handler backs off to 100 ms sleeps after the first 300 ms
/// of waiting, so under steady contention a writer that has waited long polls rarely and
/// keeps losing the lock to newcomers: with 24 handles writing at once it was measured
/// waiting 3.5 s, close to failing with `SQLITE_BUSY`. Short, jittered polls keep the
/// wait close to the queue length times one commit.
fn busy_waiter() -> impl FnMut(i32) -> bool + Send + 'static {
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

/// Per-connection settings for both file and in-memory ledgers.
fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // The schema is ours alone: no SQL function in it may run with side effects.
    conn.pragma_update(None, "trusted_schema", "OFF")?;
    Ok(())
}

fn integrity_report(conn: &Connection) -> rusqlite::Result<String> {
    let mut statement = conn.prepare("PRAGMA integrity_check")?;
    let rows = statement.query_map([], |row| row.get::<_, String>(0))?;
    let lines = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(lines.join("\n"))
}

/// An open-time SQLite failure: a file that is not a database (or is corrupt) is a
/// refusal; anything else an open failure naming the path.
fn open_failure(path: &Path, step: &'static str, source: rusqlite::Error) -> StoreError {
    match source.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => StoreError::Refused {
            path: path.to_owned(),
            reason: format!("not a sound SQLite database ({source})"),
        },
        _ => StoreError::OpenDatabase { path: path.to_owned(), step, source },
    }
}

/// Repeats `step` while it fails with `SQLITE_BUSY`, for up to [`BUSY_TIMEOUT`]: for the
/// open-time statements SQLite may fail fast instead of calling the busy handler.
fn retry_busy<T>(mut step: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
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

fn migrate_failure(path: &Path, error: MigrateError) -> StoreError {
    match error {
        MigrateError::Sqlite(source) => open_failure(path, "migrate", source),
        MigrateError::Refused(reason) => StoreError::Refused { path: path.to_owned(), reason },
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

fn non_empty(field: &str, value: &str) -> Result<(), StoreError> {
    if value.is_empty() {
        Err(StoreError::InvalidInput { reason: format!("{field} is empty") })
    } else {
        Ok(())
    }
}

fn insert_event(
    conn: &Connection,
    operation_id: &str,
    at: i64,
    name: &str,
    status: Option<&str>,
    reason: Option<&str>,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO operation_events (operation_id, seq, at, name, status, reason) \
         VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM operation_events \
                      WHERE operation_id = ?1), ?2, ?3, ?4, ?5)",
    )?
    .execute(params![operation_id, at, name, status, reason])?;
    Ok(())
}

/// The stored status of an operation a mutation names; a missing row is an error here.
fn current_status(conn: &Connection, operation_id: &str) -> Result<OpStatus, StoreError> {
    let text: Option<String> = conn
        .prepare_cached("SELECT status FROM operations WHERE operation_id = ?1")?
        .query_row(params![operation_id], |row| row.get(0))
        .optional()?;
    let Some(text) = text else {
        return Err(StoreError::UnknownOperation { operation_id: operation_id.to_owned() });
    };
    parse_status(operation_id, &text)
}

fn parse_status(operation_id: &str, text: &str) -> Result<OpStatus, StoreError> {
    OpStatus::parse(text).ok_or_else(|| StoreError::CorruptRow {
        operation_id: operation_id.to_owned(),
        detail: format!("status {text:?} is not a known status"),
    })
}

/// An `operations` row as read, before validation.
struct RawOperation {
    operation_id: String,
    operation_key: Option<String>,
    workspace_id: String,
    fingerprint: String,
    status: String,
    result_json: Option<String>,
    created_at: i64,
    finished_at: Option<i64>,
}

impl RawOperation {
    fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawOperation> {
        Ok(RawOperation {
            operation_id: row.get(0)?,
            operation_key: row.get(1)?,
            workspace_id: row.get(2)?,
            fingerprint: row.get(3)?,
            status: row.get(4)?,
            result_json: row.get(5)?,
            created_at: row.get(6)?,
            finished_at: row.get(7)?,
        })
    }
}

fn load_by_id(
    conn: &Connection,
    operation_id: &str,
) -> Result<Option<OperationRecord>, StoreError> {
    let sql = format!("{SELECT_OPERATION} WHERE operation_id = ?1");
    let raw = conn
        .prepare_cached(&sql)?
        .query_row(params![operation_id], RawOperation::from_row)
        .optional()?;
    raw.map(|raw| complete(conn, raw)).transpose()
}

fn load_by_key(
    conn: &Connection,
    workspace_id: &str,
    operation_key: &str,
) -> Result<Option<OperationRecord>, StoreError> {
    let sql = format!("{SELECT_OPERATION} WHERE workspace_id = ?1 AND operation_key = ?2");
    let raw = conn
        .prepare_cached(&sql)?
        .query_row(params![workspace_id, operation_key], RawOperation::from_row)
        .optional()?;
    raw.map(|raw| complete(conn, raw)).transpose()
}

/// Validates a row and attaches its plan and events.
fn complete(conn: &Connection, raw: RawOperation) -> Result<OperationRecord, StoreError> {
    let id = raw.operation_id;
    let status = parse_status(&id, &raw.status)?;
    let corrupt = |detail: String| StoreError::CorruptRow { operation_id: id.clone(), detail };
    if status.is_unfinished() != raw.finished_at.is_none() {
        return Err(corrupt(format!(
            "status {status} disagrees with finished_at {:?}",
            raw.finished_at
        )));
    }
    let plan = load_plan(conn, &id)?;
    let events = load_events(conn, &id)?;
    Ok(OperationRecord {
        operation_id: id,
        operation_key: raw.operation_key,
        workspace_id: raw.workspace_id,
        fingerprint: raw.fingerprint,
        status,
        result_json: raw.result_json,
        plan,
        created_at: raw.created_at,
        finished_at: raw.finished_at,
        events,
    })
}

fn load_plan(conn: &Connection, operation_id: &str) -> Result<Vec<PlannedFile>, StoreError> {
    let mut statement = conn.prepare_cached(
        "SELECT path, kind, before_version, after_version, move_from FROM operation_files \
         WHERE operation_id = ?1 ORDER BY ordinal",
    )?;
    let rows = statement.query_map(params![operation_id], |row| {
        Ok(PlannedFile {
            path: row.get(0)?,
            kind: row.get(1)?,
            before_version: row.get(2)?,
            after_version: row.get(3)?,
            move_from: row.get(4)?,
        })
    })?;
    let mut plan = Vec::new();
    for file in rows {
        let file = file?;
        file.validate().map_err(|detail| StoreError::CorruptRow {
            operation_id: operation_id.to_owned(),
            detail: format!("planned file: {detail}"),
        })?;
        plan.push(file);
    }
    Ok(plan)
}

fn load_events(conn: &Connection, operation_id: &str) -> Result<Vec<Event>, StoreError> {
    let mut statement = conn.prepare_cached(
        "SELECT at, name, status, reason FROM operation_events \
         WHERE operation_id = ?1 ORDER BY seq",
    )?;
    let rows = statement.query_map(params![operation_id], |row| {
        Ok(Event { at: row.get(0)?, name: row.get(1)?, status: row.get(2)?, reason: row.get(3)? })
    })?;
    let mut events = Vec::new();
    for event in rows {
        let event = event?;
        if !EVENT_NAMES.contains(&event.name.as_str()) {
            return Err(StoreError::CorruptRow {
                operation_id: operation_id.to_owned(),
                detail: format!("event name {:?} is not a known event", event.name),
            });
        }
        events.push(event);
    }
    Ok(events)
}

#[cfg(test)]
mod tests;
