//! The gateway's error enum and its mapping to wire codes: the one place where an internal
//! failure becomes an `ErrorCode` ([`GatewayError::code`], used by [`GatewayError::to_body`]
//! and by [`fs_body`] for the per-path refusals of `version`).
//!
//! Every match of the mapping names each variant (nested errors included; clippy fails a
//! wildcard arm here), so a new error does not compile until it has chosen its code;
//! `error/tests.rs` pins every internal error to its code.
#![deny(clippy::wildcard_enum_match_arm, clippy::match_wildcard_for_single_variants)]

use codespace_files::{FilesError, PlanFailure};
use codespace_patch::BoundedDiff;
use codespace_policy::Denial;
use codespace_protocol::{ApprovalState, ErrorBody, ErrorCode, HeldTool, PatchStatus};
use codespace_runner::ProcError;
use codespace_runner::{FsError, RunnerError};
use codespace_store::{IntentState, StoreError, WorkState};
use codespace_types::Version;

use crate::lease::LeaseError;
use refusal::{plan_code, plan_path};

mod refusal;

mod from;
mod nested;
mod revert;
mod trust;

use nested::{ledger_code, process_code};
pub(crate) use revert::RevertRefusal;
pub use trust::TrustError;

#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// Arguments that do not decode into the tool's parameters (SEP-1303: the model's to fix).
    #[error("invalid arguments for {tool}: {detail}")]
    InvalidArguments { tool: String, detail: String },
    #[error("workspace {id:?} is not registered")]
    WorkspaceNotFound { id: String },
    /// The server is draining (it was told to stop): no new mutation starts.
    #[error(
        "the server is shutting down: it finishes what is under way and starts no new patch or command; call again once it is back (or on another server)"
    )]
    Draining,
    #[error("{0}")]
    Denied(Denial),
    /// `approval_create` arguments that do not decode as the named tool's.
    #[error("invalid {tool} arguments for a hold: {detail}")]
    HeldArguments { tool: HeldTool, detail: String },
    #[error(
        "this workspace has approvals=confirm: hold {approval_id} ({state}) must be granted, then run with operation_resume; nothing ran. {summary}"
    )]
    HoldRequired { approval_id: String, state: ApprovalState, summary: String },
    #[error("no confirmation hold {approval_id}")]
    HoldNotFound { approval_id: String },
    #[error("hold {approval_id}: {why}")]
    HoldConflict { approval_id: String, why: String },
    #[error("hold {approval_id} was denied, so nothing ran: a new request needs a new hold")]
    HoldDenied { approval_id: String },
    #[error("hold {approval_id}: {why}")]
    HoldAmbiguous { approval_id: String, operation_id: Option<String>, why: String },
    #[error(transparent)]
    Runner(RunnerError),
    #[error("{what} must be between 1 and {max}, got {value}")]
    OutputLimit { what: &'static str, value: u64, max: u64 },
    #[error(transparent)]
    Patch(#[from] PlanFailure),
    #[error("expected_versions[{path:?}] = {value:?} is not a version (sha256:<64 hex> or absent)")]
    BadExpectedVersion { path: String, value: String },
    #[error("{path:?} is {actual}, expected_versions says {expected}: nothing was written")]
    /// `diff`: from the expected content to the file now, when the server still knew it.
    VersionConflict {
        path: String,
        expected: Version,
        actual: Version,
        diff: Option<Box<BoundedDiff>>,
    },
    #[error(
        "operation_key was already used in this workspace for a different request (operation {operation_id})"
    )]
    KeyConflict { operation_id: String },
    #[error("{0}")]
    OperationNotFound(String),
    #[error(transparent)]
    Revert(RevertRefusal),
    #[error(
        "operation_key {key:?} is used in more than one workspace: give its workspace_id (or the operation_id)"
    )]
    WorkspaceIdRequired { key: String },
    #[error(transparent)]
    Lease(LeaseError),
    #[error("operation ledger: {0}")]
    Ledger(Box<StoreError>),
    #[error(
        "operation {operation_id} ran (outcome {status:?}) but the ledger could not record its result: {source}"
    )]
    LedgerAfterRun { operation_id: String, status: PatchStatus, source: Box<StoreError> },
    /// A refusal recorded earlier in the ledger, returned again as it was.
    #[error("{}", .0.message)]
    Recorded(Box<ErrorBody>),
    #[error(
        "this workspace has sandbox=on and this host cannot enter the command sandbox (missing: {0}): commands are refused rather than run unconfined (the operator may set \"sandbox\": \"off\")"
    )]
    SandboxUnavailable(String),
    #[error("{0}")]
    InvalidCommand(String),
    #[error(transparent)]
    Process(ProcError),
    #[error("no work {work_id:?} in this workspace")]
    WorkNotFound { work_id: String },
    #[error("work {work_id:?} is {state}: open a new work")]
    WorkClosed { work_id: String, state: WorkState },
    #[error("no instruction {intent_id:?} in this work")]
    IntentNotFound { intent_id: String },
    #[error("instruction {intent_id:?} was already claimed by the agent: its content is frozen")]
    IntentAlreadyClaimed { intent_id: String },
    #[error("instruction {intent_id:?} is {state} and cannot be {action}")]
    IntentNotEditable { intent_id: String, state: IntentState, action: &'static str },
    #[error("instruction {intent_id:?} is no longer at revision {given}: fetch it again")]
    IntentRevisionConflict { intent_id: String, given: u64 },
    #[error(transparent)]
    Trust(TrustError),
    #[error("internal error: {0}")]
    Internal(String),
}

