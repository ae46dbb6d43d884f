//! [`ChangeStamp`]: whether any row of the ledger changed between two moments, for caches
//! of what the ledger says.

use super::Store;
use crate::error::StoreError;

/// Where the ledger stands: rows changed through this handle (`total_changes`) and commits
/// by any other connection (`PRAGMA data_version`). Two equal stamps of one handle mean no
/// row changed in between; a statement rolled back may still count as a change, so a
/// differing stamp means only that something may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeStamp {
    others: i64,
    own: u64,
}

impl Store {
    /// The ledger's [`ChangeStamp`] now.
    pub fn change_stamp(&self) -> Result<ChangeStamp, StoreError> {
        let inner = self.lock();
        let others =
            inner.conn.prepare_cached("PRAGMA data_version")?.query_row([], |row| row.get(0))?;
        Ok(ChangeStamp { others, own: inner.conn.total_changes() })
    }
}
