//! The per-workspace mutation lease: one holder at a time, and an in-memory FIFO of at most
//! 64 waiters. A waiter whose caller gave up (its future was dropped) leaves the queue; a
//! grant that reached a caller who already left is passed on. A holder is a request (a
//! patch, a spawn in progress) or a live process; a process holder fails every waiter with
//! `WORKSPACE_BUSY` rather than keeping them queued, and its lease is free the moment the
//! process is seen to have exited.
//!
//! Reads and `check_only` previews never touch the lease. A process holder is named
//! ([`HeldBy`]) in every `Busy` it causes, so the caller knows what to wait for or stop.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::oneshot;

/// Most callers that may wait for one workspace.
pub const MAX_WAITERS: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    /// The queue already holds `MAX_WAITERS` waiters.
    #[error("{MAX_WAITERS} requests are already waiting for this workspace")]
    QueueFull,
    /// The lease is held by a live process (or passed to one while waiting), named when
    /// known, so the caller can wait for it or stop it.
    #[error("{}", busy_message(.0.as_deref()))]
    Busy(Option<Box<HeldBy>>),
}

/// The live process holding a workspace's lease, as a refusal names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldBy {
    pub process_id: String,
    /// The command's argv, joined with spaces and shortened to [`ARGV_SHOWN`] characters.
    pub argv: String,
}

/// Most characters of a holder's argv a refusal shows.
pub const ARGV_SHOWN: usize = 80;

impl HeldBy {
    pub fn process(process_id: &str, argv: &[String]) -> HeldBy {
        let joined = argv.join(" ");
        let argv = match joined.char_indices().nth(ARGV_SHOWN) {
            Some((cut, _)) => format!("{}…", &joined[..cut]),
            None => joined,
        };
        HeldBy { process_id: process_id.to_owned(), argv }
    }
}

fn busy_message(by: Option<&HeldBy>) -> String {
    match by {
        Some(HeldBy { process_id, argv }) => format!(
            "process {process_id} ({argv}) holds this workspace's mutation lease until it exits: wait for it with process_status or read_process (wait_ms), or stop it with terminate_process; reads keep working"
        ),
        None => "a live process holds this workspace's mutation lease until it exits: wait for it with process_status, or stop it with terminate_process; reads keep working".to_owned(),
    }
}

/// Tells whether a process holding a lease is still alive.
pub type Liveness = Box<dyn Fn() -> bool + Send + Sync>;

enum Holder {
    Request,
    Process(Liveness, HeldBy),
}

impl Holder {
    /// `Busy` naming this holder when it is a live process; `None` when it is a request or
    /// a process seen to have exited (then the slot is free).
    fn busy(&self) -> Option<LeaseError> {
        match self {
            Holder::Process(live, by) if live() => {
                Some(LeaseError::Busy(Some(Box::new(by.clone()))))
            }
            Holder::Process(..) | Holder::Request => None,
        }
    }
}

#[derive(Default)]
struct Slot {
    /// The holder and the generation of its grant; a release names its generation, so a
    /// late release can never free someone else's lease.
    held: Option<(Holder, u64)>,
    waiters: VecDeque<(u64, oneshot::Sender<Result<u64, LeaseError>>)>,
}

/// All workspaces' leases.
#[derive(Default)]
pub struct Leases {
    slots: Mutex<HashMap<String, Slot>>,
    next_id: std::sync::atomic::AtomicU64,
}

