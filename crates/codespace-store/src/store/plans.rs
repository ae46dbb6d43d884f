//! A plan in the ledger: the planned files of a row written (by `plan_draft`, durable before
//! the first write) and read back, in plan order.

use rusqlite::{Connection, params};

use super::sql;
use crate::error::StoreError;
use crate::model::PlannedFile;

/// Inserts the planned files of `operation_id`, in plan order, inside the caller's
/// transaction.
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
