//! The workspace watcher's words: its [`WatchState`], and what it saw happen to one path
//! ([`ObservedChange`]).

words! {
    /// The workspace watcher's state.
    pub enum WatchState {
        /// No file tool has used the workspace yet; the watcher starts on first use.
        NotStarted = "not_started",
        /// Being set up; answers come from the disk meanwhile.
        Starting = "starting",
        /// Running: the caches answer, every hit re-checked.
        Running = "running",
        /// Could not start or stopped (`reason`); caches are off and every answer comes from
        /// the disk. A new start is tried later.
        Failed = "failed",
    }
}

words! {
    /// Kind of one observed change to a path, coalesced over a span of events. An invalidation
    /// hint, not a history: a path created and then edited is `created`, one removed and then
    /// created again is `modified`.
    pub enum ObservedChange {
        /// The path did not exist before (as far as the watcher saw) and does now.
        Created = "created",
        /// The path's content or metadata changed, or it was replaced.
        Modified = "modified",
        /// The path no longer exists (removed, or renamed away).
        Removed = "removed",
    }
}

impl ObservedChange {
    /// The kind that sums `self` followed by `later` on one path.
    pub fn then(self, later: ObservedChange) -> ObservedChange {
        match (self, later) {
            (ObservedChange::Created, ObservedChange::Created | ObservedChange::Modified) => {
                ObservedChange::Created
            }
            (ObservedChange::Removed, ObservedChange::Created)
            | (ObservedChange::Modified, ObservedChange::Created | ObservedChange::Modified)
            | (ObservedChange::Removed, ObservedChange::Modified) => ObservedChange::Modified,
            (_, ObservedChange::Removed) => ObservedChange::Removed,
        }
    }
}

#[cfg(test)]
mod tests;
