//! The wire code of every internal error, pinned: one row per variant of every error the
//! gateway maps (its own, the filesystem's, the runner's, the planner's, the lookup's, the
//! ledger's, the lease's and the supervisor's). A changed mapping fails here.

use std::path::PathBuf;

use codespace_files::{FilesError, LookupError, PlanFailure};
use codespace_patch::Operation;
use codespace_patch::{PatchError, PlanError};
use codespace_policy::{Action, Denial};
use codespace_protocol::{ApprovalState, ErrorBody, ErrorCode, HeldTool, RefusalReason};
use codespace_runner::{FsError, RunnerError, Transport};
use codespace_store::{IntentState, StoreError, WorkState};
use codespace_types::{EnvironmentKind, PatchStatus, Profile, Version};

mod corpus;
mod nested;

use nested::{fs_rows, io_error, plan_rows, proc_rows, store_rows, trust_rows};

use super::{GatewayError, RevertRefusal};
use crate::lease::LeaseError;
use codespace_files::Changed;

/// Every gateway error, through every nested error, with its code.
fn table() -> Vec<(GatewayError, ErrorCode)> {
    let mut rows = vec![
        (GatewayError::WorkspaceNotFound { id: "w".to_owned() }, ErrorCode::WorkspaceNotFound),
        (GatewayError::Draining, ErrorCode::ServerDraining),
        (
            GatewayError::Denied(Denial::Profile {
                profile: Profile::ReadOnly,
                action: Action::Write,
            }),
            ErrorCode::Unauthorized,
        ),
        (
            GatewayError::Denied(Denial::BackendUnavailable {
                environment: "box".to_owned(),
                kind: EnvironmentKind::LinuxContainer,
            }),
            ErrorCode::Unauthorized,
        ),
        (
            GatewayError::HeldArguments { tool: HeldTool::ApplyPatch, detail: "x".to_owned() },
            ErrorCode::InvalidPatch,
        ),
        (
            GatewayError::HeldArguments { tool: HeldTool::ExecCommand, detail: "x".to_owned() },
            ErrorCode::InvalidCommand,
        ),
        (
            GatewayError::HoldRequired {
                approval_id: "appr-1".to_owned(),
                state: ApprovalState::Pending,
                summary: "run".to_owned(),
            },
            ErrorCode::ApprovalRequired,
        ),
        (
            GatewayError::HoldNotFound { approval_id: "appr-1".to_owned() },
            ErrorCode::ApprovalNotFound,
        ),
        (
            GatewayError::HoldConflict { approval_id: "appr-1".to_owned(), why: "w".to_owned() },
            ErrorCode::ApprovalConflict,
        ),
        (GatewayError::HoldDenied { approval_id: "appr-1".to_owned() }, ErrorCode::ApprovalDenied),
        (
            GatewayError::HoldAmbiguous {
                approval_id: "appr-1".to_owned(),
                operation_id: Some("op-1".to_owned()),
                why: "w".to_owned(),
            },
            ErrorCode::ApprovalAmbiguous,
        ),
        (
            GatewayError::Runner(RunnerError::Files(FilesError::InvalidGlob {
                glob: "[".to_owned(),
                reason: "unclosed".to_owned(),
            })),
            ErrorCode::InvalidPattern,
        ),
        (
            GatewayError::Runner(RunnerError::Files(FilesError::InvalidRegex {
                pattern: "(".to_owned(),
                reason: "unclosed group".to_owned(),
            })),
            ErrorCode::InvalidPattern,
        ),
        (
            GatewayError::Runner(RunnerError::Files(FilesError::RegexTooLarge { limit: 1 << 20 })),
            ErrorCode::InvalidPattern,
        ),
        (
            GatewayError::Runner(RunnerError::NoWorkspace { id: "w".to_owned() }),
            ErrorCode::WorkspaceNotFound,
        ),
        (
            GatewayError::Runner(RunnerError::Task { reason: "panicked".to_owned() }),
            ErrorCode::Internal,
        ),
        // The worker's socket failed, however: nothing ran, it may have run, or it is late.
        (
            GatewayError::Runner(RunnerError::Transport(Transport::NotSent {
                reason: "gone".to_owned(),
            })),
            ErrorCode::Timeout,
        ),
        (
            GatewayError::Runner(RunnerError::Transport(Transport::Ambiguous {
                reason: "lost".to_owned(),
            })),
            ErrorCode::Timeout,
        ),
        (
            GatewayError::Runner(RunnerError::Transport(Transport::Timeout { secs: 120 })),
            ErrorCode::Timeout,
        ),
        (GatewayError::OutputLimit { what: "limit", value: 0, max: 10 }, ErrorCode::OutputLimit),
        (
            GatewayError::Patch(PlanFailure::Parse(PatchError::InvalidPatch {
                message: "no begin".to_owned(),
                line: 1,
            })),
            ErrorCode::InvalidPatch,
        ),
        (GatewayError::Patch(PlanFailure::Parse(PatchError::Empty)), ErrorCode::InvalidPatch),
        (
            GatewayError::Patch(PlanFailure::Parse(PatchError::NotV4a { line: 1 })),
            ErrorCode::InvalidPatch,
        ),
        (
            GatewayError::Patch(PlanFailure::Parse(PatchError::InvalidHunk {
                line: 2,
                file: None,
                chunk: None,
                message: "bad".to_owned(),
            })),
            ErrorCode::InvalidPatch,
        ),
        (
            GatewayError::Patch(PlanFailure::Parse(PatchError::UnifiedDiff {
                line: 1,
                text: "---".to_owned(),
            })),
            ErrorCode::InvalidPatch,
        ),
        (
            GatewayError::BadExpectedVersion { path: "a".to_owned(), value: "v1".to_owned() },
            ErrorCode::InvalidPatch,
        ),
        (
            GatewayError::VersionConflict {
                diff: None,
                path: "a".to_owned(),
                expected: Version::Absent,
                actual: Version::of_bytes(b"a"),
            },
            ErrorCode::VersionConflict,
        ),
        (
            GatewayError::KeyConflict { operation_id: "op-1".to_owned() },
            ErrorCode::OperationKeyConflict,
        ),
        (GatewayError::OperationNotFound("none".to_owned()), ErrorCode::OperationNotFound),
        (
            GatewayError::InvalidArguments { tool: "read".to_owned(), detail: "path".to_owned() },
            ErrorCode::InvalidArguments,
        ),
        (GatewayError::WorkspaceIdRequired { key: "k".to_owned() }, ErrorCode::WorkspaceIdRequired),
        (GatewayError::Lease(LeaseError::QueueFull), ErrorCode::ResourceQueueFull),
        (GatewayError::Lease(LeaseError::Busy(None)), ErrorCode::WorkspaceBusy),
        (
            GatewayError::Recorded(Box::new(ErrorBody::new(ErrorCode::AddFileExists, "kept"))),
            ErrorCode::AddFileExists,
        ),
        (GatewayError::SandboxUnavailable("Landlock".to_owned()), ErrorCode::Unauthorized),
        (GatewayError::InvalidCommand("empty argv".to_owned()), ErrorCode::InvalidCommand),
        (GatewayError::WorkNotFound { work_id: "work-1".to_owned() }, ErrorCode::WorkNotFound),
        (
            GatewayError::WorkClosed { work_id: "work-1".to_owned(), state: WorkState::Closed },
            ErrorCode::WorkClosed,
        ),
        (GatewayError::IntentNotFound { intent_id: "fb-1".to_owned() }, ErrorCode::IntentNotFound),
        (
            GatewayError::IntentAlreadyClaimed { intent_id: "fb-1".to_owned() },
            ErrorCode::IntentAlreadyClaimed,
        ),
        (
            GatewayError::IntentNotEditable {
                intent_id: "fb-1".to_owned(),
                state: IntentState::Done,
                action: "edited",
            },
            ErrorCode::IntentNotEditable,
        ),
        (
            GatewayError::IntentRevisionConflict { intent_id: "fb-1".to_owned(), given: 1 },
            ErrorCode::IntentRevisionConflict,
        ),
        (GatewayError::Internal("bug".to_owned()), ErrorCode::Internal),
    ];
    rows.extend(trust_rows().into_iter().map(|(e, code)| (GatewayError::Trust(e), code)));
    rows.extend(fs_rows().into_iter().map(|(e, code)| (GatewayError::from(e), code)));
    rows.extend(
        plan_rows().into_iter().map(|(e, code)| (GatewayError::Patch(PlanFailure::Plan(e)), code)),
    );
    rows.extend(proc_rows().into_iter().map(|(e, code)| (GatewayError::Process(e), code)));
    // A supervisor refusal that came through the runner keeps its own variant and code.
    rows.extend(revert_rows());
    rows.extend(
        proc_rows()
            .into_iter()
            .map(|(e, code)| (GatewayError::from(RunnerError::Process(e)), code)),
    );
    for e in store_rows() {
        rows.push((GatewayError::from(e), ErrorCode::LedgerError));
    }
    for source in store_rows() {
        let e = GatewayError::LedgerAfterRun {
            operation_id: "op-2".to_owned(),
            status: PatchStatus::Applied,
            source: Box::new(source),
        };
        rows.push((e, ErrorCode::LedgerError));
    }
    rows
}

