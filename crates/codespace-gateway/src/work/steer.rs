//! The agent's side: `work_open`, `steer_status`, `steer_claim_next`, `steer_complete` and
//! `work_finish`.

use codespace_protocol::{
    ClaimedIntent, CompleteOutcome, Delivery, FinishReason, IntentState, SteerClaimResult,
    SteerCompleteParams, SteerStatusResult, UserIntent, WorkFinishResult, WorkIdParams,
    WorkOpenParams, WorkOpenResult, WorkState,
};
use codespace_store::{IntentRow, WorkRow, Works};

use super::{claimable, counts, now, swap, user_intent, work};
use crate::{Gateway, GatewayError};

/// Longest work title, in bytes.
const MAX_TITLE_BYTES: usize = 1024;

impl Gateway {
    /// Mints a work; the workspace's instructions left for its next work attach to it, those
    /// for `next_work` becoming `after_current_work`.
    pub async fn work_open(&self, p: WorkOpenParams) -> Result<WorkOpenResult, GatewayError> {
        self.lookup(&p.workspace_id)?;
        if p.title.as_ref().is_some_and(|t| t.len() > MAX_TITLE_BYTES) {
            return Err(GatewayError::InvalidArguments {
                tool: "work_open".to_owned(),
                detail: format!("title is longer than {MAX_TITLE_BYTES} bytes"),
            });
        }
        let row = WorkRow {
            work_id: format!("work-{}", uuid::Uuid::new_v4()),
            workspace_id: p.workspace_id,
            title: p.title,
            state: WorkState::Active,
            queue_revision: 0,
            created_at: now(),
            closed_at: None,
        };
        let inserted = row.clone();
        self.ledger
            .run(move |store| {
                store.works_write(|w| {
                    w.insert_work(&inserted)?;
                    attach_waiting(w, &inserted)
                })
            })
            .await?;
        Ok(WorkOpenResult {
            work_id: row.work_id,
            workspace_id: row.workspace_id,
            state: row.state,
        })
    }

    pub async fn steer_status(&self, p: WorkIdParams) -> Result<SteerStatusResult, GatewayError> {
        self.ledger
            .run(move |store| {
                store.works_read(|w| {
                    let work = work(w, &p.work_id)?;
                    let (queued, claimed, claimable_now) = counts(w, &work)?;
                    Ok(SteerStatusResult {
                        work_id: work.work_id,
                        state: work.state,
                        queued,
                        claimed,
                        claimable_now,
                        queue_revision: work.queue_revision,
                    })
                })
            })
            .await
    }

    /// Claims the first claimable queued instruction, by position.
    pub async fn steer_claim_next(
        &self,
        p: WorkIdParams,
    ) -> Result<SteerClaimResult, GatewayError> {
        self.ledger
            .run(move |store| {
                store.works_write(|w| {
                    let work = open_work(w, &p.work_id)?;
                    let next = w.intents(&work.work_id)?.into_iter().find(|i| {
                        i.state == IntentState::Queued && claimable(work.state, i.delivery)
                    });
                    let Some(old) = next else { return Ok(SteerClaimResult { item: None }) };
                    let at = now();
                    let new = IntentRow {
                        state: IntentState::Claimed,
                        revision: old.revision + 1,
                        claimed_at: Some(at),
                        updated_at: at,
                        ..old.clone()
                    };
                    swap(w, &old, &new)?;
                    w.bump_queue(&work.work_id)?;
                    Ok(SteerClaimResult {
                        item: Some(ClaimedIntent {
                            intent_id: new.intent_id,
                            revision: new.revision,
                            kind: new.kind,
                            delivery: new.delivery,
                            content: new.body,
                            author: new.author,
                        }),
                    })
                })
            })
            .await
    }

    pub async fn steer_complete(&self, p: SteerCompleteParams) -> Result<UserIntent, GatewayError> {
        let state = match p.outcome.unwrap_or(CompleteOutcome::Done) {
            CompleteOutcome::Done => IntentState::Done,
            CompleteOutcome::Blocked => IntentState::Blocked,
        };
        self.ledger
            .run(move |store| {
                store.works_write(|w| {
                    let work = work(w, &p.work_id)?;
                    let old = w
                        .intent(&p.intent_id)?
                        .filter(|i| i.work_id.as_deref() == Some(work.work_id.as_str()))
                        .ok_or_else(|| GatewayError::IntentNotFound {
                            intent_id: p.intent_id.clone(),
                        })?;
                    if old.state != IntentState::Claimed {
                        return Err(GatewayError::IntentNotEditable {
                            intent_id: old.intent_id,
                            state: old.state,
                            action: "completed (only a claimed instruction is)",
                        });
                    }
                    let at = now();
                    let new = IntentRow {
                        state,
                        revision: old.revision + 1,
                        completed_at: Some(at),
                        updated_at: at,
                        ..old.clone()
                    };
                    swap(w, &old, &new)?;
                    w.bump_queue(&work.work_id)?;
                    Ok(user_intent(new))
                })
            })
            .await
    }

