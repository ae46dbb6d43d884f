//! Operations minted in memory ([`Draft`]): nothing reaches the ledger until the plan (with
//! the old content of every file it replaces, in the same transaction) or the terminal
//! outcome, so a patch costs two commits: one before its first write, one after its last
//! (for an applied patch, the caller may make the second after answering).
//! A crash before the first commit leaves no row, which is exact: nothing was written.

use codespace_types::EventName;
use codespace_types::PatchStatus;
use rusqlite::{Connection, OptionalExtension, params};
use uuid::Uuid;

use super::Store;
use super::events::insert_event;
use super::operations::close_row;
use super::plans::insert_plan;
use super::queries::load_by_key;
use super::sql;
use crate::error::StoreError;
use crate::model::{OpStatus, OperationRecord, PlannedFile};

/// What [`Store::draft`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drafted {
    /// A new request: run it under this draft.
    Fresh(Draft),
    /// The key is known in this workspace with the same fingerprint: its record.
    Replayed(OperationRecord),
    /// The key is known in this workspace with another fingerprint: its record, untouched.
    KeyConflict(OperationRecord),
}

/// An operation minted but not yet in the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    /// `op-<uuid v4>`, or the id a confirmation hold reserved.
    pub operation_id: String,
    pub workspace_id: String,
    pub operation_key: Option<String>,
    pub fingerprint: String,
    /// Unix seconds at minting.
    pub created_at: i64,
    /// The operation this draft reverts (the caller sets it); `None` for a patch.
    pub reverts: Option<String>,
}

impl Store {
    /// Decides replay and key conflicts, writing nothing: a key known in this workspace is
    /// [`Drafted::Replayed`] for an equal fingerprint and [`Drafted::KeyConflict`] otherwise;
    /// a fresh request gets a [`Draft`] (under `reserved` when given). Keys are unique per
    /// workspace: the same key in another workspace is a different operation. A degraded
    /// ledger still answers a replay or conflict from what it holds.
    ///
    /// Refused for an empty workspace id or fingerprint.
    pub fn draft(
        &self,
        reserved: Option<&str>,
        workspace_id: &str,
        operation_key: Option<&str>,
        fingerprint: &str,
        now: i64,
    ) -> Result<Drafted, StoreError> {
        for (field, value) in [("workspace_id", workspace_id), ("fingerprint", fingerprint)] {
            if value.is_empty() {
                return Err(StoreError::InvalidInput { reason: format!("{field} is empty") });
            }
        }
        if let Some(known) =
            self.read(|conn| known(conn, workspace_id, operation_key, fingerprint))?
        {
            return Ok(known);
        }
        Ok(Drafted::Fresh(Draft {
            operation_id: reserved.map_or_else(|| format!("op-{}", Uuid::new_v4()), str::to_owned),
            workspace_id: workspace_id.to_owned(),
            operation_key: operation_key.map(str::to_owned),
            fingerprint: fingerprint.to_owned(),
            created_at: now,
            reverts: None,
        }))
    }

    /// One transaction before the first write: the row (`Applying`) with its `minted` and
    /// `planned` events, the planned files, and the old content of every planned file that
    /// had one (`undo`: plan ordinal and bytes). The key is checked again inside it: a
    /// request with the same key that reached the ledger first is returned instead
    /// (nothing written). A revert's plan claims the operation it reverts in the same
    /// transaction ([`StoreError::AlreadyReverted`] when another revert holds it, or that
    /// operation is no longer `applied`). Durable when it returns `None`.
    pub fn plan_draft(
        &self,
        draft: &Draft,
        plan: &[PlannedFile],
        undo: &[(usize, &[u8])],
        now: i64,
    ) -> Result<Option<Drafted>, StoreError> {
        for file in plan {
            file.validate().map_err(|reason| StoreError::InvalidInput { reason })?;
        }
        let me = self.instance_id();
        self.write(|conn| {
            let key = draft.operation_key.as_deref();
            if let Some(known) = known(conn, &draft.workspace_id, key, &draft.fingerprint)? {
                return Ok(Some(known));
            }
            // A reserved id another process already recorded is never written over.
            if let Some((owner, _)) = stored_owner(conn, &draft.operation_id)? {
                return Err(not_owner(&draft.operation_id, owner));
            }
            insert_row(conn, draft, OpStatus::Applying, None, me)?;
            if let Some(target) = &draft.reverts {
                claim(conn, target, &draft.operation_id)?;
            }
            insert_event(
                conn,
                &draft.operation_id,
                draft.created_at,
                EventName::Minted,
                None,
                None,
            )?;
            insert_plan(conn, &draft.operation_id, plan)?;
            insert_event(conn, &draft.operation_id, now, EventName::Planned, None, None)?;
            let mut insert = conn.prepare_cached(
                "INSERT INTO operation_undo (operation_id, ordinal, content) VALUES (?1, ?2, ?3)",
            )?;
            for (ordinal, bytes) in undo {
                insert.execute(params![draft.operation_id, *ordinal as i64, bytes])?;
            }
            let total: usize = undo.iter().map(|(_, b)| b.len()).sum();
            conn.prepare_cached("UPDATE operations SET undo_bytes = ?2 WHERE operation_id = ?1")?
                .execute(params![draft.operation_id, total as i64])?;
            Ok(None)
        })
    }

