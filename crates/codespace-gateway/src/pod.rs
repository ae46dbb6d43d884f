//! What a pod's probes, metrics and drain ask of the gateway: whether it can serve
//! ([`Gateway::unready`]), what is live and what waits ([`Gateway::gauges`]), and a drain
//! that refuses new mutations ([`Gateway::drain`]) and waits for those under way
//! ([`Gateway::drained`]).

use std::sync::atomic::Ordering;
use std::time::Duration;

use codespace_runner::Runner;
use codespace_store::Tally;

use crate::Gateway;

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
        Gauges { live_processes: processes as u64, mutations_in_flight: requests as u64, ledger }
    }
}

/// How often a drain looks whether the mutations under way ended.
const DRAIN_POLL: Duration = Duration::from_millis(20);
