//! [`ChangeStamp`]: whether any row of the ledger changed between two moments, for caches
//! of what the ledger says.

use super::Store;
use crate::error::StoreError;

/// Where the ledger stands: rows changed through this handle (`total_changes`) and commits
/// by any other connection (`PRAGMA data_version`). For a file ledger both come from its
/// read-only connection, to which every commit (this handle's too) is another
/// connection's. Two equal stamps of one handle mean no row changed in between; a
/// statement rolled back may still count as a change, so a differing stamp means only that
/// something may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeStamp {
    others: i64,
    own: u64,
}

impl Store {
    /// The ledger's [`ChangeStamp`] now.
    pub fn change_stamp(&self) -> Result<ChangeStamp, StoreError> {
        if let Some(reader) = self.lock_reader() {
            return Ok(ChangeStamp { others: data_version(&reader)?, own: 0 });
        }
        let inner = self.lock();
        Ok(ChangeStamp { others: data_version(&inner.conn)?, own: inner.conn.total_changes() })
    }
}

fn data_version(conn: &rusqlite::Connection) -> Result<i64, StoreError> {
    Ok(conn.prepare_cached("PRAGMA data_version")?.query_row([], |row| row.get(0))?)
}