/// Why a revert wrote nothing: its own refusals, and a lost race for the claim.
fn revert_rows() -> Vec<(GatewayError, ErrorCode)> {
    let op = || "op-1".to_owned();
    let changed =
        Changed { path: "a".to_owned(), expected: Version::Absent, actual: Version::Absent };
    vec![
        (
            GatewayError::Revert(RevertRefusal::NotApplied {
                operation_id: op(),
                status: PatchStatus::Rejected,
            }),
            ErrorCode::OperationNotRevertible,
        ),
        (
            GatewayError::Revert(RevertRefusal::AlreadyReverted { operation_id: op(), by: op() }),
            ErrorCode::OperationAlreadyReverted,
        ),
        (
            GatewayError::Revert(RevertRefusal::Pruned { operation_id: op(), at: Some(1) }),
            ErrorCode::UndoPruned,
        ),
        (
            GatewayError::Revert(RevertRefusal::Changed {
                operation_id: op(),
                files: vec![changed],
                diffs: vec![],
            }),
            ErrorCode::VersionConflict,
        ),
        (
            GatewayError::from(StoreError::AlreadyReverted {
                operation_id: op(),
                status: codespace_store::OpStatus::Finished(PatchStatus::Applied),
                by: Some(op()),
            }),
            ErrorCode::OperationAlreadyReverted,
        ),
        (
            GatewayError::from(StoreError::AlreadyReverted {
                operation_id: op(),
                status: codespace_store::OpStatus::Finished(PatchStatus::Rejected),
                by: None,
            }),
            ErrorCode::OperationNotRevertible,
        ),
    ]
}

