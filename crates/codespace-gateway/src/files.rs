//! `read`, `find`, `grep` and `version`: limits, pagination and result shaping over the
//! runner's file operations.

use std::time::{Duration, Instant};

use codespace_policy::Action;
use codespace_protocol::{
    DEFAULT_FIND_LIMIT, DEFAULT_GREP_LIMIT, DEFAULT_READ_LIMIT, FindParams, FindResult,
    GREP_MAX_FILES, GREP_MAX_LINE_BYTES, GREP_MAX_REGEX_BYTES, GREP_MAX_SEARCH_LINE_BYTES,
    GREP_TIME_BUDGET_MS, GrepMatch, GrepParams, GrepResult, MAX_GREP_LIMIT, MAX_VERSION_PATHS,
    MAX_WALK_DEPTH, MAX_WALK_DIRECTORIES, MAX_WALK_ENTRIES, PathVersion, ReadParams, ReadResult,
    VersionParams, VersionResult, WALK_TIME_BUDGET_MS,
};
use std::sync::Arc;

use codespace_runner::{
    Cancel, GrepRequest, PathGlob, Progress, RunnerError, Walk, WalkLimits, WorkspacePath,
};
use codespace_watch::WorkspaceWatch;
use sha2::{Digest, Sha256};

use crate::error::fs_body;
use crate::{Gateway, GatewayError, blocking};

/// Resolves an optional `limit` against its default and cap; 0 or above the cap is refused.
fn limit(
    what: &'static str,
    value: Option<u64>,
    default: u32,
    max: u32,
) -> Result<u64, GatewayError> {
    let v = value.unwrap_or(u64::from(default));
    if v == 0 || v > u64::from(max) {
        return Err(GatewayError::OutputLimit { what, value: v, max: u64::from(max) });
    }
    Ok(v)
}

fn walk_limits(deadline: Instant, cancel: Cancel, progress: Progress) -> WalkLimits {
    WalkLimits {
        max_depth: MAX_WALK_DEPTH,
        max_dirs: MAX_WALK_DIRECTORIES,
        max_entries: MAX_WALK_ENTRIES,
        deadline: Some(deadline),
        cancel,
        progress,
    }
}

impl Gateway {
    pub async fn read(&self, p: ReadParams) -> Result<ReadResult, GatewayError> {
        let root = self.authorized_root(&p.workspace_id, Action::Read)?;
        let watch = self.watch(&p.workspace_id);
        let coordination = self.work_hint(&p.workspace_id, p.work_id.as_deref())?;
        let window = limit("limit", p.limit, DEFAULT_READ_LIMIT, DEFAULT_READ_LIMIT)?;
        let offset = p.offset.unwrap_or(0);
        let path = WorkspacePath::parse(&p.path)?;
        let inline = small_file(&root, &path);
        let work = move || {
            // `window` is at most 1 MiB, so the cast cannot truncate.
            // With the watcher running, a file whose version is known reads only the window.
            let w = match &watch {
                Some(watch) => watch.read_window(&path, offset, window as usize)?,
                None => root.read_window(&path, offset, window as usize)?,
            };
            let byte_count = w.data.len() as u64;
            let end = offset.saturating_add(byte_count);
            let truncated = end < w.file_size;
            // Validate first (fast) and fall back to the lossy decoder only for invalid bytes.
            let (content, content_lossy) = match String::from_utf8(w.data) {
                Ok(text) => (text, false),
                Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
            };
            Ok(ReadResult {
                path: path.as_str().to_owned(),
                content,
                version: w.version,
                truncated,
                offset,
                byte_count,
                file_size: w.file_size,
                next_offset: truncated.then_some(end),
                content_lossy,
                coordination: None,
            })
        };
        let mut result = if inline {
            // A small regular file is read and hashed in microseconds: doing it here saves
            // two thread hand-offs, which cost more than the read itself.
            work()
        } else {
            blocking(work).await
        }?;
        result.coordination = coordination;
        Ok(result)
    }

    /// `cancel` is the caller's: raised when the client cancels the request, it stops the
    /// walk (the result is then `incomplete`). `progress` counts the entries walked, for
    /// the caller's progress reports.
    pub async fn find(
        &self,
        p: FindParams,
        cancel: Cancel,
        progress: Progress,
    ) -> Result<FindResult, GatewayError> {
        let root = self.authorized_root(&p.workspace_id, Action::Read)?;
        let watch = self.watch(&p.workspace_id);
        let coordination = self.work_hint(&p.workspace_id, p.work_id.as_deref())?;
        let page = limit("limit", p.limit, DEFAULT_FIND_LIMIT, DEFAULT_FIND_LIMIT)?;
        let offset = p.offset.unwrap_or(0);
        let glob = p.glob.as_deref().map(PathGlob::new).transpose()?;
        let found = blocking(move || {
            let deadline = Instant::now() + Duration::from_millis(WALK_TIME_BUDGET_MS);
            let limits = walk_limits(deadline, cancel, progress);
            let include_ignored = p.include_ignored.unwrap_or(false);
            let walk = listing(&root, watch.as_deref(), &limits, include_ignored)?;
            let matches = || {
                let found = codespace_runner::find_in(&walk, glob.as_ref());
                // Over the ignore-filtered set: a rule change that hides or shows a file
                // changes it.
                let version = listing_version(&found.paths, found.incomplete);
                (found, version)
            };
            // The matches of a glob are kept with the cached listing they came from.
            let found_and_version = match &watch {
                Some(watch) => {
                    let key =
                        p.glob.as_deref().map_or_else(|| "all".to_owned(), |g| format!("glob:{g}"));
                    watch.derived(&walk, &key, matches)
                }
                None => Arc::new(matches()),
            };
            crate::changes::log_counters("find", watch.as_deref());
            let (found, listing_version) = &*found_and_version;
            let listing_version = listing_version.clone();
            let total = found.paths.len() as u64;
            let start = offset.min(total) as usize;
            let end = offset.saturating_add(page).min(total) as usize;
            let truncated = (end as u64) < total;
            Ok(FindResult {
                paths: found.paths[start..end].to_vec(),
                truncated,
                offset,
                next_offset: truncated.then_some(end as u64),
                total,
                incomplete: found.incomplete,
                listing_version,
                coordination: None,
            })
        })
        .await?;
        Ok(FindResult { coordination, ..found })
    }

