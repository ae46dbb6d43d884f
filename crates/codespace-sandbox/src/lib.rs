//! The Linux command sandbox: probes of what the host kernel can enforce, the policy a
//! command runs under (with its argv encoding for the reaper shim), and [`enter`], which
//! the shim calls in the command's child right before exec (namespaces, Landlock,
//! seccomp, no capabilities).
//!
//! Architecture Invariant: this crate knows nothing of MCP, the registry or the ledger.

mod enter;
mod policy;
mod probe;

pub use enter::{LANDLOCK_ABI, SandboxError, enter, seccomp_program};
pub use policy::{NetworkPolicy, SandboxPolicy};
pub use probe::{HostProbe, probe};
