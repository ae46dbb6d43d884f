//! [`ApprovalState`] and [`HeldTool`]: the words of a confirmation hold.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a confirmation hold is in its life.
///
/// `pending → granted → queued → resuming → consumed`, or `pending → denied`. `denied` and
/// `consumed` are terminal; the other four are *active*: at most one active hold exists per
/// workspace and request fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalState {
    /// Created; waiting for a person (or the caller) to grant or deny it.
    Pending,
    /// Granted; `operation_resume` runs it.
    Granted,
    /// A resume claimed it and waits for the workspace lease (retryable when busy).
    Queued,
    /// The lease is held and the action may have started.
    Resuming,
    /// Denied; the stored arguments are scrubbed.
    Denied,
    /// The action ran once; its terminal result is stored with the hold.
    Consumed,
}

impl ApprovalState {
    /// Every state, in lifecycle order.
    pub const ALL: [ApprovalState; 6] = [
        ApprovalState::Pending,
        ApprovalState::Granted,
        ApprovalState::Queued,
        ApprovalState::Resuming,
        ApprovalState::Denied,
        ApprovalState::Consumed,
    ];

    /// The stored and wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalState::Pending => "pending",
            ApprovalState::Granted => "granted",
            ApprovalState::Queued => "queued",
            ApprovalState::Resuming => "resuming",
            ApprovalState::Denied => "denied",
            ApprovalState::Consumed => "consumed",
        }
    }

    /// The inverse of [`ApprovalState::as_str`]; `None` for any other text.
    pub fn parse(text: &str) -> Option<ApprovalState> {
        ApprovalState::ALL.into_iter().find(|s| s.as_str() == text)
    }

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

impl std::fmt::Display for ApprovalState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The tool a hold stands in front of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HeldTool {
    /// `apply_patch`.
    ApplyPatch,
    /// `exec_command`.
    ExecCommand,
}

impl HeldTool {
    /// Every held tool.
    pub const ALL: [HeldTool; 2] = [HeldTool::ApplyPatch, HeldTool::ExecCommand];

    /// The stored and wire form: the tool's name.
    pub fn as_str(self) -> &'static str {
        match self {
            HeldTool::ApplyPatch => "apply_patch",
            HeldTool::ExecCommand => "exec_command",
        }
    }

    /// The inverse of [`HeldTool::as_str`]; `None` for any other text.
    pub fn parse(text: &str) -> Option<HeldTool> {
        HeldTool::ALL.into_iter().find(|t| t.as_str() == text)
    }
}

impl std::fmt::Display for HeldTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A person's (or the caller's) answer to a pending hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Let the action run (`operation_resume` runs it).
    Grant,
    /// Refuse it for good; the stored arguments are scrubbed.
    Deny,
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
mod tests {
    use super::*;

    #[test]
    fn text_forms_agree_and_round_trip() {
        for state in ApprovalState::ALL {
            assert_eq!(ApprovalState::parse(state.as_str()), Some(state));
            let json = serde_json::to_value(state).unwrap();
            assert_eq!(json, serde_json::Value::String(state.as_str().to_owned()));
        }
        for tool in HeldTool::ALL {
            assert_eq!(HeldTool::parse(tool.as_str()), Some(tool));
            let json = serde_json::to_value(tool).unwrap();
            assert_eq!(json, serde_json::Value::String(tool.as_str().to_owned()));
        }
        assert_eq!(ApprovalState::parse("approved"), None);
        assert_eq!(HeldTool::parse("read"), None);
        let active: Vec<_> = ApprovalState::ALL.into_iter().filter(|s| s.is_active()).collect();
        assert_eq!(active.len(), 4);
    }
}
