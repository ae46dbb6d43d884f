//! The patch jobs of [`LocalRunner`]: check the caller's expected versions and plan against
//! the disk, apply a plan (all or nothing), and the recovery steps a restart or an
//! operator's restore runs. They block: the gateway calls them from its transaction's
//! blocking thread, between its ledger writes.
//!
//! [`Hooked`] delegates every call to the [`Root`] and, when a test set one, runs a
//! [`Hook`] once every write has landed and before verification, so a race (a directory
//! swapped under the patch) is deterministic. Only the `test-hooks` feature sets one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use codespace_fs::{FsError, Root, Version, Window, WorkspacePath};

use super::LocalRunner;
use crate::ops::{self, Planned, Reverting, RunBlocking};
use crate::{PrepareError, RunnerError};
use codespace_files::{ApplyOutcome, Found, PatchFs, PlannedWrite, RevertPlan, Undone};

/// A callback run between a patch's last write and its verification.
pub type Hook = Arc<dyn Fn() + Send + Sync>;

/// A callback run before each write or removal of a patch, with how many came before it.
pub type WriteHook = Arc<dyn Fn(usize) + Send + Sync>;

#[derive(Default)]
pub(super) struct HookSlot {
    written: Mutex<Option<Hook>>,
    before_write: Mutex<Option<WriteHook>>,
}

impl HookSlot {
    fn get(&self) -> (Option<Hook>, Option<WriteHook>) {
        let written = self.written.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let before = self.before_write.lock().unwrap_or_else(PoisonError::into_inner).clone();
        (written, before)
    }
}

impl RunBlocking<ops::Prepare> for LocalRunner {
    /// Checks every `(path, version)` the caller expects against the disk, then parses and
    /// plans `patch` against the files as they are now. Writes nothing; with `hold`, keeps
    /// the plan for its `Apply`.
    fn run_blocking(
        &self,
        ops::Prepare { ws, patch, expected, hold }: ops::Prepare,
    ) -> Result<Planned, PrepareError> {
        let (root, _) = self.started(&ws)?;
        for (path, want) in &expected {
            let actual = root.version(path).map_err(RunnerError::from)?;
            if actual != *want {
                return Err(PrepareError::VersionConflict {
                    path: path.as_str().to_owned(),
                    expected: *want,
                    actual,
                });
            }
        }
        let writes = codespace_files::prepare(&root, &patch)?;
        Ok(self.planned(&ws, writes, hold))
    }
}

impl RunBlocking<ops::PrepareRevert> for LocalRunner {
    /// Checks every file against what the reverted operation left, then plans the writes
    /// back. Writes nothing; with `hold`, keeps a ready plan for its `Apply`.
    fn run_blocking(
        &self,
        ops::PrepareRevert { ws, files, hold }: ops::PrepareRevert,
    ) -> Result<Reverting, RunnerError> {
        let (root, _) = self.started(&ws)?;
        Ok(match codespace_files::prepare_revert(&root, &files)? {
            RevertPlan::Ready(writes) => Reverting::Ready(self.planned(&ws, writes, hold)),
            RevertPlan::Changed(changed) => Reverting::Changed(changed),
        })
    }
}

impl RunBlocking<ops::Apply> for LocalRunner {
    /// Writes the plan held under `plan`: every file or none (rolled back), or says which it
    /// could not restore.
    fn run_blocking(
        &self,
        ops::Apply { ws, plan }: ops::Apply,
    ) -> Result<ApplyOutcome, RunnerError> {
        let w = self.opened(&ws)?;
        let writes = self.plans.take(&ws, plan)?;
        let (hook, before_write) = self.hook.get();
        let fs = Hooked { root: &w.root, hook, before_write, writes: AtomicUsize::new(0) };
        Ok(codespace_files::apply(&fs, &writes))
    }
}

impl LocalRunner {
    /// `writes` as a plan's answer, held for its `Apply` when `hold` (the runner keeps its
    /// own copy: the answer goes to the caller's ledger).
    fn planned(&self, ws: &str, writes: Vec<PlannedWrite>, hold: bool) -> Planned {
        let id = hold.then(|| self.plans.hold(ws, writes.clone()));
        Planned { id, writes }
    }
}

