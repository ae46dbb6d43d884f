//! The SQL of [`Works`]: each read and write of works and intents inside the handle's
//! transaction; a storage failure a statement meets is noted so the handle degrades.

use codespace_types::{Delivery, IntentState, WorkState};
use rusqlite::{OptionalExtension, params};

use super::columns::{corrupt, from_i64, intent_row, raw_intent, raw_work, to_i64, work_row};
use super::{IntentRow, WorkRow, Works};
use crate::error::{StoreError, is_storage_failure};

const SELECT_WORK: &str = "SELECT work_id, workspace_id, title, state, queue_revision, \
     created_at, closed_at FROM works";

const SELECT_INTENT: &str = "SELECT intent_id, work_id, workspace_id, position, revision, \
     kind, delivery, body, state, created_at, updated_at, claimed_at, completed_at, author \
     FROM intents";

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
                     completed_at, author) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
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
                        i.completed_at,
                        i.author.as_str()
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
                     completed_at = ?13, author = ?14 \
                     WHERE intent_id = ?1 AND state = ?2 AND revision = ?3",
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
                        new.completed_at,
                        new.author.as_str()
                    ])
                }),
        )?;
        Ok(n == 1)
    }
}
