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
