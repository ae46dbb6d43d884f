//! Parameters and results of `apply_patch`, `operation_revert` and `operation_status`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{ChangeKind, Coordination, EventName, PatchStatus, Version, is_false};

/// Arguments of `apply_patch`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ApplyPatchParams {
    /// Registered workspace id.
    pub workspace_id: String,
    /// V4A patch (`*** Begin Patch` ... `*** End Patch`).
    #[schemars(length(min = 1))]
    pub patch: String,
    /// Path -> version (`sha256:<hex>` or `absent`) each file must have now, or nothing is
    /// written.
    #[serde(default)]
    pub expected_versions: BTreeMap<String, ExpectedVersion>,
    /// Idempotency key, scoped to the workspace.
    #[serde(default)]
    pub operation_key: Option<String>,
    /// Check only; write nothing (status `checked`).
    #[serde(default)]
    pub check_only: Option<bool>,
    /// An open work of this workspace; the result carries its `coordination` hint.
    #[serde(default)]
    pub work_id: Option<String>,
}

/// One value of `expected_versions`: a [`Version`], or the text sent when it is not one.
///
/// Decoding accepts any string so that `apply_patch` refuses a malformed value itself
/// (`INVALID_PATCH`, naming the path) instead of the whole call failing to decode; it
/// serializes back to exactly the text received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpectedVersion {
    Valid(Version),
    Invalid(String),
}

impl From<Version> for ExpectedVersion {
    fn from(v: Version) -> Self {
        ExpectedVersion::Valid(v)
    }
}

impl Serialize for ExpectedVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ExpectedVersion::Valid(v) => v.serialize(serializer),
            ExpectedVersion::Invalid(text) => serializer.serialize_str(text),
        }
    }
}

impl<'de> Deserialize<'de> for ExpectedVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(match text.parse::<Version>() {
            Ok(v) => ExpectedVersion::Valid(v),
            Err(_) => ExpectedVersion::Invalid(text),
        })
    }
}

/// A plain string, as before: the tool, not the client, refuses a malformed value.
impl JsonSchema for ExpectedVersion {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("ExpectedVersion")
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        String::json_schema(generator)
    }
}

/// One planned or applied file change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileChange {
    /// The workspace-relative path written (for `move`: the destination).
    pub path: String,
    /// `add`, `update`, `delete` or `move`.
    pub kind: ChangeKind,
    /// For `move`: the source path (which appears as its own `delete`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub move_from: Option<String>,
    /// Version before (`absent` for an add).
    pub before_version: Version,
    /// Version after (`absent` for a delete).
    pub after_version: Version,
}

/// Where the undo log keeps a file's old content that could not be put back in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Preserved {
    /// The workspace-relative path the content belongs at.
    pub path: String,
    /// The file on the server's host that holds the old content, outside every workspace;
    /// `codespace operations restore <operation_id>` puts it back once the path is free.
    pub undo_path: String,
}

/// Result of `apply_patch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ApplyPatchResult {
    /// `applied`, `checked`, `rejected`, `failed_rolled_back`, `failed_partial` or `unknown`.
    pub status: PatchStatus,
    /// `op-<uuid>`, minted by the server.
    pub operation_id: String,
    /// True when this result was replayed from the ledger by `operation_key`.
    pub replayed: bool,
    /// Affected workspace-relative paths.
    pub files: Vec<String>,
    /// Every file change with its version before and after.
    pub changes: Vec<FileChange>,
    /// `failed_partial`: the paths whose previous content could not be restored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrestored: Vec<String>,
    /// Why a write failed, for the `failed_*` statuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The request's `work_id`, echoed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_id: Option<String>,
    /// `failed_partial` / `unknown`: old content that is not in place, and where the undo
    /// log keeps it. Nothing a patch replaced, moved or deleted is ever lost.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preserved: Vec<Preserved>,
    /// Set when the call belongs to an open work (its `work_id`, or the workspace's only
    /// open work): whether the person queued instructions since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination: Option<Coordination>,
    /// `operation_revert`: the operation this one reverts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverts: Option<String>,
}

/// Arguments of `operation_revert`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct OperationRevertParams {
    /// Registered workspace id (the operation's).
    pub workspace_id: String,
    /// `op-<uuid>` of the applied operation to revert.
    #[schemars(length(min = 1))]
    pub operation_id: String,
    /// Idempotency key, as for `apply_patch`.
    #[serde(default)]
    pub operation_key: Option<String>,
    /// Check only; write nothing (status `checked`).
    #[serde(default)]
    pub check_only: Option<bool>,
}

/// Arguments of `operation_status`: an `operation_id`, or an `operation_key` with its
/// `workspace_id` (keys are scoped to a workspace).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct OperationStatusParams {
    /// `op-<uuid>`; give this or `operation_key`.
    #[serde(default)]
    pub operation_id: Option<String>,
    /// The `operation_key` an `apply_patch` was sent with.
    #[serde(default)]
    pub operation_key: Option<String>,
    /// The key's workspace (needed when the key was used in several).
    #[serde(default)]
    pub workspace_id: Option<String>,
}

/// One entry of an operation's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OperationEvent {
    /// Unix seconds.
    pub at: i64,
    /// `minted`, `planned`, `finished`, `recovered` or `restored`.
    pub name: EventName,
    /// The terminal status set, on `finished` and `recovered`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PatchStatus>,
    /// Why the status was set, when the server knows more than the status says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What an operation did: `patch` (`apply_patch`) or `revert` (`operation_revert`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OperationKind {
    Patch,
    Revert,
}

/// What an operation's undo record keeps: the old content a revert puts back (an applied
/// operation) or the content a failed one preserves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UndoRecord {
    /// Bytes of old content kept.
    pub kept_bytes: u64,
    /// Unix seconds when the retention bound dropped the record (a revert then answers
    /// `UNDO_PRUNED`); absent while it is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pruned_at: Option<i64>,
}

/// Result of `operation_status`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct OperationStatusResult {
    /// `op-<uuid>`.
    pub operation_id: String,
    /// `unknown` while the operation has not finished.
    pub status: PatchStatus,
    /// Always false here.
    pub replayed: bool,
    /// `patch` or `revert`.
    pub kind: OperationKind,
    /// A revert: the operation it reverts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverts: Option<String>,
    /// The revert that reverted this operation (or is reverting it now).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverted_by: Option<String>,
    /// What the operation's undo record keeps; absent when it never kept anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo: Option<UndoRecord>,
    /// The workspace the operation ran in.
    pub workspace_id: String,
    /// The client's idempotency key, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_key: Option<String>,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds; absent while unfinished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<i64>,
    /// The operation was classified at server start after an interruption.
    #[serde(default, skip_serializing_if = "is_false")]
    pub recovered: bool,
    /// Affected workspace-relative paths; omitted when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Every file change with its versions; omitted when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FileChange>,
    /// The operation's history, oldest first; omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<OperationEvent>,
    /// The refusal recorded for a `rejected` operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<crate::ErrorBody>,
    /// As in the `apply_patch` result: old content kept in the undo log, not in place
    /// (a `restored` event records an operator putting it back).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preserved: Vec<Preserved>,
}
