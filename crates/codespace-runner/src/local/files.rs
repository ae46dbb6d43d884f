//! The file jobs of [`LocalRunner`]: a read window, `find`'s page, `grep`'s page and
//! versions, each answered from the watcher's caches when it can vouch for them, else from
//! the disk.

use std::sync::Arc;
use std::time::Instant;

use codespace_fs::{
    Cancel, FsError, Progress, Root, Version, Walk, WalkLimits, Window, WorkspacePath,
};
use codespace_watch::{BadCursor, Changes, WorkspaceWatch};
use sha2::{Digest, Sha256};

use super::{LocalRunner, blocking};
use codespace_files::{FilesError, GrepOutcome, GrepRequest, PathGlob};

use crate::ops::{self, Run, RunWalk};
use crate::{FindPage, RunnerError};

/// Files up to this size are read inline on the async worker instead of a blocking thread.
const INLINE_READ_BYTES: u64 = 256 * 1024;

impl Run<ops::Read> for LocalRunner {
    /// A window of `path` with the whole file's version.
    async fn run(&self, job: ops::Read) -> Result<Window, RunnerError> {
        let ops::Read { ws, path, offset, limit } = job;
        let (root, watch) = self.started(&ws)?;
        // Opening waits on no file (an `O_PATH` probe, then `O_NONBLOCK`) and tells the size.
        let opened = root.open_regular(&path)?;
        let inline = opened.meta().size <= INLINE_READ_BYTES;
        let work = move || {
            // With the watcher running, a file whose version is known reads only the window.
            Ok(match &watch {
                Some(watch) => watch.read_window(opened, &path, offset, limit)?,
                None => Root::read_opened(opened, &path, offset, limit)?,
            })
        };
        if inline {
            // A small regular file is read and hashed in microseconds: doing it here saves
            // two thread hand-offs, which cost more than the read itself.
            work()
        } else {
            blocking(work).await
        }
    }
}

impl RunWalk<ops::Find> for LocalRunner {
    /// One page of the matching files. `cancel` stops the walk (the page is then
    /// `incomplete`); `progress` counts the entries walked.
    async fn run_walk(
        &self,
        ops::Find { ws, job }: ops::Find,
        cancel: Cancel,
        progress: Progress,
    ) -> Result<FindPage, RunnerError> {
        let (root, watch) = self.started(&ws)?;
        let glob = job.glob.as_deref().map(PathGlob::new).transpose()?;
        blocking(move || {
            let limits = job.walk.limits(Instant::now() + job.walk.budget, cancel, progress);
            let walk = listing(&root, watch.as_deref(), &limits, job.include_ignored)?;
            let matches = || {
                let found = codespace_files::find_in(&walk, glob.as_ref());
                // Over the ignore-filtered set: a rule change that hides or shows a file
                // changes it.
                let version = listing_version(&found.paths, found.incomplete);
                (found, version)
            };
            // The matches of a glob are kept with the cached listing they came from.
            let found = match &watch {
                Some(watch) => {
                    let key = job
                        .glob
                        .as_deref()
                        .map_or_else(|| "all".to_owned(), |g| format!("glob:{g}"));
                    watch.derived(&walk, &key, matches)
                }
                None => Arc::new(matches()),
            };
            log_counters("find", watch.as_deref());
            let (found, listing_version) = &*found;
            let total = found.paths.len() as u64;
            let start = job.offset.min(total) as usize;
            let end = job.offset.saturating_add(job.page).min(total) as usize;
            Ok(FindPage {
                paths: found.paths[start..end].to_vec(),
                total,
                incomplete: found.incomplete,
                listing_version: listing_version.clone(),
            })
        })
        .await
    }
}

