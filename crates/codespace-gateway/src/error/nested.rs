//! The wire codes of the ledger's and the supervisor's errors, nested in a gateway error.

use codespace_protocol::ErrorCode;
use codespace_runner::ProcError;
use codespace_store::StoreError;

/// Every ledger failure, the undo log beside it included, is `LEDGER_ERROR`; the message
/// says which.
pub(super) fn ledger_code(e: &StoreError) -> ErrorCode {
    match e {
        StoreError::Open { .. }
        | StoreError::OpenDatabase { .. }
        | StoreError::Refused { .. }
        | StoreError::Busy(..)
        | StoreError::Degraded { .. }
        | StoreError::Sqlite(..)
        | StoreError::CorruptRow { .. }
        | StoreError::UnknownOperation { .. }
        | StoreError::AlreadyFinished { .. }
        | StoreError::NotOwner { .. }
        | StoreError::Undo { .. }
        | StoreError::InvalidInput { .. } => ErrorCode::LedgerError,
        // A revert's plan lost the race for the operation it reverts.
        StoreError::AlreadyReverted { by: Some(_), .. } => ErrorCode::OperationAlreadyReverted,
        StoreError::AlreadyReverted { by: None, .. } => ErrorCode::OperationNotRevertible,
    }
}

/// A supervisor refusal.
pub(super) fn process_code(e: &ProcError) -> ErrorCode {
    match e {
        ProcError::NotFound => ErrorCode::ProcessNotFound,
        ProcError::SpawnFailed(..) => ErrorCode::ProcessSpawnFailed,
        ProcError::LimitReached => ErrorCode::WorkspaceBusy,
        ProcError::StdinClosed => ErrorCode::StdinClosed,
        ProcError::NotRunning => ErrorCode::ProcessNotRunning,
        ProcError::NotTty => ErrorCode::ProcessNotTty,
        ProcError::Invalid(..) => ErrorCode::InvalidCommand,
        ProcError::Io(..) => ErrorCode::ProcessIoFailed,
        ProcError::TimedOut { .. } => ErrorCode::Timeout,
    }
}
