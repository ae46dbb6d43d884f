//! The undo records' retention: the old content an applied operation keeps (in the ledger)
//! and a failed one preserves (in the undo directory) is dropped oldest first, by the
//! finishing time of its operation, until none is older than the bound's age and together
//! they hold at most its bytes. An unfinished operation's content is never dropped: a
//! rollback may need it.

use rusqlite::{OptionalExtension, params};

use super::Store;
use super::operations::drop_undo;
use crate::error::StoreError;
use crate::model::Retention;

/// One finished operation's undo record, as retention weighs it.
#[derive(Debug)]
struct Kept {
    operation_id: String,
    finished_at: i64,
    /// Insertion order, which settles operations finished within the same second.
    rowid: i64,
    bytes: u64,
    /// Marked pruned already (a crash came between the mark and the directory's removal).
    pruned: bool,
}

impl Store {
    /// Drops the undo records the bound ([`Store::retention`]) no longer allows, oldest
    /// first, and marks each operation's `undo_pruned_at`; returns each dropped operation
    /// with its bytes.
    pub fn prune_undo(&self, now: i64) -> Result<Vec<(String, u64)>, StoreError> {
        let retention: Retention = self.retention();
        let cutoff = now.saturating_sub(i64::try_from(retention.max_age_secs).unwrap_or(i64::MAX));
        if self.within_bound(&retention, cutoff)? {
            return Ok(Vec::new());
        }
        let mut kept = self.kept_records()?;
        kept.sort_by_key(|k| (k.finished_at, k.rowid));
        let mut total: u64 = kept.iter().map(|k| k.bytes).sum();
        let mut pruned = Vec::new();
        for k in kept {
            if k.pruned || k.finished_at < cutoff || total > retention.max_bytes {
                total = total.saturating_sub(k.bytes);
                pruned.push((k.operation_id, k.bytes));
            }
        }
        if pruned.is_empty() {
            return Ok(pruned);
        }
        // Marked and dropped from the ledger in one commit, then from the undo directory (a
        // crash between the two leaves entries of operations marked pruned: the next call
        // drops them).
        self.write(|conn| {
            for (op, _) in &pruned {
                drop_undo(conn, op)?;
                conn.prepare_cached(
                    "UPDATE operations SET undo_pruned_at = coalesce(undo_pruned_at, ?2) \
                     WHERE operation_id = ?1 AND finished_at IS NOT NULL",
                )?
                .execute(params![op, now])?;
            }
            Ok(())
        })?;
        for (op, _) in &pruned {
            self.undo().discard(op, &[])?;
        }
        Ok(pruned)
    }

    /// Whether the bound allows every record kept, as the loop of [`Store::prune_undo`]
    /// would find: none marked pruned, none finished before `cutoff`, all together within
    /// the bytes. Told by one aggregate over the covering index of what operations keep,
    /// so a patch does not read every kept record's row (the history of days) to drop
    /// none. Only while the undo directory is empty (it holds what failures preserve):
    /// otherwise the whole weighing decides.
    fn within_bound(&self, retention: &Retention, cutoff: i64) -> Result<bool, StoreError> {
        if !self.undo().operations()?.is_empty() {
            return Ok(false);
        }
        let (bytes, oldest, marked): (i64, Option<i64>, bool) = self.read(|conn| {
            Ok(conn
                .prepare_cached(
                    "SELECT coalesce(sum(undo_bytes), 0), min(finished_at), \
                     coalesce(max(undo_pruned_at IS NOT NULL), 0) \
                     FROM operations WHERE undo_bytes > 0 AND finished_at IS NOT NULL",
                )?
                .query_row([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?)
        })?;
        let bytes = u64::try_from(bytes).unwrap_or(u64::MAX);
        Ok(!marked && oldest.is_none_or(|at| at >= cutoff) && bytes <= retention.max_bytes)
    }

    /// Every finished operation's undo record, in the ledger and in the undo directory.
    fn kept_records(&self) -> Result<Vec<Kept>, StoreError> {
        let mut kept: Vec<Kept> = self.read(|conn| {
            // From the index of the operations that keep something, never the content.
            let mut statement = conn.prepare_cached(
                "SELECT operation_id, finished_at, rowid, undo_bytes, undo_pruned_at IS NOT NULL \
                 FROM operations WHERE undo_bytes > 0 AND finished_at IS NOT NULL",
            )?;
            let rows = statement.query_map([], |row| {
                Ok(Kept {
                    operation_id: row.get(0)?,
                    finished_at: row.get(1)?,
                    rowid: row.get(2)?,
                    bytes: u64::try_from(row.get::<_, i64>(3)?).unwrap_or(0),
                    pruned: row.get(4)?,
                })
            })?;
            rows.collect::<Result<Vec<_>, _>>().map_err(StoreError::from)
        })?;
        for op in self.undo().operations()? {
            let finished: Option<(Option<i64>, i64, bool)> = self.read(|conn| {
                Ok(conn
                    .prepare_cached(
                        "SELECT finished_at, rowid, undo_pruned_at IS NOT NULL FROM operations \
                         WHERE operation_id = ?1",
                    )?
                    .query_row(params![op], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
                    .optional()?)
            })?;
            // No row yet, or unfinished: its content may still be needed.
            let Some((Some(finished_at), rowid, pruned)) = finished else { continue };
            let bytes = self.undo().bytes(&op)?;
            match kept.iter_mut().find(|k| k.operation_id == op) {
                Some(k) => k.bytes += bytes,
                None => kept.push(Kept { operation_id: op, finished_at, rowid, bytes, pruned }),
            }
        }
        Ok(kept)
    }
}
