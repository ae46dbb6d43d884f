//! Restricting the command itself, last before its exec (the launcher has already built
//! its namespaces and root):
//! 1. `PR_SET_NO_NEW_PRIVS`.
//! 2. Landlock at ABI 7 as a hard requirement: directory listing of the new root, read
//!    and execute on the system directories, `/proc`, `/sys`, `/dev` and the read roots,
//!    every access beneath the writable roots, the private `/tmp` and `/dev/shm`,
//!    read/write/ioctl on the terminal devices and the null-like devices; under
//!    `Restricted` TCP bind and connect handled with no port allowed; abstract unix
//!    sockets and signals scoped to the sandbox.
//! 3. seccomp (architecture checked, other architectures killed): `EPERM` for
//!    `io_uring_*`, `ptrace`, `process_vm_readv/writev`, `bpf`, `perf_event_open`, the
//!    keyring calls, every mount call (old and new API), `pivot_root`, `kexec_*`, module
//!    loading, `setns`, `unshare` and `clone` with any namespace flag, and `ioctl(TIOCSTI)`;
//!    under `Restricted` also `socket`/`socketpair` of every family but `AF_UNIX`. A second
//!    filter answers `clone3` with `ENOSYS` (its flags live in memory a filter cannot read),
//!    so libc falls back to `clone`, whose flags it can.
//! 4. Every capability dropped (effective, permitted, inheritable, ambient), so the exec'd
//!    command holds none even as uid 0 inside its user namespace (`no_new_privs` keeps exec
//!    from granting any back).
//!
//! Known gap at Landlock ABI 7: UDP is only cut by the network namespace and the socket
//! filter. (`connect` to a pathname `AF_UNIX` socket is not mediated by Landlock before
//! ABI 9; the launcher's root is what keeps the host's sockets out of reach.)

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use codespace_types::NetworkPolicy;
use landlock::{ABI, PathFd};
use rustix::thread::{CapabilitySet, CapabilitySets};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use crate::landlock_rules::{self, Mode, Rules};
use crate::policy::SandboxPolicy;

/// The Landlock ABI the policy is written against (pinned, as the crate advises).
pub const LANDLOCK_ABI: ABI = ABI::V7;

/// Devices a command may open for reading, writing and ioctl (a missing one is skipped).
pub(crate) const DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];
/// Writable scratch space private to the sandbox.
pub(crate) const SCRATCH: [&str; 2] = ["/tmp", "/dev/shm"];

/// The canonical roots the launcher bound into the new root.
#[derive(Debug, Default)]
pub(crate) struct Visible {
    pub(crate) read: Vec<PathBuf>,
    pub(crate) write: Vec<PathBuf>,
}

/// Why the sandbox could not be entered. The command must not run.
#[derive(Debug)]
pub struct SandboxError {
    /// The step that failed (`no_new_privs`, `unshare`, `uid_map`, `landlock`, …).
    pub step: &'static str,
    /// What went wrong.
    pub message: String,
    /// The kernel's errno when there is one (0 otherwise).
    pub errno: i32,
}

impl SandboxError {
    pub(crate) fn io(step: &'static str, e: &io::Error) -> Self {
        Self { step, message: e.to_string(), errno: e.raw_os_error().unwrap_or(0) }
    }

    pub(crate) fn io_at(step: &'static str, path: &Path, e: &io::Error) -> Self {
        Self {
            step,
            message: format!("{}: {e}", path.display()),
            errno: e.raw_os_error().unwrap_or(0),
        }
    }

    pub(crate) fn other(step: &'static str, message: impl fmt::Display) -> Self {
        Self { step, message: message.to_string(), errno: 0 }
    }

    pub(crate) fn errno(step: &'static str, e: rustix::io::Errno) -> Self {
        Self::io(step, &e.into())
    }

    pub(crate) fn errno_at(step: &'static str, path: &Path, e: rustix::io::Errno) -> Self {
        Self::io_at(step, path, &e.into())
    }
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sandbox {}: {}", self.step, self.message)
    }
}

impl std::error::Error for SandboxError {}

/// Restricts the calling process to `policy`, for good: called by the launcher in the
/// command's process, inside its new root, right before `execve`. On error the process is
/// partly restricted and must not exec.
pub(crate) fn enter(
    policy: &SandboxPolicy,
    visible: &Visible,
    filters: &[BpfProgram],
) -> Result<(), SandboxError> {
    set_no_new_privs()?;
    let rules = Rules { read: &visible.read, write: &visible.write, network: policy.network };
    landlock_rules::restrict_self(&rules, Mode::Sandbox)?;
    for bpf in filters {
        seccompiler::apply_filter(bpf).map_err(|e| SandboxError::other("seccomp", e))?;
    }
    drop_capabilities()
}

