//! A reload's reopen: the workspaces a reloaded registry names, opened into a new set that
//! replaces the old one whole, or not at all. A root named at the same path that still names
//! the directory opened is kept with its watch (its caches stay warm); any other is opened
//! afresh and added to the runner's one watcher; a workspace no longer named (or whose root
//! was opened afresh) is removed from the watcher at the swap, giving its watches back at
//! once. Commands are not the runner's roots: a command started in a workspace that is let
//! go runs on (the supervisor holds it by its id).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use codespace_fs::Root;
use codespace_types::RootStatus;
use codespace_watch::Watcher;

use super::{LocalRunner, OpenError, Opened};
use crate::RunnerError;
use crate::ops::{self, Reopened, RunBlocking};

impl Opened {
    /// Opens `path` as workspace `id`'s root, added to `watcher` (watching on).
    pub(super) fn open(
        id: &str,
        path: &Path,
        watcher: Option<&Watcher>,
    ) -> Result<Opened, OpenError> {
        let root = Arc::new(
            Root::open(path).map_err(|e| OpenError { id: id.to_owned(), reason: e.to_string() })?,
        );
        let watch = watcher.map(|w| Arc::new(w.add_root(Arc::clone(&root))));
        Ok(Opened { registered: path.to_path_buf(), root, watch })
    }
}

impl RunBlocking<ops::Reopen> for LocalRunner {
    fn run_blocking(&self, job: ops::Reopen) -> Result<Result<Reopened, OpenError>, RunnerError> {
        Ok(self.reopen(&job.roots, &job.keep_out))
    }
}

impl LocalRunner {
    /// Opens `roots` (`(workspace id, registered root)`) as the new set of workspaces: see
    /// the module's documentation. A refusal changes nothing.
    pub fn reopen(
        &self,
        roots: &[(String, PathBuf)],
        keep_out: &[PathBuf],
    ) -> Result<Reopened, OpenError> {
        let _one = self.reopening.lock().unwrap_or_else(PoisonError::into_inner);
        let mut next = BTreeMap::new();
        let mut opened = Vec::new();
        for (id, path) in roots {
            let kept = self.get(id).filter(|w| {
                w.registered == *path && matches!(w.root.status(), RootStatus::Current)
            });
            let w = match kept {
                Some(w) => w,
                None => {
                    opened.push(id.clone());
                    Arc::new(Opened::open(id, path, self.watcher.as_ref())?)
                }
            };
            next.insert(id.clone(), w);
        }
        check_held(&next, keep_out)?;
        let reopened = Reopened {
            roots: next.iter().map(|(id, w)| (id.clone(), w.root.path().to_path_buf())).collect(),
            opened,
        };
        let before = std::mem::replace(
            &mut *self.workspaces.write().unwrap_or_else(PoisonError::into_inner),
            next,
        );
        // The watches of the workspaces let go are given back now; what they had counted
        // stays counted.
        let now = self.all();
        let gone = before.values().filter(|w| !now.iter().any(|n| Arc::ptr_eq(n, w)));
        for watch in gone.filter_map(|w| w.watch.as_ref()) {
            self.retired_resyncs.fetch_add(watch.report().stats.resyncs, Ordering::Relaxed);
            if let Some(watcher) = &self.watcher {
                watcher.remove_root(watch);
            }
        }
        Ok(reopened)
    }
}

/// The roots a runner holds never nest (canonical paths: a symlinked root is seen where it
/// leads), and none holds a path of `keep_out` (the ledger, which a command could rewrite).
fn check_held(next: &BTreeMap<String, Arc<Opened>>, keep_out: &[PathBuf]) -> Result<(), OpenError> {
    let roots: Vec<(&String, &Path)> = next.iter().map(|(id, w)| (id, w.root.path())).collect();
    for (i, (id, root)) in roots.iter().enumerate() {
        for (other_id, other) in &roots[i + 1..] {
            let (inner_id, inner, outer_id, outer) = if other.starts_with(root) {
                (other_id, other, id, root)
            } else if root.starts_with(other) {
                (id, root, other_id, other)
            } else {
                continue;
            };
            return Err(OpenError {
                id: (*inner_id).clone(),
                reason: format!(
                    "{} lies inside the root of workspace {outer_id:?} ({}); roots must not nest",
                    inner.display(),
                    outer.display()
                ),
            });
        }
        if let Some(kept) = keep_out.iter().find(|k| k.starts_with(root)) {
            return Err(OpenError {
                id: (*id).clone(),
                reason: format!(
                    "{} lies inside this root {} (a command could rewrite it)",
                    kept.display(),
                    root.display()
                ),
            });
        }
    }
    Ok(())
}
