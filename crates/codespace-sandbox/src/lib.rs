//! The Linux command sandbox: probes of what the host kernel can enforce, the policy a
//! command runs under (with its argv encoding for the reaper shim), and [`launch()`], which
//! the shim calls in a fork of itself to run the command in its own namespaces and root
//! under Landlock, seccomp and no capabilities.
//!
//! Architecture Invariant: this crate knows nothing of MCP, the registry or the ledger.
#![expect(
    clippy::disallowed_methods,
    reason = "the launcher assembles a private root from host paths and writes its own /proc files; its tests read CODESPACE_REQUIRE_SANDBOX"
)]

mod enter;
mod launch;
mod policy;
mod probe;
mod sys;

pub use enter::{LANDLOCK_ABI, SandboxError, seccomp_programs};
pub use launch::launch;
pub use policy::{MAX_MAX_PIDS, MIN_MAX_PIDS, NetworkPolicy, SandboxPolicy};
pub use probe::{HostProbe, probe};
