//! Parameters and results of the file tools: `read`, `find`, `grep`, `version`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Coordination, ErrorBody, Version, is_false, is_zero};

/// Arguments of `read`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ReadParams {
    /// Registered workspace id.
    pub workspace_id: String,
    /// Workspace-relative path of a regular file.
    pub path: String,
    /// Byte offset of the window (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Window size in bytes (default 1048576).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1_048_576))]
    pub limit: Option<u64>,
    /// Answer a whole PNG, JPEG, GIF or WebP file as an image content block (default false).
    #[serde(default)]
    pub image: Option<bool>,
    /// An open work of this workspace; the result then carries its `coordination` hint.
    #[serde(default)]
    pub work_id: Option<String>,
}

/// How `read`'s `content` holds the window's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum Encoding {
    /// The bytes themselves: valid UTF-8 with no NUL.
    #[serde(rename = "utf-8")]
    Utf8,
    /// Standard base64 (RFC 4648, padded) of the bytes: anything else.
    #[serde(rename = "base64")]
    Base64,
    /// `content` is empty: the bytes are the data of the result's image content block.
    #[serde(rename = "image")]
    Image,
    /// `content` is empty: the bytes are the base64 `blob` of the result's embedded resource
    /// block. A window that is not text, answered to a session that takes the text copy: the
    /// bytes then cross the wire once, not in both the text copy and `structuredContent`.
    #[serde(rename = "resource")]
    Resource,
}

/// What `read` recognised at the start of a file: an image's type and size.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct ImageInfo {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime_type: String,
    /// Width in pixels, when the header says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// Height in pixels, when the header says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
}

/// Result of `read`: one byte window of a file plus the version of the whole file.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ReadResult {
    /// The normalised workspace-relative path.
    pub path: String,
    /// The window's bytes, as `encoding` says: the text itself, base64, or empty when they
    /// are a content block's. Never lossy.
    pub content: String,
    /// `utf-8` (text with no NUL), `base64` (any other bytes), `resource` (any other bytes,
    /// to a session that takes the text copy: `content` is empty, the bytes are the embedded
    /// resource block's blob), or `image` (asked with `image: true`: `content` is empty, the
    /// bytes are the image content block's).
    pub encoding: Encoding,
    /// `sha256:<hex>` of the whole file, not only the window.
    pub version: Version,
    /// More bytes remain after this window.
    pub truncated: bool,
    /// Window start; omitted when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset: u64,
    /// File bytes in the window (not `content.len()`). A text window that would end inside
    /// a UTF-8 character ends before it instead (`next_offset` starts there).
    pub byte_count: u64,
    /// Size of the whole file in bytes.
    pub file_size: u64,
    /// Offset of the next window; present only when `truncated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// Set when the window starts at offset 0 and the file is a PNG, JPEG, GIF or WebP image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageInfo>,
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
    /// Glob: `*` and `?` within a path component, `**` across, `[...]`, `{a,b}`. Without a
    /// `/` it matches the file name at any depth (`*.txt` finds `src/a.txt`); a `/` anywhere
    /// (or a leading `./`) anchors it at the root. Omitted: every file.
    #[serde(default)]
    pub glob: Option<String>,
    /// Also list ignored files and `.git/` (default false).
    #[serde(default)]
    pub include_ignored: Option<bool>,
    /// Index into the sorted list (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Page size (default 10000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 10_000))]
    pub limit: Option<u64>,
    /// An open work of this workspace; the result then carries its `coordination` hint.
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
    /// Regular expression (Rust syntax), matched per line.
    #[schemars(length(min = 1))]
    pub pattern: String,
    /// `pattern` is literal text (default false).
    #[serde(default)]
    pub fixed_strings: Option<bool>,
    /// Only files matching this glob (`find`'s rules).
    #[serde(default)]
    pub glob: Option<String>,
    /// Match case-insensitively (default false).
    #[serde(default)]
    pub case_insensitive: Option<bool>,
    /// Also search ignored files and `.git/` (default false).
    #[serde(default)]
    pub include_ignored: Option<bool>,
    /// Index into the matches (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Page size (default 200).
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
    /// Workspace-relative paths.
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
