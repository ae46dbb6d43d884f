//! The old content a plan's transaction stored in the ledger (`operation_undo`): read back
//! for recovery, and written out to the undo directory for what a result preserves.

use rusqlite::{OptionalExtension, params};

use super::Store;
use crate::error::StoreError;

impl Store {
    /// The old content of plan row `ordinal` of `operation_id`: from the ledger, else from
    /// the undo directory (content written out earlier, or by an older build).
    pub fn undo_content(
        &self,
        operation_id: &str,
        ordinal: usize,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let stored: Option<Vec<u8>> = self.read(|conn| {
            Ok(conn
                .prepare_cached(
                    "SELECT content FROM operation_undo WHERE operation_id = ?1 AND ordinal = ?2",
                )?
                .query_row(params![operation_id, ordinal as i64], |row| row.get(0))
                .optional()?)
        })?;
        match stored {
            Some(bytes) => Ok(Some(bytes)),
            None => self.undo().load(operation_id, ordinal),
        }
    }

    /// Content of `version` that an operation in `workspace_id` replaced, moved or deleted
    /// and still keeps in its undo record, preferring one at `path` and then the latest:
    /// what a caller whose expected version is stale expected the file to hold. A version
    /// names its bytes (a hash), so the content returned is checked against it by the caller.
    pub fn undo_content_of_version(
        &self,
        workspace_id: &str,
        path: &str,
        version: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let found: Vec<(String, i64)> = self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT f.operation_id, f.ordinal FROM operation_files f \
                 JOIN operations o ON o.operation_id = f.operation_id \
                 WHERE o.workspace_id = ?1 AND f.before_version = ?3 \
                 ORDER BY f.path = ?2 DESC, o.created_at DESC LIMIT 8",
            )?;
            let rows = stmt.query_map(params![workspace_id, path, version], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })?;
        for (operation_id, ordinal) in found {
            let Ok(ordinal) = usize::try_from(ordinal) else { continue };
            if let Some(bytes) = self.undo_content(&operation_id, ordinal)? {
                return Ok(Some(bytes));
            }
        }
        Ok(None)
    }

    /// Writes the stored old content of each of `ordinals` out to the undo directory
    /// (fsynced), where it outlives the operation's terminal record: content a result
    /// names as preserved. An ordinal already written out is left as it is.
    pub fn preserve_undo(&self, operation_id: &str, ordinals: &[usize]) -> Result<(), StoreError> {
        let mut entries = Vec::new();
        for &ordinal in ordinals {
            if self.undo().load(operation_id, ordinal)?.is_some() {
                continue;
            }
            if let Some(bytes) = self.undo_content(operation_id, ordinal)? {
                entries.push((ordinal, bytes));
            }
        }
        let borrowed: Vec<(usize, &[u8])> =
            entries.iter().map(|(o, b)| (*o, b.as_slice())).collect();
        self.undo().save(operation_id, &borrowed)
    }
}
