//! Works and the person's instruction queue: what the rows of the ledger mean.
//!
//! A work is an agent's logical job in one workspace, independent of any transport session;
//! its intents are what the person told the agent meanwhile. The agent's side is in
//! `steer` (the `work_*` and `steer_*` tools), the person's in `inbox` (the HTTP `/inbox`
//! API), and the hint other tool results carry in `hint`. Every decision runs inside one
//! ledger transaction ([`codespace_store::Store::works_write`]), and every row update is a
//! compare-and-swap on the state and revision it was decided on, so two agents claiming at
//! once never take the same instruction, and an edit made on a stale revision is refused.

mod hint;
mod inbox;
mod owners;
mod reset;
mod steer;

use codespace_protocol::{Delivery, IntentState, UserIntent, WorkState, WorkSummary};
use codespace_store::{IntentRow, WorkRow, Works};

use crate::GatewayError;

pub(crate) use hint::Hints;
pub use inbox::{MAX_INTENT_BYTES, write_instruction};
pub(crate) use owners::Owners;

/// Seconds since the epoch, as the ledger stores times.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Whether the agent may claim a queued instruction with `delivery` from a work in `state`:
/// an active work hands out only `next_checkpoint` ones, a closing work also those left for
/// after the current work.
fn claimable(state: WorkState, delivery: Delivery) -> bool {
    match (state, delivery) {
        (WorkState::Active | WorkState::Closing, Delivery::NextCheckpoint) => true,
        (WorkState::Closing, Delivery::AfterCurrentWork) => true,
        (WorkState::Active, Delivery::AfterCurrentWork)
        | (WorkState::Active | WorkState::Closing, Delivery::NextWork)
        | (WorkState::Closed | WorkState::Cancelled, _) => false,
    }
}

/// Counts of a work's queue: (queued, claimed, claimable now), from the ledger's counts
/// by state and delivery.
fn counts(w: &Works<'_>, work: &WorkRow) -> Result<(u32, u32, u32), GatewayError> {
    let (mut queued, mut claimed, mut claimable_now) = (0u64, 0u64, 0u64);
    for (state, delivery, n) in w.pending_counts(&work.work_id)? {
        match state {
            IntentState::Queued => {
                queued += n;
                if claimable(work.state, delivery) {
                    claimable_now += n;
                }
            }
            IntentState::Claimed => claimed += n,
            IntentState::Draft
            | IntentState::Done
            | IntentState::Blocked
            | IntentState::Cancelled
            | IntentState::Superseded => {}
        }
    }
    let cap = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    Ok((cap(queued), cap(claimed), cap(claimable_now)))
}

/// The work `work_id`, or `WORK_NOT_FOUND`.
fn work(w: &Works<'_>, work_id: &str) -> Result<WorkRow, GatewayError> {
    w.work(work_id)?.ok_or_else(|| GatewayError::WorkNotFound { work_id: work_id.to_owned() })
}

/// Writes `new` over `old` (a compare-and-swap on `old`'s state and revision); losing the
/// race is a revision conflict.
fn swap(w: &Works<'_>, old: &IntentRow, new: &IntentRow) -> Result<(), GatewayError> {
    if w.update_intent(old, new)? {
        Ok(())
    } else {
        Err(GatewayError::IntentRevisionConflict {
            intent_id: old.intent_id.clone(),
            given: old.revision,
        })
    }
}

/// Bumps the queue revision of the work `intent` belongs to, if any.
fn touched(w: &Works<'_>, intent: &IntentRow) -> Result<(), GatewayError> {
    if let Some(work_id) = &intent.work_id {
        w.bump_queue(work_id)?;
    }
    Ok(())
}

fn user_intent(i: IntentRow) -> UserIntent {
    UserIntent {
        intent_id: i.intent_id,
        work_id: i.work_id,
        workspace_id: i.workspace_id,
        position: i.position,
        revision: i.revision,
        kind: i.kind,
        delivery: i.delivery,
        body: i.body,
        state: i.state,
        author: i.author,
    }
}

fn summary(w: WorkRow) -> WorkSummary {
    WorkSummary {
        work_id: w.work_id,
        workspace_id: w.workspace_id,
        title: w.title,
        state: w.state,
        queue_revision: w.queue_revision,
    }
}

#[cfg(test)]
mod tests;
