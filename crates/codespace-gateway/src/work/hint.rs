//! The `coordination` hint: a file, patch or command result tells the agent whether the
//! person queued something for its work, so it learns it at its next tool call instead of
//! polling `steer_status`. A named `work_id` is checked before the call does anything.
//! The last answer per workspace and work is kept with the ledger's change stamp, so a
//! call reads the ledger again only after something in it changed.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use codespace_protocol::Coordination;
use codespace_store::{ChangeStamp, WorkRow};

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
        let key = (workspace_id.to_owned(), work_id.map(str::to_owned));
        // Taken before the read: a change after it makes the next call read again.
        let stamp = self.ledger.change_stamp().ok();
        if let Some(hint) = stamp.and_then(|s| self.hints.get(&key, s)) {
            return Ok(hint);
        }
        let hint = self.read_hint(workspace_id, work_id);
        if let (Some(stamp), Ok(hint)) = (stamp, &hint) {
            self.hints.put(key, stamp, hint.clone());
        }
        hint
    }

    fn read_hint(
        &self,
        workspace_id: &str,
        work_id: Option<&str>,
    ) -> Result<Option<Coordination>, GatewayError> {
        let hint = self.ledger.works_snapshot(|w| -> Result<_, GatewayError> {
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

/// The last hint per (workspace, named work), with the ledger's stamp when it was read.
#[derive(Default)]
pub(crate) struct Hints {
    last: Mutex<HashMap<HintKey, (ChangeStamp, Option<Coordination>)>>,
}

type HintKey = (String, Option<String>);

/// Most hints kept; past it the map starts over (work ids come from callers).
const MAX_HINTS: usize = 256;

impl Hints {
    /// Forgets every hint (an operator's reset).
    pub(crate) fn clear(&self) {
        self.last.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }

    fn get(&self, key: &HintKey, now: ChangeStamp) -> Option<Option<Coordination>> {
        let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        last.get(key).filter(|(stamp, _)| *stamp == now).map(|(_, hint)| hint.clone())
    }

    fn put(&self, key: HintKey, stamp: ChangeStamp, hint: Option<Coordination>) {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if last.len() >= MAX_HINTS && !last.contains_key(&key) {
            last.clear();
        }
        last.insert(key, (stamp, hint));
    }
}