/// The name of a gateway error's variant. Exhaustive on purpose: a new variant stops this
/// test compiling until it has rows in the table.
fn variant(e: &GatewayError) -> &'static str {
    match e {
        GatewayError::InvalidArguments { .. } => "InvalidArguments",
        GatewayError::WorkspaceNotFound { .. } => "WorkspaceNotFound",
        GatewayError::Draining => "Draining",
        GatewayError::Denied(..) => "Denied",
        GatewayError::HeldArguments { .. } => "HeldArguments",
        GatewayError::HoldRequired { .. } => "HoldRequired",
        GatewayError::HoldNotFound { .. } => "HoldNotFound",
        GatewayError::HoldConflict { .. } => "HoldConflict",
        GatewayError::HoldDenied { .. } => "HoldDenied",
        GatewayError::HoldAmbiguous { .. } => "HoldAmbiguous",
        GatewayError::Runner(..) => "Runner",
        GatewayError::OutputLimit { .. } => "OutputLimit",
        GatewayError::Patch(..) => "Patch",
        GatewayError::BadExpectedVersion { .. } => "BadExpectedVersion",
        GatewayError::VersionConflict { .. } => "VersionConflict",
        GatewayError::KeyConflict { .. } => "KeyConflict",
        GatewayError::OperationNotFound(..) => "OperationNotFound",
        GatewayError::Revert(..) => "Revert",
        GatewayError::WorkspaceIdRequired { .. } => "WorkspaceIdRequired",
        GatewayError::Lease(..) => "Lease",
        GatewayError::Ledger(..) => "Ledger",
        GatewayError::LedgerAfterRun { .. } => "LedgerAfterRun",
        GatewayError::Recorded(..) => "Recorded",
        GatewayError::SandboxUnavailable(..) => "SandboxUnavailable",
        GatewayError::InvalidCommand(..) => "InvalidCommand",
        GatewayError::Process(..) => "Process",
        GatewayError::WorkNotFound { .. } => "WorkNotFound",
        GatewayError::WorkClosed { .. } => "WorkClosed",
        GatewayError::IntentNotFound { .. } => "IntentNotFound",
        GatewayError::IntentAlreadyClaimed { .. } => "IntentAlreadyClaimed",
        GatewayError::IntentNotEditable { .. } => "IntentNotEditable",
        GatewayError::IntentRevisionConflict { .. } => "IntentRevisionConflict",
        GatewayError::Trust(..) => "Trust",
        GatewayError::Internal(..) => "Internal",
    }
}

