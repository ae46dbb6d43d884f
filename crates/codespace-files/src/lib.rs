//! The file operations of CodeSpace over a rooted workspace: `find` (the bounded no-follow
//! walk filtered by a glob), the ignore rules that walk applies, `grep` (line search with a
//! stoppable matcher), and the all-or-nothing patch transaction with its recovery steps.
//! Each works on a `codespace_fs::Root` (or a walk of one) the caller holds: this crate
//! opens nothing by itself, so only a holder of a root (the runner) can use it on a disk.

mod files;
mod glob;
mod ignores;
mod patch;
mod search;

pub use files::{FindOutcome, find, find_in};
pub use glob::PathGlob;
pub use ignores::walk;
pub use patch::{
    ApplyOutcome, Changed, Found, InterruptedFile, LookupError, MAX_PATCH_FILE_BYTES, PatchFs,
    PlanFailure, PlannedWrite, RevertFile, RevertPlan, Undone, apply, prepare, prepare_revert,
    put_back, roll_back, survey,
};
pub use search::{GrepOutcome, GrepRequest, LineMatch, grep, grep_in};

use codespace_fs::FsError;

/// Why a file operation (a walk, a glob, a search) failed. A patch's own refusals are
/// [`PlanFailure`] (nothing written) and [`LookupError`] (what the planner could not read).
#[derive(Debug, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum FilesError {
    #[error(transparent)]
    Fs(#[from] FsError),
    /// The glob does not parse.
    #[error("invalid glob {glob:?}: {reason}")]
    InvalidGlob { glob: String, reason: String },
    /// The regular expression does not parse; the message shows the pattern as sent (after
    /// JSON decoding, so a doubled backslash shows as one) and names the literal search.
    #[error(
        "invalid regular expression {pattern:?}: {reason}\nTo search for this text literally, pass fixed_strings: true"
    )]
    InvalidRegex { pattern: String, reason: String },
    /// The regular expression parses, but its compiled form is over the size cap.
    #[error(
        "the compiled pattern is too large (over {limit} bytes): use fewer or smaller \
         repetitions, or ASCII classes such as (?-u:\\w) instead of Unicode ones"
    )]
    RegexTooLarge { limit: usize },
}
