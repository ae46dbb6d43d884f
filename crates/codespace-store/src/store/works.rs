//! The SQL of works and intents: [`WorkRow`], [`IntentRow`], and [`Works`], the handle of
//! one ledger transaction through which the gateway reads and changes them.
//!
//! The gateway owns what the rows mean (which state may follow which, what a claim takes);
//! this module only stores them. [`Store::works_write`] runs the gateway's whole decision in
//! one `BEGIN IMMEDIATE` transaction, so a claim or an edit sees and changes one consistent
//! queue even when several handles or processes share the file; the row updates are also
//! compare-and-swaps on the state and revision the decision was made on.

use std::cell::Cell;

use codespace_types::{Delivery, IntentKind, IntentState, WorkState};
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};

use super::Store;
use crate::error::{StoreError, is_storage_failure};

/// One work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkRow {
    pub work_id: String,
    pub workspace_id: String,
    pub title: Option<String>,
    pub state: WorkState,
    /// Grows with every change to the work's intents.
    pub queue_revision: u64,
    pub created_at: i64,
    pub closed_at: Option<i64>,
}

/// One user instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntentRow {
    pub intent_id: String,
    /// `None`: waiting for the next work opened in `workspace_id`.
    pub work_id: Option<String>,
    pub workspace_id: String,
    /// Queue order, lower first.
    pub position: i64,
    /// Grows with every change to this intent.
    pub revision: u64,
    pub kind: IntentKind,
    pub delivery: Delivery,
    pub body: String,
    pub state: IntentState,
    pub created_at: i64,
    pub updated_at: i64,
    pub claimed_at: Option<i64>,
    pub completed_at: Option<i64>,
}

/// One ledger transaction over works and intents.
pub struct Works<'a> {
    conn: &'a Connection,
    /// The text of the first storage failure seen, so the handle degrades after it.
    failure: Cell<Option<String>>,
}

const SELECT_WORK: &str = "SELECT work_id, workspace_id, title, state, queue_revision, \
     created_at, closed_at FROM works";

const SELECT_INTENT: &str = "SELECT intent_id, work_id, workspace_id, position, revision, \
     kind, delivery, body, state, created_at, updated_at, claimed_at, completed_at FROM intents";