    /// Closes the work unless the person still has instructions for it: claimed or
    /// `next_checkpoint` ones keep it open; `after_current_work` ones make it `closing`
    /// (claimable now); otherwise it closes and what is left waits for the next work.
    pub async fn work_finish(&self, p: WorkIdParams) -> Result<WorkFinishResult, GatewayError> {
        self.ledger
            .run(move |store| {
                store.works_write(|w| {
                    let work = open_work(w, &p.work_id)?;
                    let intents = w.intents(&work.work_id)?;
                    let queued = |d: Delivery| {
                        intents.iter().any(|i| i.state == IntentState::Queued && i.delivery == d)
                    };
                    let count = intents.iter().filter(|i| i.state == IntentState::Queued).count();
                    let count = u32::try_from(count).unwrap_or(u32::MAX);
                    let pending = |state| WorkFinishResult {
                        work_id: work.work_id.clone(),
                        closed: false,
                        reason: Some(FinishReason::PendingUserInput),
                        queued: count,
                        state,
                    };
                    if intents.iter().any(|i| i.state == IntentState::Claimed)
                        || queued(Delivery::NextCheckpoint)
                    {
                        return Ok(pending(work.state));
                    }
                    if queued(Delivery::AfterCurrentWork) {
                        if work.state == WorkState::Active {
                            set_state(w, &work, WorkState::Closing, None)?;
                            w.bump_queue(&work.work_id)?;
                        }
                        return Ok(pending(WorkState::Closing));
                    }
                    set_state(w, &work, WorkState::Closed, Some(now()))?;
                    let detached = detach_waiting(w, &work, intents)?;
                    if detached > 0 {
                        w.bump_queue(&work.work_id)?;
                    }
                    Ok(WorkFinishResult {
                        work_id: work.work_id,
                        closed: true,
                        reason: None,
                        queued: 0,
                        state: WorkState::Closed,
                    })
                })
            })
            .await
    }
}

/// The work, which must be open (`WORK_CLOSED` otherwise).
fn open_work(w: &Works<'_>, work_id: &str) -> Result<WorkRow, GatewayError> {
    let work = work(w, work_id)?;
    if !work.state.is_open() {
        return Err(GatewayError::WorkClosed { work_id: work.work_id, state: work.state });
    }
    Ok(work)
}

fn set_state(
    w: &Works<'_>,
    work: &WorkRow,
    to: WorkState,
    closed_at: Option<i64>,
) -> Result<(), GatewayError> {
    if w.set_work_state(&work.work_id, work.state, to, closed_at)? {
        Ok(())
    } else {
        Err(GatewayError::Internal(format!("work {} changed state under a write", work.work_id)))
    }
}

/// Attaches the workspace's waiting draft and queued instructions to the new `work`.
fn attach_waiting(w: &Works<'_>, work: &WorkRow) -> Result<(), GatewayError> {
    let waiting = w.unattached(&work.workspace_id)?;
    if waiting.is_empty() {
        return Ok(());
    }
    let at = now();
    for old in waiting {
        let delivery = match old.delivery {
            Delivery::NextWork => Delivery::AfterCurrentWork,
            d @ (Delivery::NextCheckpoint | Delivery::AfterCurrentWork) => d,
        };
        let new = IntentRow {
            work_id: Some(work.work_id.clone()),
            position: w.next_position(Some(&work.work_id), &work.workspace_id)?,
            revision: old.revision + 1,
            delivery,
            updated_at: at,
            ..old.clone()
        };
        swap(w, &old, &new)?;
    }
    w.bump_queue(&work.work_id)?;
    Ok(())
}

/// Detaches the closed work's draft and queued instructions for the workspace's next work;
/// returns how many.
fn detach_waiting(
    w: &Works<'_>,
    work: &WorkRow,
    intents: Vec<IntentRow>,
) -> Result<usize, GatewayError> {
    let at = now();
    let mut detached = 0;
    for old in intents.into_iter().filter(|i| i.state.is_editable()) {
        let new = IntentRow {
            work_id: None,
            position: w.next_position(None, &work.workspace_id)?,
            revision: old.revision + 1,
            updated_at: at,
            ..old.clone()
        };
        swap(w, &old, &new)?;
        detached += 1;
    }
    Ok(detached)
}
