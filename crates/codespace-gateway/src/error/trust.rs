//! [`TrustError`]: the refusals that keep a hold meaning what a person saw: a created name
//! a person could be misled by, a decision only a person may make, a stored request or
//! a workspace root that is not the one the hold was made for, and a retry's `requestState`
//! the server did not seal for it (or whose time has passed). Each maps to its own code
//! here, beside [`super::GatewayError::code`].

use codespace_protocol::ErrorCode;
use codespace_types::visible;

#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// A name the patch would create holds a character a created name may not hold.
    #[error(
        "{kind} name '{shown}' holds {character}, which a created name may not hold (control characters, line or paragraph separators and bidirectional formatting characters are refused): nothing ran and no hold was made"
    )]
    /// `line`: the patch line of the Add File or Update File header.
    UnsafeName { kind: &'static str, path: String, shown: String, character: String, line: usize },
    /// `approval_resolve` over MCP, on a workspace whose holds only a person answers.
    #[error(
        "hold {approval_id} is in workspace {workspace_id}, whose holds only a person answers (approvers: person): ask the person to decide on the /inbox page, with `codespace approvals grant {approval_id}` (or `deny`) or in your client's prompt, then call operation_resume with wait_ms"
    )]
    PersonOnly { approval_id: String, workspace_id: String },
    /// The stored request does not match the seal made when the hold was shown.
    #[error("hold {approval_id} was not run: {why}; open a new hold by calling the tool again")]
    Unverified { approval_id: String, why: String },
    /// The workspace's root is not the directory the hold was made for.
    #[error("hold {approval_id} was not run: {why}; open a new hold by calling the tool again")]
    RootMismatch { approval_id: String, why: String },
    /// A retry's `requestState` is not one this server sealed for this call.
    #[error(
        "requestState refused, nothing ran: {why}. Send it back exactly as it came with the same arguments, or call the tool again without requestState to be asked again"
    )]
    StateInvalid { why: String },
    /// A retry's `requestState` is this server's, but its time to answer has passed.
    #[error(
        "requestState for hold {approval_id} expired {ago} s ago, nothing ran and the hold is as it was: call the tool again without requestState to be asked again"
    )]
    StateExpired { approval_id: String, ago: u64 },
}

impl TrustError {
    /// The refusal of a created name: `kind` is `Add File` or `Move to`.
    pub(crate) fn unsafe_name(
        kind: &'static str,
        path: &str,
        character: char,
        line: usize,
    ) -> TrustError {
        TrustError::UnsafeName {
            kind,
            path: path.to_owned(),
            shown: visible::escape(path, false).into_owned(),
            character: format!("U+{:04X}", u32::from(character)),
            line,
        }
    }

    pub(crate) fn code(&self) -> ErrorCode {
        match self {
            TrustError::UnsafeName { .. } => ErrorCode::UnsafePathName,
            TrustError::PersonOnly { .. } => ErrorCode::ApprovalPersonRequired,
            TrustError::Unverified { .. } => ErrorCode::ApprovalUnverified,
            TrustError::RootMismatch { .. } => ErrorCode::ApprovalRootMismatch,
            TrustError::StateInvalid { .. } => ErrorCode::RequestStateInvalid,
            TrustError::StateExpired { .. } => ErrorCode::RequestStateExpired,
        }
    }

    pub(crate) fn approval_id(&self) -> Option<&str> {
        match self {
            TrustError::PersonOnly { approval_id, .. }
            | TrustError::Unverified { approval_id, .. }
            | TrustError::RootMismatch { approval_id, .. }
            | TrustError::StateExpired { approval_id, .. } => Some(approval_id),
            TrustError::UnsafeName { .. } | TrustError::StateInvalid { .. } => None,
        }
    }

    pub(crate) fn path(&self) -> Option<&str> {
        match self {
            TrustError::UnsafeName { path, .. } => Some(path),
            TrustError::PersonOnly { .. }
            | TrustError::Unverified { .. }
            | TrustError::RootMismatch { .. }
            | TrustError::StateInvalid { .. }
            | TrustError::StateExpired { .. } => None,
        }
    }
}
