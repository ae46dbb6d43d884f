//! Whole records: an operation's row with its plan and events, by id, by key in a
//! workspace or in any, the newest ones for an operator, and every unfinished one for
//! recovery.

use rusqlite::{Connection, OptionalExtension, params};

use super::Store;
use super::events::load_events;
use super::plans::load_plan;
use super::sql;
use crate::error::StoreError;
use crate::model::{OperationRecord, UndoKept};

const SELECT_OPERATION: &str = "SELECT operation_id, operation_key, workspace_id, fingerprint, \
     status, result_json, created_at, finished_at, reverts, reverted_by, undo_pruned_at, owner, \
     undo_bytes FROM operations";

impl Store {
    /// The operation with this id, or `Ok(None)` when there is none.
    pub fn get(&self, operation_id: &str) -> Result<Option<OperationRecord>, StoreError> {
        let record = self.read(|conn| load_by_id(conn, operation_id))?;
        record.map(|r| self.with_kept(r)).transpose()
    }

    /// The operation with this key in this workspace, or `Ok(None)` when there is none.
    pub fn get_by_key(
        &self,
        workspace_id: &str,
        operation_key: &str,
    ) -> Result<Option<OperationRecord>, StoreError> {
        let record = self.read(|conn| load_by_key(conn, workspace_id, operation_key))?;
        record.map(|r| self.with_kept(r)).transpose()
    }

    /// The operations with this key, in any workspace, at most `limit` of them: how a
    /// lookup by key alone tells one match from several.
    pub fn find_by_key(
        &self,
        operation_key: &str,
        limit: usize,
    ) -> Result<Vec<OperationRecord>, StoreError> {
        self.read(|conn| {
            let sql =
                format!("{SELECT_OPERATION} WHERE operation_key = ?1 ORDER BY rowid LIMIT ?2");
            let mut statement = conn.prepare_cached(&sql)?;
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows =
                statement.query_map(params![operation_key, limit], RawOperation::from_row)?;
            let mut records = Vec::new();
            for raw in rows {
                records.push(complete(conn, raw?)?);
            }
            Ok(records)
        })?
        .into_iter()
        .map(|r| self.with_kept(r))
        .collect()
    }

    /// The newest `limit` operations, newest first (by `created_at`, then by insertion
    /// order): what an operator lists.
    pub fn list(&self, limit: usize) -> Result<Vec<OperationRecord>, StoreError> {
        self.read(|conn| {
            let sql = format!("{SELECT_OPERATION} ORDER BY created_at DESC, rowid DESC LIMIT ?1");
            let mut statement = conn.prepare_cached(&sql)?;
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows = statement.query_map(params![limit], RawOperation::from_row)?;
            let mut records = Vec::new();
            for raw in rows {
                records.push(complete(conn, raw?)?);
            }
            Ok(records)
        })?
        .into_iter()
        .map(|r| self.with_kept(r))
        .collect()
    }

    /// Adds what the undo directory keeps for the record to what the ledger keeps.
    fn with_kept(&self, mut record: OperationRecord) -> Result<OperationRecord, StoreError> {
        record.undo.bytes += self.undo().bytes(&record.operation_id)?;
        Ok(record)
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
    reverts: Option<String>,
    reverted_by: Option<String>,
    undo_pruned_at: Option<i64>,
    undo_bytes: i64,
    owner: Option<String>,
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
            reverts: row.get(8)?,
            reverted_by: row.get(9)?,
            undo_pruned_at: row.get(10)?,
            undo_bytes: row.get(12)?,
            owner: row.get(11)?,
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

pub(super) fn load_by_key(
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
    let status = sql::status(&id, &raw.status)?;
    if status.is_unfinished() != raw.finished_at.is_none() {
        return Err(StoreError::CorruptRow {
            operation_id: id,
            detail: format!("status {status} disagrees with finished_at {:?}", raw.finished_at),
        });
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
        reverts: raw.reverts,
        reverted_by: raw.reverted_by,
        undo: UndoKept {
            bytes: u64::try_from(raw.undo_bytes).unwrap_or(0),
            pruned_at: raw.undo_pruned_at,
        },
        owner: raw.owner,
    })
}
