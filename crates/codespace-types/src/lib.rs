//! Domain values shared by several CodeSpace layers, each defined once: a file's
//! [`Version`], the lexical normalisation of a workspace-relative path
//! ([`normalise_relative`]), and the project's shared words, each declared with one macro
//! (`words!`, which gives its wire text, `Display`/`FromStr`, serde and `JsonSchema`):
//!
//! - the operator's settings: [`Profile`], [`Approvals`], [`Approvers`], [`EnvironmentKind`],
//!   [`SandboxSetting`], [`NetworkPolicy`];
//! - a patch: [`ChangeKind`], [`PatchStatus`], its history's [`EventName`], and a refusal's
//!   [`LineDifference`];
//! - a command: [`ProcessState`], [`Termination`] (and the [`SignalInfo`] value);
//! - a workspace's root and its watcher: [`RootStatus`], [`WatchState`], [`ObservedChange`];
//! - a confirmation hold (the wire's "approval"): [`ApprovalState`], [`HeldTool`],
//!   [`Decision`];
//! - a work and its instruction queue: [`WorkState`], [`IntentState`], [`Delivery`],
//!   [`IntentKind`], [`IntentAuthor`].
//!
//! Beside them: [`ServerKey`], the server's key and the seals it makes (HMAC-SHA256), and
//! [`visible`], text a person reads with every control and format character written out.
//!
//! The filesystem crate computes versions, the runner compares them, the ledger stores them
//! and the wire carries them; all of them use these types, so no layer keeps a twin and
//! nothing copies one enum into another. Each word's text form (`as_str`, `Display`, serde)
//! is the one the registry, the ledger and the wire use.
//!
//! Architecture Invariant: pure values; no I/O.

#[macro_use]
mod words;

mod approval;
mod change;
mod event;
mod key;
mod observed;
mod path;
mod process;
mod refusal;
mod root;
mod setting;
mod task;
mod version;
pub mod visible;
mod work;

pub use approval::{ApprovalState, Decision, HeldTool};
pub use change::{ChangeKind, PatchStatus};
pub use event::EventName;
pub use key::{KEY_BYTES, ServerKey};
pub use observed::{ObservedChange, WatchState};
pub use path::{LexicalRefusal, normalise_relative};
pub use process::{ProcessState, SignalInfo, Termination};
pub use refusal::LineDifference;
pub use root::RootStatus;
pub use setting::{Approvals, Approvers, EnvironmentKind, NetworkPolicy, Profile, SandboxSetting};
pub use task::TaskState;
pub use version::{ParseVersionError, Version};
pub use words::UnknownWord;
pub use work::{Delivery, IntentAuthor, IntentKind, IntentState, WorkState};

#[cfg(test)]
mod tests;
