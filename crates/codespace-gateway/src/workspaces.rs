//! The registered workspaces as the gateway holds them, and the start-time checks: extra
//! read roots exist, and the roots the runner opened do not nest.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use codespace_policy::{Registry, Workspace};
use codespace_runner::{LocalRunner, OpenError, Runner};
use codespace_types::EnvironmentKind;

/// A registered workspace.
#[derive(Debug)]
pub(crate) struct Registered {
    pub(crate) ws: Workspace,
}

/// A workspace that failed to open at start, with the registry key at fault.
#[derive(Debug, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct StartError {
    pub key: String,
    pub reason: String,
}

/// Every registered workspace, checked.
#[derive(Debug)]
pub struct Workspaces(BTreeMap<String, Arc<Registered>>);

impl Workspaces {
    /// Checks the registry's host facts: an extra read root that is not a directory fails
    /// the start with the registry key at fault. Nothing is created on disk.
    #[expect(
        clippy::disallowed_methods,
        reason = "an extra read root is a host directory the sandbox shows, not a workspace path: checked once, at start"
    )]
    pub fn open(registry: &Registry) -> Result<Workspaces, StartError> {
        let mut workspaces = BTreeMap::new();
        for ws in registry.workspaces() {
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
            workspaces.insert(ws.id.clone(), Arc::new(Registered { ws: ws.clone() }));
        }
        Ok(Workspaces(workspaces))
    }

    /// The `(id, registered root)` of every host workspace: what a runner opens. A
    /// container workspace is never touched: its backend is unavailable and nothing falls
    /// back to the host.
    pub fn host_roots(&self) -> Vec<(String, PathBuf)> {
        self.0
            .values()
            .filter(|r| matches!(r.ws.environment_kind, EnvironmentKind::Host))
            .map(|r| (r.ws.id.clone(), r.ws.root.clone()))
            .collect()
    }

    /// The runner in this process over every host root, as `open` (the composition root's,
    /// which holds the supervisor) opens it: a root that cannot be opened fails the start
    /// with its registry key; the opened roots are checked by [`Workspaces::check_roots`].
    pub fn local_runner(
        &self,
        open: impl FnOnce(&[(String, PathBuf)]) -> Result<LocalRunner, OpenError>,
    ) -> Result<Runner, StartError> {
        let runner = open(&self.host_roots()).map_err(|e| StartError {
            key: format!("workspaces.{}.root", e.id),
            reason: e.reason,
        })?;
        let runner = Runner::Local(runner);
        self.check_roots(&runner)?;
        Ok(runner)
    }

    /// Canonical roots may nest even when the registered strings did not (a symlinked
    /// root): refused, with the registry key at fault.
    pub fn check_roots(&self, runner: &Runner) -> Result<(), StartError> {
        let canonical: Vec<(String, PathBuf)> =
            self.0.keys().filter_map(|id| runner.root_path(id).map(|p| (id.clone(), p))).collect();
        codespace_policy::check_nesting(canonical.iter().map(|(id, p)| (id.as_str(), p.as_path())))
            .map_err(|e| StartError { key: e.key.clone(), reason: e.reason.clone() })
    }

    /// Every workspace's root as the runner opened it (canonical), or as registered where
    /// it opened none: where the ledger must not be.
    pub fn root_paths(&self, runner: &Runner) -> Vec<PathBuf> {
        self.0
            .values()
            .map(|r| runner.root_path(&r.ws.id).unwrap_or_else(|| r.ws.root.clone()))
            .collect()
    }

    pub(crate) fn into_map(self) -> BTreeMap<String, Arc<Registered>> {
        self.0
    }
}