impl Store {
    /// Runs `body` in one `BEGIN IMMEDIATE` transaction, committed when it returns `Ok` and
    /// rolled back when it returns `Err`. Refused on a degraded handle.
    pub fn works_write<T, E: From<StoreError>>(
        &self,
        body: impl FnOnce(&Works<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        self.works_tx(true, body)
    }

    /// Runs `body` in one read transaction (a consistent snapshot), on the read-only
    /// connection when the ledger has one: it never waits behind a commit.
    pub fn works_read<T, E: From<StoreError>>(
        &self,
        body: impl FnOnce(&Works<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let Some(mut reader) = self.lock_reader() else { return self.works_tx(false, body) };
        let (outcome, failure) = run(&mut reader, TransactionBehavior::Deferred, body);
        drop(reader);
        match (outcome, failure) {
            (Ok(value), None) => value,
            // A storage failure the reader met degrades the handle as one in a write does.
            (outcome, failure) => settle(&mut self.lock(), outcome, failure),
        }
    }

    fn works_tx<T, E: From<StoreError>>(
        &self,
        write: bool,
        body: impl FnOnce(&Works<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let behavior =
            if write { TransactionBehavior::Immediate } else { TransactionBehavior::Deferred };
        let mut inner = self.lock();
        if write && let Some(cause) = &inner.degraded {
            return Err(StoreError::Degraded { cause: cause.clone() }.into());
        }
        let (outcome, failure) = run(&mut inner.conn, behavior, body);
        settle(&mut inner, outcome, failure)
    }
}

/// The caller's answer from [`run`]'s, the handle degraded first by a storage failure in
/// the body or in begin or commit.
fn settle<T, E: From<StoreError>>(
    inner: &mut super::Inner,
    outcome: rusqlite::Result<Result<T, E>>,
    failure: Option<String>,
) -> Result<T, E> {
    if let Some(cause) = failure
        && inner.degraded.is_none()
    {
        inner.degraded = Some(cause);
    }
    match outcome {
        Ok(value) => value,
        Err(e) => Err(degrade(inner, e).into()),
    }
}

/// Runs `body` in one transaction on `conn`: Ok(Ok) committed; Ok(Err) the body refused and
/// the transaction rolled back as it dropped; Err begin or commit failed. With it, the
/// storage failure a statement in the body met, if any.
fn run<T, E>(
    conn: &mut rusqlite::Connection,
    behavior: TransactionBehavior,
    body: impl FnOnce(&Works<'_>) -> Result<T, E>,
) -> (rusqlite::Result<Result<T, E>>, Option<String>) {
    match conn.transaction_with_behavior(behavior) {
        Err(e) => (Err(e), None),
        Ok(tx) => {
            let works = Works { conn: &tx, failure: Cell::new(None) };
            let value = body(&works);
            let failure = works.failure.take();
            let outcome = match value {
                Ok(v) => tx.commit().map(|()| Ok(v)),
                Err(e) => Ok(Err(e)),
            };
            (outcome, failure)
        }
    }
}

/// The error of a failed begin or commit; a storage failure degrades the handle.
fn degrade(inner: &mut super::Inner, error: rusqlite::Error) -> StoreError {
    if is_storage_failure(&error) && inner.degraded.is_none() {
        inner.degraded = Some(error.to_string());
    }
    StoreError::from(error)
}

impl Works<'_> {
    fn sql<T>(&self, result: rusqlite::Result<T>) -> Result<T, StoreError> {
        result.map_err(|e| {
            if is_storage_failure(&e) {
                let seen = self.failure.take();
                self.failure.set(seen.or_else(|| Some(e.to_string())));
            }
            StoreError::from(e)
        })
    }

    /// The work with this id.
    pub fn work(&self, work_id: &str) -> Result<Option<WorkRow>, StoreError> {
        let sql = format!("{SELECT_WORK} WHERE work_id = ?1");
        let raw = self.sql(
            self.conn
                .prepare_cached(&sql)
                .and_then(|mut s| s.query_row(params![work_id], raw_work).optional()),
        )?;
        raw.map(work_row).transpose()
    }

    /// The works of `workspace_id` (every workspace's when `None`), newest first.
    pub fn works(&self, workspace_id: Option<&str>) -> Result<Vec<WorkRow>, StoreError> {
        let sql = format!(
            "{SELECT_WORK} WHERE ?1 IS NULL OR workspace_id = ?1 ORDER BY created_at DESC, rowid DESC"
        );
        let raws = self.sql(self.conn.prepare_cached(&sql).and_then(|mut s| {
            s.query_map(params![workspace_id], raw_work)?.collect::<rusqlite::Result<Vec<_>>>()
        }))?;
        raws.into_iter().map(work_row).collect()
    }

    /// The open (`active` or `closing`) works of a workspace, oldest first.
    pub fn open_works(&self, workspace_id: &str) -> Result<Vec<WorkRow>, StoreError> {
        let sql = format!(
            "{SELECT_WORK} WHERE workspace_id = ?1 AND state IN ('active', 'closing') \
             ORDER BY created_at, rowid"
        );
        let raws = self.sql(self.conn.prepare_cached(&sql).and_then(|mut s| {
            s.query_map(params![workspace_id], raw_work)?.collect::<rusqlite::Result<Vec<_>>>()
        }))?;
        raws.into_iter().map(work_row).collect()
    }

    pub fn insert_work(&self, w: &WorkRow) -> Result<(), StoreError> {
        self.sql(
            self.conn
                .prepare_cached(
                    "INSERT INTO works (work_id, workspace_id, title, state, queue_revision, \
                     created_at, closed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        w.work_id,
                        w.workspace_id,
                        w.title,
                        w.state.as_str(),
                        to_i64(w.queue_revision),
                        w.created_at,
                        w.closed_at
                    ])
                }),
        )?;
        Ok(())
    }

