//! The person's side, behind HTTP `/inbox` (with the person token): list works and their
//! queues, write a draft, edit it on its current revision, queue, cancel, reorder, and
//! stop; and `write_instruction`, which the CLI uses too. Every instruction records who
//! wrote it (`IntentAuthor`).

use std::collections::BTreeSet;

use codespace_protocol::{
    ApprovalState, Delivery, EditIntent, InboxHold, IntentKind, IntentState, NewIntent,
    QueueIntent, ReorderIntents, StopResult, StopWork, UserIntent, WorkSummary,
};
use codespace_store::{HoldFilter, IntentRow, Store, Works};
use codespace_types::IntentAuthor;

use super::{now, summary, swap, touched, user_intent, work};
use crate::{Gateway, GatewayError};

/// At most this many pending holds are listed, newest first.
const MAX_LISTED_HOLDS: usize = 100;

/// Longest instruction, in bytes.
pub const MAX_INTENT_BYTES: usize = 64 * 1024;

/// The stop notice's text when the person gave no reason.
const STOPPED: &str = "The person pressed stop: every process of this workspace was killed.";

fn invalid(what: &str, detail: String) -> GatewayError {
    GatewayError::InvalidArguments { tool: format!("/inbox {what}"), detail }
}

fn check_body(what: &str, body: &str) -> Result<(), GatewayError> {
    if body.trim().is_empty() {
        return Err(invalid(what, "body must not be empty".to_owned()));
    }
    if body.len() > MAX_INTENT_BYTES {
        return Err(invalid(what, format!("body is longer than {MAX_INTENT_BYTES} bytes")));
    }
    Ok(())
}

/// The intent, which the person may still change: `INTENT_ALREADY_CLAIMED` once the agent
/// took it, `INTENT_NOT_EDITABLE` once it ended.
fn editable(
    w: &Works<'_>,
    intent_id: &str,
    action: &'static str,
) -> Result<IntentRow, GatewayError> {
    let intent = w
        .intent(intent_id)?
        .ok_or_else(|| GatewayError::IntentNotFound { intent_id: intent_id.to_owned() })?;
    match intent.state {
        IntentState::Draft | IntentState::Queued => Ok(intent),
        IntentState::Claimed => {
            Err(GatewayError::IntentAlreadyClaimed { intent_id: intent.intent_id })
        }
        state @ (IntentState::Done
        | IntentState::Blocked
        | IntentState::Cancelled
        | IntentState::Superseded) => {
            Err(GatewayError::IntentNotEditable { intent_id: intent.intent_id, state, action })
        }
    }
}

fn same_revision(intent: &IntentRow, given: u64) -> Result<(), GatewayError> {
    if intent.revision == given {
        Ok(())
    } else {
        Err(GatewayError::IntentRevisionConflict { intent_id: intent.intent_id.clone(), given })
    }
}

impl Gateway {
    /// Works of one workspace (of every workspace when `None`), newest first.
    pub async fn inbox_works(
        &self,
        workspace_id: Option<&str>,
    ) -> Result<Vec<WorkSummary>, GatewayError> {
        if let Some(id) = workspace_id {
            self.lookup(id)?;
        }
        let workspace_id = workspace_id.map(str::to_owned);
        let rows = self
            .ledger
            .run(move |store| Ok(store.works_read(|w| w.works(workspace_id.as_deref()))?))
            .await?;
        Ok(rows.into_iter().map(summary).collect())
    }

    pub async fn inbox_work(&self, work_id: &str) -> Result<WorkSummary, GatewayError> {
        let work_id = work_id.to_owned();
        self.ledger.run(move |store| store.works_read(|w| work(w, &work_id))).await.map(summary)
    }

    /// A work's instructions in queue order, drafts and ended ones included.
    pub async fn inbox_intents(&self, work_id: &str) -> Result<Vec<UserIntent>, GatewayError> {
        let work_id = work_id.to_owned();
        self.ledger
            .run(move |store| {
                store.works_read(|w| {
                    work(w, &work_id)?;
                    Ok(w.intents(&work_id)?.into_iter().map(user_intent).collect())
                })
            })
            .await
    }

