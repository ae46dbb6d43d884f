//! The SQL of works and intents: [`WorkRow`], [`IntentRow`], and [`Works`], the handle of
//! one ledger transaction through which the gateway reads and changes them.
//!
//! The gateway owns what the rows mean (which state may follow which, what a claim takes);
//! this module only stores them. [`Store::works_write`] runs the gateway's whole decision in
//! one `BEGIN IMMEDIATE` transaction, so a claim or an edit sees and changes one consistent
//! queue even when several handles or processes share the file; the row updates are also
//! compare-and-swaps on the state and revision the decision was made on.
//!
//! Here: the rows, the handle and its transactions; `statements` holds the SQL of each read
//! and write through the handle, `columns` the checks that turn stored columns into rows.

mod columns;
mod statements;

use std::cell::Cell;

use codespace_types::{Delivery, IntentAuthor, IntentKind, IntentState, WorkState};
use rusqlite::{Connection, TransactionBehavior};

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
    /// Who wrote it.
    pub author: IntentAuthor,
}

/// One ledger transaction over works and intents.
pub struct Works<'a> {
    conn: &'a Connection,
    /// The text of the first storage failure seen, so the handle degrades after it.
    failure: Cell<Option<String>>,
}

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
