//! The gateway's error enum and its mapping to wire codes: the one place where an internal
//! failure becomes an `ErrorCode`.

use codespace_policy::Denial;
use codespace_protocol::{ErrorBody, ErrorCode};
use codespace_runner::{
    FsError, LookupError, PatchErrorKind, PlanError, PlanFailure, RunnerError, Version,
};
use codespace_store::{OpStatus, StoreError};

use crate::lease::LeaseError;

#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error("workspace {id:?} is not registered")]
    WorkspaceNotFound { id: String },
    #[error("{0}")]
    Denied(Denial),
    #[error(
        "this workspace has approvals=confirm, and this server has no confirmation holds yet: the change is refused rather than applied unconfirmed"
    )]
    ConfirmationUnavailable,
    #[error(transparent)]
    Runner(#[from] RunnerError),
    #[error("{what} must be between 1 and {max}, got {value}")]
    OutputLimit { what: &'static str, value: u64, max: u64 },
    #[error(transparent)]
    Patch(#[from] PlanFailure),
    #[error("expected_versions[{path:?}] = {value:?} is not a version (sha256:<64 hex> or absent)")]
    BadExpectedVersion { path: String, value: String },
    #[error("{path:?} is {actual}, expected_versions says {expected}: nothing was written")]
    VersionConflict { path: String, expected: Version, actual: Version },
    #[error(
        "operation_key was already used in this workspace for a different request (operation {operation_id})"
    )]
    KeyConflict { operation_id: String },
    #[error("{0}")]
    OperationNotFound(String),
    #[error(transparent)]
    Lease(LeaseError),
    #[error("operation ledger: {0}")]
    Ledger(Box<StoreError>),
    #[error(
        "operation {operation_id} ran (outcome {status:?}) but the ledger could not record its result: {source}"
    )]
    LedgerAfterRun { operation_id: String, status: OpStatus, source: Box<StoreError> },
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
    Process(codespace_process::ProcError),
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<StoreError> for GatewayError {
    fn from(e: StoreError) -> Self {
        GatewayError::Ledger(Box::new(e))
    }
}

impl From<FsError> for GatewayError {
    fn from(e: FsError) -> Self {
        GatewayError::Runner(RunnerError::Fs(e))
    }
}

impl GatewayError {
    /// The wire form of this error. Exhaustive by design: a new variant must choose its code.
    pub fn to_body(&self) -> ErrorBody {
        let message = self.to_string();
        let code = match self {
            GatewayError::WorkspaceNotFound { .. } => ErrorCode::WorkspaceNotFound,
            GatewayError::Denied(_)
            | GatewayError::ConfirmationUnavailable
            | GatewayError::SandboxUnavailable(_) => ErrorCode::Unauthorized,
            GatewayError::InvalidCommand(_) => ErrorCode::InvalidCommand,
            GatewayError::Process(e) => crate::process::process_code(e),
            GatewayError::OutputLimit { .. } => ErrorCode::OutputLimit,
            GatewayError::Internal(_) => ErrorCode::Internal,
            GatewayError::Runner(
                RunnerError::InvalidGlob { .. } | RunnerError::InvalidRegex { .. },
            ) => ErrorCode::InvalidPattern,
            GatewayError::Runner(RunnerError::Fs(fs)) => return fs_body(fs),
            GatewayError::Patch(PlanFailure::Parse(_)) => ErrorCode::InvalidPatch,
            GatewayError::Patch(PlanFailure::Plan(PlanError::Lookup {
                source: LookupError::Fs(fs),
                ..
            })) => {
                let mut body = fs_body(fs);
                body.message = message;
                return body;
            }
            GatewayError::Patch(PlanFailure::Plan(e)) => match e.kind() {
                PatchErrorKind::InvalidPatch
                | PatchErrorKind::ContextMismatch
                | PatchErrorKind::NotUtf8 => ErrorCode::InvalidPatch,
                PatchErrorKind::InvalidPath => ErrorCode::PathEscape,
                PatchErrorKind::AddFileExists => ErrorCode::AddFileExists,
                PatchErrorKind::MoveDestinationExists => ErrorCode::MoveDestinationExists,
                PatchErrorKind::FileNotFound => ErrorCode::FileNotFound,
                PatchErrorKind::NotAFile => ErrorCode::SpecialFileRejected,
                PatchErrorKind::PathConflict => ErrorCode::PathNotDirectory,
                // The only other lookup failure: a file above the patch size cap.
                PatchErrorKind::Lookup => ErrorCode::OutputLimit,
            },
            GatewayError::BadExpectedVersion { .. } => ErrorCode::InvalidPatch,
            GatewayError::VersionConflict { .. } => ErrorCode::VersionConflict,
            GatewayError::KeyConflict { .. } => ErrorCode::OperationKeyConflict,
            GatewayError::OperationNotFound(_) => ErrorCode::OperationNotFound,
            GatewayError::Lease(LeaseError::QueueFull) => ErrorCode::ResourceQueueFull,
            GatewayError::Lease(LeaseError::Busy) => ErrorCode::WorkspaceBusy,
            GatewayError::Ledger(_) | GatewayError::LedgerAfterRun { .. } => ErrorCode::LedgerError,
            GatewayError::Recorded(body) => return (**body).clone(),
        };
        let mut body = ErrorBody::new(code, message);
        body.path = self.path().map(str::to_owned);
        match self {
            GatewayError::KeyConflict { operation_id }
            | GatewayError::LedgerAfterRun { operation_id, .. } => {
                body.operation_id = Some(operation_id.clone());
            }
            _ => {}
        }
        body
    }

    fn path(&self) -> Option<&str> {
        match self {
            GatewayError::Patch(PlanFailure::Plan(e)) => e.path(),
            GatewayError::VersionConflict { path, .. }
            | GatewayError::BadExpectedVersion { path, .. } => Some(path),
            _ => None,
        }
    }
}

/// Maps a filesystem refusal to its code, carrying the workspace-relative path.
pub(crate) fn fs_body(e: &FsError) -> ErrorBody {
    let code = match e {
        FsError::PathEscape { .. } => ErrorCode::PathEscape,
        FsError::SymlinkRejected { .. } => ErrorCode::SymlinkRejected,
        // A directory is not a regular file: the same refusal as a FIFO or a device.
        FsError::SpecialFileRejected { .. } | FsError::IsDirectory { .. } => {
            ErrorCode::SpecialFileRejected
        }
        FsError::NotFound { .. } => ErrorCode::FileNotFound,
        FsError::NotDirectory { .. } => ErrorCode::PathNotDirectory,
        FsError::RootUnavailable { .. } | FsError::Io { .. } => ErrorCode::FileOperationFailed,
    };
    let body = ErrorBody::new(code, e.to_string());
    match e.path() {
        Some(p) if !p.is_empty() => body.with_path(p),
        _ => body,
    }
}