    /// The confirmation holds waiting for a decision, newest first (the page's list; the
    /// decision itself is `approval_resolve`).
    pub async fn inbox_holds(&self) -> Result<Vec<InboxHold>, GatewayError> {
        let filter = HoldFilter { workspace_id: None, state: Some(ApprovalState::Pending) };
        let holds = self
            .ledger
            .run(move |store| crate::holds::list_holds(store, &filter, MAX_LISTED_HOLDS))
            .await?;
        Ok(holds
            .into_iter()
            .map(|h| InboxHold {
                approval_id: h.approval_id,
                workspace_id: h.workspace_id,
                tool: h.tool,
                state: h.state,
                summary: h.summary,
                created_at: h.created_at,
            })
            .collect())
    }

    /// A new draft at the end of the work's queue; for a work that is no longer open, a
    /// draft that waits for the workspace's next work.
    /// The person wrote it on /inbox.
    pub async fn inbox_create(
        &self,
        work_id: &str,
        p: NewIntent,
    ) -> Result<UserIntent, GatewayError> {
        check_body("create", &p.body)?;
        let work_id = work_id.to_owned();
        self.ledger
            .run(move |store| {
                write_instruction(store, &work_id, p, IntentAuthor::PersonInbox, false)
            })
            .await
    }

    pub async fn inbox_edit(
        &self,
        intent_id: &str,
        p: EditIntent,
    ) -> Result<UserIntent, GatewayError> {
        check_body("edit", &p.body)?;
        let intent_id = intent_id.to_owned();
        self.ledger
            .run(move |store| {
                store.works_write(|w| {
                    let old = editable(w, &intent_id, "edited")?;
                    same_revision(&old, p.revision)?;
                    // The text is now the person's, whoever wrote the first one.
                    let new = IntentRow {
                        body: p.body,
                        delivery: p.delivery.unwrap_or(old.delivery),
                        revision: old.revision + 1,
                        updated_at: now(),
                        author: IntentAuthor::PersonInbox,
                        ..old.clone()
                    };
                    replace(w, &old, new)
                })
            })
            .await
    }

    /// Makes a draft visible to the agent; queueing a queued instruction changes nothing.
    pub async fn inbox_queue(
        &self,
        intent_id: &str,
        p: QueueIntent,
    ) -> Result<UserIntent, GatewayError> {
        let intent_id = intent_id.to_owned();
        self.ledger
            .run(move |store| {
                store.works_write(|w| {
                    let old = editable(w, &intent_id, "queued")?;
                    same_revision(&old, p.revision)?;
                    if old.state == IntentState::Queued {
                        return Ok(user_intent(old));
                    }
                    let new = IntentRow {
                        state: IntentState::Queued,
                        revision: old.revision + 1,
                        updated_at: now(),
                        ..old.clone()
                    };
                    replace(w, &old, new)
                })
            })
            .await
    }

    pub async fn inbox_cancel(&self, intent_id: &str) -> Result<UserIntent, GatewayError> {
        let intent_id = intent_id.to_owned();
        self.ledger
            .run(move |store| {
                store.works_write(|w| {
                    let old = editable(w, &intent_id, "cancelled")?;
                    let new = IntentRow {
                        state: IntentState::Cancelled,
                        revision: old.revision + 1,
                        updated_at: now(),
                        ..old.clone()
                    };
                    replace(w, &old, new)
                })
            })
            .await
    }

    /// Hands the positions the listed instructions hold out again in the given order;
    /// returns the work's queued instructions in their new order.
    pub async fn inbox_reorder(
        &self,
        work_id: &str,
        p: ReorderIntents,
    ) -> Result<Vec<UserIntent>, GatewayError> {
        let unique: BTreeSet<&String> = p.intent_ids.iter().collect();
        if unique.len() != p.intent_ids.len() {
            return Err(invalid("reorder", "intent_ids lists an instruction twice".to_owned()));
        }
        let work_id = work_id.to_owned();
        self.ledger
            .run(move |store| {
                store.works_write(|w| {
                    let work = work(w, &work_id)?;
                    let mut listed = Vec::with_capacity(p.intent_ids.len());
                    for id in &p.intent_ids {
                        let intent = editable(w, id, "reordered")?;
                        if intent.work_id.as_deref() != Some(work.work_id.as_str()) {
                            return Err(GatewayError::IntentNotFound { intent_id: id.clone() });
                        }
                        listed.push(intent);
                    }
                    let mut positions: Vec<i64> = listed.iter().map(|i| i.position).collect();
                    positions.sort_unstable();
                    for (old, position) in listed.iter().zip(positions) {
                        if old.position != position {
                            swap(
                                w,
                                old,
                                &IntentRow { position, updated_at: now(), ..old.clone() },
                            )?;
                        }
                    }
                    w.bump_queue(&work.work_id)?;
                    let queued = w.intents(&work.work_id)?.into_iter();
                    Ok(queued.filter(|i| i.state == IntentState::Queued).map(user_intent).collect())
                })
            })
            .await
    }

