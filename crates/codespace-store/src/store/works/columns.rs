//! Stored columns into [`WorkRow`] and [`IntentRow`]: the texts of states, kinds and
//! deliveries parsed, counters checked non-negative; anything else is a corrupt row.

use codespace_types::{Delivery, IntentAuthor, IntentKind, IntentState, WorkState};
use rusqlite::Row;

use super::{IntentRow, WorkRow};
use crate::error::StoreError;

pub(super) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(super) fn from_i64(column: &str, id: &str, v: i64) -> Result<u64, StoreError> {
    u64::try_from(v).map_err(|_| StoreError::CorruptRow {
        operation_id: id.to_owned(),
        detail: format!("{column} {v} is negative"),
    })
}

pub(super) type RawWork = (String, String, Option<String>, String, i64, i64, Option<i64>);

pub(super) fn raw_work(row: &Row<'_>) -> rusqlite::Result<RawWork> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?, row.get(6)?))
}

pub(super) fn corrupt(id: &str, detail: String) -> StoreError {
    StoreError::CorruptRow { operation_id: id.to_owned(), detail }
}

pub(super) fn work_row(raw: RawWork) -> Result<WorkRow, StoreError> {
    let (work_id, workspace_id, title, state, queue_revision, created_at, closed_at) = raw;
    let state = WorkState::parse(&state)
        .ok_or_else(|| corrupt(&work_id, format!("work state {state:?} is not known")))?;
    let queue_revision = from_i64("queue_revision", &work_id, queue_revision)?;
    Ok(WorkRow { work_id, workspace_id, title, state, queue_revision, created_at, closed_at })
}

pub(super) struct RawIntent {
    intent_id: String,
    work_id: Option<String>,
    workspace_id: String,
    position: i64,
    revision: i64,
    kind: String,
    delivery: String,
    body: String,
    state: String,
    created_at: i64,
    updated_at: i64,
    claimed_at: Option<i64>,
    completed_at: Option<i64>,
    author: String,
}

pub(super) fn raw_intent(row: &Row<'_>) -> rusqlite::Result<RawIntent> {
    Ok(RawIntent {
        intent_id: row.get(0)?,
        work_id: row.get(1)?,
        workspace_id: row.get(2)?,
        position: row.get(3)?,
        revision: row.get(4)?,
        kind: row.get(5)?,
        delivery: row.get(6)?,
        body: row.get(7)?,
        state: row.get(8)?,
        created_at: row.get(9)?,
        updated_at: row.get(10)?,
        claimed_at: row.get(11)?,
        completed_at: row.get(12)?,
        author: row.get(13)?,
    })
}

pub(super) fn intent_row(r: RawIntent) -> Result<IntentRow, StoreError> {
    let id = &r.intent_id;
    let kind = IntentKind::parse(&r.kind)
        .ok_or_else(|| corrupt(id, format!("intent kind {:?} is not known", r.kind)))?;
    let delivery = Delivery::parse(&r.delivery)
        .ok_or_else(|| corrupt(id, format!("delivery {:?} is not known", r.delivery)))?;
    let state = IntentState::parse(&r.state)
        .ok_or_else(|| corrupt(id, format!("intent state {:?} is not known", r.state)))?;
    let author = IntentAuthor::parse(&r.author)
        .ok_or_else(|| corrupt(id, format!("intent author {:?} is not known", r.author)))?;
    let revision = from_i64("revision", id, r.revision)?;
    Ok(IntentRow {
        intent_id: r.intent_id,
        work_id: r.work_id,
        workspace_id: r.workspace_id,
        position: r.position,
        revision,
        kind,
        delivery,
        body: r.body,
        state,
        created_at: r.created_at,
        updated_at: r.updated_at,
        claimed_at: r.claimed_at,
        completed_at: r.completed_at,
        author,
    })
}
