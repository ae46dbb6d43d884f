//! Parameters and results of the file tools: `read`, `find`, `grep`, `version`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Coordination, ErrorBody, Version, is_false, is_zero};

/// Arguments of `read`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ReadParams {
    /// Registered workspace id.
    pub workspace_id: String,
    /// Workspace-relative path of a regular file ('/'-separated).
    pub path: String,
    /// Byte offset of the window (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Window size in bytes, 1..=1048576 (default 1048576).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1_048_576))]
    pub limit: Option<u64>,
    /// An open work this call belongs to: checked (WORK_NOT_FOUND when it is not one of
    /// this workspace), and the result then carries its `coordination` hint.
    #[serde(default)]
    pub work_id: Option<String>,
}

/// Result of `read`: one byte window of a file plus the version of the whole file.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ReadResult {
    /// The normalised workspace-relative path.
    pub path: String,
    /// The window's bytes decoded as UTF-8 (invalid sequences replaced; see `content_lossy`).
    pub content: String,
    /// `sha256:<hex>` of the whole file, not only the window.
    pub version: Version,
    /// More bytes remain after this window.
    pub truncated: bool,
    /// Window start; omitted when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset: u64,
    /// File bytes in the window (not `content.len()`).
    pub byte_count: u64,
    /// Size of the whole file in bytes.
    pub file_size: u64,
    /// Offset of the next window; present only when `truncated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// Replacement characters were produced: do not use `content` to reconstruct the bytes.
    pub content_lossy: bool,
    /// Set when the call belongs to an open work (its `work_id`, or the workspace's only
    /// open work): whether the person queued instructions since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination: Option<Coordination>,
}

/// Arguments of `find`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct FindParams {
    /// Registered workspace id.
    pub workspace_id: String,
    /// Glob over workspace-relative paths (`*`, `**`, `?`, `[...]`, `{a,b}`); `*` does not cross
    /// `/`. Without a `/` it matches the file name at any depth (`*.txt` finds `src/a.txt`); a
    /// leading `/` or `./` anchors it at the root, as does a `/` anywhere else. Omitted: every
    /// regular file.
    #[serde(default)]
    pub glob: Option<String>,
    /// List files that `.gitignore` (in any directory), `.ignore` or `.git/info/exclude` ignore,
    /// and those beneath `.git/` (default false: they are left out; the global git excludes
    /// file is never read).
    #[serde(default)]
    pub include_ignored: Option<bool>,
    /// Index into the sorted matching list (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Page size, 1..=10000 (default 10000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 10_000))]
    pub limit: Option<u64>,
    /// An open work this call belongs to: checked (WORK_NOT_FOUND when it is not one of
    /// this workspace), and the result then carries its `coordination` hint.
    #[serde(default)]
    pub work_id: Option<String>,
}

/// Result of `find`: one page of the sorted list of matching regular files.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct FindResult {
    /// Workspace-relative, '/'-separated, sorted by bytes; regular files only.
    pub paths: Vec<String>,
    /// More matching paths exist after this page.
    pub truncated: bool,
    /// Page start; omitted when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset: u64,
    /// Offset of the next page; present only when `truncated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// Total number of matching paths seen by the walk.
    pub total: u64,
    /// The walk hit a cap (depth, directories, entries or time): the set may be incomplete.
    pub incomplete: bool,
    /// Opaque id of the observed sorted set; if it changes between pages, restart at offset 0.
    pub listing_version: String,
    /// Set when the call belongs to an open work (its `work_id`, or the workspace's only
    /// open work): whether the person queued instructions since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination: Option<Coordination>,
}

/// Arguments of `grep`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct GrepParams {
    /// Registered workspace id.
    pub workspace_id: String,
    /// Regular expression (Rust regex syntax), matched per line; literal text with
    /// `fixed_strings`.
    #[schemars(length(min = 1))]
    pub pattern: String,
    /// `pattern` is literal text, not a regular expression (default false).
    #[serde(default)]
    pub fixed_strings: Option<bool>,
    /// Only search files whose workspace-relative path matches this glob (same rules as
    /// `find`: without a `/` it matches the file name at any depth).
    #[serde(default)]
    pub glob: Option<String>,
    /// Match case-insensitively (default false).
    #[serde(default)]
    pub case_insensitive: Option<bool>,
    /// Search files that `.gitignore` (in any directory), `.ignore` or `.git/info/exclude`
    /// ignore, and those beneath `.git/` (default false: they are left out; the global git
    /// excludes file is never read).
    #[serde(default)]
    pub include_ignored: Option<bool>,
    /// Index into the ordered list of matches (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Page size, 1..=2000 (default 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 2_000))]
    pub limit: Option<u64>,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct GrepMatch {
    /// Workspace-relative path.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// The line without its terminator, lossy UTF-8, cut at 512 bytes.
    pub text: String,
    /// The line was longer than `text` shows.
    #[serde(default, skip_serializing_if = "is_false")]
    pub text_truncated: bool,
}

/// Result of `grep`: one page of matches, ordered by path then line.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct GrepResult {
    /// The matching lines of this page, by path then line number.
    pub matches: Vec<GrepMatch>,
    /// More matches exist after this page.
    pub truncated: bool,
    /// Page start; omitted when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset: u64,
    /// Offset of the next page; present only when `truncated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// Files searched for this page.
    pub files_searched: u64,
    /// Files skipped because they look binary (contain NUL).
    pub binary_files_skipped: u64,
    /// Files skipped because a line is longer than 1 MiB (nothing of such a file is matched).
    #[serde(default)]
    pub long_line_files_skipped: u64,
    /// The walk or the search hit a cap (entries, files or time) or was cancelled: matches
    /// may be missing.
    pub incomplete: bool,
}

/// Arguments of `version`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct VersionParams {
    /// Registered workspace id.
    pub workspace_id: String,
    /// Workspace-relative paths, at most 1000.
    #[schemars(length(min = 1, max = 1_000))]
    pub paths: Vec<String>,
}

/// The version of one path, or why it has none.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct PathVersion {
    /// The path as given.
    pub path: String,
    /// `sha256:<hex>` of the whole file, or `absent` when it does not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Version>,
    /// Set instead of `version` when the path is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

/// Result of `version`, one entry per requested path in request order.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct VersionResult {
    /// One entry per requested path, in request order.
    pub versions: Vec<PathVersion>,
}
