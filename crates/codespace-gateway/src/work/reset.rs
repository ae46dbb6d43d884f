//! An operator's reset for warm reuse: every instruction still waiting (a draft or queued,
//! attached to a work or waiting for the workspace's next one) is cancelled, in one write
//! transaction per workspace, each a compare-and-swap on its revision that bumps its work's
//! queue revision, as the person's own cancel does.

use codespace_protocol::IntentState;
use codespace_store::{IntentRow, Works};

use super::{now, swap, touched};
use crate::{Gateway, GatewayError};

impl Gateway {
    /// Cancels every waiting instruction of `workspace_id`; returns how many.
    pub(crate) async fn cancel_waiting_instructions(
        &self,
        workspace_id: &str,
    ) -> Result<u64, GatewayError> {
        let workspace_id = workspace_id.to_owned();
        self.ledger
            .run(move |store| {
                store.works_write(|w| {
                    let mut waiting = w.unattached(&workspace_id)?;
                    for work in w.works(Some(&workspace_id))? {
                        waiting.extend(w.intents(&work.work_id)?);
                    }
                    let mut cancelled = 0u64;
                    for old in waiting.iter().filter(|i| waits(i)) {
                        cancel(w, old)?;
                        cancelled += 1;
                    }
                    Ok(cancelled)
                })
            })
            .await
    }
}

fn waits(intent: &IntentRow) -> bool {
    matches!(intent.state, IntentState::Draft | IntentState::Queued)
}

fn cancel(w: &Works<'_>, old: &IntentRow) -> Result<(), GatewayError> {
    let new = IntentRow {
        state: IntentState::Cancelled,
        revision: old.revision + 1,
        updated_at: now(),
        ..old.clone()
    };
    swap(w, old, &new)?;
    touched(w, &new)
}