impl RunWalk<ops::Grep> for LocalRunner {
    /// One page of the matching lines. `cancel` stops the walk and the search;
    /// `progress` counts the entries walked and the files searched.
    async fn run_walk(
        &self,
        ops::Grep { ws, job }: ops::Grep,
        cancel: Cancel,
        progress: Progress,
    ) -> Result<GrepOutcome, RunnerError> {
        let (root, watch) = self.started(&ws)?;
        let glob = job.glob.as_deref().map(PathGlob::new).transpose()?;
        blocking(move || {
            let deadline = Instant::now() + job.walk.budget;
            let req = GrepRequest {
                pattern: &job.pattern,
                fixed_strings: job.fixed_strings,
                case_insensitive: job.case_insensitive,
                include_ignored: job.include_ignored,
                glob: glob.as_ref(),
                offset: job.offset,
                limit: job.limit,
                max_line_bytes: job.max_line_bytes,
                max_files: job.max_files,
                max_search_line_bytes: job.max_search_line_bytes,
                max_regex_bytes: job.max_regex_bytes,
                walk: job.walk.limits(deadline, cancel, progress),
                deadline,
            };
            let out = codespace_files::grep_in(&root, &req, || {
                listing(&root, watch.as_deref(), &req.walk, req.include_ignored)
            })?;
            log_counters("grep", watch.as_deref());
            Ok(out)
        })
        .await
    }
}

impl Run<ops::Versions> for LocalRunner {
    /// The version of each path (a path that does not parse, or cannot be hashed, gets
    /// its own refusal).
    async fn run(
        &self,
        ops::Versions { ws, paths }: ops::Versions,
    ) -> Result<Vec<Result<Version, FsError>>, RunnerError> {
        let (root, watch) = self.started(&ws)?;
        blocking(move || {
            let parsed: Vec<Result<WorkspacePath, FsError>> =
                paths.iter().map(|path| WorkspacePath::parse(path)).collect();
            let versions = match &watch {
                // One pass over every valid path: a cached one costs a stat, its directory
                // opened once for all of them (see `WorkspaceWatch::versions`).
                Some(watch) => {
                    let valid: Vec<WorkspacePath> =
                        parsed.iter().filter_map(|p| p.as_ref().ok().cloned()).collect();
                    let mut found = watch.versions(&valid).into_iter();
                    parsed
                        .into_iter()
                        .map(|p| {
                            let wp = p?;
                            found.next().unwrap_or_else(|| root.version(&wp))
                        })
                        .collect()
                }
                None => parsed.into_iter().map(|p| p.and_then(|wp| root.version(&wp))).collect(),
            };
            log_counters("version", watch.as_deref());
            Ok(versions)
        })
        .await
    }
}

impl Run<ops::Changes> for LocalRunner {
    /// What changed since `since` (`Ok(None)`: watching is off, no list can be vouched
    /// for).
    async fn run(
        &self,
        ops::Changes { ws, since }: ops::Changes,
    ) -> Result<Result<Option<Changes>, BadCursor>, RunnerError> {
        let (_, watch) = self.started(&ws)?;
        let Some(watch) = watch else {
            return Ok(since
                .as_deref()
                .map(codespace_watch::Cursor::parse)
                .transpose()
                .map(|_| None));
        };
        // Waiting for the watcher to start and for its cookie blocks: off the executor.
        blocking(move || Ok(watch.changes(since.as_deref()).map(Some))).await
    }
}

/// The walk `find` and `grep` list from: the watcher's cached one when it can vouch for it,
/// else a walk of the disk.
fn listing(
    root: &Root,
    watch: Option<&WorkspaceWatch>,
    limits: &WalkLimits,
    include_ignored: bool,
) -> Result<Arc<Walk>, FilesError> {
    let walk = || codespace_files::walk(root, limits, include_ignored);
    match watch {
        Some(watch) => watch.listing(include_ignored, walk),
        None => walk().map(Arc::new),
    }
}

/// Identifies one observed sorted set: equal sets give equal ids.
fn listing_version(paths: &[String], incomplete: bool) -> String {
    let mut h = Sha256::new();
    for p in paths {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    h.update([u8::from(incomplete)]);
    let digest = h.finalize();
    format!("lv-{}", hex::encode(&digest[..16]))
}

/// The cache counters in the debug log after a cached tool, for an operator watching
/// them without `workspace_info` (`RUST_LOG=codespace_runner=debug`).
fn log_counters(tool: &str, watch: Option<&WorkspaceWatch>) {
    if let Some(watch) = watch
        && tracing::enabled!(tracing::Level::DEBUG)
    {
        let s = watch.report().stats;
        tracing::debug!(
            tool,
            version_hits = s.version_hits,
            version_misses = s.version_misses,
            version_entries = s.version_entries,
            listing_hits = s.listing_hits,
            listing_misses = s.listing_misses,
            sync_timeouts = s.sync_timeouts,
            "workspace caches"
        );
    }
}
