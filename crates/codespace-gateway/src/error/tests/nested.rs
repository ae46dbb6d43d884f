//! The rows of the errors the gateway's own errors wrap: every variant of the filesystem's,
//! the planner's, the ledger's and the supervisor's errors, each with the code it becomes.

use std::io;
use std::path::PathBuf;

use codespace_files::LookupError;
use codespace_fs::{FileKind, PathEscapeReason};
use codespace_patch::Operation;
use codespace_patch::PlanError;
use codespace_protocol::ErrorCode;
use codespace_runner::FsError;
use codespace_runner::ProcError;
use codespace_store::{OpStatus, StoreError};
use codespace_types::PatchStatus;

pub(super) fn io_error() -> io::Error {
    io::Error::other("disk on fire")
}

fn sqlite_error() -> rusqlite::Error {
    rusqlite::Error::QueryReturnedNoRows
}

/// Every filesystem error, with its code.
pub(super) fn fs_rows() -> Vec<(FsError, ErrorCode)> {
    let p = || "src/a.rs".to_owned();
    vec![
        (
            FsError::PathEscape { path: p(), reason: PathEscapeReason::ParentEscape },
            ErrorCode::PathEscape,
        ),
        (FsError::SymlinkRejected { path: p() }, ErrorCode::SymlinkRejected),
        (
            FsError::SpecialFileRejected { path: p(), kind: FileKind::Fifo },
            ErrorCode::SpecialFileRejected,
        ),
        (FsError::NotFound { path: p() }, ErrorCode::FileNotFound),
        (FsError::NotDirectory { path: p() }, ErrorCode::PathNotDirectory),
        (FsError::IsDirectory { path: p() }, ErrorCode::SpecialFileRejected),
        (
            FsError::RootUnavailable { root: PathBuf::from("ws"), source: io_error() },
            ErrorCode::FileOperationFailed,
        ),
        (
            FsError::Io { path: p(), op: "read".into(), source: io_error() },
            ErrorCode::FileOperationFailed,
        ),
    ]
}

/// Every planner error (lookups through every filesystem error and the size cap).
pub(super) fn plan_rows() -> Vec<(PlanError<LookupError>, ErrorCode)> {
    let p = || "src/a.rs".to_owned();
    let mut rows = vec![
        (PlanError::NoOperations { line: 2 }, ErrorCode::InvalidPatch),
        (
            PlanError::InvalidPath {
                op: Operation::Add,
                path: p(),
                line: 2,
                reason: "absolute".into(),
            },
            ErrorCode::PathEscape,
        ),
        (
            PlanError::AddFileExists { path: p(), line: 2, directory: false, identical: false },
            ErrorCode::AddFileExists,
        ),
        (
            PlanError::AddFileExists { path: p(), line: 2, directory: false, identical: true },
            ErrorCode::AddFileExists,
        ),
        (
            PlanError::MoveDestinationExists { path: p(), from: p(), line: 2, directory: true },
            ErrorCode::MoveDestinationExists,
        ),
        (
            PlanError::FileNotFound { op: Operation::Delete, path: p(), line: 2 },
            ErrorCode::FileNotFound,
        ),
        (
            PlanError::NotAFile { op: Operation::Update, path: p(), line: 2 },
            ErrorCode::SpecialFileRejected,
        ),
        (PlanError::NotUtf8 { path: p(), line: 2 }, ErrorCode::InvalidPatch),
        (
            PlanError::PathConflict {
                op: Operation::MoveTo,
                path: p(),
                ancestor: "src".to_owned(),
                line: 2,
            },
            ErrorCode::PathNotDirectory,
        ),
        (
            PlanError::ContextNotFound {
                path: p(),
                chunk: 1,
                line: 3,
                context: "fn".to_owned(),
                nearest: None,
            },
            ErrorCode::InvalidPatch,
        ),
        (
            PlanError::LinesNotFound {
                path: p(),
                chunk: 1,
                line: 3,
                expected: vec!["x".to_owned()],
                end_of_file: false,
                nearest: None,
            },
            ErrorCode::InvalidPatch,
        ),
        (PlanError::AlreadyApplied { path: p(), chunk: 1, line: 3 }, ErrorCode::InvalidPatch),
        (
            PlanError::Lookup {
                op: Operation::Update,
                path: p(),
                line: 2,
                source: LookupError::TooLarge { path: p() },
            },
            ErrorCode::OutputLimit,
        ),
    ];
    for (fs, code) in fs_rows() {
        let source = LookupError::Fs(fs);
        rows.push((PlanError::Lookup { op: Operation::Update, path: p(), line: 2, source }, code));
    }
    rows
}

