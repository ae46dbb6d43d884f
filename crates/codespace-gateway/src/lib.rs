//! Tool semantics of CodeSpace: look the workspace up, ask the policy, validate limits, run
//! the operation on the runner (on a blocking thread), and shape the wire result.
//!
//! Architecture Invariant: every tool call enters through one `Gateway` method and leaves as
//! a protocol result or a `GatewayError`; `GatewayError::code` (in `error.rs`) is the only
//! place that chooses an error code.

mod changes;
mod error;
mod files;
mod holds;
mod info;
mod lease;
mod patch;
mod process;
mod work;
mod workspaces;

use std::collections::BTreeMap;
use std::sync::Arc;

use codespace_policy::{Action, Registry, allow};
use codespace_runner::Root;
use codespace_watch::WorkspaceWatch;

pub use codespace_process::{
    DEFAULT_PATH, DEFAULT_SPILL_BYTES, REAPER_ARG, Supervisor, SupervisorConfig, reaper_main,
};
pub use codespace_runner::{Cancel, Progress};
pub use codespace_store::{ApprovalFilter, ApprovalRecord, ApprovalState, Store};
pub use error::GatewayError;
pub use holds::{decide as decide_approval, list_approvals, show_approval};
pub use info::HostFacts;
pub use lease::{Lease, LeaseError, Leases, Liveness, MAX_WAITERS, ProcessLease};
pub use patch::{Hook, PutBack, RestoreOutcome, list_operations, show_operation};
pub use process::{ExecSettings, Processes};
pub use work::MAX_INTENT_BYTES;
pub use workspaces::{StartError, Workspaces};

use workspaces::Registered;

/// What the gateway is built from, besides the registry.
pub struct GatewayConfig {
    pub host: HostFacts,
    pub server_version: String,
    pub store: Arc<Store>,
    pub processes: Processes,
}

/// The shared state behind every transport and session.
pub struct Gateway {
    workspaces: BTreeMap<String, Registered>,
    host: HostFacts,
    server_version: String,
    store: Arc<Store>,
    leases: Arc<Leases>,
    processes: Processes,
    /// The workspace of every live process, so a stop can kill a workspace's processes.
    owners: work::Owners,
    /// Holds a resume is running for in this process.
    resumes: holds::InFlight,
    #[cfg(feature = "test-hooks")]
    written_hook: std::sync::Mutex<Option<patch::Hook>>,
}

impl Gateway {
    /// Opens every host workspace's root ([`Workspaces::open`]) and builds the gateway.
    pub fn new(registry: &Registry, config: GatewayConfig) -> Result<Gateway, StartError> {
        Ok(Gateway::with_workspaces(Workspaces::open(registry)?, config))
    }

    /// The gateway over workspaces already opened, so a caller can refuse a bad registry
    /// before it creates the ledger.
    pub fn with_workspaces(workspaces: Workspaces, config: GatewayConfig) -> Gateway {
        Gateway {
            workspaces: workspaces.into_map(),
            host: config.host,
            server_version: config.server_version,
            store: config.store,
            leases: Arc::new(Leases::default()),
            processes: config.processes,
            owners: work::Owners::default(),
            resumes: holds::InFlight::default(),
            #[cfg(feature = "test-hooks")]
            written_hook: std::sync::Mutex::new(None),
        }
    }

    /// The gateway with no workspace watcher: no caches, every answer from the disk, and
    /// `changes` always `resync_required`.
    pub fn without_watchers(mut self) -> Gateway {
        for reg in self.workspaces.values_mut() {
            reg.watch = None;
        }
        self
    }

    fn lookup(&self, id: &str) -> Result<&Registered, GatewayError> {
        self.workspaces.get(id).ok_or_else(|| GatewayError::WorkspaceNotFound { id: id.to_owned() })
    }

    /// The opened root of a workspace the policy lets the caller `action`.
    fn authorized_root(&self, id: &str, action: Action) -> Result<Arc<Root>, GatewayError> {
        let reg = self.lookup(id)?;
        allow(&reg.ws, action).map_err(GatewayError::Denied)?;
        reg.root
            .clone()
            .ok_or_else(|| GatewayError::Internal(format!("workspace {id:?} has no opened root")))
    }

    /// The workspace's watcher, started (in the background) if it was not: every file
    /// tool's first use starts it, best effort.
    fn watch(&self, id: &str) -> Option<Arc<WorkspaceWatch>> {
        let watch = self.workspaces.get(id)?.watch.clone()?;
        watch.ensure_started();
        Some(watch)
    }

    /// The watcher of workspace `id`, for tests that force an overflow, a resync, a
    /// restart or a failed start.
    #[cfg(feature = "test-hooks")]
    pub fn workspace_watch(&self, id: &str) -> Option<Arc<WorkspaceWatch>> {
        self.workspaces.get(id)?.watch.clone()
    }
}

/// Runs blocking filesystem work off the async executor.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, GatewayError> + Send + 'static,
) -> Result<T, GatewayError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| GatewayError::Internal(format!("file task failed: {e}")))?
}

/// Unix seconds now, as the ledger records times.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
