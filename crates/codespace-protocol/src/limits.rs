//! Defaults and caps that are part of the contract (advertised by `workspace_info`).

/// Default and maximum `read` window, in bytes.
pub const DEFAULT_READ_LIMIT: u32 = 1024 * 1024;
/// Default and maximum `find` page, in paths.
pub const DEFAULT_FIND_LIMIT: u32 = 10_000;
/// Default `grep` page, in matches.
pub const DEFAULT_GREP_LIMIT: u32 = 200;
/// Maximum `grep` page, in matches.
pub const MAX_GREP_LIMIT: u32 = 2_000;
/// Longest line text a `grep` match carries, in bytes (cut on a character boundary).
pub const GREP_MAX_LINE_BYTES: usize = 512;
/// Wall-clock budget of one `grep` call, in milliseconds; past it the result is `incomplete`.
pub const GREP_TIME_BUDGET_MS: u64 = 10_000;
/// Longest line `grep` searches, in bytes: a file with a longer line is skipped and counted
/// in `long_line_files_skipped`. It bounds the searcher's buffer (memory) and, with the
/// pattern cap, the regex work between two deadline checks.
pub const GREP_MAX_SEARCH_LINE_BYTES: usize = 1024 * 1024;
/// Largest compiled `grep` pattern, in bytes; a larger one is refused with INVALID_PATTERN.
/// Ordinary patterns compile to a few KiB; a big counted repetition of a Unicode class
/// (`\w{20}`) reaches it.
pub const GREP_MAX_REGEX_BYTES: usize = 1024 * 1024;
/// Most files one `grep` call searches; past it the result is `incomplete`.
pub const GREP_MAX_FILES: usize = 50_000;
/// Most paths one `version` call takes.
pub const MAX_VERSION_PATHS: usize = 1_000;
/// Walk caps shared by `find` and `grep`.
pub const MAX_WALK_DEPTH: usize = 64;
pub const MAX_WALK_DIRECTORIES: usize = 10_000;
pub const MAX_WALK_ENTRIES: usize = 50_000;
/// Wall-clock budget of one walk, in milliseconds; past it the result is `incomplete`.
pub const WALK_TIME_BUDGET_MS: u64 = 10_000;
/// Default and maximum `read_process` reply, in bytes.
pub const DEFAULT_READ_PROCESS_BYTES: u32 = 64 * 1024;
pub const MAX_READ_PROCESS_BYTES: u32 = 256 * 1024;
/// Longest `wait_ms` of every waiting call (`exec_command`, `read_process`,
/// `process_status`, and any other tool that takes one), in milliseconds; a longer wait is cut to it (the
/// call then returns what there is, as after any wait). It stays below the 60 s after which
/// common MCP clients give up on a request, so a wait never outlives its client.
pub const MAX_WAIT_MS: u64 = 55_000;
