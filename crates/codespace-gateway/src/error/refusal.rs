//! A refused patch's code and details: the code of a planner error, and the `reason`,
//! `chunk`, `patch_line` and `nearest` every refusal the patch or its files cause carries.
//! Each internal error picks its reason here, in exhaustive matches, as codes are picked in
//! `error.rs`.

use codespace_files::{LookupError, PlanFailure};
use codespace_patch::{PatchError, PlanError};
use codespace_protocol::{Conflict, ErrorBody, ErrorCode, Nearest, RefusalReason, TokenChange};
use codespace_runner::FsError;

use super::{GatewayError, RevertRefusal, TrustError, fs_code, fs_path};

/// Fills the refusal's details of `e` into `body` (nothing for a refusal the patch does
/// not cause: arguments, policy, lease, ledger, holds).
pub(super) fn describe(e: &GatewayError, body: &mut ErrorBody) {
    match e {
        GatewayError::Patch(PlanFailure::Parse(p)) => {
            body.reason = Some(parse_reason(p));
            body.patch_line = p.line().map(wide);
            body.chunk = p.chunk().map(wide);
            if body.path.is_none() {
                body.path = p.path().map(str::to_owned);
            }
        }
        GatewayError::Patch(PlanFailure::Plan(p)) => {
            body.reason = Some(plan_reason(p));
            body.patch_line = Some(wide(p.patch_line()));
            body.chunk = p.chunk().map(wide);
            body.nearest = p.nearest().map(|n| {
                Box::new(Nearest {
                    line: wide(n.line),
                    text: n.text.clone(),
                    expected: n.expected.clone(),
                    differs: n.differs,
                    token: n.token.as_ref().map(|t| TokenChange {
                        expected: t.expected.clone(),
                        found: t.found.clone(),
                    }),
                })
            });
        }
        GatewayError::VersionConflict { path, expected, actual, diff } => {
            body.reason = Some(RefusalReason::VersionConflict);
            body.conflicts = vec![Conflict {
                path: path.clone(),
                expected: *expected,
                actual: *actual,
                diff: diff.as_ref().map(|d| d.text.clone()),
                diff_truncated: diff.as_ref().is_some_and(|d| d.truncated),
            }];
        }
        GatewayError::Revert(RevertRefusal::Changed { .. }) => {
            body.reason = Some(RefusalReason::VersionConflict);
        }
        GatewayError::Trust(TrustError::UnsafeName { line, .. }) => {
            body.reason = Some(RefusalReason::UnsafeName);
            body.patch_line = Some(wide(*line));
        }
        GatewayError::BadExpectedVersion { .. } => {
            body.reason = Some(RefusalReason::BadExpectedVersion);
        }
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
        | GatewayError::Runner(..)
        | GatewayError::Revert(
            RevertRefusal::NotApplied { .. }
            | RevertRefusal::AlreadyReverted { .. }
            | RevertRefusal::Pruned { .. },
        )
        | GatewayError::OutputLimit { .. }
        | GatewayError::KeyConflict { .. }
        | GatewayError::OperationNotFound(..)
        | GatewayError::WorkspaceIdRequired { .. }
        | GatewayError::Lease(..)
        | GatewayError::Ledger(..)
        | GatewayError::LedgerAfterRun { .. }
        | GatewayError::Recorded(..)
        | GatewayError::SandboxUnavailable(..)
        | GatewayError::InvalidCommand(..)
        | GatewayError::Process(..)
        | GatewayError::WorkNotFound { .. }
        | GatewayError::WorkClosed { .. }
        | GatewayError::IntentNotFound { .. }
        | GatewayError::IntentAlreadyClaimed { .. }
        | GatewayError::IntentNotEditable { .. }
        | GatewayError::Trust(
            TrustError::PersonOnly { .. }
            | TrustError::Unverified { .. }
            | TrustError::RootMismatch { .. }
            | TrustError::StateInvalid { .. }
            | TrustError::StateExpired { .. },
        )
        | GatewayError::IntentRevisionConflict { .. }
        | GatewayError::Internal(..) => {}
    }
}