    /// Kills every process of the work's workspace, subtree and all, and puts a
    /// `stop_notice` at the front of the queue, claimable at once.
    pub async fn inbox_stop(&self, work_id: &str, p: StopWork) -> Result<StopResult, GatewayError> {
        let reason = p.reason.filter(|r| !r.trim().is_empty());
        if let Some(r) = &reason {
            check_body("stop", r)?;
        }
        let work_id = work_id.to_owned();
        let id = work_id.clone();
        let workspace_id =
            self.ledger.run(move |store| store.works_read(|w| work(w, &id))).await?.workspace_id;
        let killed = self.kill_workspace(&workspace_id).await;
        let body = reason.unwrap_or_else(|| STOPPED.to_owned());
        let intent = self
            .ledger
            .run(move |store| store.works_write(|w| stop_notice(w, &work_id, body)))
            .await?;
        Ok(StopResult { ok: true, killed, intent })
    }
}

/// A new instruction by `author` at the end of the work's queue, a draft or (with `queue`)
/// queued at once; for a work that is no longer open, one that waits for the workspace's
/// next work. What `/inbox` does for the person, and `codespace instructions add` from
/// another process on the same ledger.
pub fn write_instruction(
    store: &Store,
    work_id: &str,
    p: NewIntent,
    author: IntentAuthor,
    queue: bool,
) -> Result<UserIntent, GatewayError> {
    check_body("create", &p.body)?;
    let kind = p.kind.unwrap_or(IntentKind::FollowUp);
    let delivery = p.delivery.unwrap_or(Delivery::AfterCurrentWork);
    let state = if queue { IntentState::Queued } else { IntentState::Draft };
    store.works_write(|w| {
        let work = work(w, work_id)?;
        let row = new_intent(w, &work, kind, delivery, p.body, state, author)?;
        Ok(user_intent(row))
    })
}

/// A `stop_notice` queued at the front of the work's queue: the agent's next claim is the
/// stop.
fn stop_notice(w: &Works<'_>, work_id: &str, body: String) -> Result<UserIntent, GatewayError> {
    let work = work(w, work_id)?;
    let row = new_intent(
        w,
        &work,
        IntentKind::StopNotice,
        Delivery::NextCheckpoint,
        body,
        IntentState::Queued,
        IntentAuthor::PersonInbox,
    )?;
    let front = w.intents(work_id)?.iter().map(|i| i.position).min().unwrap_or(1);
    if row.work_id.is_some() && front < row.position {
        let moved = IntentRow { position: front - 1, ..row.clone() };
        swap(w, &row, &moved)?;
        return Ok(user_intent(moved));
    }
    Ok(user_intent(row))
}

/// Inserts an instruction for `work` (bumping its queue), or, when the work is no longer
/// open, one that waits for the workspace's next work.
fn new_intent(
    w: &Works<'_>,
    work: &codespace_store::WorkRow,
    kind: IntentKind,
    delivery: Delivery,
    body: String,
    state: IntentState,
    author: IntentAuthor,
) -> Result<IntentRow, GatewayError> {
    let open = work.state.is_open();
    let work_id = open.then(|| work.work_id.clone());
    let at = now();
    let row = IntentRow {
        intent_id: format!("fb-{}", uuid::Uuid::new_v4()),
        position: w.next_position(work_id.as_deref(), &work.workspace_id)?,
        work_id,
        workspace_id: work.workspace_id.clone(),
        revision: 1,
        kind,
        delivery: if open { delivery } else { Delivery::NextWork },
        body,
        state,
        created_at: at,
        updated_at: at,
        claimed_at: None,
        completed_at: None,
        author,
    };
    w.insert_intent(&row)?;
    touched(w, &row)?;
    Ok(row)
}

/// A person's change to one instruction: the compare-and-swap, the work's queue revision,
/// and the instruction as it now is.
fn replace(w: &Works<'_>, old: &IntentRow, new: IntentRow) -> Result<UserIntent, GatewayError> {
    swap(w, old, &new)?;
    touched(w, &new)?;
    Ok(user_intent(new))
}