    /// Sets a work's state (and `closed_at`), only if it is still `from`; false otherwise.
    pub fn set_work_state(
        &self,
        work_id: &str,
        from: WorkState,
        to: WorkState,
        closed_at: Option<i64>,
    ) -> Result<bool, StoreError> {
        let n = self.sql(
            self.conn
                .prepare_cached(
                    "UPDATE works SET state = ?3, closed_at = ?4 WHERE work_id = ?1 AND state = ?2",
                )
                .and_then(|mut s| {
                    s.execute(params![work_id, from.as_str(), to.as_str(), closed_at])
                }),
        )?;
        Ok(n == 1)
    }

    /// Adds one to the work's `queue_revision` and returns the new value.
    pub fn bump_queue(&self, work_id: &str) -> Result<u64, StoreError> {
        let value: i64 = self.sql(
            self.conn
                .prepare_cached(
                    "UPDATE works SET queue_revision = queue_revision + 1 WHERE work_id = ?1 \
                     RETURNING queue_revision",
                )
                .and_then(|mut s| s.query_row(params![work_id], |row| row.get(0))),
        )?;
        from_i64("queue_revision", work_id, value)
    }

    /// The intent with this id.
    pub fn intent(&self, intent_id: &str) -> Result<Option<IntentRow>, StoreError> {
        let sql = format!("{SELECT_INTENT} WHERE intent_id = ?1");
        let raw = self.sql(
            self.conn
                .prepare_cached(&sql)
                .and_then(|mut s| s.query_row(params![intent_id], raw_intent).optional()),
        )?;
        raw.map(intent_row).transpose()
    }

    /// A work's intents in queue order (by position, then by creation).
    pub fn intents(&self, work_id: &str) -> Result<Vec<IntentRow>, StoreError> {
        let sql = format!("{SELECT_INTENT} WHERE work_id = ?1 ORDER BY position, rowid");
        self.intent_rows(&sql, params![work_id])
    }

