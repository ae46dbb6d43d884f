//! The execution layer below the gateway: file operations over a rooted workspace
//! (read windows, versions, glob listing, regex search). Process supervision and the patch
//! transaction will live here too.
//!
//! Architecture Invariant: every byte of a workspace file is reached through
//! `codespace_fs::Root`; this crate never opens a workspace path itself.

mod files;
mod glob;
mod search;

pub use codespace_fs::{FsError, Root, Version, Walk, WalkLimits, Window, WorkspacePath};
pub use files::{FindOutcome, find};
pub use glob::PathGlob;
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
