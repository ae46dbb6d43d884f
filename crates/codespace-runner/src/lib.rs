//! The execution layer below the gateway: file operations over a rooted workspace
//! (read windows, versions, glob listing, regex search) and the all-or-nothing patch
//! transaction. Process supervision will live here too.
//!
//! Architecture Invariant: every byte of a workspace file is reached through
//! `codespace_fs::Root`; this crate never opens a workspace path itself.

mod files;
mod glob;
mod patch;
mod search;

pub use codespace_fs::{FileKind, FsError, Root, Version, Walk, WalkLimits, Window, WorkspacePath};
pub use codespace_patch::{ChangeKind, ErrorKind as PatchErrorKind, PatchError, PlanError};
pub use files::{FindOutcome, find};
pub use glob::PathGlob;
pub use patch::{
    ApplyOutcome, Found, InterruptedFile, LookupError, MAX_PATCH_FILE_BYTES, PatchFs, PlanFailure,
    PlannedWrite, Undone, apply, prepare, put_back, roll_back, survey,
};
pub use search::{GrepOutcome, GrepRequest, LineMatch, grep};

/// Why a runner file operation failed.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error(transparent)]
    Fs(#[from] FsError),
    /// The glob does not parse.
    #[error("invalid glob {glob:?}: {reason}")]
    InvalidGlob { glob: String, reason: String },
    /// The regular expression does not parse (or is too large).
    #[error("invalid regular expression: {reason}")]
    InvalidRegex { reason: String },
}
