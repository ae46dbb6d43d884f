//! Parameters and results of the confirmation-hold tools: `approval_create`,
//! `approval_resolve`, `operation_resume`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{ApplyPatchResult, ApprovalState, Decision, ExecCommandResult, HeldTool};

/// Arguments of `approval_create`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ApprovalCreateParams {
    /// The held tool.
    pub tool: HeldTool,
    /// That tool's own argument object.
    pub arguments: serde_json::Map<String, serde_json::Value>,
}

/// Result of `approval_create`, and of `approval_resolve`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ApprovalResult {
    /// `appr-<uuid>`: give it to `approval_resolve` and `operation_resume`.
    pub approval_id: String,
    /// Where the hold is: `pending` for a new hold; an existing active hold of the same
    /// request is returned in its current state.
    pub state: ApprovalState,
    /// What the held action does, for the person deciding (files and change kinds with line
    /// counts, or the argv and workspace).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
}

/// Arguments of `approval_resolve`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ApprovalResolveParams {
    /// The hold's `approval_id`.
    pub approval_id: String,
    /// `grant` or `deny` (final).
    pub decision: Decision,
}

/// Arguments of `operation_resume`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct OperationResumeParams {
    /// A granted hold (a resumed one answers its stored result).
    pub approval_id: String,
    /// Milliseconds (at most 55000) to wait for a person's decision (default 0).
    #[serde(default)]
    pub wait_ms: Option<u64>,
}

/// Result of `operation_resume`: the held tool's own result.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct OperationResumeResult {
    /// The hold that ran.
    pub approval_id: String,
    /// Always `consumed`: the action ran once; a later resume returns this same result.
    pub state: ApprovalState,
    /// The `apply_patch` result, for a patch hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_patch: Option<ApplyPatchResult>,
    /// The `exec_command` result, for a command hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_command: Option<ExecCommandResult>,
    /// The `operation_revert` result, for a revert hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_revert: Option<ApplyPatchResult>,
}
