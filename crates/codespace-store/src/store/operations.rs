//! An operation's row from mint to close: `begin` (with replay and key conflicts),
//! `finish` and `recover`, an operator's `restored` note, and the stored status a mutation
//! checks first.

use codespace_types::EventName;
use rusqlite::{Connection, OptionalExtension, params};
use uuid::Uuid;

use super::Store;
use super::events::insert_event;
use super::queries::load_by_key;
use super::sql;
use crate::error::StoreError;
use crate::model::{Begin, OpStatus};

impl Store {
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
        self.begin_as(None, workspace_id, operation_key, fingerprint, now)
    }

    fn begin_as(
        &self,
        reserved: Option<&str>,
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
            let operation_id =
                reserved.map_or_else(|| format!("op-{}", Uuid::new_v4()), str::to_owned);
            conn.prepare_cached(
                "INSERT INTO operations (operation_id, operation_key, workspace_id, fingerprint, \
                 status, result_json, created_at, finished_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6, NULL)",
            )?
            .execute(params![
                operation_id,
                operation_key,
                workspace_id,
                fingerprint,
                sql::status_text(OpStatus::Pending),
                now
            ])?;
            insert_event(conn, &operation_id, now, EventName::Minted, None, None)?;
            Ok(Begin::Fresh { operation_id })
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
        self.close(operation_id, status, result_json, EventName::Finished, reason, now)
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
        self.close(operation_id, status, result_json, EventName::Recovered, Some(reason), now)
    }

    /// Appends a `restored` event (no status) to an operation whose content an operator
    /// put back from the undo log; the terminal status and result stay as they are.
    pub fn note_restored(
        &self,
        operation_id: &str,
        reason: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        self.write(|conn| {
            current_status(conn, operation_id)?;
            insert_event(conn, operation_id, now, EventName::Restored, None, Some(reason))?;
            Ok(())
        })
    }

    fn close(
        &self,
        operation_id: &str,
        status: OpStatus,
        result_json: &str,
        event: EventName,
        reason: Option<&str>,
        now: i64,
    ) -> Result<(), StoreError> {
        if status.is_unfinished() {
            return Err(StoreError::InvalidInput {
                reason: format!("{status} is not a terminal status"),
            });
        }
        self.write(|conn| close_row(conn, operation_id, status, result_json, event, reason, now))
    }
}

/// Closes an unfinished row inside the caller's transaction: the terminal status and
/// result, the event, and the old content dropped. A finished row is refused untouched.
pub(super) fn close_row(
    conn: &Connection,
    operation_id: &str,
    status: OpStatus,
    result_json: &str,
    event: EventName,
    reason: Option<&str>,
    now: i64,
) -> Result<(), StoreError> {
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
    .execute(params![operation_id, sql::status_text(status), result_json, now])?;
    insert_event(conn, operation_id, now, event, Some(status), reason)?;
    // Terminal: the old content kept for a rollback is no longer needed (what a result
    // preserves was written out to the undo directory first).
    conn.prepare_cached("DELETE FROM operation_undo WHERE operation_id = ?1")?
        .execute(params![operation_id])?;
    Ok(())
}

fn non_empty(field: &str, value: &str) -> Result<(), StoreError> {
    if value.is_empty() {
        Err(StoreError::InvalidInput { reason: format!("{field} is empty") })
    } else {
        Ok(())
    }
}

/// The stored status of an operation a mutation names; a missing row is an error here.
pub(super) fn current_status(
    conn: &Connection,
    operation_id: &str,
) -> Result<OpStatus, StoreError> {
    let text: Option<String> = conn
        .prepare_cached("SELECT status FROM operations WHERE operation_id = ?1")?
        .query_row(params![operation_id], |row| row.get(0))
        .optional()?;
    let Some(text) = text else {
        return Err(StoreError::UnknownOperation { operation_id: operation_id.to_owned() });
    };
    sql::status(operation_id, &text)
}