    /// Records the terminal outcome of a draft: closes its row (status, result JSON,
    /// `finished_at`, a `finished` event, the old content dropped) when this instance
    /// recorded its plan, else inserts it finished (`minted`, `finished`) in one
    /// transaction, after checking the key again inside it: a request with the same key
    /// that reached the ledger first is returned instead (nothing written). `reason`
    /// defaults to `unknown` when the status is `Unknown`.
    ///
    /// Refused for a non-terminal status, for a row that is already finished
    /// ([`StoreError::AlreadyFinished`]): a stored result is never overwritten, and for a
    /// row of this id another instance owns ([`StoreError::NotOwner`]), left untouched.
    pub fn finish_draft(
        &self,
        draft: &Draft,
        status: OpStatus,
        result_json: &str,
        reason: Option<&str>,
        now: i64,
    ) -> Result<Option<Drafted>, StoreError> {
        if status.is_unfinished() {
            return Err(StoreError::InvalidInput {
                reason: format!("{status} is not a terminal status"),
            });
        }
        let reason = match (status, reason) {
            (OpStatus::Finished(PatchStatus::Unknown), None) => Some("unknown"),
            (_, reason) => reason,
        };
        // One transaction either way: the planned row is closed, or the row is inserted
        // finished.
        let me = self.instance_id();
        self.write(|conn| {
            if let Some((owner, _)) = stored_owner(conn, &draft.operation_id)? {
                if owner.as_deref() != me {
                    return Err(not_owner(&draft.operation_id, owner));
                }
                let id = draft.operation_id.as_str();
                close_row(conn, id, status, result_json, EventName::Finished, reason, now)?;
                return Ok(None);
            }
            let key = draft.operation_key.as_deref();
            if let Some(known) = known(conn, &draft.workspace_id, key, &draft.fingerprint)? {
                return Ok(Some(known));
            }
            insert_row(conn, draft, status, Some((result_json, now)), me)?;
            insert_event(
                conn,
                &draft.operation_id,
                draft.created_at,
                EventName::Minted,
                None,
                None,
            )?;
            insert_event(
                conn,
                &draft.operation_id,
                now,
                EventName::Finished,
                Some(status),
                reason,
            )?;
            Ok(None)
        })
    }
}

/// The owner of the row `operation_id` and whether it is finished; `None`: no row.
pub(super) fn stored_owner(
    conn: &Connection,
    operation_id: &str,
) -> Result<Option<(Option<String>, bool)>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT owner, finished_at IS NOT NULL FROM operations WHERE operation_id = ?1",
        )?
        .query_row(params![operation_id], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?)
}

pub(super) fn not_owner(operation_id: &str, owner: Option<String>) -> StoreError {
    StoreError::NotOwner { operation_id: operation_id.to_owned(), owner }
}

/// The stored record of this key in this workspace, as replay or conflict.
fn known(
    conn: &Connection,
    workspace_id: &str,
    operation_key: Option<&str>,
    fingerprint: &str,
) -> Result<Option<Drafted>, StoreError> {
    let Some(key) = operation_key else { return Ok(None) };
    Ok(load_by_key(conn, workspace_id, key)?.map(|record| {
        if record.fingerprint == fingerprint {
            Drafted::Replayed(record)
        } else {
            Drafted::KeyConflict(record)
        }
    }))
}

/// Marks `target` as reverted by `by`, when it is `applied` and no other revert holds it.
fn claim(conn: &Connection, target: &str, by: &str) -> Result<(), StoreError> {
    let claimed = conn
        .prepare_cached(
            "UPDATE operations SET reverted_by = ?2 \
             WHERE operation_id = ?1 AND reverted_by IS NULL AND status = 'applied'",
        )?
        .execute(params![target, by])?;
    if claimed == 1 {
        return Ok(());
    }
    let found: Option<(String, Option<String>)> = conn
        .prepare_cached("SELECT status, reverted_by FROM operations WHERE operation_id = ?1")?
        .query_row(params![target], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    Err(match found {
        None => StoreError::UnknownOperation { operation_id: target.to_owned() },
        Some((status, by)) => StoreError::AlreadyReverted {
            operation_id: target.to_owned(),
            status: sql::status(target, &status)?,
            by,
        },
    })
}

fn insert_row(
    conn: &Connection,
    draft: &Draft,
    status: OpStatus,
    finished: Option<(&str, i64)>,
    owner: Option<&str>,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO operations (operation_id, operation_key, workspace_id, fingerprint, \
         status, result_json, created_at, finished_at, reverts, owner) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        draft.operation_id,
        draft.operation_key,
        draft.workspace_id,
        draft.fingerprint,
        sql::status_text(status),
        finished.map(|(json, _)| json),
        draft.created_at,
        finished.map(|(_, at)| at),
        draft.reverts,
        owner,
    ])?;
    Ok(())
}
