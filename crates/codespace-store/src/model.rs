//! The ledger's data model: operation status, planned files, events, whole records, and
//! confirmation holds.
//!
//! These are plain values. Their string forms (`as_str`) are the ones stored in the
//! database; `store/sql.rs` converts them to and from the columns. The change kind, the
//! event name and the version are the shared types of `codespace-types`.

use std::fmt;

use codespace_types::{ApprovalState, ChangeKind, EventName, HeldTool, PatchStatus, Version};

/// The lifecycle state of one patch operation: two unfinished states, then the terminal
/// outcome the wire reports ([`PatchStatus`]), set exactly once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpStatus {
    /// Minted by `begin`; no plan recorded and nothing written yet.
    Pending,
    /// The plan is recorded; the disk may hold any mix of before and after states.
    Applying,
    /// Finished: `checked` (a preview passed; not a reservation), `applied`, `rejected`,
    /// `failed_rolled_back`, `failed_partial` or `unknown` (the outcome cannot be told).
    Finished(PatchStatus),
}

impl OpStatus {
    /// Every status, the unfinished ones first.
    pub const ALL: [OpStatus; 2 + PatchStatus::ALL.len()] = {
        let mut all = [OpStatus::Pending; 2 + PatchStatus::ALL.len()];
        all[1] = OpStatus::Applying;
        let mut i = 0;
        while i < PatchStatus::ALL.len() {
            all[2 + i] = OpStatus::Finished(PatchStatus::ALL[i]);
            i += 1;
        }
        all
    };

    /// The stored form: `pending`, `applying`, or the outcome's wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            OpStatus::Pending => "pending",
            OpStatus::Applying => "applying",
            OpStatus::Finished(outcome) => outcome.as_str(),
        }
    }

    /// The inverse of [`OpStatus::as_str`]; `None` for any other string.
    pub fn parse(text: &str) -> Option<OpStatus> {
        match text {
            "pending" => Some(OpStatus::Pending),
            "applying" => Some(OpStatus::Applying),
            _ => PatchStatus::parse(text).map(OpStatus::Finished),
        }
    }

    /// The terminal outcome; `None` while unfinished.
    pub fn outcome(self) -> Option<PatchStatus> {
        match self {
            OpStatus::Pending | OpStatus::Applying => None,
            OpStatus::Finished(outcome) => Some(outcome),
        }
    }

    /// True for `Pending` and `Applying`: the row has no terminal status yet.
    pub fn is_unfinished(self) -> bool {
        self.outcome().is_none()
    }

    /// True for every status that `finish` and `recover` may set.
    pub fn is_terminal(self) -> bool {
        !self.is_unfinished()
    }
}

impl fmt::Display for OpStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One file change of a recorded plan, with the versions recovery compares the disk to.
///
/// `path` is workspace-relative and opaque to the store. For a `move`, `path` is the
/// destination and `move_from` the source; `before_version` is the source's version and
/// `after_version` the destination's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlannedFile {
    /// Workspace-relative path (the destination of a move).
    pub path: String,
    /// What the patch does to the file.
    pub kind: ChangeKind,
    /// `absent` for an `add`.
    pub before_version: Version,
    /// `absent` for a `delete`.
    pub after_version: Version,
    /// The source of a `move`; `None` for every other kind.
    pub move_from: Option<String>,
    /// Permission bits of the file before (`& 0o7777`), which a restore from the undo log
    /// puts back; `None` when the file did not exist or the row predates the column.
    pub before_mode: Option<u32>,
}

impl PlannedFile {
    /// Checks the rules between fields that recovery relies on (the types check each field
    /// alone); the reason names the offending field.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.path.is_empty() {
            return Err("planned file with an empty path".to_owned());
        }
        match (self.kind, &self.move_from) {
            (ChangeKind::Move, None) => {
                return Err(format!("{}: a move needs move_from", self.path));
            }
            (ChangeKind::Move, Some(from)) if from.is_empty() => {
                return Err(format!("{}: move_from is empty", self.path));
            }
            (ChangeKind::Add | ChangeKind::Update | ChangeKind::Delete, Some(_)) => {
                return Err(format!("{}: move_from is only valid for a move", self.path));
            }
            (ChangeKind::Move, Some(_))
            | (ChangeKind::Add | ChangeKind::Update | ChangeKind::Delete, None) => {}
        }
        if self.kind == ChangeKind::Add && self.before_version != Version::Absent {
            return Err(format!("{}: an add must have before_version `absent`", self.path));
        }
        if self.kind == ChangeKind::Delete && self.after_version != Version::Absent {
            return Err(format!("{}: a delete must have after_version `absent`", self.path));
        }
        if self.before_mode.is_some_and(|m| m > 0o7777) {
            return Err(format!("{}: before_mode is not a set of permission bits", self.path));
        }
        Ok(())
    }
}

/// One entry of an operation's history, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Event {
    /// Unix seconds, as given by the caller.
    pub at: i64,
    /// Which step of the history.
    pub name: EventName,
    /// The terminal status, on `finished` and `recovered`; `None` otherwise.
    pub status: Option<OpStatus>,
    /// Why, when known (`unknown` on a `finished` event whose status is `unknown`).
    pub reason: Option<String>,
}

