//! The drain on SIGTERM (or SIGINT) of an HTTP server: `/readyz` turns 503 and every new
//! mutation is refused with `SERVER_DRAINING` at once; patches, reverts and spawns under way
//! finish (their terminal records written); every command is ended with its grace; only then
//! do the sessions end and the listener close, so reads, probes and `process_status` answer
//! throughout. The ledger is flushed as the store closes when `serve` returns.

use std::sync::Arc;
use std::time::Duration;

use codespace_gateway::Gateway;
use tokio_util::sync::CancellationToken;

use crate::health::Health;

pub(crate) struct Drain {
    pub(crate) gateway: Arc<Gateway>,
    pub(crate) health: Arc<Health>,
    /// Cancelled once the mutations under way ended: every session and stream ends.
    pub(crate) stop: CancellationToken,
    /// The whole drain's time, shutdown of the commands included.
    pub(crate) limit: Duration,
}

/// How the drain ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Drained {
    /// Everything ended in time.
    Clean,
    /// The time ran out: the server exits with what was left killed by the runner's drop.
    TimedOut,
}

impl Drain {
    pub(crate) async fn run(self) -> Drained {
        let deadline = tokio::time::Instant::now() + self.limit;
        self.health.draining();
        self.gateway.drain();
        tracing::info!(
            limit_secs = self.limit.as_secs(),
            "draining: new patches and commands are refused (SERVER_DRAINING); waiting for those under way"
        );
        // Half the time at most for what is under way, so commands keep time for their grace.
        if tokio::time::timeout(self.limit / 2, self.gateway.drained()).await.is_err() {
            tracing::warn!("mutations were still under way when half the drain's time had passed");
        }
        // Every command's whole tree: SIGTERM, then SIGKILL after its grace.
        let ended = tokio::time::timeout_at(deadline, self.gateway.shutdown()).await;
        self.stop.cancel();
        match ended {
            Ok(()) => {
                tracing::info!("drained: every command ended; exiting");
                Drained::Clean
            }
            Err(_) => {
                tracing::warn!(
                    "the drain's {} s ran out before every command ended; exiting anyway",
                    self.limit.as_secs()
                );
                Drained::TimedOut
            }
        }
    }
}

/// Resolves on SIGTERM or SIGINT.
pub(crate) async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) =
        (signal(SignalKind::terminate()), signal(SignalKind::interrupt()))
    else {
        // Without signal handlers the process still ends on EOF or by the default action.
        std::future::pending::<()>().await;
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}
