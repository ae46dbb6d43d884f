//! The words of a work and its queue of user instructions: [`WorkState`], [`IntentState`],
//! [`Delivery`] and [`IntentKind`]. Each text form is the one the ledger stores and the wire
//! shows; parsing accepts exactly those texts.

words! {
    /// The state of a work: open (`active`, `closing`) or ended (`closed`, `cancelled`).
    pub enum WorkState {
        /// Open; only `next_checkpoint` instructions are claimable.
        Active = "active",
        /// `work_finish` found `after_current_work` instructions: they are claimable now.
        Closing = "closing",
        /// Finished: no pending instruction was left.
        Closed = "closed",
        /// Ended without finishing (reserved: no call sets it yet).
        Cancelled = "cancelled",
    }
}

impl WorkState {
    /// `active` or `closing`: the agent may still claim from it.
    pub fn is_open(self) -> bool {
        match self {
            WorkState::Active | WorkState::Closing => true,
            WorkState::Closed | WorkState::Cancelled => false,
        }
    }
}

words! {
    /// The state of one user instruction.
    pub enum IntentState {
        /// Written by the person, invisible to the agent until queued.
        Draft = "draft",
        /// Waiting for the agent.
        Queued = "queued",
        /// Taken by the agent; its content is frozen.
        Claimed = "claimed",
        /// The agent did it.
        Done = "done",
        /// The agent could not do it.
        Blocked = "blocked",
        /// Withdrawn by the person before the agent took it.
        Cancelled = "cancelled",
        /// Replaced by a newer instruction (reserved: no call sets it yet).
        Superseded = "superseded",
    }
}

impl IntentState {
    /// `draft` or `queued`: the person may still edit, queue or cancel it.
    pub fn is_editable(self) -> bool {
        match self {
            IntentState::Draft | IntentState::Queued => true,
            IntentState::Claimed
            | IntentState::Done
            | IntentState::Blocked
            | IntentState::Cancelled
            | IntentState::Superseded => false,
        }
    }
}

words! {
    /// When an instruction reaches the agent.
    pub enum Delivery {
        /// At the agent's next checkpoint, while the work is active.
        NextCheckpoint = "next_checkpoint",
        /// Once the agent asks to finish the work.
        AfterCurrentWork = "after_current_work",
        /// With the next work opened in the workspace.
        NextWork = "next_work",
    }
}

words! {
    /// What an instruction is.
    pub enum IntentKind {
        /// Something more to do.
        FollowUp = "follow_up",
        /// Information, nothing to do.
        Note = "note",
        /// The person pressed stop: the workspace's processes were killed.
        StopNotice = "stop_notice",
    }
}

words! {
    /// Who wrote an instruction, as the ledger records it and the agent and the page see it.
    pub enum IntentAuthor {
        /// The person, on the server's `/inbox` (the page or its API) with the person token.
        PersonInbox = "person-inbox",
        /// The person, with `codespace instructions add` on the ledger.
        PersonCli = "person-cli",
        /// Written before authors were recorded, when `/inbox` took the MCP bearer token:
        /// the person or the agent.
        Unrecorded = "unrecorded",
    }
}
