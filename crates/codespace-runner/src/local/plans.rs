//! The plans a runner holds between a patch's (or a revert's) `Prepare` and its `Apply`: the
//! gateway makes the plan durable in its ledger in between, and the `Apply` then names the
//! plan by its [`PlanId`] instead of carrying every file's content back (through a worker's
//! socket, that content would cross it twice more). A plan is taken by its `Apply`; one
//! never applied (the ledger refused it, another request won its key) is dropped after
//! [`PLAN_TTL`], and at most [`MAX_HELD_PLANS`] are held (the oldest goes first).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use codespace_files::PlannedWrite;

use crate::RunnerError;
use crate::ops::PlanId;

/// How long a plan waits for its `Apply`: far past the gateway's one ledger commit between
/// the two, and as long as a call to a worker may take.
pub(crate) const PLAN_TTL: Duration = crate::CALL_DEADLINE;

/// The most plans held at once; beyond it the oldest is dropped (its `Apply`, if it ever
/// comes, writes nothing and says so).
pub(crate) const MAX_HELD_PLANS: usize = 1024;

/// The held plans, oldest (lowest id) first.
#[derive(Default)]
pub(super) struct Plans(Mutex<Held>);

#[derive(Default)]
struct Held {
    next: u64,
    plans: BTreeMap<u64, Plan>,
}

struct Plan {
    ws: String,
    writes: Vec<PlannedWrite>,
    at: Instant,
}

impl Plans {
    /// Holds `writes` for an `Apply` in workspace `ws`.
    pub(super) fn hold(&self, ws: &str, writes: Vec<PlannedWrite>) -> PlanId {
        let mut held = self.lock();
        let now = Instant::now();
        held.plans.retain(|_, p| now.duration_since(p.at) < PLAN_TTL);
        while held.plans.len() >= MAX_HELD_PLANS {
            if let Some((id, p)) = held.plans.pop_first() {
                tracing::warn!(plan = id, ws = %p.ws, "a patch plan was dropped unapplied: too many held");
            }
        }
        held.next += 1;
        let id = held.next;
        held.plans.insert(id, Plan { ws: ws.to_owned(), writes, at: now });
        PlanId(id)
    }

    /// Takes plan `id` of workspace `ws`; a plan not held (never, applied already, or
    /// dropped) or held for another workspace is refused, and nothing is written.
    pub(super) fn take(&self, ws: &str, id: PlanId) -> Result<Vec<PlannedWrite>, RunnerError> {
        let mut held = self.lock();
        match held.plans.remove(&id.0) {
            Some(p) if p.ws == ws => Ok(p.writes),
            Some(p) => {
                let reason = format!("plan {} is workspace {:?}'s, not {ws:?}", id.0, p.ws);
                held.plans.insert(id.0, p);
                Err(RunnerError::Task { reason: format!("{reason}: nothing was written") })
            }
            None => Err(RunnerError::Task {
                reason: format!(
                    "plan {} is not held (applied already, or dropped unapplied after {} s or \
                     behind {MAX_HELD_PLANS} newer ones): nothing was written",
                    id.0,
                    PLAN_TTL.as_secs()
                ),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Held> {
        // Every change is one map operation: a panic cannot leave it half-changed.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests;