/// One operation as stored: the row, its plan and its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationRecord {
    /// `op-<uuid v4>`, minted by `draft` (or the id a confirmation hold reserved).
    pub operation_id: String,
    /// The client's idempotency key, unique within `workspace_id`.
    pub operation_key: Option<String>,
    /// The workspace the operation targets.
    pub workspace_id: String,
    /// The canonical request hash the key is bound to.
    pub fingerprint: String,
    /// Current status.
    pub status: OpStatus,
    /// The result JSON, opaque to the store; `None` while unfinished.
    pub result_json: Option<String>,
    /// The recorded plan, in the order given; empty when the outcome came without one.
    pub plan: Vec<PlannedFile>,
    /// Unix seconds at minting (`draft`).
    pub created_at: i64,
    /// Unix seconds at `finish_draft`/`recover`; `None` while unfinished.
    pub finished_at: Option<i64>,
    /// History, oldest first.
    pub events: Vec<Event>,
    /// The operation this one reverts; `None` for a patch.
    pub reverts: Option<String>,
    /// The revert that claimed this operation: it is running, or it applied (a revert that
    /// ends without applying releases it).
    pub reverted_by: Option<String>,
    /// What the undo record keeps now.
    pub undo: UndoKept,
    /// The instance that recorded the plan, or that settled the operation after its owner
    /// died; `None` for a row written before owners existed (owned by nobody alive).
    pub owner: Option<String>,
}

/// An operation's undo record: the old content kept for a rollback, a revert or a restore,
/// in the ledger and in the undo directory beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UndoKept {
    /// Bytes of old content kept.
    pub bytes: u64,
    /// Unix seconds when the retention bound dropped the record; `None` while kept (or
    /// when it never had one).
    pub pruned_at: Option<i64>,
}

/// The operator's bound on undo records: the oldest finished operations' records are
/// dropped first, until none is older than `max_age_secs` and all of them together hold at
/// most `max_bytes`. Records of unfinished operations are never dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub max_age_secs: u64,
    pub max_bytes: u64,
}

impl Default for Retention {
    /// 7 days and 256 MiB.
    fn default() -> Self {
        Retention { max_age_secs: 7 * 24 * 3600, max_bytes: 256 * 1024 * 1024 }
    }
}

#[cfg(test)]
mod tests;

/// A confirmation hold as the ledger keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoldRecord {
    /// `appr-<uuid v4>`.
    pub approval_id: String,
    /// The workspace the held action targets.
    pub workspace_id: String,
    /// The tool the hold stands in front of.
    pub tool: HeldTool,
    /// The canonical request hash: one active hold per workspace and fingerprint.
    pub fingerprint: String,
    /// What the action does, for a person deciding on it.
    pub summary: String,
    /// The tool's arguments (opaque JSON); `None` once scrubbed (denied or consumed).
    pub params_json: Option<String>,
    /// Where the hold is.
    pub state: ApprovalState,
    /// Unix seconds at creation.
    pub created_at: i64,
    /// Unix seconds of the grant or deny.
    pub resolved_at: Option<i64>,
    /// The ledger id a patch resume reserved when it started.
    pub operation_id: Option<String>,
    /// The terminal outcome (opaque JSON), exactly when consumed.
    pub result_json: Option<String>,
    /// The server key's seal over what the hold was made for; `None` for a hold made
    /// before holds were sealed.
    pub seal: Option<String>,
    /// `<device>:<inode>` of the workspace's root when the hold was made.
    pub root_identity: Option<String>,
    /// The instance running a resume of it (`queued`, `resuming`), or the one that ran it;
    /// `None` when no resume holds it.
    pub owner: Option<String>,
}

/// A hold to create.
#[derive(Debug, Clone, Copy)]
pub struct NewHold<'a> {
    /// The id to create it under (the gateway mints it, to seal it); `None`: the ledger
    /// mints `appr-<uuid v4>`.
    pub approval_id: Option<&'a str>,
    pub workspace_id: &'a str,
    pub tool: HeldTool,
    pub fingerprint: &'a str,
    pub summary: &'a str,
    pub params_json: &'a str,
    pub seal: &'a str,
    pub root_identity: &'a str,
}

/// Which holds an operator lists.
#[derive(Debug, Clone, Default)]
pub struct HoldFilter {
    pub workspace_id: Option<String>,
    pub state: Option<ApprovalState>,
}

/// A server that serves (or served) from this ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceRow {
    /// `inst-<uuid v4>`: the owner named by the work it records.
    pub instance_id: String,
    /// Its process id.
    pub pid: i64,
    /// Unix seconds at start.
    pub started_at: i64,
    /// Unix seconds when another process found it gone; `None` until then.
    pub ended_at: Option<i64>,
    /// Whether it holds its lock now.
    pub alive: bool,
}

/// What a compare-and-swap on a hold's state found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cas {
    /// The hold was in the expected state and moved; the record after the move.
    Moved(HoldRecord),
    /// The hold was in another state and was left alone; the record as it is.
    Stale(HoldRecord),
    /// No hold has this id.
    Missing,
}
