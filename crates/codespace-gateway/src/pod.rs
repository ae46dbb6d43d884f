//! What a pod's probes, metrics and drain ask of the gateway: whether it can serve
//! ([`Gateway::unready`]), what is live and what waits ([`Gateway::gauges`]), and a drain
//! that refuses new mutations ([`Gateway::drain`]) and waits for those under way
//! ([`Gateway::drained`]), and an operator's reset for warm reuse ([`Gateway::reset`]).

use std::sync::atomic::Ordering;
use std::time::Duration;

use codespace_protocol::{ApprovalState, Decision};
use codespace_runner::{Runner, RunnerCounters, ops};
use codespace_store::{Cas, HoldFilter, Store, Tally};
use serde::Serialize;

use crate::{Gateway, GatewayError};

/// What the metrics report as gauges.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gauges {
    /// Commands alive now (each holds its workspace's lease).
    pub live_processes: u64,
    /// Patches, reverts and spawns under way (each holds its workspace's lease).
    pub mutations_in_flight: u64,
    /// What waits in the ledger: holds for a person, instructions for the agent. `None`
    /// when the ledger could not be read.
    pub ledger: Option<Tally>,
    /// The runner's counters (watcher resyncs, spilled output); `None` when it could not be
    /// asked (a lost worker).
    pub runner: Option<RunnerCounters>,
}

impl Gateway {
    /// From now on every mutation (a patch, a revert, a command, a resume) is refused with
    /// `SERVER_DRAINING`; reads still answer. Not undone: a draining server ends.
    pub fn drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// Whether [`Gateway::drain`] was called.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Waits until no patch, revert or spawn holds a lease and every applied patch's
    /// terminal record is written. Live commands are not waited for: the shutdown gives
    /// each its grace.
    pub async fn drained(&self) {
        while self.leases.in_use().0 > 0 {
            tokio::time::sleep(DRAIN_POLL).await;
        }
        self.recorded().await;
    }

    /// Why this server cannot serve now, or `None`: the ledger refuses writes after a
    /// storage failure, or the runner worker is lost.
    pub async fn unready(&self) -> Option<String> {
        if let Runner::Socket(socket) = self.runner.as_ref()
            && socket.is_lost()
        {
            return Some("the connection to the runner worker is lost".to_owned());
        }
        let degraded = self.ledger.run(|store| Ok(store.degraded())).await;
        match degraded {
            Ok(None) => None,
            Ok(Some(cause)) => Some(format!("the ledger refuses writes: {cause}")),
            Err(e) => Some(format!("the ledger could not be asked: {e}")),
        }
    }

    /// What is live and what waits, for the metrics.
    pub async fn gauges(&self) -> Gauges {
        let (requests, processes) = self.leases.in_use();
        let ledger = self.ledger.run(|store| Ok(store.tally()?)).await.ok();
        let runner = self.runner.run(ops::Counters {}).await.ok();
        Gauges {
            runner,
            live_processes: processes as u64,
            mutations_in_flight: requests as u64,
            ledger,
        }
    }
}

/// What an operator's reset did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ResetReport {
    /// Commands whose whole tree was ended (SIGTERM, SIGKILL after its grace).
    pub processes_terminated: u64,
    /// Holds denied: every pending one, and every granted one no resume had claimed.
    pub holds_denied: u64,
    /// Instructions cancelled: every draft and queued one.
    pub instructions_cancelled: u64,
    /// Whole-file contents forgotten (what a conflict's diff is made from).
    pub seen_files_forgotten: u64,
    /// The coordination hints were forgotten too.
    pub hints_cleared: bool,
}

impl Gateway {
    /// Makes this server's workspaces ready for the next task (a warm pod handed on): ends
    /// every command, denies every hold still waiting, cancels every waiting instruction,
    /// and forgets the caches of what was read and written. Workspace content is not
    /// touched (restoring it is the platform's). Works stay as they are, their history too.
    pub async fn reset(&self) -> Result<ResetReport, GatewayError> {
        let mut report = ResetReport::default();
        let ids = self.workspace_ids();
        // A workspace a reload removed may still have commands running: they end too.
        let mut running = self.process_workspaces();
        running.extend(ids.iter().cloned());
        running.sort();
        running.dedup();
        for id in &running {
            report.processes_terminated += u64::from(self.kill_workspace(id).await);
        }
        let mine = ids.clone();
        report.holds_denied = self.ledger.run(move |store| deny_waiting(store, &mine)).await?;
        for id in &ids {
            report.instructions_cancelled += self.cancel_waiting_instructions(id).await?;
        }
        self.decisions.notify_waiters();
        report.seen_files_forgotten = self.seen.clear() as u64;
        self.hints.clear();
        report.hints_cleared = true;
        tracing::info!(?report, "reset for the next task");
        Ok(report)
    }
}

/// Denies every pending hold and withdraws every unclaimed grant of `workspaces`.
fn deny_waiting(store: &Store, workspaces: &[String]) -> Result<u64, GatewayError> {
    let mut denied = 0;
    for granted in [false, true] {
        let state = if granted { ApprovalState::Granted } else { ApprovalState::Pending };
        for id in workspaces {
            let filter = HoldFilter { workspace_id: Some(id.clone()), state: Some(state) };
            for hold in store.holds(&filter, usize::MAX)? {
                let moved = if granted {
                    store.withdraw_grant(&hold.approval_id, crate::now())?
                } else {
                    store.resolve_hold(&hold.approval_id, Decision::Deny, crate::now())?
                };
                denied += u64::from(matches!(moved, Cas::Moved(_)));
            }
        }
    }
    Ok(denied)
}

/// How often a drain looks whether the mutations under way ended.
const DRAIN_POLL: Duration = Duration::from_millis(20);
