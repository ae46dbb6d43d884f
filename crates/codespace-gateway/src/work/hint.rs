//! The `coordination` hint: a file, patch or command result tells the agent whether the
//! person queued something for its work, so it learns it at its next tool call instead of
//! polling `steer_status`. A named `work_id` is checked before the call does anything.

use codespace_protocol::Coordination;
use codespace_store::WorkRow;

use super::{counts, work};
use crate::{Gateway, GatewayError};

impl Gateway {
    /// The hint for a call in `workspace_id`, read in one ledger snapshot before the call
    /// runs: about the named work while it is open, or, when none is named, about the
    /// workspace's only open work; `None` otherwise.
    ///
    /// A named `work_id` that is not a work of `workspace_id` is refused
    /// (`WORK_NOT_FOUND`, the same answer for another workspace's work, so ids of other
    /// workspaces stay unseen) and nothing runs. Without one, a ledger failure only leaves
    /// the hint out (logged): the call itself does not depend on it.
    pub(crate) fn work_hint(
        &self,
        workspace_id: &str,
        work_id: Option<&str>,
    ) -> Result<Option<Coordination>, GatewayError> {
        let hint = self.store.works_read(|w| -> Result<_, GatewayError> {
            let target: Option<WorkRow> = match work_id {
                Some(id) => {
                    let work = work(w, id)?;
                    if work.workspace_id != workspace_id {
                        return Err(GatewayError::WorkNotFound { work_id: id.to_owned() });
                    }
                    Some(work)
                }
                None => {
                    let mut open = w.open_works(workspace_id)?;
                    if open.len() == 1 { open.pop() } else { None }
                }
            };
            let Some(work) = target.filter(|wk| wk.state.is_open()) else { return Ok(None) };
            let (queued, claimed, claimable_now) = counts(w, &work)?;
            Ok(Some(Coordination {
                work_id: work.work_id,
                pending_user_items: queued.saturating_add(claimed),
                claimable_now,
                queue_revision: work.queue_revision,
            }))
        });
        match (hint, work_id) {
            (Ok(hint), _) => Ok(hint),
            (Err(e), Some(_)) => Err(e),
            (Err(e), None) => {
                tracing::warn!("coordination hint left out: {e}");
                Ok(None)
            }
        }
    }
}
