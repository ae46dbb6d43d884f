//! External isolation: the operator declares that the pod or VM the server runs in is the
//! isolation boundary (a `sandbox: "external"` workspace), so commands run without the
//! launcher's namespaces and private root. [`confine`] still applies everything that holds
//! without them, to the reaper shim before it starts the command (so the command and every
//! process it starts inherit it, and a failure is reported like any spawn failure):
//! 1. `PR_SET_NO_NEW_PRIVS`.
//! 2. Landlock, when the policy asks for it (the server asks when its probe found
//!    Landlock), at whatever ABI the kernel has (best effort, fully enforced or not at
//!    all refused): read and execute on the system directories, `/proc`, `/sys`, `/dev` and
//!    the read roots, every access beneath the writable roots, `/tmp` and `/dev/shm`,
//!    read/write/ioctl on the terminal and null-like devices; nothing else of the
//!    filesystem (home directories, `/run`, `/var`: the server's state and its token). From
//!    ABI 4, TCP bind and connect under `Restricted`; from ABI 6, signals and abstract unix
//!    sockets scoped to the command's own processes (it cannot signal the server).
//! 3. The sandbox's seccomp programs, when the policy asks for them: no `ptrace`,
//!    `io_uring`, mounts, new namespaces, `bpf`, keyrings, module loading, `TIOCSTI`; under
//!    `Restricted` no socket of any family but `AF_UNIX`.
//! 4. Every capability dropped.
//!
//! What it cannot give without namespaces, and is reported as not enforced: a private
//! root (paths the Landlock rules allow are the pod's own), a process cap, a private
//! `/tmp`, and masking of paths beneath a visible root.

use std::path::PathBuf;

use codespace_types::NetworkPolicy;

use crate::enter::{SandboxError, drop_capabilities, seccomp_programs, set_no_new_privs};
use crate::landlock_rules::{self, Mode, Rules};

/// What a command of an externally isolated workspace runs under.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ExternalPolicy {
    /// Absolute directories readable and executable (the workspace under `read-only`, the
    /// registry's `extra_read_roots`), beside the system directories.
    pub read_roots: Vec<PathBuf>,
    /// Absolute directories writable (the workspace under `workspace-write`).
    pub writable_roots: Vec<PathBuf>,
    /// The network policy (TCP through Landlock from ABI 4, sockets through seccomp).
    pub network: NetworkPolicy,
    /// Apply Landlock; refused when the kernel then enforces nothing.
    pub landlock: bool,
    /// Install the seccomp programs.
    pub seccomp: bool,
}

/// Upper bound on each path list.
const MAX_PATHS: usize = 4096;

impl ExternalPolicy {
    /// Refuses a relative path and a path list longer than 4096: what a policy that arrived
    /// in a message must satisfy before anything is built from it.
    pub fn check(&self) -> Result<(), String> {
        for (what, list) in [("read", &self.read_roots), ("writable", &self.writable_roots)] {
            if list.len() > MAX_PATHS {
                return Err(format!("more than {MAX_PATHS} {what} paths"));
            }
            if let Some(path) = list.iter().find(|p| !p.is_absolute()) {
                return Err(format!("{what} path {} is not absolute", path.display()));
            }
        }
        Ok(())
    }
}

/// Restricts the calling process, and everything it starts from now on, to `policy`, for
/// good. Called by the reaper shim (single-threaded) right before it starts the command.
/// On error the process is partly restricted and must not start the command.
pub fn confine(policy: &ExternalPolicy) -> Result<(), SandboxError> {
    set_no_new_privs()?;
    if policy.landlock {
        let rules = Rules {
            read: &policy.read_roots,
            write: &policy.writable_roots,
            network: policy.network,
        };
        landlock_rules::restrict_self(&rules, Mode::External)?;
    }
    if policy.seccomp {
        for bpf in seccomp_programs(policy.network)? {
            seccompiler::apply_filter(&bpf).map_err(|e| SandboxError::other("seccomp", e))?;
        }
    }
    drop_capabilities()
}

#[cfg(test)]
mod tests;
