//! The execution layer below the gateway: file operations over a rooted workspace
//! (read windows, versions, glob listing, regex search) and the all-or-nothing patch
//! transaction. Process supervision will live here too.
//!
//! Architecture Invariant: every byte of a workspace file is reached through
//! `codespace_fs::Root`; this crate never opens a workspace path itself.

mod files;
mod glob;
mod ignores;
mod patch;
mod search;

pub use codespace_fs::{
    Cancel, FileKind, FsError, Progress, Root, RootStatus, Version, Walk, WalkLimits, Window,
    WorkspacePath,
};
pub use codespace_patch::{
    ChangeKind, ChunkLine, Hunk, Patch, PatchError, PlanError, parse as parse_patch,
};
pub use files::{FindOutcome, find, find_in};
pub use glob::PathGlob;
pub use ignores::walk;
pub use patch::{
    ApplyOutcome, Found, InterruptedFile, LookupError, MAX_PATCH_FILE_BYTES, PatchFs, PlanFailure,
    PlannedWrite, Undone, apply, prepare, put_back, roll_back, survey,
};
pub use search::{GrepOutcome, GrepRequest, LineMatch, grep, grep_in};

/// Why a runner file operation failed.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error(transparent)]
    Fs(#[from] FsError),
    /// The glob does not parse.
    #[error("invalid glob {glob:?}: {reason}")]
    InvalidGlob { glob: String, reason: String },
    /// The regular expression does not parse.
    #[error("invalid regular expression: {reason}")]
    InvalidRegex { reason: String },
    /// The regular expression parses, but its compiled form is over the size cap.
    #[error(
        "the compiled pattern is too large (over {limit} bytes): use fewer or smaller \
         repetitions, or ASCII classes such as (?-u:\\w) instead of Unicode ones"
    )]
    RegexTooLarge { limit: usize },
}