impl GatewayError {
    /// The wire form of this error: its code, its message, and the path and operation it
    /// is about. A recorded refusal comes back exactly as it was recorded.
    pub fn to_body(&self) -> ErrorBody {
        if let GatewayError::Recorded(body) = self {
            return (**body).clone();
        }
        let mut body = ErrorBody::new(self.code(), self.to_string());
        body.path = self.path().map(str::to_owned);
        body.operation_id = self.operation_id().map(str::to_owned);
        body.approval_id = self.approval_id().map(str::to_owned);
        body.conflicts = self.conflicts();
        refusal::describe(self, &mut body);
        body
    }

    /// The hold a refusal is about.
    fn approval_id(&self) -> Option<&str> {
        match self {
            GatewayError::HoldRequired { approval_id, .. }
            | GatewayError::HoldNotFound { approval_id }
            | GatewayError::HoldConflict { approval_id, .. }
            | GatewayError::HoldDenied { approval_id, .. }
            | GatewayError::HoldAmbiguous { approval_id, .. } => Some(approval_id),
            GatewayError::Recorded(body) => body.approval_id.as_deref(),
            GatewayError::Trust(e) => e.approval_id(),
            GatewayError::InvalidArguments { .. }
            | GatewayError::WorkspaceNotFound { .. }
            | GatewayError::Draining
            | GatewayError::Denied(..)
            | GatewayError::HeldArguments { .. }
            | GatewayError::Runner(..)
            | GatewayError::OutputLimit { .. }
            | GatewayError::Patch(..)
            | GatewayError::BadExpectedVersion { .. }
            | GatewayError::VersionConflict { .. }
            | GatewayError::KeyConflict { .. }
            | GatewayError::OperationNotFound(..)
            | GatewayError::Revert(..)
            | GatewayError::WorkspaceIdRequired { .. }
            | GatewayError::Lease(..)
            | GatewayError::Ledger(..)
            | GatewayError::LedgerAfterRun { .. }
            | GatewayError::SandboxUnavailable(..)
            | GatewayError::InvalidCommand(..)
            | GatewayError::Process(..)
            | GatewayError::WorkNotFound { .. }
            | GatewayError::WorkClosed { .. }
            | GatewayError::IntentNotFound { .. }
            | GatewayError::IntentAlreadyClaimed { .. }
            | GatewayError::IntentNotEditable { .. }
            | GatewayError::IntentRevisionConflict { .. }
            | GatewayError::Internal(..) => None,
        }
    }

