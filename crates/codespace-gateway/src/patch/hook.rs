//! The workspace root as the patch transaction sees it: [`Hooked`] delegates every call to
//! the [`Root`] and, when a test set one, runs a [`Hook`] once every write has landed and
//! before verification, so a race (a directory swapped under the patch) is deterministic.
//! Only the `test-hooks` feature lets a caller set a hook.

use std::sync::Arc;

use codespace_runner::{FsError, PatchFs, Root, Version, WorkspacePath};

use crate::Gateway;

/// A callback run between a patch's last write and its verification.
pub type Hook = Arc<dyn Fn() + Send + Sync>;

pub(super) struct Hooked<'a> {
    pub(super) root: &'a Root,
    pub(super) hook: Option<Hook>,
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
        self.root.write_atomic(p, bytes, mode)
    }
    fn remove_file(&self, p: &WorkspacePath) -> Result<(), FsError> {
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

impl Gateway {
    /// The hook a test set, if any.
    pub(super) fn written_hook(&self) -> Option<Hook> {
        #[cfg(feature = "test-hooks")]
        {
            self.written_hook.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
        }
        #[cfg(not(feature = "test-hooks"))]
        {
            None
        }
    }

    /// Runs `hook` in every later patch between its last write and its verification.
    #[cfg(feature = "test-hooks")]
    pub fn set_written_hook(&self, hook: Option<Hook>) {
        *self.written_hook.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = hook;
    }
}
