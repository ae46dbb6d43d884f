//! The registry's per-workspace command settings (`env`, `timeout_secs`,
//! `max_timeout_secs`, `kill_grace_ms`): their checks at load, and the effective time
//! limits they give.

use std::collections::BTreeMap;

use crate::registry::{RegistryError, Workspace};

/// The longest time limit the registry accepts, in seconds (one day).
pub const MAX_TIMEOUT_SECS: u64 = 86_400;
/// The kill grace of a workspace that sets none, in milliseconds.
pub const DEFAULT_KILL_GRACE_MS: u64 = 2_000;
/// The longest kill grace the registry accepts, in milliseconds (a minute).
pub const MAX_KILL_GRACE_MS: u64 = 60_000;
/// Most variables one workspace's `env` may hold.
const MAX_ENV_VARS: usize = 256;
/// The prefix of the server's own variables (its HTTP token among them): never passed on.
const SERVER_PREFIX: &str = "CODESPACE_";

/// The time limits of one workspace's commands, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// The limit of a command that does not ask for one.
    pub default_secs: u64,
    /// The largest limit a command may ask for.
    pub max_secs: u64,
}

/// A requested limit cut to the ceiling: the limit that applies, and whether it was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Granted {
    pub secs: u64,
    pub clamped: bool,
}

impl Timeouts {
    /// The limit for a command that asks for `requested` (none: the default; zero counts as
    /// none), never above `max_secs`.
    pub fn grant(self, requested: Option<u64>) -> Granted {
        match requested.filter(|r| *r > 0) {
            None => Granted { secs: self.default_secs, clamped: false },
            Some(r) if r > self.max_secs => Granted { secs: self.max_secs, clamped: true },
            Some(r) => Granted { secs: r, clamped: false },
        }
    }
}

impl Workspace {
    /// The workspace's limits given the server's default (`CODESPACE_PROCESS_TIMEOUT_SECS`):
    /// `timeout_secs` or that default, and `max_timeout_secs` or the default limit. When
    /// only `max_timeout_secs` is set and it is below the server's default, the default
    /// limit is cut to it too, so the default never exceeds the ceiling.
    pub fn timeouts(&self, server_default_secs: u64) -> Timeouts {
        let default_secs = self.timeout_secs.unwrap_or(server_default_secs);
        let max_secs = self.max_timeout_secs.unwrap_or(default_secs);
        Timeouts { default_secs: default_secs.min(max_secs), max_secs }
    }
}

/// Checks `env`, `timeout_secs` and `max_timeout_secs` of the workspace at `key`.
pub(crate) fn check(
    key: &str,
    env: &BTreeMap<String, String>,
    timeout_secs: Option<u64>,
    max_timeout_secs: Option<u64>,
) -> Result<(), RegistryError> {
    let err = |k: String, reason: String| Err(RegistryError { key: k, reason });
    if env.len() > MAX_ENV_VARS {
        return err(format!("{key}.env"), format!("at most {MAX_ENV_VARS} variables"));
    }
    for (name, value) in env {
        let k = format!("{key}.env.{name}");
        if let Some(reason) = bad_name(name) {
            return err(k, reason);
        }
        if value.contains('\0') {
            return err(k, "the value contains NUL".to_owned());
        }
    }
    for (field, value) in [("timeout_secs", timeout_secs), ("max_timeout_secs", max_timeout_secs)] {
        if let Some(v) = value.filter(|v| !(1..=MAX_TIMEOUT_SECS).contains(v)) {
            return err(
                format!("{key}.{field}"),
                format!("{v} is not between 1 and {MAX_TIMEOUT_SECS} seconds"),
            );
        }
    }
    if let (Some(t), Some(m)) = (timeout_secs, max_timeout_secs)
        && m < t
    {
        return err(
            format!("{key}.max_timeout_secs"),
            format!("{m} is below timeout_secs ({t}); the ceiling cannot be under the default"),
        );
    }
    Ok(())
}

/// Checks `kill_grace_ms` of the workspace at `key`: 0 (SIGKILL at once) to a minute.
pub(crate) fn check_grace(key: &str, kill_grace_ms: Option<u64>) -> Result<(), RegistryError> {
    match kill_grace_ms.filter(|ms| *ms > MAX_KILL_GRACE_MS) {
        Some(ms) => Err(RegistryError {
            key: format!("{key}.kill_grace_ms"),
            reason: format!("{ms} is not between 0 and {MAX_KILL_GRACE_MS} milliseconds"),
        }),
        None => Ok(()),
    }
}

/// Why `name` cannot be a variable of the command's environment, if it cannot.
fn bad_name(name: &str) -> Option<String> {
    let mut bytes = name.bytes();
    let valid = bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !valid {
        return Some(
            "a variable name is a letter or '_' followed by letters, digits or '_'".into(),
        );
    }
    if name.to_ascii_uppercase().starts_with(SERVER_PREFIX) {
        return Some(format!(
            "{SERVER_PREFIX}* variables are the server's own settings (its HTTP token among them) and are never passed to commands"
        ));
    }
    None
}
