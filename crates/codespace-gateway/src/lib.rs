//! Tool semantics of CodeSpace: look the workspace up, ask the policy, validate limits, run
//! the operation on the runner (`codespace_runner::Runner`, the only way to the machine),
//! and shape the wire result.
//!
//! Architecture Invariant: every tool call enters through one `Gateway` method and leaves as
//! a protocol result or a `GatewayError`; `GatewayError::code` (in `error.rs`) is the only
//! place that chooses an error code.

mod changes;
mod error;
mod files;
mod holds;
mod image;
mod info;
mod lease;
mod ledger;
mod patch;
mod pod;
mod process;
mod reload;
mod seen;
mod tasks;
mod waits;
mod work;
mod workspaces;

use std::collections::BTreeMap;
use std::sync::Arc;

use codespace_policy::{Action, Registry, allow};
use codespace_runner::Runner;
use codespace_store::Store;
use codespace_types::ServerKey;

pub use error::{GatewayError, TrustError};
pub use holds::{Question, decide as decide_hold, list_holds, show_hold};
pub use info::HostFacts;
pub use lease::{
    ARGV_SHOWN, HeldBy, Lease, LeaseError, Leases, Liveness, MAX_WAITERS, ProcessLease,
};
pub use patch::{PutBack, RestoreOutcome, list_operations, show_operation};
pub use pod::{Gauges, ResetReport};
pub use process::ExecSettings;
pub use reload::Reloaded;
pub use waits::ExecWait;
pub use work::{MAX_INTENT_BYTES, write_instruction};
pub use workspaces::{StartError, Workspaces};

use workspaces::Registered;

/// What the gateway is built from, besides the registry.
pub struct GatewayConfig {
    /// Seals each hold's request, summary and root when it is made; checked at resume.
    pub key: ServerKey,
    pub host: HostFacts,
    pub server_version: String,
    pub store: Arc<Store>,
    /// The only way to workspace files and processes.
    pub runner: Arc<Runner>,
    pub exec: ExecSettings,
}

/// The shared state behind every transport and session.
pub struct Gateway {
    /// The registered workspaces, replaced whole by a reload ([`Gateway::reload`]): a call
    /// keeps the workspace it looked up until it ends.
    workspaces: std::sync::RwLock<BTreeMap<String, Arc<Registered>>>,
    /// Held by a reload from the runner's reopen to the swap of `workspaces`.
    reloading: tokio::sync::Mutex<()>,
    host: HostFacts,
    server_version: String,
    /// The ledger, reached from async code only through the blocking pool.
    ledger: ledger::Ledger,
    leases: Arc<Leases>,
    runner: Arc<Runner>,
    exec: ExecSettings,
    /// The workspace of every live process, so a stop can kill a workspace's processes.
    owners: work::Owners,
    /// Holds a resume is running for in this process.
    resumes: holds::InFlight,
    /// Rung when a hold is decided in this process, so a waiting resume hears it at once.
    decisions: tokio::sync::Notify,
    /// Applied patches whose terminal record is still being written (each holds a read
    /// guard until it is): a writer guard waits for every one that started before it.
    recordings: Arc<tokio::sync::RwLock<()>>,
    /// The last coordination hint per workspace and work, while the ledger is unchanged.
    hints: work::Hints,
    /// Whole-file content returned by `read` or written by a patch, what a conflict diffs
    /// from.
    seen: Arc<seen::Seen>,
    /// The server's key: holds are sealed with it.
    key: ServerKey,
    /// Set once the server drains: no new mutation starts ([`Gateway::drain`]).
    draining: std::sync::atomic::AtomicBool,
}

impl Gateway {
    /// Checks the registry ([`Workspaces::open`]) and the runner's roots, and builds the
    /// gateway.
    pub fn new(registry: &Registry, config: GatewayConfig) -> Result<Gateway, StartError> {
        let workspaces = Workspaces::open(registry)?;
        workspaces.check_roots(&config.runner)?;
        Ok(Gateway::with_workspaces(workspaces, config))
    }

    /// The gateway over workspaces already opened, so a caller can refuse a bad registry
    /// before it creates the ledger.
    pub fn with_workspaces(workspaces: Workspaces, config: GatewayConfig) -> Gateway {
        Gateway {
            workspaces: std::sync::RwLock::new(workspaces.into_map()),
            reloading: tokio::sync::Mutex::new(()),
            host: config.host,
            server_version: config.server_version,
            ledger: ledger::Ledger::new(config.store),
            leases: Arc::new(Leases::default()),
            runner: config.runner,
            exec: config.exec,
            owners: work::Owners::default(),
            resumes: holds::InFlight::default(),
            decisions: tokio::sync::Notify::new(),
            recordings: Arc::default(),
            hints: work::Hints::default(),
            seen: Arc::default(),
            key: config.key,
            draining: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// A gateway for tests over `workspaces` and `runner`: the ledger `store`, a host that
    /// lacks `sandbox_missing`, and commands limited to 10 s with a plain `PATH`.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn for_tests(
        workspaces: Workspaces,
        runner: Runner,
        store: Arc<Store>,
        sandbox_missing: Vec<String>,
    ) -> Gateway {
        let exec = ExecSettings {
            timeout: std::time::Duration::from_secs(10),
            path: "/usr/bin:/bin".to_owned(),
            home: "/".to_owned(),
            lang: "C.UTF-8".to_owned(),
            max_pids: 1024,
            masked: vec![],
        };
        let config = GatewayConfig {
            key: ServerKey::from_bytes([0x5a; codespace_types::KEY_BYTES]),
            host: HostFacts { sandbox_missing, ..HostFacts::default() },
            server_version: "test".to_owned(),
            store,
            runner: Arc::new(runner),
            exec,
        };
        Gateway::with_workspaces(workspaces, config)
    }

    /// What the host enforces, as found at start.
    pub fn host(&self) -> &HostFacts {
        &self.host
    }

    /// The runner this gateway works through.
    pub fn runner(&self) -> &Arc<Runner> {
        &self.runner
    }

    fn lookup(&self, id: &str) -> Result<Arc<Registered>, GatewayError> {
        let workspaces = self.workspaces.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        workspaces
            .get(id)
            .cloned()
            .ok_or_else(|| GatewayError::WorkspaceNotFound { id: id.to_owned() })
    }

    /// The ids of the workspaces registered now.
    fn workspace_ids(&self) -> Vec<String> {
        let workspaces = self.workspaces.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        workspaces.keys().cloned().collect()
    }

    /// A workspace the policy lets the caller `action`, whose root the runner opened.
    fn authorized(&self, id: &str, action: Action) -> Result<Arc<Registered>, GatewayError> {
        let reg = self.lookup(id)?;
        allow(&reg.ws, action).map_err(GatewayError::Denied)?;
        if action != Action::Read && self.is_draining() {
            return Err(GatewayError::Draining);
        }
        // The runner lets a workspace go first when a reload removes it.
        if self.runner.root_path(id).is_none() {
            return Err(GatewayError::WorkspaceNotFound { id: id.to_owned() });
        }
        Ok(reg)
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

/// Bytes as text: moved when they are UTF-8 (a fast check), else decoded with replacement
/// characters; the flag says which.
fn text_of(bytes: Vec<u8>) -> (String, bool) {
    match String::from_utf8(bytes) {
        Ok(text) => (text, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    }
}

/// Unix seconds now, as the ledger records times.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
