//! [`Ledger`]: the gateway's only way to the store, so that async code never waits on it.
//!
//! A ledger write commits with an fsync and may wait up to the store's 5 s busy timeout for
//! another handle's write lock; a read on the writing connection waits for the commit in
//! progress. On the async executor either would stall every task of its thread, so from
//! async code each call runs on the blocking pool ([`Ledger::run`]). Two reads are exempt
//! because they take the read-only connection, which never waits for a commit or a lock
//! (WAL): the change stamp and the works snapshot behind every tool call's coordination
//! hint. The synchronous entry points that never run on the executor (start-up recovery,
//! before serving, and the operator's `operations restore`) take the store directly
//! ([`Ledger::off_the_executor`]); a test pins them as its only callers.

use std::sync::Arc;

use codespace_store::{ChangeStamp, Store, StoreError, Works};

use crate::{GatewayError, blocking};

/// The ledger behind a gateway.
pub(crate) struct Ledger {
    store: Arc<Store>,
}

impl Ledger {
    pub(crate) fn new(store: Arc<Store>) -> Ledger {
        Ledger { store }
    }

    /// Runs `f` with the store on the blocking pool: every ledger call from async code
    /// (a write, or a read on the writing connection) goes through here.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Arc<Store>) -> Result<T, GatewayError> + Send + 'static,
    ) -> Result<T, GatewayError> {
        let store = Arc::clone(&self.store);
        blocking(move || f(&store)).await
    }

    /// The ledger's change stamp, from the read-only connection (never waits for a commit).
    pub(crate) fn change_stamp(&self) -> Result<ChangeStamp, StoreError> {
        self.store.change_stamp()
    }

    /// One snapshot of works and intents, from the read-only connection (never waits for a
    /// commit).
    pub(crate) fn works_snapshot<T, E: From<StoreError>>(
        &self,
        body: impl FnOnce(&Works<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        self.store.works_read(body)
    }

    /// This server's instance id (no I/O: set once at start), the owner its work names.
    pub(crate) fn instance_id(&self) -> Option<String> {
        self.store.instance_id().map(str::to_owned)
    }

    /// The store itself, for the synchronous entry points that never run on the async
    /// executor: start-up recovery (before serving) and the operator's `operations
    /// restore`. Async code uses [`Ledger::run`].
    pub(crate) fn off_the_executor(&self) -> &Arc<Store> {
        &self.store
    }
}

#[cfg(test)]
mod tests;