    /// How many of a work's intents are queued or claimed, by state and delivery: what a
    /// status or hint needs, without reading the texts.
    pub fn pending_counts(
        &self,
        work_id: &str,
    ) -> Result<Vec<(IntentState, Delivery, u64)>, StoreError> {
        let raws: Vec<(String, String, i64)> = self.sql(
            self.conn
                .prepare_cached(
                    "SELECT state, delivery, count(*) FROM intents \
                     WHERE work_id = ?1 AND state IN ('queued', 'claimed') \
                     GROUP BY state, delivery",
                )
                .and_then(|mut s| {
                    s.query_map(params![work_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                        .collect()
                }),
        )?;
        raws.into_iter()
            .map(|(state, delivery, n)| {
                let state = IntentState::parse(&state).ok_or_else(|| {
                    corrupt(work_id, format!("intent state {state:?} is not known"))
                })?;
                let delivery = Delivery::parse(&delivery).ok_or_else(|| {
                    corrupt(work_id, format!("delivery {delivery:?} is not known"))
                })?;
                Ok((state, delivery, from_i64("count", work_id, n)?))
            })
            .collect()
    }

    /// The draft and queued intents of a workspace that wait for its next work.
    pub fn unattached(&self, workspace_id: &str) -> Result<Vec<IntentRow>, StoreError> {
        let sql = format!(
            "{SELECT_INTENT} WHERE work_id IS NULL AND workspace_id = ?1 \
             AND state IN ('draft', 'queued') ORDER BY position, rowid"
        );
        self.intent_rows(&sql, params![workspace_id])
    }

    fn intent_rows(
        &self,
        sql: &str,
        args: impl rusqlite::Params,
    ) -> Result<Vec<IntentRow>, StoreError> {
        let raws = self.sql(self.conn.prepare_cached(sql).and_then(|mut s| {
            s.query_map(args, raw_intent)?.collect::<rusqlite::Result<Vec<_>>>()
        }))?;
        raws.into_iter().map(intent_row).collect()
    }

    /// The position after the last intent of the work (or of the workspace's unattached).
    pub fn next_position(
        &self,
        work_id: Option<&str>,
        workspace_id: &str,
    ) -> Result<i64, StoreError> {
        let max: Option<i64> = self.sql(
            self.conn
                .prepare_cached(
                    "SELECT max(position) FROM intents WHERE (?1 IS NOT NULL AND work_id = ?1) \
                     OR (?1 IS NULL AND work_id IS NULL AND workspace_id = ?2)",
                )
                .and_then(|mut s| s.query_row(params![work_id, workspace_id], |row| row.get(0))),
        )?;
        Ok(max.map_or(1, |m| m.saturating_add(1)))
    }

    pub fn insert_intent(&self, i: &IntentRow) -> Result<(), StoreError> {
        self.sql(
            self.conn
                .prepare_cached(
                    "INSERT INTO intents (intent_id, work_id, workspace_id, position, revision, \
                     kind, delivery, body, state, created_at, updated_at, claimed_at, \
                     completed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        i.intent_id,
                        i.work_id,
                        i.workspace_id,
                        i.position,
                        to_i64(i.revision),
                        i.kind.as_str(),
                        i.delivery.as_str(),
                        i.body,
                        i.state.as_str(),
                        i.created_at,
                        i.updated_at,
                        i.claimed_at,
                        i.completed_at
                    ])
                }),
        )?;
        Ok(())
    }

    /// Writes every column of `new` over the stored intent, only if the stored one still
    /// has `expected`'s state and revision (a compare-and-swap); false otherwise.
    pub fn update_intent(&self, expected: &IntentRow, new: &IntentRow) -> Result<bool, StoreError> {
        let n = self.sql(
            self.conn
                .prepare_cached(
                    "UPDATE intents SET work_id = ?4, position = ?5, revision = ?6, kind = ?7, \
                     delivery = ?8, body = ?9, state = ?10, updated_at = ?11, claimed_at = ?12, \
                     completed_at = ?13 WHERE intent_id = ?1 AND state = ?2 AND revision = ?3",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        expected.intent_id,
                        expected.state.as_str(),
                        to_i64(expected.revision),
                        new.work_id,
                        new.position,
                        to_i64(new.revision),
                        new.kind.as_str(),
                        new.delivery.as_str(),
                        new.body,
                        new.state.as_str(),
                        new.updated_at,
                        new.claimed_at,
                        new.completed_at
                    ])
                }),
        )?;
        Ok(n == 1)
    }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn from_i64(column: &str, id: &str, v: i64) -> Result<u64, StoreError> {
    u64::try_from(v).map_err(|_| StoreError::CorruptRow {
        operation_id: id.to_owned(),
        detail: format!("{column} {v} is negative"),
    })
}

type RawWork = (String, String, Option<String>, String, i64, i64, Option<i64>);

fn raw_work(row: &Row<'_>) -> rusqlite::Result<RawWork> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?, row.get(6)?))
}

fn corrupt(id: &str, detail: String) -> StoreError {
    StoreError::CorruptRow { operation_id: id.to_owned(), detail }
}

fn work_row(raw: RawWork) -> Result<WorkRow, StoreError> {
    let (work_id, workspace_id, title, state, queue_revision, created_at, closed_at) = raw;
    let state = WorkState::parse(&state)
        .ok_or_else(|| corrupt(&work_id, format!("work state {state:?} is not known")))?;
    let queue_revision = from_i64("queue_revision", &work_id, queue_revision)?;
    Ok(WorkRow { work_id, workspace_id, title, state, queue_revision, created_at, closed_at })
}

struct RawIntent {
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
}

fn raw_intent(row: &Row<'_>) -> rusqlite::Result<RawIntent> {
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
    })
}

fn intent_row(r: RawIntent) -> Result<IntentRow, StoreError> {
    let id = &r.intent_id;
    let kind = IntentKind::parse(&r.kind)
        .ok_or_else(|| corrupt(id, format!("intent kind {:?} is not known", r.kind)))?;
    let delivery = Delivery::parse(&r.delivery)
        .ok_or_else(|| corrupt(id, format!("delivery {:?} is not known", r.delivery)))?;
    let state = IntentState::parse(&r.state)
        .ok_or_else(|| corrupt(id, format!("intent state {:?} is not known", r.state)))?;
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
    })
}
