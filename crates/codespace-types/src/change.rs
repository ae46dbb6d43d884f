//! [`ChangeKind`] and [`PatchStatus`]: what a patch does to one file, and how a patch
//! operation ended.

words! {
    /// Kind of one file change, as planned, recorded and reported.
    pub enum ChangeKind {
        // Created (`before` is `None`).
        Add = "add",
        // Changed in place (both `before` and `after` are set; they may be equal).
        Update = "update",
        // Removed (`after` is `None`).
        Delete = "delete",
        // Written as the destination of a `*** Move to:` whose source is deleted by the
        // same patch (`before` is the source's version).
        Move = "move",
    }
}

words! {
    /// Outcome of a patch operation.
    // The ledger's row adds two unfinished states before one of these is set (`pending`,
    // `applying`: the store's `OpStatus`); the wire shows only an outcome.
    pub enum PatchStatus {
        /// Every file now holds exactly the planned bytes.
        Applied = "applied",
        /// `check_only`: the patch applies; nothing was written.
        Checked = "checked",
        /// Refused before the first write (or recovered as not applied); nothing changed.
        Rejected = "rejected",
        /// A write or the verification failed; every file was restored.
        FailedRolledBack = "failed_rolled_back",
        /// A write failed and some files could not be restored in place: see `unrestored`
        /// and `failure`; their old content is kept, see `preserved`.
        FailedPartial = "failed_partial",
        /// The outcome cannot be told from the disk; inspect the files.
        Unknown = "unknown",
    }
}
