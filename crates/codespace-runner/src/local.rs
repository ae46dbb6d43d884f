//! [`LocalRunner`]: the runner in this process. It holds every workspace's opened root and
//! watcher and the process supervisor, and does what a job asks with them; file work runs
//! on blocking threads, process work on the supervisor's tasks. A reload swaps the set of
//! opened workspaces whole (`reopen.rs`); a job holds the workspace it looked up until it
//! ends.

mod files;
mod patch;
mod plans;
mod process;
mod reopen;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use codespace_fs::Root;
use codespace_process::Supervisor;
use codespace_types::RootStatus;
use codespace_watch::{WatchReport, Watcher, WorkspaceWatch};

use crate::RunnerError;
use crate::ops::{self, Run};

pub use patch::{Hook, WriteHook};

/// One workspace as the runner holds it.
#[derive(Debug)]
struct Opened {
    /// The root as the registry names it: a reload that names it again keeps this one.
    registered: PathBuf,
    root: Arc<Root>,
    /// Not started until a file tool uses the workspace; `None` with watching off.
    watch: Option<Arc<WorkspaceWatch>>,
}

/// A workspace root that could not be opened.
#[derive(Debug, Clone, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("{id}: {reason}")]
pub struct OpenError {
    pub id: String,
    pub reason: String,
}

/// The runner in this process.
pub struct LocalRunner {
    workspaces: RwLock<BTreeMap<String, Arc<Opened>>>,
    /// The one watcher every workspace's watch belongs to; `None` with watching off (a
    /// reload adds its new roots to it and removes those it lets go).
    watcher: Option<Watcher>,
    supervisor: Arc<Supervisor>,
    hook: patch::HookSlot,
    /// Held by a reopen from its first look at the workspaces to its swap.
    reopening: std::sync::Mutex<()>,
    /// The resyncs of the watchers a reopen let go, so the counter never goes back.
    retired_resyncs: std::sync::atomic::AtomicU64,
    plans: plans::Plans,
}

impl std::fmt::Debug for LocalRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalRunner").field("workspaces", &self.workspaces).finish_non_exhaustive()
    }
}

impl LocalRunner {
    /// Opens every root (`(workspace id, registered root)`), each added to one shared
    /// watcher unless `watch` is false. Nothing is created on disk.
    pub fn open(
        roots: &[(String, PathBuf)],
        supervisor: Arc<Supervisor>,
        watch: bool,
    ) -> Result<LocalRunner, OpenError> {
        let mut workspaces = BTreeMap::new();
        let watcher = watch.then(Watcher::new);
        for (id, path) in roots {
            workspaces.insert(id.clone(), Arc::new(Opened::open(id, path, watcher.as_ref())?));
        }
        Ok(LocalRunner {
            workspaces: RwLock::new(workspaces),
            supervisor,
            hook: patch::HookSlot::default(),
            watcher,
            reopening: std::sync::Mutex::default(),
            retired_resyncs: std::sync::atomic::AtomicU64::new(0),
            plans: plans::Plans::default(),
        })
    }

    /// Workspace `id` as held now (a later reload does not change what this returned).
    fn get(&self, id: &str) -> Option<Arc<Opened>> {
        self.workspaces.read().unwrap_or_else(PoisonError::into_inner).get(id).cloned()
    }

    /// Every workspace held now.
    fn all(&self) -> Vec<Arc<Opened>> {
        self.workspaces.read().unwrap_or_else(PoisonError::into_inner).values().cloned().collect()
    }

    /// Workspace `id`, refused when its root path no longer names the pinned directory:
    /// one `fstat` and one `stat` per call, so a root deleted and re-created (a fresh clone
    /// into the same path) is reported instead of read from or written into.
    fn opened(&self, id: &str) -> Result<Arc<Opened>, RunnerError> {
        let w = self.get(id).ok_or_else(|| RunnerError::NoWorkspace { id: id.to_owned() })?;
        let how = match w.root.status() {
            RootStatus::Current => return Ok(w),
            RootStatus::Replaced => "replaced (its path now names another directory, or nothing)",
            RootStatus::Removed => "deleted",
        };
        Err(RunnerError::RootReplaced {
            id: id.to_owned(),
            root: w.root.path().display().to_string(),
            how: how.to_owned(),
        })
    }

