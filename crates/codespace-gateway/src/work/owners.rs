//! Which workspace each process belongs to: the process tools' hint comes from it, and a
//! person's stop kills every process of a workspace through it.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use codespace_protocol::Coordination;
use codespace_runner::ops;
use codespace_runner::{Terminate, WaitFor};

use crate::Gateway;

impl Gateway {
    /// Records that `process_id` runs in `workspace_id`. Entries stay while the supervisor
    /// keeps the handle (evicted ones are dropped here), so the map stays small.
    pub(crate) fn own_process(&self, process_id: &str, workspace_id: &str) {
        let runner = &self.runner;
        let mut owners = lock_owners(&self.owners);
        owners.retain(|known, _| runner.knows(known));
        owners.insert(process_id.to_owned(), workspace_id.to_owned());
    }

    /// The hint of a process tool: about the only open work of the process's workspace.
    pub(crate) fn process_hint(&self, process_id: &str) -> Option<Coordination> {
        let workspace_id = lock_owners(&self.owners).get(process_id).cloned()?;
        self.work_hint(&workspace_id, None).ok().flatten()
    }

    /// Every workspace that has a process the supervisor still keeps (registered or not).
    pub(crate) fn process_workspaces(&self) -> Vec<String> {
        lock_owners(&self.owners).values().cloned().collect()
    }

    /// Ends the whole tree of every live process of a workspace (SIGTERM, then SIGKILL
    /// after its grace) and waits (a few seconds at most) until each is gone; returns how
    /// many were running (an exited one is skipped).
    pub(crate) async fn kill_workspace(&self, workspace_id: &str) -> u32 {
        let ids: Vec<String> = lock_owners(&self.owners)
            .iter()
            .filter(|(_, ws)| ws.as_str() == workspace_id)
            .map(|(id, _)| id.clone())
            .collect();
        let runner = &self.runner;
        let mut killed = 0u32;
        for id in &ids {
            if let Ok(Terminate::Sent { .. }) =
                runner.run(ops::Terminate { id: id.clone(), grace: None }).await
            {
                killed += 1;
            }
        }
        // One deadline for all: the trees die in parallel, so a tree slow to go (a long
        // grace) costs the stop its few seconds once, not once per process.
        let deadline = tokio::time::Instant::now() + STOP_WAIT;
        for id in &ids {
            let limit = deadline.saturating_duration_since(tokio::time::Instant::now());
            let _ = runner.wait(ops::Wait { id: id.clone(), what: WaitFor::Exit, limit }).await;
        }
        killed
    }
}

/// How long a stop waits for the killed trees to be gone.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// The process-to-workspace map of a gateway.
pub(crate) type Owners = Mutex<BTreeMap<String, String>>;

fn lock_owners(owners: &Owners) -> MutexGuard<'_, BTreeMap<String, String>> {
    // Only whole entries are inserted and removed; a panic cannot leave one half-changed.
    owners.lock().unwrap_or_else(PoisonError::into_inner)
}
