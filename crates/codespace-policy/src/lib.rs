//! The operator's workspace registry (strictly validated JSON) and the policy decision
//! `allow()` that every tool call goes through.
//!
//! Architecture Invariant: no I/O. Paths are checked lexically here; the filesystem crate
//! re-checks them against the real tree.

mod commands;
mod file;
mod registry;

use codespace_types::{EnvironmentKind, Profile};

pub use commands::{DEFAULT_KILL_GRACE_MS, Granted, MAX_KILL_GRACE_MS, MAX_TIMEOUT_SECS, Timeouts};
pub use registry::{DEFAULT_WORKSPACE_ID, Registry, RegistryError, Workspace, check_nesting};

/// What a tool call wants to do in a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Read,
    Write,
    Exec,
}

/// Why `allow()` refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denial {
    /// The profile does not grant the action.
    Profile { profile: Profile, action: Action },
    /// The workspace's environment has no working backend in this server.
    BackendUnavailable { environment: String, kind: EnvironmentKind },
}

impl std::fmt::Display for Denial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Denial::Profile { profile, action } => {
                let what = match action {
                    Action::Read => "reading",
                    Action::Write => "writing",
                    Action::Exec => "running commands",
                };
                write!(f, "profile {} does not allow {what}", profile.as_str())
            }
            Denial::BackendUnavailable { environment, kind } => write!(
                f,
                "environment {environment:?} is of kind {}, whose backend is unavailable in this server; nothing runs on the host instead",
                kind.as_str()
            ),
        }
    }
}

/// The operator's decision for `action` in `ws`. Client claims play no part: nothing a caller
/// sends can change the answer.
pub fn allow(ws: &Workspace, action: Action) -> Result<(), Denial> {
    match ws.environment_kind {
        EnvironmentKind::Host => {}
        EnvironmentKind::LinuxContainer => {
            return Err(Denial::BackendUnavailable {
                environment: ws.environment.clone(),
                kind: ws.environment_kind,
            });
        }
    }
    let granted = match action {
        Action::Read => true,
        Action::Write => ws.profile.can_write(),
        Action::Exec => ws.profile.can_exec(),
    };
    if granted { Ok(()) } else { Err(Denial::Profile { profile: ws.profile, action }) }
}

#[cfg(test)]
mod tests;