#[test]
fn every_internal_error_has_its_wire_code() {
    let table = table();
    for (error, code) in &table {
        let body = error.to_body();
        assert_eq!(body.code, *code, "{error:?}");
        assert_eq!(error.code(), *code, "{error:?}");
        assert_eq!(body.message, error.to_string(), "{error:?}");
    }
    let mut seen: Vec<&str> = table.iter().map(|(e, _)| variant(e)).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), 34, "every GatewayError variant has a row: {seen:?}");
    // 43 direct rows, 6 of a revert, 6 that keep a hold trustworthy, then 8 fs, 13 + 8 plan,
    // 2 x 9 process and 2 x 12 ledger rows.
    assert_eq!(table.len(), 43 + 6 + 6 + 8 + 21 + 18 + 24);
    assert!(
        table
            .iter()
            .filter(|(e, _)| matches!(e, GatewayError::Runner(RunnerError::Process(_))))
            .count()
            == 0,
        "a runner's process error becomes GatewayError::Process"
    );
}

/// Every refusal a patch or its files cause carries a reason and, when it has one, its patch
/// line; no other refusal has a reason.
#[test]
fn every_patch_refusal_has_its_reason() {
    for (error, _) in table() {
        let body = error.to_body();
        let patch_caused = matches!(
            error,
            GatewayError::Patch(..)
                | GatewayError::VersionConflict { .. }
                | GatewayError::BadExpectedVersion { .. }
                | GatewayError::Revert(super::RevertRefusal::Changed { .. })
                | GatewayError::Trust(super::TrustError::UnsafeName { .. })
        );
        assert_eq!(body.reason.is_some(), patch_caused, "{error:?}");
        if let GatewayError::Patch(PlanFailure::Plan(p)) = &error {
            assert_eq!(body.patch_line, Some(p.patch_line() as u64), "{error:?}");
        }
    }
    let reason = |e: PlanError<LookupError>| GatewayError::Patch(PlanFailure::Plan(e)).to_body();
    let exists = |identical| PlanError::AddFileExists {
        path: "a".to_owned(),
        line: 2,
        directory: false,
        identical,
    };
    assert_eq!(reason(exists(false)).reason, Some(RefusalReason::FileExists));
    assert_eq!(reason(exists(true)).reason, Some(RefusalReason::AlreadyApplied));
    let hunk = GatewayError::Patch(PlanFailure::Parse(PatchError::InvalidHunk {
        line: 7,
        file: Some("x.rs".to_owned()),
        chunk: Some(2),
        message: "bad".to_owned(),
    }))
    .to_body();
    assert_eq!(
        (hunk.reason, hunk.patch_line, hunk.chunk, hunk.path.as_deref()),
        (Some(RefusalReason::Malformed), Some(7), Some(2), Some("x.rs"))
    );
}

