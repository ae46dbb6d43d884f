//! Parameters and results of the work tools (`work_open`, `steer_status`,
//! `steer_claim_next`, `steer_complete`, `work_finish`), the `coordination` hint other
//! results carry, and the bodies of the HTTP `/inbox` API.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use codespace_types::IntentAuthor;
pub use codespace_types::{Delivery, IntentKind, IntentState, WorkState};

use crate::{ApprovalState, HeldTool};

/// Arguments of `work_open`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct WorkOpenParams {
    /// Registered workspace id.
    pub workspace_id: String,
    /// Short job name shown to the person.
    #[serde(default)]
    pub title: Option<String>,
}

/// Result of `work_open`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct WorkOpenResult {
    /// `work-<uuid>`, minted by the server; pass it to the other tools.
    pub work_id: String,
    /// The workspace the work belongs to.
    pub workspace_id: String,
    /// Always `active` for a new work.
    pub state: WorkState,
}

/// Arguments of `steer_status`, `steer_claim_next` and `work_finish`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct WorkIdParams {
    /// From `work_open`.
    pub work_id: String,
}

/// Result of `steer_status`: counts only, never an instruction's text.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct SteerStatusResult {
    /// The work asked about.
    pub work_id: String,
    /// `active`, `closing`, `closed` or `cancelled`.
    pub state: WorkState,
    /// Instructions queued and not yet claimed.
    pub queued: u32,
    /// Instructions claimed and not yet completed.
    pub claimed: u32,
    /// Queued instructions `steer_claim_next` would hand out now.
    pub claimable_now: u32,
    /// Grows with every change to the queue.
    pub queue_revision: u64,
}

/// One claimed instruction; its content is frozen from now on.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ClaimedIntent {
    /// `fb-<uuid>`: pass it to `steer_complete`.
    pub intent_id: String,
    /// The instruction's revision after the claim.
    pub revision: u64,
    /// `follow_up`, `note` or `stop_notice`.
    pub kind: IntentKind,
    /// When the person wanted it delivered.
    pub delivery: Delivery,
    /// The person's text.
    pub content: String,
    /// Who wrote it: `person-inbox` (the person on /inbox, with the person token),
    /// `person-cli` (the person with `codespace instructions add`), or `unrecorded`
    /// (written before authors were recorded, when /inbox took the MCP token: possibly an
    /// agent).
    pub author: IntentAuthor,
}

/// Result of `steer_claim_next`: `item` is absent when nothing can be claimed now.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct SteerClaimResult {
    /// The instruction now claimed by the caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<ClaimedIntent>,
}

/// How a claimed instruction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CompleteOutcome {
    /// Carried out.
    Done,
    /// Could not be carried out.
    Blocked,
}

/// Arguments of `steer_complete`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct SteerCompleteParams {
    /// The work it was claimed from.
    pub work_id: String,
    /// From `steer_claim_next`.
    pub intent_id: String,
    /// `done` (default) or `blocked`.
    #[serde(default)]
    pub outcome: Option<CompleteOutcome>,
}

/// One user instruction as stored.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct UserIntent {
    /// `fb-<uuid>`.
    pub intent_id: String,
    /// The work it belongs to; absent while it waits for the workspace's next work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_id: Option<String>,
    /// The workspace it belongs to.
    pub workspace_id: String,
    /// Queue order, lower first.
    pub position: i64,
    /// Grows with every change; an edit or queue call must name the current one.
    pub revision: u64,
    /// `follow_up`, `note` or `stop_notice`.
    pub kind: IntentKind,
    /// `next_checkpoint`, `after_current_work` or `next_work`.
    pub delivery: Delivery,
    /// The person's text.
    pub body: String,
    /// `draft`, `queued`, `claimed`, `done`, `blocked`, `cancelled` or `superseded`.
    pub state: IntentState,
    /// Who wrote it: `person-inbox`, `person-cli` or `unrecorded`.
    pub author: IntentAuthor,
}

/// Why `work_finish` did not close the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The person still has instructions for this work: claim them first.
    PendingUserInput,
}

/// Result of `work_finish`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct WorkFinishResult {
    /// The work asked about.
    pub work_id: String,
    /// True when the work is now closed.
    pub closed: bool,
    /// Set when `closed` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<FinishReason>,
    /// Instructions still queued for this work.
    pub queued: u32,
    /// The work's state after the call.
    pub state: WorkState,
}

/// The hint a file, patch or command result carries when the call belongs to an open work:
/// whether the person said something since, without the text (claim it with
/// `steer_claim_next`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct Coordination {
    /// The open work the call belongs to.
    pub work_id: String,
    /// Queued or claimed instructions not yet completed.
    pub pending_user_items: u32,
    /// Queued instructions `steer_claim_next` would hand out now.
    pub claimable_now: u32,
    /// Grows with every change to the queue.
    pub queue_revision: u64,
}

/// A work as `/inbox` lists it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct WorkSummary {
    /// `work-<uuid>`.
    pub work_id: String,
    /// The workspace it belongs to.
    pub workspace_id: String,
    /// The title given to `work_open`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `active`, `closing`, `closed` or `cancelled`.
    pub state: WorkState,
    /// Grows with every change to the queue.
    pub queue_revision: u64,
}

/// Body of `POST /inbox/works/{id}/intents`: a new draft.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct NewIntent {
    /// The instruction's text (not empty).
    pub body: String,
    /// Default `follow_up`.
    #[serde(default)]
    pub kind: Option<IntentKind>,
    /// Default `after_current_work`.
    #[serde(default)]
    pub delivery: Option<Delivery>,
}

/// Body of `PATCH /inbox/intents/{id}`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct EditIntent {
    /// The revision the edit was made on.
    pub revision: u64,
    /// The new text (not empty).
    pub body: String,
    /// A new delivery; unchanged when absent.
    #[serde(default)]
    pub delivery: Option<Delivery>,
}

/// Body of `POST /inbox/intents/{id}/queue`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct QueueIntent {
    /// The revision the person saw.
    pub revision: u64,
}

/// Body of `POST /inbox/works/{id}/reorder`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ReorderIntents {
    /// Draft or queued instructions of the work, in their new order; the positions they
    /// held are handed out again in this order, so unlisted ones keep theirs.
    pub intent_ids: Vec<String>,
}

/// Body of `POST /inbox/works/{id}/stop`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
pub struct StopWork {
    /// Why, for the agent; the stop notice's text.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Result of `POST /inbox/works/{id}/stop`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct StopResult {
    /// Always true.
    pub ok: bool,
    /// Processes of the workspace that were running and were killed, subtree and all.
    pub killed: u32,
    /// The `stop_notice` queued for the agent.
    pub intent: UserIntent,
}

/// A confirmation hold as the person's page lists it (`GET /inbox/holds`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct InboxHold {
    /// `appr-<uuid>`.
    pub approval_id: String,
    /// The workspace the held action targets.
    pub workspace_id: String,
    /// `apply_patch`, `exec_command` or `operation_revert`.
    pub tool: HeldTool,
    /// Always `pending` in the list: waiting for a grant or a deny.
    pub state: ApprovalState,
    /// What the held action does, for the person deciding.
    pub summary: String,
    /// Unix seconds at creation.
    pub created_at: i64,
}