    /// The wire code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            GatewayError::InvalidArguments { .. } => ErrorCode::InvalidArguments,
            GatewayError::WorkspaceNotFound { .. } => ErrorCode::WorkspaceNotFound,
            GatewayError::Draining => ErrorCode::ServerDraining,
            GatewayError::Denied(denial) => denial_code(denial),
            GatewayError::SandboxUnavailable(..) => ErrorCode::Unauthorized,
            GatewayError::HeldArguments { tool: HeldTool::ApplyPatch, .. } => {
                ErrorCode::InvalidPatch
            }
            GatewayError::HeldArguments { tool: HeldTool::ExecCommand, .. } => {
                ErrorCode::InvalidCommand
            }
            GatewayError::HeldArguments { tool: HeldTool::OperationRevert, .. } => {
                ErrorCode::InvalidArguments
            }
            GatewayError::HoldRequired { .. } => ErrorCode::ApprovalRequired,
            GatewayError::HoldNotFound { .. } => ErrorCode::ApprovalNotFound,
            GatewayError::HoldConflict { .. } => ErrorCode::ApprovalConflict,
            GatewayError::HoldDenied { .. } => ErrorCode::ApprovalDenied,
            GatewayError::HoldAmbiguous { .. } => ErrorCode::ApprovalAmbiguous,
            GatewayError::Runner(e) => runner_code(e),
            GatewayError::OutputLimit { .. } => ErrorCode::OutputLimit,
            GatewayError::Patch(PlanFailure::Parse(..)) => ErrorCode::InvalidPatch,
            GatewayError::Patch(PlanFailure::Plan(e)) => plan_code(e),
            GatewayError::BadExpectedVersion { .. } => ErrorCode::InvalidPatch,
            GatewayError::VersionConflict { .. } => ErrorCode::VersionConflict,
            GatewayError::KeyConflict { .. } => ErrorCode::OperationKeyConflict,
            GatewayError::OperationNotFound(..) => ErrorCode::OperationNotFound,
            GatewayError::Revert(r) => r.code(),
            GatewayError::WorkspaceIdRequired { .. } => ErrorCode::WorkspaceIdRequired,
            GatewayError::Lease(LeaseError::QueueFull) => ErrorCode::ResourceQueueFull,
            GatewayError::Lease(LeaseError::Busy(..)) => ErrorCode::WorkspaceBusy,
            GatewayError::Ledger(e) | GatewayError::LedgerAfterRun { source: e, .. } => {
                ledger_code(e)
            }
            GatewayError::Recorded(body) => body.code,
            GatewayError::InvalidCommand(..) => ErrorCode::InvalidCommand,
            GatewayError::Process(e) => process_code(e),
            GatewayError::WorkNotFound { .. } => ErrorCode::WorkNotFound,
            GatewayError::WorkClosed { .. } => ErrorCode::WorkClosed,
            GatewayError::IntentNotFound { .. } => ErrorCode::IntentNotFound,
            GatewayError::IntentAlreadyClaimed { .. } => ErrorCode::IntentAlreadyClaimed,
            GatewayError::IntentNotEditable { .. } => ErrorCode::IntentNotEditable,
            GatewayError::IntentRevisionConflict { .. } => ErrorCode::IntentRevisionConflict,
            GatewayError::Trust(e) => e.code(),
            GatewayError::Internal(..) => ErrorCode::Internal,
        }
    }

    /// The workspace-relative path the refusal is about. A filesystem refusal names the
    /// path the filesystem was asked about (none when that is empty), also when it came
    /// from a patch's lookup.
    fn path(&self) -> Option<&str> {
        match self {
            GatewayError::Runner(RunnerError::Fs(fs) | RunnerError::Files(FilesError::Fs(fs))) => {
                fs_path(fs)
            }
            GatewayError::Patch(PlanFailure::Plan(e)) => plan_path(e),
            GatewayError::VersionConflict { path, .. }
            | GatewayError::BadExpectedVersion { path, .. } => Some(path),
            GatewayError::Recorded(body) => body.path.as_deref(),
            GatewayError::Revert(r) => r.path(),
            GatewayError::Trust(e) => e.path(),
            GatewayError::InvalidArguments { .. }
            | GatewayError::WorkspaceNotFound { .. }
            | GatewayError::Draining
            | GatewayError::Denied(..)
            | GatewayError::HeldArguments { .. }
            | GatewayError::HoldRequired { .. }
            | GatewayError::HoldNotFound { .. }
            | GatewayError::HoldConflict { .. }
            | GatewayError::HoldDenied { .. }
            | GatewayError::HoldAmbiguous { .. }
            | GatewayError::Runner(
                RunnerError::Files(
                    FilesError::InvalidGlob { .. }
                    | FilesError::InvalidRegex { .. }
                    | FilesError::RegexTooLarge { .. },
                )
                | RunnerError::NoWorkspace { .. }
                | RunnerError::RootReplaced { .. }
                | RunnerError::Task { .. }
                | RunnerError::Process(..)
                | RunnerError::Transport(..),
            )
            | GatewayError::OutputLimit { .. }
            | GatewayError::Patch(PlanFailure::Parse(..))
            | GatewayError::KeyConflict { .. }
            | GatewayError::OperationNotFound(..)
            | GatewayError::WorkspaceIdRequired { .. }
            | GatewayError::Lease(..)
            | GatewayError::Ledger(..)
            | GatewayError::LedgerAfterRun { .. }
            | GatewayError::SandboxUnavailable(..)
            | GatewayError::InvalidCommand(..)
            | GatewayError::Process(..)
            | GatewayError::WorkNotFound { .. }
            | GatewayError::WorkClosed { .. }
            | GatewayError::IntentNotFound { .. }
            | GatewayError::IntentAlreadyClaimed { .. }
            | GatewayError::IntentNotEditable { .. }
            | GatewayError::IntentRevisionConflict { .. }
            | GatewayError::Internal(..) => None,
        }
    }

    /// The operation a refusal names: the earlier one a key belongs to, or the one whose
    /// result the ledger could not record.
    fn operation_id(&self) -> Option<&str> {
        match self {
            GatewayError::KeyConflict { operation_id }
            | GatewayError::LedgerAfterRun { operation_id, .. } => Some(operation_id),
            GatewayError::HoldAmbiguous { operation_id, .. } => operation_id.as_deref(),
            GatewayError::Revert(r) => Some(r.operation_id()),
            GatewayError::Recorded(body) => body.operation_id.as_deref(),
            GatewayError::InvalidArguments { .. }
            | GatewayError::WorkspaceNotFound { .. }
            | GatewayError::Draining
            | GatewayError::Denied(..)
            | GatewayError::HeldArguments { .. }
            | GatewayError::HoldRequired { .. }
            | GatewayError::HoldNotFound { .. }
            | GatewayError::HoldConflict { .. }
            | GatewayError::HoldDenied { .. }
            | GatewayError::Runner(..)
            | GatewayError::OutputLimit { .. }
            | GatewayError::Patch(..)
            | GatewayError::BadExpectedVersion { .. }
            | GatewayError::VersionConflict { .. }
            | GatewayError::OperationNotFound(..)
            | GatewayError::WorkspaceIdRequired { .. }
            | GatewayError::Lease(..)
            | GatewayError::Ledger(..)
            | GatewayError::SandboxUnavailable(..)
            | GatewayError::InvalidCommand(..)
            | GatewayError::Process(..)
            | GatewayError::WorkNotFound { .. }
            | GatewayError::WorkClosed { .. }
            | GatewayError::IntentNotFound { .. }
            | GatewayError::IntentAlreadyClaimed { .. }
            | GatewayError::IntentNotEditable { .. }
            | GatewayError::IntentRevisionConflict { .. }
            | GatewayError::Trust(..)
            | GatewayError::Internal(..) => None,
        }
    }
}

