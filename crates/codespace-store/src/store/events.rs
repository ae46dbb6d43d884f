//! An operation's history: appending an event in sequence and reading the events back,
//! oldest first.

use codespace_types::EventName;
use rusqlite::{Connection, params};

use super::sql;
use crate::error::StoreError;
use crate::model::{Event, OpStatus};

/// Appends an event after the operation's last one.
pub(super) fn insert_event(
    conn: &Connection,
    operation_id: &str,
    at: i64,
    name: EventName,
    status: Option<OpStatus>,
    reason: Option<&str>,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO operation_events (operation_id, seq, at, name, status, reason) \
         VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM operation_events \
                      WHERE operation_id = ?1), ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        operation_id,
        at,
        sql::event_text(name),
        status.map(sql::status_text),
        reason
    ])?;
    Ok(())
}

/// The events of an operation, oldest first; a name or status this build cannot read is
/// [`StoreError::CorruptRow`].
pub(super) fn load_events(conn: &Connection, operation_id: &str) -> Result<Vec<Event>, StoreError> {
    let mut statement = conn.prepare_cached(
        "SELECT at, name, status, reason FROM operation_events \
         WHERE operation_id = ?1 ORDER BY seq",
    )?;
    let rows = statement.query_map(params![operation_id], |row| {
        Ok((
            row.get::<_, i64>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, Option<String>>(2)?,
            row.get::<_, Option<String>>(3)?,
        ))
    })?;
    let mut events = Vec::new();
    for row in rows {
        let (at, name, status, reason) = row?;
        let name = sql::event(operation_id, &name)?;
        let status = status.map(|text| sql::status(operation_id, &text)).transpose()?;
        events.push(Event { at, name, status, reason });
    }
    Ok(events)
}
