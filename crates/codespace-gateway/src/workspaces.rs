//! The registered workspaces as the gateway holds them: each with the root descriptor opened
//! at start, and the start-time checks (roots open, extra read roots exist, no nesting).

use std::collections::BTreeMap;
use std::sync::Arc;

use codespace_policy::{EnvironmentKind, Registry, Workspace};
use codespace_runner::Root;
use codespace_watch::WorkspaceWatch;

/// A registered workspace with its opened root (host environments only).
#[derive(Debug)]
pub(crate) struct Registered {
    pub(crate) ws: Workspace,
    pub(crate) root: Option<Arc<Root>>,
    /// The root's watcher (not started until a file tool uses the workspace).
    pub(crate) watch: Option<Arc<WorkspaceWatch>>,
}

/// A workspace that failed to open at start, with the registry key at fault.
#[derive(Debug, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct StartError {
    pub key: String,
    pub reason: String,
}

/// Every registered workspace, opened and checked.
#[derive(Debug)]
pub struct Workspaces(BTreeMap<String, Registered>);

impl Workspaces {
    /// Opens every host workspace's root. A root that cannot be opened, an extra read root
    /// that is not a directory, or canonical roots that nest fail the start with the
    /// registry key at fault. Nothing is created on disk.
    #[expect(
        clippy::disallowed_methods,
        reason = "an extra read root is a host directory the sandbox shows, not a workspace path: checked once, at start"
    )]
    pub fn open(registry: &Registry) -> Result<Workspaces, StartError> {
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
            let watch = root.as_ref().map(|r| Arc::new(WorkspaceWatch::new(Arc::clone(r))));
            workspaces.insert(ws.id.clone(), Registered { ws: ws.clone(), root, watch });
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
        Ok(Workspaces(workspaces))
    }

    /// Every workspace's root as opened (canonical), or as registered where no root is
    /// opened: where the ledger must not be.
    pub fn root_paths(&self) -> Vec<std::path::PathBuf> {
        self.0
            .values()
            .map(|r| {
                r.root.as_ref().map_or_else(|| r.ws.root.clone(), |root| root.path().to_path_buf())
            })
            .collect()
    }

    pub(crate) fn into_map(self) -> BTreeMap<String, Registered> {
        self.0
    }
}
