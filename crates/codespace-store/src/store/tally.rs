//! [`Tally`]: how much waits in the ledger, what the server's metrics report as gauges.

use rusqlite::Connection;

use super::Store;
use crate::error::StoreError;

/// What waits in the ledger now (every server's on it, not only this one's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Holds waiting for a person's decision (`pending`).
    pub pending_holds: u64,
    /// Instructions queued for the agent and not yet claimed (`queued`).
    pub queued_instructions: u64,
}

impl Store {
    /// Counts what waits: pending holds and queued instructions, in one read.
    pub fn tally(&self) -> Result<Tally, StoreError> {
        self.read(|conn| {
            Ok(Tally {
                pending_holds: count(
                    conn,
                    "SELECT count(*) FROM approvals WHERE state = 'pending'",
                )?,
                queued_instructions: count(
                    conn,
                    "SELECT count(*) FROM intents WHERE state = 'queued'",
                )?,
            })
        })
    }
}

fn count(conn: &Connection, sql: &str) -> Result<u64, StoreError> {
    let n: i64 = conn.prepare_cached(sql)?.query_row([], |row| row.get(0))?;
    Ok(u64::try_from(n).unwrap_or(0))
}
