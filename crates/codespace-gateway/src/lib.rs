//! Tool semantics of CodeSpace: look the workspace up, ask the policy, validate limits, run
//! the operation on the runner (on a blocking thread), and shape the wire result.
//!
//! Architecture Invariant: every tool call enters through one `Gateway` method and leaves as
//! a protocol result or a `GatewayError`; `GatewayError::code` (in `error.rs`) is the only
//! place that chooses an error code.

mod error;
mod files;
mod info;
mod lease;
mod patch;
mod process;

use std::collections::BTreeMap;
use std::sync::Arc;

use codespace_policy::{Action, EnvironmentKind, Registry, Workspace, allow};
use codespace_runner::Root;

pub use codespace_process::{DEFAULT_PATH, REAPER_ARG, Supervisor, SupervisorConfig, reaper_main};
pub use codespace_runner::Cancel;
pub use codespace_store::Store;
pub use error::GatewayError;
pub use info::HostFacts;
pub use lease::{Lease, LeaseError, Leases, Liveness, MAX_WAITERS, ProcessLease};
pub use patch::{Hook, PutBack, RestoreOutcome, list_operations, show_operation};
pub use process::{ExecSettings, Processes};

/// A registered workspace with its opened root (host environments only).
#[derive(Debug)]
struct Registered {
    ws: Workspace,
    root: Option<Arc<Root>>,
}

/// A workspace that failed to open at start, with the registry key at fault.
#[derive(Debug, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct StartError {
    pub key: String,
    pub reason: String,
}

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
    #[cfg(feature = "test-hooks")]
    written_hook: std::sync::Mutex<Option<patch::Hook>>,
}

impl Gateway {
    /// Opens every host workspace's root. A root that cannot be opened, or an extra read
    /// root that is not a directory, fails the start.
    #[expect(
        clippy::disallowed_methods,
        reason = "an extra read root is a host directory the sandbox shows, not a workspace path: checked once, at start"
    )]
    pub fn new(registry: &Registry, config: GatewayConfig) -> Result<Gateway, StartError> {
        let mut workspaces = BTreeMap::new();
        for ws in registry.workspaces() {
            let root = match ws.environment_kind {
                EnvironmentKind::Host => Some(Arc::new(Root::open(&ws.root).map_err(|e| {
                    StartError { key: format!("workspaces.{}.root", ws.id), reason: e.to_string() }
                })?)),
                // Never touched: its backend is unavailable and nothing falls back to the host.
                EnvironmentKind::LinuxContainer => None,
            };
            // Checked like roots: a missing extra read root would only surface later as a
            // command that cannot start.
            for (i, extra) in ws.extra_read_roots.iter().enumerate() {
                if !std::fs::metadata(extra).is_ok_and(|m| m.is_dir()) {
                    return Err(StartError {
                        key: format!("workspaces.{}.extra_read_roots[{i}]", ws.id),
                        reason: format!("{} is not an existing directory", extra.display()),
                    });
                }
            }
            workspaces.insert(ws.id.clone(), Registered { ws: ws.clone(), root });
        }
        // Canonical roots may nest even when the registered strings did not (a symlinked root).
        let canonical: Vec<(String, std::path::PathBuf)> = workspaces
            .values()
            .filter_map(|r| {
                r.root.as_ref().map(|root| (r.ws.id.clone(), root.path().to_path_buf()))
            })
            .collect();
        codespace_policy::check_nesting(canonical.iter().map(|(id, p)| (id.as_str(), p.as_path())))
            .map_err(|e| StartError { key: e.key.clone(), reason: e.reason.clone() })?;
        Ok(Gateway {
            workspaces,
            host: config.host,
            server_version: config.server_version,
            store: config.store,
            leases: Arc::new(Leases::default()),
            processes: config.processes,
            #[cfg(feature = "test-hooks")]
            written_hook: std::sync::Mutex::new(None),
        })
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
}

/// Runs blocking filesystem work off the async executor.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, GatewayError> + Send + 'static,
) -> Result<T, GatewayError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| GatewayError::Internal(format!("file task failed: {e}")))?
}