#[test]
fn bodies_name_the_path_and_operation_they_are_about() {
    // A lookup refused by the filesystem carries the planner's message and the path the
    // filesystem was asked about; an empty path is omitted.
    let lookup = |fs: FsError| {
        GatewayError::Patch(PlanFailure::Plan(PlanError::Lookup {
            op: Operation::Update,
            path: "planned.rs".to_owned(),
            line: 4,
            source: LookupError::Fs(fs),
        }))
    };
    let body = lookup(FsError::SymlinkRejected { path: "link".to_owned() }).to_body();
    assert_eq!(body.code, ErrorCode::SymlinkRejected);
    assert_eq!(body.path.as_deref(), Some("link"));
    assert!(body.message.starts_with("Update File 'planned.rs' (patch line 4): "), "{body:?}");
    let body = lookup(FsError::RootUnavailable { root: PathBuf::from("ws"), source: io_error() })
        .to_body();
    assert_eq!(body.path, None);
    // The size cap names the planned path.
    let too_large = GatewayError::Patch(PlanFailure::Plan(PlanError::Lookup {
        op: Operation::Update,
        path: "big.bin".to_owned(),
        line: 4,
        source: LookupError::TooLarge { path: "big.bin".to_owned() },
    }));
    assert_eq!(too_large.to_body().path.as_deref(), Some("big.bin"));
    // A filesystem refusal alone: its own message and path, none when empty.
    let body = GatewayError::from(FsError::NotFound { path: "gone.rs".to_owned() }).to_body();
    assert_eq!(
        (body.message.as_str(), body.path.as_deref()),
        ("not found: \"gone.rs\"", Some("gone.rs"))
    );
    let body = GatewayError::from(FsError::NotFound { path: String::new() }).to_body();
    assert_eq!(body.path, None);
    assert_eq!(
        super::fs_body(&FsError::NotFound { path: "x".to_owned() }).path.as_deref(),
        Some("x")
    );
    // Version refusals name their path; key conflicts and unrecorded results their operation.
    let bad = GatewayError::BadExpectedVersion { path: "a.rs".to_owned(), value: "v".to_owned() };
    assert_eq!(bad.to_body().path.as_deref(), Some("a.rs"));
    assert_eq!(
        bad.to_body().message,
        "expected_versions[\"a.rs\"] = \"v\" is not a version (sha256:<64 hex> or absent)"
    );
    let conflict = GatewayError::KeyConflict { operation_id: "op-1".to_owned() }.to_body();
    assert_eq!((conflict.operation_id.as_deref(), conflict.path), (Some("op-1"), None));
    let after = GatewayError::LedgerAfterRun {
        operation_id: "op-2".to_owned(),
        status: PatchStatus::FailedRolledBack,
        source: Box::new(StoreError::Degraded { cause: "disk full".to_owned() }),
    }
    .to_body();
    assert_eq!(after.operation_id.as_deref(), Some("op-2"));
    assert!(after.message.contains("(outcome FailedRolledBack)"), "{}", after.message);
    // A recorded refusal comes back exactly as recorded.
    let mut recorded = ErrorBody::new(ErrorCode::VersionConflict, "stale").with_path("p");
    recorded.operation_id = Some("op-3".to_owned());
    recorded.approval_id = Some("ap-1".to_owned());
    assert_eq!(GatewayError::Recorded(Box::new(recorded.clone())).to_body(), recorded);
    // Nothing else names a path or an operation.
    let plain = GatewayError::Lease(LeaseError::Busy(None)).to_body();
    assert_eq!((plain.path, plain.operation_id, plain.approval_id), (None, None, None));
}