impl RunBlocking<ops::Survey> for LocalRunner {
    /// What each interrupted file holds now.
    fn run_blocking(&self, job: ops::Survey) -> Result<Vec<Found>, RunnerError> {
        Ok(codespace_files::survey(&*self.opened(&job.ws)?.root, &job.files))
    }
}

impl RunBlocking<ops::RollBack> for LocalRunner {
    /// Puts every after-version found back to its before-version.
    fn run_blocking(&self, job: ops::RollBack) -> Result<Vec<Undone>, RunnerError> {
        Ok(codespace_files::roll_back(&*self.opened(&job.ws)?.root, &job.files, &job.found))
    }
}

impl RunBlocking<ops::VersionNow> for LocalRunner {
    /// The version of one path on the disk, never from a cache.
    fn run_blocking(&self, job: ops::VersionNow) -> Result<Version, RunnerError> {
        Ok(self.opened(&job.ws)?.root.version(&job.path)?)
    }
}

impl RunBlocking<ops::ReadNow> for LocalRunner {
    /// The first `limit` bytes of one path on the disk, never from a cache.
    fn run_blocking(&self, job: ops::ReadNow) -> Result<Window, RunnerError> {
        let w = self.opened(&job.ws)?;
        let root = &w.root;
        let opened = root.open_regular(&job.path)?;
        Ok(Root::read_opened(opened, &job.path, 0, job.limit)?)
    }
}

impl RunBlocking<ops::ClearTempFiles> for LocalRunner {
    /// Removes the temporary files an interrupted write may have left beside `paths`
    /// (best effort: what cannot be removed stays, and is never listed).
    fn run_blocking(&self, job: ops::ClearTempFiles) -> Result<(), RunnerError> {
        let w = self.opened(&job.ws)?;
        let root = &w.root;
        for p in &job.paths {
            if let Ok(p) = WorkspacePath::parse(p) {
                let _ = root.remove_stale_temp_files(&p);
            }
        }
        Ok(())
    }
}

impl RunBlocking<ops::PutBack> for LocalRunner {
    /// Puts one file's preserved content back where the path is free.
    fn run_blocking(&self, job: ops::PutBack) -> Result<Undone, RunnerError> {
        Ok(codespace_files::put_back(&*self.opened(&job.ws)?.root, &job.file))
    }
}

impl LocalRunner {
    /// Runs `hook` in every later patch between its last write and its verification.
    #[cfg(feature = "test-hooks")]
    pub fn set_written_hook(&self, hook: Option<Hook>) {
        *self.hook.written.lock().unwrap_or_else(PoisonError::into_inner) = hook;
    }

    /// Runs `hook` before every later write or removal of a patch (so a test can stop a
    /// worker before its first write, or between two).
    #[cfg(feature = "test-hooks")]
    pub fn set_before_write_hook(&self, hook: Option<WriteHook>) {
        *self.hook.before_write.lock().unwrap_or_else(PoisonError::into_inner) = hook;
    }
}

struct Hooked<'a> {
    root: &'a Root,
    hook: Option<Hook>,
    before_write: Option<WriteHook>,
    writes: AtomicUsize,
}

impl Hooked<'_> {
    fn before_write(&self) {
        let done = self.writes.fetch_add(1, Ordering::Relaxed);
        if let Some(hook) = &self.before_write {
            hook(done);
        }
    }
}

impl PatchFs for Hooked<'_> {
    fn exists(&self, p: &WorkspacePath) -> Result<bool, FsError> {
        PatchFs::exists(self.root, p)
    }
    fn create_dirs(&self, p: &WorkspacePath) -> Result<(), FsError> {
        self.root.create_dirs(p)
    }
    fn write_atomic(
        &self,
        p: &WorkspacePath,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> Result<(), FsError> {
        self.before_write();
        self.root.write_atomic(p, bytes, mode)
    }
    fn remove_file(&self, p: &WorkspacePath) -> Result<(), FsError> {
        self.before_write();
        self.root.remove_file(p)
    }
    fn remove_empty_dir(&self, p: &WorkspacePath) -> Result<(), FsError> {
        self.root.remove_empty_dir(p)
    }
    fn version(&self, p: &WorkspacePath) -> Result<Version, FsError> {
        self.root.version(p)
    }
    fn written(&self) {
        if let Some(hook) = &self.hook {
            hook();
        }
    }
}
