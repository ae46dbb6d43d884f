//! The `coordination` hint: a file, patch or command result tells the agent whether the
//! person queued something for its work, so it learns it at its next tool call instead of
//! polling `steer_status`. A named `work_id` is checked before the call does anything.

use codespace_protocol::Coordination;
use codespace_store::WorkRow;

use super::{counts, work};
use crate::{Gateway, GatewayError};

impl Gateway {
    /// Refuses a `work_id` that is not a work of `workspace_id` (`WORK_NOT_FOUND`, the
    /// same answer for another workspace's work, so ids of other workspaces stay unseen).
    pub(crate) fn check_work(
        &self,
        workspace_id: &str,
        work_id: Option<&str>,
    ) -> Result<(), GatewayError> {
        let Some(id) = work_id else { return Ok(()) };
        self.store.works_read(|w| {
            let work = work(w, id)?;
            if work.workspace_id == workspace_id {
                Ok(())
            } else {
                Err(GatewayError::WorkNotFound { work_id: id.to_owned() })
            }
        })
    }

    /// The hint for a call in `workspace_id`: about the named work while it is open, or,
    /// when none is named, about the workspace's only open work. `None` otherwise, and when
    /// the ledger cannot be read (the call itself has already succeeded: it is logged, not
    /// turned into a failure).
    pub(crate) fn coordination(
        &self,
        workspace_id: &str,
        work_id: Option<&str>,
    ) -> Option<Coordination> {
        let hint = self.store.works_read(|w| -> Result<_, GatewayError> {
            let target: Option<WorkRow> = match work_id {
                Some(id) => w.work(id)?.filter(|wk| wk.workspace_id == workspace_id),
                None => {
                    let mut open = w.open_works(workspace_id)?;
                    if open.len() == 1 { open.pop() } else { None }
                }
            };
            let Some(work) = target.filter(|wk| wk.state.is_open()) else { return Ok(None) };
            let (queued, claimed, claimable_now) = counts(&work, &w.intents(&work.work_id)?);
            Ok(Some(Coordination {
                work_id: work.work_id,
                pending_user_items: queued.saturating_add(claimed),
                claimable_now,
                queue_revision: work.queue_revision,
            }))
        });
        hint.unwrap_or_else(|e| {
            tracing::warn!("coordination hint left out: {e}");
            None
        })
    }
}
