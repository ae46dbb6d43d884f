//! The one Landlock ruleset both confinements apply: the namespace sandbox's ([`crate::enter`],
//! inside the launcher's private root) and external isolation's ([`crate::external`], in the
//! pod's own filesystem). They differ only in how much the kernel must enforce and in what
//! exists around the command, which [`Mode`] names.

use std::path::{Path, PathBuf};

use codespace_types::NetworkPolicy;
use landlock::{
    Access as _, AccessFs, AccessNet, CompatLevel, Compatible as _, PathBeneath, PathFd, Ruleset,
    RulesetAttr as _, RulesetCreatedAttr as _, RulesetStatus, Scope,
};

use crate::enter::{DEVICES, LANDLOCK_ABI, SCRATCH, SandboxError, path_fd};

/// Where the rules are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Inside the launcher's new root: every access of ABI 7 must be enforced, the root may
    /// be listed (it holds only what the launcher put there), and the private scratch
    /// directories exist.
    Sandbox,
    /// In the pod's own filesystem: whatever ABI the kernel has (refused only when it
    /// enforces nothing), no listing of `/`, and a scratch directory the pod lacks grants
    /// nothing.
    External,
}

/// What a command may reach beside the system directories, the scratch space and the
/// terminal and null-like devices.
pub(crate) struct Rules<'a> {
    /// Readable and executable directories.
    pub(crate) read: &'a [PathBuf],
    /// Directories beneath which every access is allowed.
    pub(crate) write: &'a [PathBuf],
    /// `Restricted` handles TCP bind and connect with no port allowed.
    pub(crate) network: NetworkPolicy,
}

/// Restricts the calling process, and everything it starts from now on, to `rules`.
pub(crate) fn restrict_self(rules: &Rules<'_>, mode: Mode) -> Result<(), SandboxError> {
    let abi = LANDLOCK_ABI;
    let err = |e: landlock::RulesetError| SandboxError::other("landlock", e);
    let compat = match mode {
        Mode::Sandbox => CompatLevel::HardRequirement,
        Mode::External => CompatLevel::BestEffort,
    };
    let mut ruleset = Ruleset::default()
        .set_compatibility(compat)
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?;
    if rules.network == NetworkPolicy::Restricted {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp).map_err(err)?;
    }
    let mut created = ruleset
        .scope(Scope::AbstractUnixSocket | Scope::Signal)
        .map_err(err)?
        .create()
        .map_err(err)?;
    if mode == Mode::Sandbox {
        created = created
            .add_rule(PathBeneath::new(path_fd(Path::new("/"))?, AccessFs::ReadDir))
            .map_err(err)?;
    }
    let system = crate::launch::SYSTEM_DIRS.iter().chain(&["/proc", "/sys", "/dev"]);
    for dir in system.map(Path::new) {
        // A system directory the host lacks is not in the new root either.
        let Ok(fd) = PathFd::new(dir) else { continue };
        created = created.add_rule(PathBeneath::new(fd, AccessFs::from_read(abi))).map_err(err)?;
    }
    for root in rules.read {
        created = created
            .add_rule(PathBeneath::new(path_fd(root)?, AccessFs::from_read(abi)))
            .map_err(err)?;
    }
    for root in rules.write {
        created = created
            .add_rule(PathBeneath::new(path_fd(root)?, AccessFs::from_all(abi)))
            .map_err(err)?;
    }
    for dir in SCRATCH.map(Path::new) {
        let fd = match (PathFd::new(dir), mode) {
            (Ok(fd), _) => fd,
            // The launcher made the private ones; their absence is a fault.
            (Err(_), Mode::Sandbox) => path_fd(dir)?,
            // The pod's own; one it lacks grants nothing.
            (Err(_), Mode::External) => continue,
        };
        created = created.add_rule(PathBeneath::new(fd, AccessFs::from_all(abi))).map_err(err)?;
    }
    for dev in DEVICES {
        // A host without one of these devices simply grants nothing for it.
        let Ok(fd) = PathFd::new(dev) else { continue };
        let access = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev;
        created = created.add_rule(PathBeneath::new(fd, access)).map_err(err)?;
    }
    let status = created.restrict_self().map_err(err)?;
    let refused = match mode {
        Mode::Sandbox => {
            (status.ruleset != RulesetStatus::FullyEnforced).then_some("not fully enforced")
        }
        Mode::External => (status.ruleset == RulesetStatus::NotEnforced).then_some("not enforced"),
    };
    if let Some(what) = refused.or((!status.no_new_privs).then_some("no_new_privs not set")) {
        return Err(SandboxError::other("landlock", format!("{what}: {status:?}")));
    }
    Ok(())
}
