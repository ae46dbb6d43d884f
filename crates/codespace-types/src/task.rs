//! The words of a durable task (the MCP Tasks extension): where it is in its life.

words! {
    /// Where a task is in its life: `working` (or `input_required`) until it settles in
    /// one of `completed`, `failed`, `cancelled`, which never change again.
    pub enum TaskState {
        /// It runs.
        Working = "working",
        /// It waits for the client's input.
        InputRequired = "input_required",
        /// The tool ran to its end; its result (which may be a tool error) is kept.
        Completed = "completed",
        /// It could not run to its end (a protocol-level failure, or its server exited).
        Failed = "failed",
        /// The client cancelled it before it settled.
        Cancelled = "cancelled",
    }
}

impl TaskState {
    /// Settled: the state never changes again.
    pub const fn is_terminal(self) -> bool {
        matches!(self, TaskState::Completed | TaskState::Failed | TaskState::Cancelled)
    }
}
