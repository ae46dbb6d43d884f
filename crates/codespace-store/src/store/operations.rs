//! Closing an operation's row: `recover` after a crash (and the close a draft's outcome
//! shares with it), an operator's `restored` note, and the stored status a mutation checks
//! first.

use codespace_types::{EventName, PatchStatus};
use rusqlite::{Connection, OptionalExtension, params};

use super::Store;
use super::drafts::{not_owner, stored_owner};
use super::events::insert_event;
use super::sql;
use crate::error::StoreError;
use crate::model::OpStatus;

impl Store {
    /// Closes an unfinished row with its terminal `status`, the result JSON and
    /// `finished_at`, and a `recovered` event carrying `reason`: used at start for rows a
    /// crash left unfinished, once the disk has been classified.
    ///
    /// Refused for a non-terminal status, an unknown id, a row that is already finished
    /// ([`StoreError::AlreadyFinished`]): a stored result is never overwritten, and a row
    /// another instance owns ([`StoreError::NotOwner`]): take it over first
    /// ([`Store::take_over_operation`]).
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
        let me = self.instance_id();
        self.write(|conn| {
            // Only the owner (after a take-over, the process settling it) closes a row.
            if let Some((owner, false)) = stored_owner(conn, operation_id)?
                && owner.as_deref() != me
            {
                return Err(not_owner(operation_id, owner));
            }
            close_row(conn, operation_id, status, result_json, event, reason, now)
        })
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
    // Terminal. An applied operation keeps its old content as its undo record (for a
    // revert, until the retention bound drops it); for any other outcome it is no longer
    // needed (what a result preserves was written out to the undo directory first).
    if status != OpStatus::Finished(PatchStatus::Applied) {
        drop_undo(conn, operation_id)?;
    }
    settle_revert(conn, operation_id, status)
}

/// When `operation_id` is a revert: once applied, the operation it reverted no longer needs
/// its undo record (the revert keeps its own); ended without applying, it releases its
/// claim so the operation can be reverted again. An `unknown` revert keeps its claim.
fn settle_revert(
    conn: &Connection,
    operation_id: &str,
    status: OpStatus,
) -> Result<(), StoreError> {
    let target: Option<String> = conn
        .prepare_cached("SELECT reverts FROM operations WHERE operation_id = ?1")?
        .query_row(params![operation_id], |row| row.get(0))?;
    let Some(target) = target else { return Ok(()) };
    match status {
        OpStatus::Finished(PatchStatus::Applied) => drop_undo(conn, &target)?,
        OpStatus::Finished(PatchStatus::Unknown) | OpStatus::Pending | OpStatus::Applying => {}
        OpStatus::Finished(
            PatchStatus::Checked
            | PatchStatus::Rejected
            | PatchStatus::FailedRolledBack
            | PatchStatus::FailedPartial,
        ) => {
            conn.prepare_cached(
                "UPDATE operations SET reverted_by = NULL \
                 WHERE operation_id = ?1 AND reverted_by = ?2",
            )?
            .execute(params![target, operation_id])?;
        }
    }
    Ok(())
}

/// Drops the old content the ledger keeps for `operation_id`, inside the caller's
/// transaction.
pub(super) fn drop_undo(conn: &Connection, operation_id: &str) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM operation_undo WHERE operation_id = ?1")?
        .execute(params![operation_id])?;
    conn.prepare_cached("UPDATE operations SET undo_bytes = 0 WHERE operation_id = ?1")?
        .execute(params![operation_id])?;
    Ok(())
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
