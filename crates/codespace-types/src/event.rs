//! [`EventName`]: the steps of an operation's history.

words! {
    /// One step of an operation's recorded history.
    pub enum EventName {
        /// The operation id was minted.
        Minted = "minted",
        /// The plan was recorded, before the first write.
        Planned = "planned",
        /// The terminal result was recorded.
        Finished = "finished",
        /// The operation was classified at start after an interruption.
        Recovered = "recovered",
        /// Content the undo log kept was put back by an operator (`codespace operations
        /// restore`); the terminal status stays as it was.
        Restored = "restored",
    }
}
