//! Pure V4A patch engine: [`parse`] patch text, then [`plan`] it against a view of the tree.
//!
//! Parity target: OpenAI Codex's `apply_patch` in its line-ending preserving mode, as written
//! down in `shared/reference/v4a.md` and checked by `shared/conformance/v4a/`. On top of it,
//! the product's rules: Add/Move onto an existing path is refused, unified diffs are refused,
//! a path cannot be a file and a directory within one patch, and everything is checked before
//! the caller writes anything (all-or-nothing).
//!
//! [`bounded_diff`] shows a stale caller what changed in a file since the version it
//! expected.
//!
//! No I/O happens here. The caller answers `lookup` (validating each path: escapes, symlinks,
//! special files) and then writes the [`Plan`]'s changes, which are independent of each other.
//!
//! ```
//! use codespace_patch::{Entry, parse, plan};
//! use codespace_types::ChangeKind;
//!
//! let patch = parse("*** Begin Patch\n*** Update File: a.txt\n-old\n+new\n*** End Patch\n")?;
//! let plan = plan(&patch, |path| {
//!     Ok::<_, std::convert::Infallible>(match path {
//!         "a.txt" => Entry::File(b"old\r\n".to_vec()),
//!         _ => Entry::Absent,
//!     })
//! })?;
//! assert_eq!(plan.changes[0].kind, ChangeKind::Update);
//! assert_eq!(plan.changes[0].after.as_deref(), Some(&b"new\r\n"[..]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod diagnose;
mod diff;
mod error;
mod model;
mod parse;
mod path;
mod plan;
mod seek;
mod update;

pub use diagnose::{Nearest, TokenChange};
pub use diff::{BoundedDiff, MAX_DIFF_INPUT_BYTES, bounded_diff};
pub use error::{ErrorKind, Operation, PatchError, PlanError};
pub use model::{ChunkLine, Hunk, Patch, UpdateChunk};
pub use parse::parse;
pub use path::normalise as normalise_path;
pub use plan::{Entry, Plan, PlannedChange, plan};