pub(crate) fn set_no_new_privs() -> Result<(), SandboxError> {
    rustix::thread::set_no_new_privs(true).map_err(|e| SandboxError::errno("no_new_privs", e))
}

pub(crate) fn path_fd(path: &Path) -> Result<PathFd, SandboxError> {
    PathFd::new(path)
        .map_err(|e| SandboxError::other("landlock", format!("{}: {e}", path.display())))
}

/// Every namespace flag of `unshare` (and `clone3`).
const NAMESPACE_FLAGS: [libc::c_int; 8] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWTIME,
];

/// The seccomp programs for `network`, to be installed in order (exposed for tests and
/// for building them early): the main filter, then the one that hides `clone3`.
pub fn seccomp_programs(network: NetworkPolicy) -> Result<Vec<BpfProgram>, SandboxError> {
    Ok(vec![seccomp_program(network)?, clone3_program()?])
}

/// `clone3` answered with `ENOSYS`, everything else allowed (the main filter still applies:
/// the kernel takes the strictest answer of all filters).
fn clone3_program() -> Result<BpfProgram, SandboxError> {
    let err = |e: seccompiler::BackendError| SandboxError::other("seccomp", e);
    let rules = BTreeMap::from([(libc::SYS_clone3, Vec::new())]);
    let arch = std::env::consts::ARCH.try_into().map_err(err)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(err)?;
    filter.try_into().map_err(err)
}

/// The main seccomp program for `network`.
fn seccomp_program(network: NetworkPolicy) -> Result<BpfProgram, SandboxError> {
    let err = |e: seccompiler::BackendError| SandboxError::other("seccomp", e);
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_setns,
    ] {
        // An empty rule list matches every call of the syscall.
        rules.insert(nr, Vec::new());
    }
    let cond = |arg: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(err)
    };
    let tiocsti = SeccompRule::new(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCSTI)?]).map_err(err)?;
    rules.insert(libc::SYS_ioctl, vec![tiocsti]);
    rules.extend(namespace_rules()?);
    if network == NetworkPolicy::Restricted {
        for nr in [libc::SYS_socket, libc::SYS_socketpair] {
            let not_unix = cond(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?;
            rules.insert(nr, vec![SeccompRule::new(vec![not_unix]).map_err(err)?]);
        }
    }
    let arch = std::env::consts::ARCH.try_into().map_err(err)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(err)?;
    filter.try_into().map_err(err)
}

/// `unshare` and `clone` with any namespace flag: one rule per flag, since a filter's
/// rules are alternatives. For `clone` the low byte is the exit signal, where
/// CLONE_NEWTIME's bit would sit, so that flag is left out there.
fn namespace_rules() -> Result<[(i64, Vec<SeccompRule>); 2], SandboxError> {
    let flag_rules = |flags: &[libc::c_int]| -> Result<Vec<SeccompRule>, SandboxError> {
        let err = |e: seccompiler::BackendError| SandboxError::other("seccomp", e);
        flags
            .iter()
            .map(|f| {
                let f = *f as u64;
                let set =
                    SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(f), f)
                        .map_err(err)?;
                SeccompRule::new(vec![set]).map_err(err)
            })
            .collect()
    };
    let clone_flags: Vec<libc::c_int> =
        NAMESPACE_FLAGS.into_iter().filter(|f| *f != libc::CLONE_NEWTIME).collect();
    Ok([
        (libc::SYS_unshare, flag_rules(&NAMESPACE_FLAGS)?),
        (libc::SYS_clone, flag_rules(&clone_flags)?),
    ])
}

/// `capset` with every set empty, and the ambient set cleared.
pub(crate) fn drop_capabilities() -> Result<(), SandboxError> {
    rustix::thread::clear_ambient_capability_set()
        .map_err(|e| SandboxError::errno("ambient capabilities", e))?;
    let none = CapabilitySets {
        effective: CapabilitySet::empty(),
        permitted: CapabilitySet::empty(),
        inheritable: CapabilitySet::empty(),
    };
    rustix::thread::set_capabilities(None, none).map_err(|e| SandboxError::errno("capset", e))
}

#[cfg(test)]
mod tests;