fn wide(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

pub(super) fn parse_reason(e: &PatchError) -> RefusalReason {
    match e {
        PatchError::Empty => RefusalReason::EmptyPatch,
        PatchError::NotV4a { .. } | PatchError::UnifiedDiff { .. } => RefusalReason::NotV4a,
        PatchError::InvalidPatch { .. } | PatchError::InvalidHunk { .. } => {
            RefusalReason::Malformed
        }
    }
}

pub(super) fn plan_reason(e: &PlanError<LookupError>) -> RefusalReason {
    match e {
        PlanError::NoOperations { .. } => RefusalReason::EmptyPatch,
        PlanError::InvalidPath { .. } => RefusalReason::PathEscape,
        PlanError::AddFileExists { identical: true, .. } | PlanError::AlreadyApplied { .. } => {
            RefusalReason::AlreadyApplied
        }
        PlanError::AddFileExists { identical: false, .. }
        | PlanError::MoveDestinationExists { .. } => RefusalReason::FileExists,
        PlanError::FileNotFound { .. } => RefusalReason::FileNotFound,
        PlanError::NotAFile { .. } => RefusalReason::NotAFile,
        PlanError::NotUtf8 { .. } => RefusalReason::NotText,
        PlanError::PathConflict { .. } => RefusalReason::PathConflict,
        PlanError::ContextNotFound { .. } | PlanError::LinesNotFound { .. } => {
            RefusalReason::ContextNotFound
        }
        PlanError::Lookup { source: LookupError::TooLarge { .. }, .. } => RefusalReason::TooLarge,
        PlanError::Lookup { source: LookupError::Fs(fs), .. } => fs_reason(fs),
    }
}

fn fs_reason(e: &FsError) -> RefusalReason {
    match e {
        FsError::PathEscape { .. } => RefusalReason::PathEscape,
        FsError::SymlinkRejected { .. } => RefusalReason::Symlink,
        FsError::SpecialFileRejected { .. } | FsError::IsDirectory { .. } => {
            RefusalReason::NotAFile
        }
        FsError::NotFound { .. } => RefusalReason::FileNotFound,
        FsError::NotDirectory { .. } => RefusalReason::PathConflict,
        FsError::RootUnavailable { .. } | FsError::Io { .. } => RefusalReason::IoError,
    }
}

pub(super) fn plan_code(e: &PlanError<LookupError>) -> ErrorCode {
    match e {
        PlanError::NoOperations { .. }
        | PlanError::NotUtf8 { .. }
        | PlanError::ContextNotFound { .. }
        | PlanError::LinesNotFound { .. }
        | PlanError::AlreadyApplied { .. } => ErrorCode::InvalidPatch,
        PlanError::InvalidPath { .. } => ErrorCode::PathEscape,
        PlanError::AddFileExists { .. } => ErrorCode::AddFileExists,
        PlanError::MoveDestinationExists { .. } => ErrorCode::MoveDestinationExists,
        PlanError::FileNotFound { .. } => ErrorCode::FileNotFound,
        PlanError::NotAFile { .. } => ErrorCode::SpecialFileRejected,
        PlanError::PathConflict { .. } => ErrorCode::PathNotDirectory,
        PlanError::Lookup { source, .. } => lookup_code(source),
    }
}

/// A lookup of the patch planner failed: the filesystem's own refusal, or a file above the
/// patch size cap.
fn lookup_code(e: &LookupError) -> ErrorCode {
    match e {
        LookupError::Fs(fs) => fs_code(fs),
        LookupError::TooLarge { .. } => ErrorCode::OutputLimit,
    }
}

pub(super) fn plan_path(e: &PlanError<LookupError>) -> Option<&str> {
    match e {
        PlanError::Lookup { source: LookupError::Fs(fs), .. } => fs_path(fs),
        PlanError::Lookup { source: LookupError::TooLarge { .. }, .. }
        | PlanError::NoOperations { .. }
        | PlanError::InvalidPath { .. }
        | PlanError::AddFileExists { .. }
        | PlanError::MoveDestinationExists { .. }
        | PlanError::FileNotFound { .. }
        | PlanError::NotAFile { .. }
        | PlanError::NotUtf8 { .. }
        | PlanError::PathConflict { .. }
        | PlanError::ContextNotFound { .. }
        | PlanError::LinesNotFound { .. }
        | PlanError::AlreadyApplied { .. } => e.path(),
    }
}
