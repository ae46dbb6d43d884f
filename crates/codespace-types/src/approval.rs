//! [`ApprovalState`], [`HeldTool`] and [`Decision`]: the words of a confirmation hold (the
//! wire calls a hold an "approval").

words! {
    /// Where a confirmation hold is in its life.
    ///
    /// `pending → granted → queued → resuming → consumed`, or `pending → denied`. `denied` and
    /// `consumed` are terminal; the other four are *active*: at most one active hold exists per
    /// workspace and request fingerprint.
    pub enum ApprovalState {
        /// Created; waiting for a person (or the caller) to grant or deny it.
        Pending = "pending",
        /// Granted; `operation_resume` runs it.
        Granted = "granted",
        /// A resume claimed it and waits for the workspace lease (retryable when busy).
        Queued = "queued",
        /// The lease is held and the action may have started.
        Resuming = "resuming",
        /// Denied; the stored arguments are scrubbed.
        Denied = "denied",
        /// The action ran once; its terminal result is stored with the hold.
        Consumed = "consumed",
    }
}

impl ApprovalState {
    /// True while the hold can still lead to its action (it blocks a second hold of the
    /// same request).
    pub fn is_active(self) -> bool {
        match self {
            ApprovalState::Pending
            | ApprovalState::Granted
            | ApprovalState::Queued
            | ApprovalState::Resuming => true,
            ApprovalState::Denied | ApprovalState::Consumed => false,
        }
    }
}

words! {
    /// The tool a hold stands in front of.
    pub enum HeldTool {
        /// `apply_patch`.
        ApplyPatch = "apply_patch",
        /// `exec_command`.
        ExecCommand = "exec_command",
        /// `operation_revert`.
        OperationRevert = "operation_revert",
    }
}

words! {
    /// A person's (or the caller's) answer to a pending hold.
    pub enum Decision {
        /// Let the action run (`operation_resume` runs it).
        Grant = "grant",
        /// Refuse it for good; the stored arguments are scrubbed.
        Deny = "deny",
    }
}

impl Decision {
    /// The state a pending hold moves to.
    pub fn state(self) -> ApprovalState {
        match self {
            Decision::Grant => ApprovalState::Granted,
            Decision::Deny => ApprovalState::Denied,
        }
    }
}

#[cfg(test)]
mod tests;
