//! A plan in the ledger: `record_plan` (durable before the first write) and reading the
//! planned files of a row back, in plan order.

use codespace_types::EventName;
use rusqlite::{Connection, params};

use super::Store;
use super::events::insert_event;
use super::operations::current_status;
use super::sql;
use crate::error::StoreError;
use crate::model::{OpStatus, PlannedFile};

impl Store {
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
            ensure_plannable(conn, operation_id)?;
            conn.prepare_cached(
                "UPDATE operations SET status = ?2 WHERE operation_id = ?1 AND status = ?3",
            )?
            .execute(params![
                operation_id,
                sql::status_text(OpStatus::Applying),
                sql::status_text(OpStatus::Pending)
            ])?;
            insert_plan(conn, operation_id, plan)?;
            insert_event(conn, operation_id, now, EventName::Planned, None, None)?;
            Ok(())
        })
    }
}

/// Only a `Pending` row takes a plan.
fn ensure_plannable(conn: &Connection, operation_id: &str) -> Result<(), StoreError> {
    match current_status(conn, operation_id)? {
        OpStatus::Pending => Ok(()),
        OpStatus::Applying => {
            Err(StoreError::PlanAlreadyRecorded { operation_id: operation_id.to_owned() })
        }
        status @ (OpStatus::Checked
        | OpStatus::Applied
        | OpStatus::Rejected
        | OpStatus::FailedRolledBack
        | OpStatus::FailedPartial
        | OpStatus::Unknown) => {
            Err(StoreError::AlreadyFinished { operation_id: operation_id.to_owned(), status })
        }
    }
}

pub(super) fn insert_plan(
    conn: &Connection,
    operation_id: &str,
    plan: &[PlannedFile],
) -> Result<(), StoreError> {
    let mut insert = conn.prepare_cached(
        "INSERT INTO operation_files (operation_id, ordinal, path, kind, before_version, \
         after_version, move_from, before_mode) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for (ordinal, file) in plan.iter().enumerate() {
        insert.execute(params![
            operation_id,
            ordinal as i64,
            file.path,
            sql::kind_text(file.kind),
            file.before_version.to_string(),
            file.after_version.to_string(),
            file.move_from,
            file.before_mode,
        ])?;
    }
    Ok(())
}

/// A plan row as stored, before its texts are checked.
struct RawFile {
    path: String,
    kind: String,
    before_version: String,
    after_version: String,
    move_from: Option<String>,
    before_mode: Option<u32>,
}

impl RawFile {
    fn into_file(self, operation_id: &str) -> Result<PlannedFile, StoreError> {
        let corrupt = |detail: String| StoreError::CorruptRow {
            operation_id: operation_id.to_owned(),
            detail: format!("planned file: {detail}"),
        };
        let file = PlannedFile {
            kind: sql::kind(&self.kind).map_err(|e| corrupt(format!("{}: {e}", self.path)))?,
            before_version: sql::version("before_version", &self.before_version)
                .map_err(|e| corrupt(format!("{}: {e}", self.path)))?,
            after_version: sql::version("after_version", &self.after_version)
                .map_err(|e| corrupt(format!("{}: {e}", self.path)))?,
            path: self.path,
            move_from: self.move_from,
            before_mode: self.before_mode,
        };
        file.validate().map_err(corrupt)?;
        Ok(file)
    }
}

/// The planned files of an operation, in plan order; a row this build cannot read is
/// [`StoreError::CorruptRow`].
pub(super) fn load_plan(
    conn: &Connection,
    operation_id: &str,
) -> Result<Vec<PlannedFile>, StoreError> {
    let mut statement = conn.prepare_cached(
        "SELECT path, kind, before_version, after_version, move_from, before_mode \
         FROM operation_files \
         WHERE operation_id = ?1 ORDER BY ordinal",
    )?;
    let rows = statement.query_map(params![operation_id], |row| {
        Ok(RawFile {
            path: row.get(0)?,
            kind: row.get(1)?,
            before_version: row.get(2)?,
            after_version: row.get(3)?,
            move_from: row.get(4)?,
            before_mode: row.get(5)?,
        })
    })?;
    let mut plan = Vec::new();
    for raw in rows {
        plan.push(raw?.into_file(operation_id)?);
    }
    Ok(plan)
}