/// The wire form of a filesystem refusal on its own (a path of `version`).
pub(crate) fn fs_body(e: &FsError) -> ErrorBody {
    let mut body = ErrorBody::new(fs_code(e), e.to_string());
    body.path = fs_path(e).map(str::to_owned);
    body
}

fn fs_path(e: &FsError) -> Option<&str> {
    e.path().filter(|p| !p.is_empty())
}

fn denial_code(d: &Denial) -> ErrorCode {
    match d {
        Denial::Profile { .. } | Denial::BackendUnavailable { .. } => ErrorCode::Unauthorized,
    }
}

fn runner_code(e: &RunnerError) -> ErrorCode {
    match e {
        RunnerError::Fs(fs) | RunnerError::Files(FilesError::Fs(fs)) => fs_code(fs),
        RunnerError::Files(
            FilesError::InvalidGlob { .. }
            | FilesError::InvalidRegex { .. }
            | FilesError::RegexTooLarge { .. },
        ) => ErrorCode::InvalidPattern,
        // The runner let the workspace go: a reload removed it while the call was under way.
        RunnerError::NoWorkspace { .. } => ErrorCode::WorkspaceNotFound,
        // A runner task died: the server's fault.
        RunnerError::Task { .. } => ErrorCode::Internal,
        RunnerError::RootReplaced { .. } => ErrorCode::RootReplaced,
        RunnerError::Process(p) => process_code(p),
        // The worker's socket failed: whether it ran is not known (see the message).
        RunnerError::Transport(..) => ErrorCode::Timeout,
    }
}

fn fs_code(e: &FsError) -> ErrorCode {
    match e {
        FsError::PathEscape { .. } => ErrorCode::PathEscape,
        FsError::SymlinkRejected { .. } => ErrorCode::SymlinkRejected,
        // A directory is not a regular file: the same refusal as a FIFO or a device.
        FsError::SpecialFileRejected { .. } | FsError::IsDirectory { .. } => {
            ErrorCode::SpecialFileRejected
        }
        FsError::NotFound { .. } => ErrorCode::FileNotFound,
        FsError::NotDirectory { .. } => ErrorCode::PathNotDirectory,
        FsError::RootUnavailable { .. } | FsError::Io { .. } => ErrorCode::FileOperationFailed,
    }
}

#[cfg(test)]
mod tests;
