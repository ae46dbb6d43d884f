//! The host's inotify limits (`/proc/sys/fs/inotify`), as `doctor` reports them: what bounds
//! the one watcher that serves every workspace.

use std::path::Path;

/// The host's inotify limits for this user; a value the host does not expose is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InotifyLimits {
    /// Instances per user: the watcher uses one, however many workspaces it serves.
    pub max_user_instances: Option<u64>,
    /// Watches per user: one per watched directory, across every workspace. A workspace
    /// whose directories do not fit answers uncached and says why.
    pub max_user_watches: Option<u64>,
    /// Records the one instance's queue holds: past it the queue overflows and every
    /// workspace resyncs.
    pub max_queued_events: Option<u64>,
}

impl InotifyLimits {
    /// Reads the limits in force now.
    pub fn of_host() -> InotifyLimits {
        InotifyLimits::at(Path::new("/proc/sys/fs/inotify"))
    }

    /// The limits as the files in `dir` say (`/proc/sys/fs/inotify` on a host).
    pub fn at(dir: &Path) -> InotifyLimits {
        let read = |name: &str| {
            #[expect(
                clippy::disallowed_methods,
                reason = "a kernel setting under /proc, not a workspace file"
            )]
            let text = std::fs::read_to_string(dir.join(name)).ok()?;
            text.trim().parse::<u64>().ok()
        };
        InotifyLimits {
            max_user_instances: read("max_user_instances"),
            max_user_watches: read("max_user_watches"),
            max_queued_events: read("max_queued_events"),
        }
    }
}

#[cfg(test)]
#[expect(clippy::disallowed_methods, reason = "tests build their fixtures on the host filesystem")]
mod tests;