/// Every ledger error.
pub(super) fn store_rows() -> Vec<StoreError> {
    vec![
        StoreError::Open { path: PathBuf::from("l"), source: io_error() },
        StoreError::OpenDatabase { path: PathBuf::from("l"), step: "open", source: sqlite_error() },
        StoreError::Refused { path: PathBuf::from("l"), reason: "symlink".to_owned() },
        StoreError::Busy(sqlite_error()),
        StoreError::Degraded { cause: "disk full".to_owned() },
        StoreError::Sqlite(sqlite_error()),
        StoreError::CorruptRow { operation_id: "op-1".to_owned(), detail: "x".to_owned() },
        StoreError::UnknownOperation { operation_id: "op-1".to_owned() },
        StoreError::AlreadyFinished {
            operation_id: "op-1".to_owned(),
            status: OpStatus::Finished(PatchStatus::Applied),
        },
        StoreError::NotOwner { operation_id: "op-1".to_owned(), owner: Some("inst-1".to_owned()) },
        StoreError::Undo { path: PathBuf::from("l.undo/op-1/0"), op: "fsync", source: io_error() },
        StoreError::InvalidInput { reason: "x".to_owned() },
    ]
}

/// Every supervisor error.
pub(super) fn proc_rows() -> Vec<(ProcError, ErrorCode)> {
    vec![
        (ProcError::NotFound, ErrorCode::ProcessNotFound),
        (ProcError::SpawnFailed("no such file".to_owned()), ErrorCode::ProcessSpawnFailed),
        (ProcError::LimitReached, ErrorCode::WorkspaceBusy),
        (ProcError::StdinClosed, ErrorCode::StdinClosed),
        (ProcError::NotRunning, ErrorCode::ProcessNotRunning),
        (ProcError::NotTty, ErrorCode::ProcessNotTty),
        (ProcError::Invalid("rows".to_owned()), ErrorCode::InvalidCommand),
        (ProcError::Io("EPIPE".to_owned()), ErrorCode::ProcessIoFailed),
        (ProcError::TimedOut { limit_secs: 30 }, ErrorCode::Timeout),
    ]
}

/// Every refusal that keeps a hold meaning what a person saw, with its code.
pub(super) fn trust_rows() -> Vec<(crate::error::TrustError, ErrorCode)> {
    use crate::error::TrustError;
    let id = || "appr-1".to_owned();
    vec![
        (TrustError::unsafe_name("Add File", "a\u{1b}b", '\u{1b}', 2), ErrorCode::UnsafePathName),
        (
            TrustError::PersonOnly { approval_id: id(), workspace_id: "w".to_owned() },
            ErrorCode::ApprovalPersonRequired,
        ),
        (
            TrustError::Unverified { approval_id: id(), why: "w".to_owned() },
            ErrorCode::ApprovalUnverified,
        ),
        (
            TrustError::RootMismatch { approval_id: id(), why: "w".to_owned() },
            ErrorCode::ApprovalRootMismatch,
        ),
        (TrustError::StateInvalid { why: "w".to_owned() }, ErrorCode::RequestStateInvalid),
        (TrustError::StateExpired { approval_id: id(), ago: 1 }, ErrorCode::RequestStateExpired),
    ]
}
