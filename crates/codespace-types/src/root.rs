//! [`RootStatus`]: whether a workspace's registered path still names the directory opened
//! at start (the filesystem crate tells, the watcher and the gateway act on it, the wire
//! shows it).

words! {
    /// Whether a workspace's registered root path still names the directory opened at start.
    pub enum RootStatus {
        // The path resolves to the pinned directory.
        Current = "current",
        // The path names another file or nothing (the directory was moved, or replaced by a
        // symlink or another directory); operations stay on the pinned directory.
        Replaced = "replaced",
        // The pinned directory was deleted.
        Removed = "removed",
    }
}
