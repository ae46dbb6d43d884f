//! The policy a command runs under, and the checks a decoded one must pass (it reaches the
//! reaper shim in a message, [`crate::envelope`]).

use std::path::PathBuf;

use codespace_types::NetworkPolicy;

/// The smallest [`SandboxPolicy::max_pids`]: the kernel refuses a namespace `pid_max`
/// below 301 (it keeps pids under 300 for the first processes after a wrap).
pub const MIN_MAX_PIDS: u32 = 301;
/// The largest [`SandboxPolicy::max_pids`] (the kernel's own `PID_MAX_LIMIT`).
pub const MAX_MAX_PIDS: u32 = 4_194_304;

/// What a sandboxed command sees and may do.
///
/// The command runs in a new root that holds only the system directories (`/usr`, `/bin`,
/// `/sbin`, `/lib*`, `/etc`, `/opt`; read-only), a read-only `/sys`, a fresh `/proc`, a
/// minimal `/dev`, a private `/tmp`, and the roots listed here at their own absolute paths.
/// Everything else of the host (home directories, `/run`, `/var`, the host's `/tmp`, the
/// server's state) is not there at all.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct SandboxPolicy {
    /// Absolute directories visible read-only (the workspace under `read-only`, the
    /// registry's `extra_read_roots`).
    pub read_roots: Vec<PathBuf>,
    /// Absolute directories visible and writable. Empty: nothing of the host is writable.
    pub writable_roots: Vec<PathBuf>,
    /// Absolute paths hidden even when they lie beneath a visible root (the server's state
    /// directory, ledger, token and registry files): a directory is covered by an empty
    /// read-only tmpfs, a file by `/dev/null`.
    pub masked: Vec<PathBuf>,
    /// The network policy.
    pub network: NetworkPolicy,
    /// The `pid_max` of the command's PID namespace: at most `max_pids - 1` tasks
    /// (processes and threads) exist in the sandbox at once. Between [`MIN_MAX_PIDS`] and
    /// [`MAX_MAX_PIDS`].
    pub max_pids: u32,
    /// The root (one of `read_roots` or `writable_roots`, canonical) that is the working
    /// directory the launcher inherits: it is bound from that directory, never by looking
    /// its path up again, so a root path replaced since the caller entered the directory
    /// through a descriptor is not followed. The command starts there. `None`: the roots
    /// are bound by path and the command starts in the inherited directory's path.
    pub workdir: Option<PathBuf>,
}

/// Upper bound on each path list.
const MAX_PATHS: usize = 4096;

impl SandboxPolicy {
    /// Refuses a relative or empty path, a path list longer than 4096, an out-of-range
    /// `max_pids`, and a workdir that is not one of the roots: what a policy that arrived
    /// in a message must satisfy before anything is built from it.
    pub fn check(&self) -> Result<(), String> {
        if !(MIN_MAX_PIDS..=MAX_MAX_PIDS).contains(&self.max_pids) {
            return Err(format!("max_pids must be between {MIN_MAX_PIDS} and {MAX_MAX_PIDS}"));
        }
        let workdir: Vec<PathBuf> = self.workdir.iter().cloned().collect();
        let lists = [
            ("read", &self.read_roots),
            ("writable", &self.writable_roots),
            ("masked", &self.masked),
            ("workdir", &workdir),
        ];
        for (what, list) in lists {
            if list.len() > MAX_PATHS {
                return Err(format!("more than {MAX_PATHS} {what} paths"));
            }
            if let Some(path) = list.iter().find(|p| !p.is_absolute()) {
                return Err(format!("{what} path {} is not absolute", path.display()));
            }
        }
        if let Some(w) = self
            .workdir
            .as_ref()
            .filter(|w| !self.read_roots.contains(w) && !self.writable_roots.contains(w))
        {
            return Err(format!("workdir {} is not one of the roots", w.display()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
