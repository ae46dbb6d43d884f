//! The Linux command sandbox. This version holds the probes of what the host kernel can
//! enforce; the launcher (namespaces, Landlock, seccomp, then exec) builds on them.
//!
//! Architecture Invariant: this crate knows nothing of MCP, the registry or the ledger.

mod probe;

pub use probe::{HostProbe, probe};
