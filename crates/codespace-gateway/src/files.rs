//! `read`, `find`, `grep` and `version`: limits, pagination and result shaping over the
//! runner's file jobs.

use std::time::Duration;

use codespace_policy::Action;
use codespace_protocol::{
    DEFAULT_FIND_LIMIT, DEFAULT_GREP_LIMIT, DEFAULT_READ_LIMIT, Encoding, FindParams, FindResult,
    GREP_MAX_FILES, GREP_MAX_LINE_BYTES, GREP_MAX_REGEX_BYTES, GREP_MAX_SEARCH_LINE_BYTES,
    GREP_TIME_BUDGET_MS, GrepMatch, GrepParams, GrepResult, MAX_GREP_LIMIT, MAX_VERSION_PATHS,
    MAX_WALK_DEPTH, MAX_WALK_DIRECTORIES, MAX_WALK_ENTRIES, PathVersion, ReadParams, ReadResult,
    VersionParams, VersionResult, WALK_TIME_BUDGET_MS,
};
use codespace_runner::ops;
use codespace_runner::{Cancel, FindJob, GrepJob, Progress, WalkCaps, WorkspacePath};

use crate::error::fs_body;
use crate::{Gateway, GatewayError};

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

fn walk_caps(budget_ms: u64) -> WalkCaps {
    WalkCaps {
        max_depth: MAX_WALK_DEPTH,
        max_dirs: MAX_WALK_DIRECTORIES,
        max_entries: MAX_WALK_ENTRIES,
        budget: Duration::from_millis(budget_ms),
    }
}

impl Gateway {
    pub async fn read(&self, p: ReadParams) -> Result<ReadResult, GatewayError> {
        self.authorized(&p.workspace_id, Action::Read)?;
        let coordination = self.work_hint(&p.workspace_id, p.work_id.as_deref())?;
        let window = limit("limit", p.limit, DEFAULT_READ_LIMIT, DEFAULT_READ_LIMIT)?;
        let offset = p.offset.unwrap_or(0);
        let path = WorkspacePath::parse(&p.path)?;
        let shown = path.as_str().to_owned();
        // `window` is at most 1 MiB, so the cast cannot truncate.
        let w = self
            .runner
            .run(ops::Read { ws: p.workspace_id.clone(), path, offset, limit: window as usize })
            .await?;
        let read = w.data.len() as u64;
        let more = offset.saturating_add(read) < w.file_size;
        if offset == 0 && !more {
            // The whole file: what a later VERSION_CONFLICT against this version diffs from.
            self.seen.remember(&p.workspace_id, &shown, w.version, &w.data);
        }
        let image = if offset == 0 { crate::image::sniff(&w.data) } else { None };
        let (content, mut encoding, kept) = crate::image::encode(w.data, more);
        let byte_count = kept as u64;
        let end = offset.saturating_add(byte_count);
        let truncated = end < w.file_size;
        if p.image == Some(true) && image.is_some() && !truncated && encoding == Encoding::Base64 {
            // The server moves the base64 in `content` into the image content block.
            encoding = Encoding::Image;
        }
        Ok(ReadResult {
            path: shown,
            content,
            encoding,
            version: w.version,
            truncated,
            offset,
            byte_count,
            file_size: w.file_size,
            next_offset: truncated.then_some(end),
            image,
            coordination,
        })
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
        self.authorized(&p.workspace_id, Action::Read)?;
        let coordination = self.work_hint(&p.workspace_id, p.work_id.as_deref())?;
        let page = limit("limit", p.limit, DEFAULT_FIND_LIMIT, DEFAULT_FIND_LIMIT)?;
        let offset = p.offset.unwrap_or(0);
        let job = FindJob {
            glob: p.glob,
            include_ignored: p.include_ignored.unwrap_or(false),
            offset,
            page,
            walk: walk_caps(WALK_TIME_BUDGET_MS),
        };
        let found = self
            .runner
            .walk(ops::Find { ws: p.workspace_id.clone(), job }, cancel, progress)
            .await?;
        let end = offset.min(found.total) + found.paths.len() as u64;
        let truncated = end < found.total;
        Ok(FindResult {
            paths: found.paths,
            truncated,
            offset,
            next_offset: truncated.then_some(end),
            total: found.total,
            incomplete: found.incomplete,
            listing_version: found.listing_version,
            coordination,
        })
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
        self.authorized(&p.workspace_id, Action::Read)?;
        let page = limit("limit", p.limit, DEFAULT_GREP_LIMIT, MAX_GREP_LIMIT)?;
        let offset = p.offset.unwrap_or(0);
        let job = GrepJob {
            pattern: p.pattern,
            fixed_strings: p.fixed_strings.unwrap_or(false),
            case_insensitive: p.case_insensitive.unwrap_or(false),
            include_ignored: p.include_ignored.unwrap_or(false),
            glob: p.glob,
            offset,
            limit: page as usize,
            max_line_bytes: GREP_MAX_LINE_BYTES,
            max_files: GREP_MAX_FILES,
            max_search_line_bytes: GREP_MAX_SEARCH_LINE_BYTES,
            max_regex_bytes: GREP_MAX_REGEX_BYTES,
            walk: walk_caps(GREP_TIME_BUDGET_MS),
        };
        let out = self
            .runner
            .walk(ops::Grep { ws: p.workspace_id.clone(), job }, cancel, progress)
            .await?;
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
    }

    pub async fn version(&self, p: VersionParams) -> Result<VersionResult, GatewayError> {
        self.authorized(&p.workspace_id, Action::Read)?;
        if p.paths.len() > MAX_VERSION_PATHS {
            return Err(GatewayError::OutputLimit {
                what: "paths",
                value: p.paths.len() as u64,
                max: MAX_VERSION_PATHS as u64,
            });
        }
        let found = self
            .runner
            .run(ops::Versions { ws: p.workspace_id.clone(), paths: p.paths.clone() })
            .await?;
        let versions = p
            .paths
            .into_iter()
            .zip(found)
            .map(|(path, v)| match v {
                Ok(v) => PathVersion { path, version: Some(v), error: None },
                Err(e) => PathVersion { path, version: None, error: Some(fs_body(&e)) },
            })
            .collect();
        Ok(VersionResult { versions })
    }
}
