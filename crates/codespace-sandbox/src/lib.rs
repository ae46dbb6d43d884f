//! The Linux command sandbox: probes of what the host kernel can enforce, the policy a
//! command runs under, and [`launch()`], which
//! the shim calls in a fork of itself to run the command in its own namespaces and root
//! under Landlock, seccomp and no capabilities. It is also the home of what the reaper shim
//! shares with the launcher: the one `PATH` lookup ([`PathSearch`]), descriptor passing
//! ([`fdpass`]), the one encoding of their messages ([`envelope`]) and every raw kernel
//! call that rustix does not wrap ([`sys`]). Where the operator declares the pod or VM the
//! isolation boundary, [`confine`] applies what still holds without namespaces.
//!
//! Architecture Invariant: this crate knows nothing of MCP, the registry or the ledger.

mod enter;
pub mod envelope;
mod external;
pub mod fdpass;
mod landlock_rules;
mod launch;
mod path_search;
mod policy;
mod probe;
pub mod sys;

pub use enter::{LANDLOCK_ABI, SandboxError, seccomp_programs};
pub use external::{ExternalPolicy, confine};
pub use launch::{LaunchFailure, launch};
pub use path_search::{NotFound, PathSearch, TXTBSY_PAUSE, TXTBSY_RETRIES};
pub use policy::{MAX_MAX_PIDS, MIN_MAX_PIDS, SandboxPolicy};
pub use probe::{HostProbe, probe};
