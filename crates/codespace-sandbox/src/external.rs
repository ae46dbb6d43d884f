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

use std::path::{Path, PathBuf};

use codespace_types::NetworkPolicy;
use landlock::{
    ABI, Access as _, AccessFs, AccessNet, CompatLevel, Compatible as _, PathBeneath, PathFd,
    Ruleset, RulesetAttr as _, RulesetCreatedAttr as _, RulesetStatus, Scope,
};

use crate::enter::{
    DEVICES, SCRATCH, SandboxError, drop_capabilities, path_fd, seccomp_programs, set_no_new_privs,
};

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
        landlock(policy)?;
    }
    if policy.seccomp {
        for bpf in seccomp_programs(policy.network)? {
            seccompiler::apply_filter(&bpf).map_err(|e| SandboxError::other("seccomp", e))?;
        }
    }
    drop_capabilities()
}

fn landlock(policy: &ExternalPolicy) -> Result<(), SandboxError> {
    // The newest ABI this build knows; the kernel's own decides what is enforced.
    let abi = ABI::V7;
    let err = |e: landlock::RulesetError| SandboxError::other("landlock", e);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?;
    if policy.network == NetworkPolicy::Restricted {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp).map_err(err)?;
    }
    let mut created = ruleset
        .scope(Scope::AbstractUnixSocket | Scope::Signal)
        .map_err(err)?
        .create()
        .map_err(err)?;
    let system = crate::launch::SYSTEM_DIRS.iter().chain(&["/proc", "/sys", "/dev"]);
    for dir in system.map(Path::new) {
        let Ok(fd) = PathFd::new(dir) else { continue };
        created = created.add_rule(PathBeneath::new(fd, AccessFs::from_read(abi))).map_err(err)?;
    }
    for root in &policy.read_roots {
        created = created
            .add_rule(PathBeneath::new(path_fd(root)?, AccessFs::from_read(abi)))
            .map_err(err)?;
    }
    for root in &policy.writable_roots {
        created = created
            .add_rule(PathBeneath::new(path_fd(root)?, AccessFs::from_all(abi)))
            .map_err(err)?;
    }
    for dir in SCRATCH {
        // The pod's own /tmp and /dev/shm; one it lacks grants nothing.
        let Ok(fd) = PathFd::new(dir) else { continue };
        created = created.add_rule(PathBeneath::new(fd, AccessFs::from_all(abi))).map_err(err)?;
    }
    for dev in DEVICES {
        let Ok(fd) = PathFd::new(dev) else { continue };
        created = created
            .add_rule(PathBeneath::new(
                fd,
                AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev,
            ))
            .map_err(err)?;
    }
    let status = created.restrict_self().map_err(err)?;
    if status.ruleset == RulesetStatus::NotEnforced || !status.no_new_privs {
        return Err(SandboxError::other("landlock", format!("not enforced: {status:?}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
