//! A registry reload ([`Gateway::reload`], the server's SIGHUP): the runner opens the new
//! set of roots first (in this process or in its worker), then the registered workspaces are
//! replaced whole. A call that starts after the swap sees the new workspaces; a call under
//! way keeps the workspace it looked up. A removed workspace's commands run on until they end
//! (the process tools still reach them by id; a reset or a drain ends them); its holds stay in
//! the ledger and resuming one answers `WORKSPACE_NOT_FOUND`, running nothing.

use std::path::PathBuf;
use std::sync::{Arc, PoisonError};

use codespace_runner::ops;

use crate::{Gateway, StartError, Workspaces};

/// What a reload changed, by workspace id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reloaded {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Registered before and after with other settings (profile, approvals, sandbox, root...).
    pub changed: Vec<String>,
    /// Registered before and after, whose root the runner opened afresh: its path changed,
    /// or it no longer named the directory opened before (deleted and re-created, moved).
    pub reopened: Vec<String>,
}

impl Reloaded {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.reopened.is_empty()
    }
}

impl Gateway {
    /// Serves `workspaces` from now on. The runner reopens their roots first: a root that
    /// cannot be opened, two roots that nest, or a root that holds a path of `keep_out` (the
    /// ledger) refuses the reload with the registry key at fault, and nothing changes. A
    /// runner worker that cannot be asked refuses it too (it may have reopened already:
    /// another reload makes both sides agree).
    pub async fn reload(
        &self,
        workspaces: Workspaces,
        keep_out: Vec<PathBuf>,
    ) -> Result<Reloaded, StartError> {
        let _one = self.reloading.lock().await;
        let job = ops::Reopen { roots: workspaces.host_roots(), keep_out };
        let runner = Arc::clone(&self.runner);
        let answer = tokio::task::spawn_blocking(move || runner.reopen(job)).await;
        let at_runner = |reason: String| StartError { key: "runner".to_owned(), reason };
        let reopened = match answer {
            Ok(Ok(Ok(reopened))) => reopened,
            Ok(Ok(Err(open))) => {
                return Err(StartError {
                    key: format!("workspaces.{}.root", open.id),
                    reason: open.reason,
                });
            }
            Ok(Err(e)) => {
                return Err(at_runner(format!(
                    "{e}; the runner may hold the new roots already: reload again"
                )));
            }
            Err(e) => return Err(at_runner(format!("the reopen task failed: {e}"))),
        };
        let next = workspaces.into_map();
        let mut current = self.workspaces.write().unwrap_or_else(PoisonError::into_inner);
        let mut report = Reloaded {
            added: next.keys().filter(|id| !current.contains_key(*id)).cloned().collect(),
            removed: current.keys().filter(|id| !next.contains_key(*id)).cloned().collect(),
            ..Reloaded::default()
        };
        for (id, before) in current.iter() {
            let Some(after) = next.get(id) else { continue };
            if before.ws != after.ws {
                report.changed.push(id.clone());
            }
            if reopened.opened.contains(id) {
                report.reopened.push(id.clone());
            }
        }
        let before = std::mem::replace(&mut *current, next);
        drop(current);
        drop(before);
        Ok(report)
    }
}

#[cfg(test)]
mod tests;