    /// The root and the started watcher of workspace `id`: every file job's first use
    /// starts the watcher, in the background and best effort.
    fn started(&self, id: &str) -> Result<(Arc<Root>, Option<Arc<WorkspaceWatch>>), RunnerError> {
        let w = self.opened(id)?;
        if let Some(watch) = &w.watch {
            watch.ensure_started();
        }
        Ok((Arc::clone(&w.root), w.watch.clone()))
    }

    /// The canonical root of workspace `id`, as opened.
    pub fn root_path(&self, id: &str) -> Option<PathBuf> {
        self.get(id).map(|w| w.root.path().to_path_buf())
    }

    /// The watcher of workspace `id`, for tests that force an overflow, a resync, a
    /// restart or a failed start.
    #[cfg(feature = "test-hooks")]
    pub fn workspace_watch(&self, id: &str) -> Option<Arc<WorkspaceWatch>> {
        self.get(id)?.watch.clone()
    }

    /// The watcher every workspace's watch belongs to (`None`: watching is off): a root
    /// added to it with [`Watcher::add_root`] is watched from its first use, and one removed
    /// with [`Watcher::remove_root`] gives its watches back at once.
    pub fn watcher(&self) -> Option<&Watcher> {
        self.watcher.as_ref()
    }

    pub fn supervisor(&self) -> &Arc<Supervisor> {
        &self.supervisor
    }

    pub fn process_facts(&self) -> crate::ProcessFacts {
        let c = self.supervisor.config();
        crate::ProcessFacts {
            max_live: c.max_live as u64,
            ring_bytes: c.ring_bytes as u64,
            retained_bytes: c.retained_bytes(),
            completed_ttl: c.completed_ttl,
            max_completed: c.max_completed as u64,
        }
    }
}

impl Run<ops::RootStatus> for LocalRunner {
    /// Whether the root path still names the directory opened at start.
    async fn run(&self, job: ops::RootStatus) -> Result<Option<RootStatus>, RunnerError> {
        Ok(self.get(&job.ws).map(|w| w.root.status()))
    }
}

impl Run<ops::RootIdentity> for LocalRunner {
    /// The device and inode of the directory opened as workspace `ws`'s root.
    async fn run(&self, job: ops::RootIdentity) -> Result<Option<(u64, u64)>, RunnerError> {
        self.get(&job.ws).map(|w| w.root.identity()).transpose().map_err(RunnerError::Fs)
    }
}

impl Run<ops::WatchReport> for LocalRunner {
    /// What the watcher of workspace `ws` reports (`None`: watching is off).
    async fn run(&self, job: ops::WatchReport) -> Result<Option<WatchReport>, RunnerError> {
        Ok(self.get(&job.ws).and_then(|w| w.watch.as_ref().map(|w| w.report())))
    }
}

impl Run<ops::Counters> for LocalRunner {
    /// Every watcher's resyncs and the supervisor's spilled bytes.
    async fn run(&self, _job: ops::Counters) -> Result<crate::RunnerCounters, RunnerError> {
        let all = self.all();
        let watches = all.iter().filter_map(|w| w.watch.as_ref());
        Ok(crate::RunnerCounters {
            watcher_resyncs: watches.map(|w| w.report().stats.resyncs).sum::<u64>()
                + self.retired_resyncs.load(std::sync::atomic::Ordering::Relaxed),
            spilled_bytes: self.supervisor.spilled_bytes(),
        })
    }
}

/// Runs blocking file work off the async executor.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, RunnerError> + Send + 'static,
) -> Result<T, RunnerError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| RunnerError::Task { reason: e.to_string() })?
}
