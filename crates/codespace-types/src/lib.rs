//! Domain values shared by several CodeSpace layers, each defined once: a file's
//! [`Version`], a planned file's [`ChangeKind`], an operation's [`EventName`], a
//! confirmation hold's [`ApprovalState`], [`HeldTool`] and [`Decision`], what the watcher
//! saw happen to a path ([`ObservedChange`]), the words of a work's instruction queue
//! ([`WorkState`], [`IntentState`], [`Delivery`], [`IntentKind`]), and the lexical
//! normalisation of a workspace-relative path ([`normalise_relative`]).
//!
//! The filesystem crate computes versions, the runner compares them, the ledger stores them
//! and the wire carries them; all of them use these types, so a value that is not a version
//! cannot travel between layers. Each type's text form (`as_str`, `Display`, serde) is the
//! one the ledger stores and the wire shows.
//!
//! Architecture Invariant: pure values; no I/O.

mod approval;
mod change;
mod event;
mod observed;
mod path;
mod version;
mod work;

pub use approval::{ApprovalState, Decision, HeldTool};
pub use change::ChangeKind;
pub use event::EventName;
pub use observed::ObservedChange;
pub use path::{LexicalRefusal, normalise_relative};
pub use version::{ParseVersionError, Version};
pub use work::{Delivery, IntentKind, IntentState, WorkState};