    /// `cancel` is the caller's: raised when the client cancels the request, it stops the
    /// walk and the search (the result is then `incomplete`). `progress` counts the
    /// entries walked and the files searched.
    pub async fn grep(
        &self,
        p: GrepParams,
        cancel: Cancel,
        progress: Progress,
    ) -> Result<GrepResult, GatewayError> {
        let root = self.authorized_root(&p.workspace_id, Action::Read)?;
        let watch = self.watch(&p.workspace_id);
        let page = limit("limit", p.limit, DEFAULT_GREP_LIMIT, MAX_GREP_LIMIT)?;
        let offset = p.offset.unwrap_or(0);
        let glob = p.glob.as_deref().map(PathGlob::new).transpose()?;
        blocking(move || {
            let deadline = Instant::now() + Duration::from_millis(GREP_TIME_BUDGET_MS);
            let req = GrepRequest {
                pattern: &p.pattern,
                fixed_strings: p.fixed_strings.unwrap_or(false),
                case_insensitive: p.case_insensitive.unwrap_or(false),
                include_ignored: p.include_ignored.unwrap_or(false),
                glob: glob.as_ref(),
                offset,
                limit: page as usize,
                max_line_bytes: GREP_MAX_LINE_BYTES,
                max_files: GREP_MAX_FILES,
                max_search_line_bytes: GREP_MAX_SEARCH_LINE_BYTES,
                max_regex_bytes: GREP_MAX_REGEX_BYTES,
                walk: walk_limits(deadline, cancel, progress),
                deadline,
            };
            let out = codespace_runner::grep_in(&root, &req, || {
                listing(&root, watch.as_deref(), &req.walk, req.include_ignored)
            })?;
            crate::changes::log_counters("grep", watch.as_deref());
            let next = offset + out.matches.len() as u64;
            Ok(GrepResult {
                matches: out
                    .matches
                    .into_iter()
                    .map(|m| GrepMatch {
                        path: m.path,
                        line: m.line,
                        text: m.text,
                        text_truncated: m.text_truncated,
                    })
                    .collect(),
                truncated: out.has_more,
                offset,
                next_offset: out.has_more.then_some(next),
                files_searched: out.files_searched,
                binary_files_skipped: out.binary_files_skipped,
                long_line_files_skipped: out.long_line_files_skipped,
                incomplete: out.incomplete,
            })
        })
        .await
    }

    pub async fn version(&self, p: VersionParams) -> Result<VersionResult, GatewayError> {
        let root = self.authorized_root(&p.workspace_id, Action::Read)?;
        let watch = self.watch(&p.workspace_id);
        if p.paths.len() > MAX_VERSION_PATHS {
            return Err(GatewayError::OutputLimit {
                what: "paths",
                value: p.paths.len() as u64,
                max: MAX_VERSION_PATHS as u64,
            });
        }
        blocking(move || {
            let versions = p
                .paths
                .into_iter()
                .map(|path| {
                    let v = WorkspacePath::parse(&path).and_then(|wp| match &watch {
                        Some(watch) => watch.version(&wp),
                        None => root.version(&wp),
                    });
                    match v {
                        Ok(v) => PathVersion { path, version: Some(v), error: None },
                        Err(e) => PathVersion { path, version: None, error: Some(fs_body(&e)) },
                    }
                })
                .collect();
            crate::changes::log_counters("version", watch.as_deref());
            Ok(VersionResult { versions })
        })
        .await
    }
}

/// The walk `find` and `grep` list from: the watcher's cached one when it can vouch for it,
/// else a walk of the disk.
fn listing(
    root: &codespace_runner::Root,
    watch: Option<&WorkspaceWatch>,
    limits: &WalkLimits,
    include_ignored: bool,
) -> Result<Arc<Walk>, RunnerError> {
    let walk = || codespace_runner::walk(root, limits, include_ignored);
    match watch {
        Some(watch) => watch.listing(include_ignored, walk),
        None => walk().map(Arc::new),
    }
}

/// Files up to this size are read inline on the async worker instead of a blocking thread.
const INLINE_READ_BYTES: u64 = 256 * 1024;

/// True when `path` names a regular file small enough to read inline (one `statat`).
fn small_file(root: &codespace_runner::Root, path: &WorkspacePath) -> bool {
    root.metadata(path).ok().flatten().is_some_and(|m| {
        m.kind == codespace_runner::FileKind::Regular && m.size <= INLINE_READ_BYTES
    })
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
