//! The process table: handles by id, slot reservation against the live limit, and lazy
//! retention of completed handles.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::Supervisor;
use super::handle::{Proc, lock};
use crate::error::ProcError;

#[derive(Default)]
pub(super) struct Table {
    pub(super) procs: HashMap<String, Arc<Proc>>,
    /// Slots taken by spawns still in progress.
    pub(super) reserved: usize,
    pub(super) shutting_down: bool,
}

impl Table {
    pub(super) fn running(&self) -> impl Iterator<Item = &Arc<Proc>> {
        self.procs.values().filter(|p| p.state().exit.is_none())
    }
}

/// A reserved slot, released on drop unless the process was inserted.
pub(super) struct Reservation<'a> {
    table: &'a Mutex<Table>,
    live: bool,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.live {
            lock(self.table).reserved -= 1;
        }
    }
}

impl Supervisor {
    pub(super) fn reserve(&self) -> Result<Reservation<'_>, ProcError> {
        let mut table = lock(&self.table);
        self.evict(&mut table);
        if table.shutting_down {
            return Err(ProcError::SpawnFailed("the supervisor is shutting down".into()));
        }
        if table.running().count() + table.reserved >= self.config.max_live {
            return Err(ProcError::LimitReached);
        }
        table.reserved += 1;
        Ok(Reservation { table: &self.table, live: true })
    }

    /// Turns the reservation into a live handle. False (and nothing inserted) when the
    /// supervisor began shutting down meanwhile.
    pub(super) fn commit(
        &self,
        mut reservation: Reservation<'_>,
        id: &str,
        proc: &Arc<Proc>,
    ) -> bool {
        let mut table = lock(&self.table);
        table.reserved -= 1;
        reservation.live = false;
        if table.shutting_down {
            return false;
        }
        table.procs.insert(id.to_owned(), Arc::clone(proc));
        true
    }

    pub(super) fn get(&self, id: &str) -> Result<Arc<Proc>, ProcError> {
        let mut table = lock(&self.table);
        self.evict(&mut table);
        table.procs.get(id).cloned().ok_or(ProcError::NotFound)
    }

    /// Lazy retention: completed handles older than the TTL go, then the oldest beyond the
    /// count limit. Running handles are never evicted.
    fn evict(&self, table: &mut Table) {
        let now = self.config.clock.now();
        let mut completed: Vec<(Instant, String)> = table
            .procs
            .iter()
            .filter_map(|(id, p)| p.state().exit.as_ref().map(|e| (e.completed_at, id.clone())))
            .collect();
        completed.sort();
        let expired = completed
            .iter()
            .take_while(|(at, _)| now.saturating_duration_since(*at) >= self.config.completed_ttl)
            .count();
        let over = (completed.len() - expired).saturating_sub(self.config.max_completed);
        for (_, id) in completed.iter().take(expired + over) {
            table.procs.remove(id);
        }
    }
}