impl Leases {
    fn slots(&self) -> MutexGuard<'_, HashMap<String, Slot>> {
        // A panic while holding this lock leaves plain data; keep serving.
        self.slots.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn mint(&self) -> u64 {
        self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Waits (FIFO) for the workspace's lease. Cancel-safe: dropping the future leaves the
    /// queue, and a grant that raced with the drop is released again.
    pub async fn acquire(self: &Arc<Self>, workspace: &str) -> Result<Lease, LeaseError> {
        let waiting = {
            let mut slots = self.slots();
            let slot = slots.entry(workspace.to_owned()).or_default();
            // A process that has exited no longer holds anything, even before its exit
            // task got to release it.
            if let Some((holder @ Holder::Process(..), _)) = &slot.held {
                if let Some(busy) = holder.busy() {
                    return Err(busy);
                }
                slot.held = None;
            }
            if slot.held.is_none() && slot.waiters.is_empty() {
                let generation = self.mint();
                slot.held = Some((Holder::Request, generation));
                return Ok(Lease {
                    leases: self.clone(),
                    workspace: workspace.to_owned(),
                    generation,
                    active: true,
                });
            }
            if slot.waiters.len() >= MAX_WAITERS {
                return Err(LeaseError::QueueFull);
            }
            let id = self.mint();
            let (tx, rx) = oneshot::channel();
            slot.waiters.push_back((id, tx));
            Waiting { leases: self.clone(), workspace: workspace.to_owned(), id, rx: Some(rx) }
        };
        waiting.wait().await
    }

    /// The workspace's lease when it is free now and nobody waits for it; `None` otherwise
    /// (a caller then does what it can without the lease before it queues).
    pub fn try_acquire(self: &Arc<Self>, workspace: &str) -> Option<Lease> {
        let mut slots = self.slots();
        let slot = slots.entry(workspace.to_owned()).or_default();
        if let Some((holder @ Holder::Process(..), _)) = &slot.held
            && holder.busy().is_none()
        {
            slot.held = None;
        }
        if slot.held.is_some() || !slot.waiters.is_empty() {
            return None;
        }
        let generation = self.mint();
        slot.held = Some((Holder::Request, generation));
        Some(Lease {
            leases: self.clone(),
            workspace: workspace.to_owned(),
            generation,
            active: true,
        })
    }

    /// How many leases are held now: by a request (a patch, a revert or a spawn under way),
    /// and by a live process.
    pub fn in_use(&self) -> (usize, usize) {
        let slots = self.slots();
        let held = slots.values().filter_map(|s| s.held.as_ref().map(|(h, _)| h));
        held.fold((0, 0), |(requests, processes), holder| match holder {
            Holder::Request => (requests + 1, processes),
            Holder::Process(..) if holder.busy().is_some() => (requests, processes + 1),
            Holder::Process(..) => (requests, processes),
        })
    }

    /// Waiters currently queued for `workspace`.
    pub fn waiting(&self, workspace: &str) -> usize {
        self.slots().get(workspace).map_or(0, |s| s.waiters.len())
    }

    /// Releases the grant `generation`, if it is still the current one, and hands the lease
    /// to the first waiter still listening.
    fn release(&self, workspace: &str, generation: u64) {
        let mut slots = self.slots();
        let Some(slot) = slots.get_mut(workspace) else { return };
        if slot.held.as_ref().is_some_and(|(_, g)| *g != generation) {
            return;
        }
        slot.held = None;
        while let Some((_, tx)) = slot.waiters.pop_front() {
            let next = self.mint();
            slot.held = Some((Holder::Request, next));
            if tx.send(Ok(next)).is_ok() {
                return;
            }
            slot.held = None;
        }
        slots.remove(workspace);
    }

    /// Turns the request grant `generation` into a process grant: every waiter fails with
    /// `Busy`, naming the process.
    fn to_process(&self, workspace: &str, generation: u64, live: Liveness, by: HeldBy) {
        let mut slots = self.slots();
        if let Some(slot) = slots.get_mut(workspace) {
            let busy = LeaseError::Busy(Some(Box::new(by.clone())));
            if slot.held.as_ref().is_some_and(|(_, g)| *g == generation) {
                slot.held = Some((Holder::Process(live, by), generation));
            }
            for (_, tx) in slot.waiters.drain(..) {
                let _ = tx.send(Err(busy.clone()));
            }
        }
    }

    fn forget_waiter(&self, workspace: &str, id: u64) {
        let mut slots = self.slots();
        if let Some(slot) = slots.get_mut(workspace) {
            slot.waiters.retain(|(w, _)| *w != id);
        }
    }
}

/// A queued waiter; dropping it leaves the queue.
struct Waiting {
    leases: Arc<Leases>,
    workspace: String,
    id: u64,
    rx: Option<oneshot::Receiver<Result<u64, LeaseError>>>,
}

impl Waiting {
    async fn wait(mut self) -> Result<Lease, LeaseError> {
        let Some(rx) = self.rx.as_mut() else { return Err(LeaseError::Busy(None)) };
        let granted = rx.await;
        self.rx = None;
        match granted {
            Ok(Ok(generation)) => Ok(Lease {
                leases: self.leases.clone(),
                workspace: self.workspace.clone(),
                generation,
                active: true,
            }),
            Ok(Err(e)) => Err(e),
            // The sender vanished without an answer: only when the slot was torn down.
            Err(_) => Err(LeaseError::Busy(None)),
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let Some(mut rx) = self.rx.take() else { return };
        self.leases.forget_waiter(&self.workspace, self.id);
        // A grant sent just before the drop belongs to nobody now: pass it on.
        if let Ok(Ok(generation)) = rx.try_recv() {
            self.leases.release(&self.workspace, generation);
        }
    }
}

/// The held lease; dropping it releases the workspace to the next waiter.
pub struct Lease {
    leases: Arc<Leases>,
    workspace: String,
    generation: u64,
    active: bool,
}

impl Lease {
    /// Hands the lease to a live process (`by` names it): every queued waiter fails with
    /// `Busy`, and so does every new request while `live` says the process runs, or until
    /// the returned guard is dropped.
    pub fn into_process(mut self, by: HeldBy, live: Liveness) -> ProcessLease {
        self.active = false;
        self.leases.to_process(&self.workspace, self.generation, live, by);
        ProcessLease {
            leases: self.leases.clone(),
            workspace: std::mem::take(&mut self.workspace),
            generation: self.generation,
        }
    }
}

impl Lease {
    /// Never releases the workspace (until the server restarts): for a mutation the runner
    /// may still be carrying out after its answer timed out.
    pub fn keep_forever(mut self) {
        self.active = false;
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if self.active {
            self.leases.release(&self.workspace, self.generation);
        }
    }
}

/// The lease while a process holds it; dropping it releases the workspace.
pub struct ProcessLease {
    leases: Arc<Leases>,
    workspace: String,
    generation: u64,
}

impl Drop for ProcessLease {
    fn drop(&mut self) {
        self.leases.release(&self.workspace, self.generation);
    }
}

#[cfg(test)]
mod tests;
