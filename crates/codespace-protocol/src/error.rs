//! Error codes and the `ErrorBody` a refused tool call carries.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Every refusal the exposed tools can return. Serialized in `SCREAMING_SNAKE_CASE`. Codes
/// of the reference contract that belong to tools not exposed yet (patches, processes) are
/// added together with those tools, so the list never promises a refusal nothing returns.
///
/// Each code documents what it means and what the caller should do next
/// ([`ErrorCode::next_action`]); the README's error table is generated from the same text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    InvalidArguments,
    Unauthorized,
    WorkspaceNotFound,
    InvalidPattern,
    PathEscape,
    FileNotFound,
    PathNotDirectory,
    FileOperationFailed,
    SymlinkRejected,
    SpecialFileRejected,
    OutputLimit,
    WorkspaceBusy,
    ResourceQueueFull,
    InvalidPatch,
    AddFileExists,
    MoveDestinationExists,
    VersionConflict,
    OperationKeyConflict,
    OperationNotFound,
    WorkspaceIdRequired,
    LedgerError,
    InvalidCommand,
    ProcessSpawnFailed,
    ProcessNotFound,
    ProcessNotTty,
    ProcessNotRunning,
    StdinClosed,
    ProcessIoFailed,
    Timeout,
    WorkNotFound,
    WorkClosed,
    IntentNotFound,
    IntentAlreadyClaimed,
    IntentNotEditable,
    IntentRevisionConflict,
    ApprovalRequired,
    ApprovalNotFound,
    ApprovalConflict,
    ApprovalAmbiguous,
    Internal,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::InvalidArguments,
        ErrorCode::Unauthorized,
        ErrorCode::WorkspaceNotFound,
        ErrorCode::InvalidPattern,
        ErrorCode::PathEscape,
        ErrorCode::FileNotFound,
        ErrorCode::PathNotDirectory,
        ErrorCode::FileOperationFailed,
        ErrorCode::SymlinkRejected,
        ErrorCode::SpecialFileRejected,
        ErrorCode::OutputLimit,
        ErrorCode::WorkspaceBusy,
        ErrorCode::ResourceQueueFull,
        ErrorCode::InvalidPatch,
        ErrorCode::AddFileExists,
        ErrorCode::MoveDestinationExists,
        ErrorCode::VersionConflict,
        ErrorCode::OperationKeyConflict,
        ErrorCode::OperationNotFound,
        ErrorCode::WorkspaceIdRequired,
        ErrorCode::LedgerError,
        ErrorCode::InvalidCommand,
        ErrorCode::ProcessSpawnFailed,
        ErrorCode::ProcessNotFound,
        ErrorCode::ProcessNotTty,
        ErrorCode::ProcessNotRunning,
        ErrorCode::StdinClosed,
        ErrorCode::ProcessIoFailed,
        ErrorCode::Timeout,
        ErrorCode::WorkNotFound,
        ErrorCode::WorkClosed,
        ErrorCode::IntentNotFound,
        ErrorCode::IntentAlreadyClaimed,
        ErrorCode::IntentNotEditable,
        ErrorCode::IntentRevisionConflict,
        ErrorCode::ApprovalRequired,
        ErrorCode::ApprovalNotFound,
        ErrorCode::ApprovalConflict,
        ErrorCode::ApprovalAmbiguous,
        ErrorCode::Internal,
    ];

    /// The wire spelling, e.g. `PATH_ESCAPE`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArguments => "INVALID_ARGUMENTS",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::WorkspaceNotFound => "WORKSPACE_NOT_FOUND",
            ErrorCode::InvalidPattern => "INVALID_PATTERN",
            ErrorCode::PathEscape => "PATH_ESCAPE",
            ErrorCode::FileNotFound => "FILE_NOT_FOUND",
            ErrorCode::PathNotDirectory => "PATH_NOT_DIRECTORY",
            ErrorCode::FileOperationFailed => "FILE_OPERATION_FAILED",
            ErrorCode::SymlinkRejected => "SYMLINK_REJECTED",
            ErrorCode::SpecialFileRejected => "SPECIAL_FILE_REJECTED",
            ErrorCode::OutputLimit => "OUTPUT_LIMIT",
            ErrorCode::WorkspaceBusy => "WORKSPACE_BUSY",
            ErrorCode::ResourceQueueFull => "RESOURCE_QUEUE_FULL",
            ErrorCode::InvalidPatch => "INVALID_PATCH",
            ErrorCode::AddFileExists => "ADD_FILE_EXISTS",
            ErrorCode::MoveDestinationExists => "MOVE_DESTINATION_EXISTS",
            ErrorCode::VersionConflict => "VERSION_CONFLICT",
            ErrorCode::OperationKeyConflict => "OPERATION_KEY_CONFLICT",
            ErrorCode::OperationNotFound => "OPERATION_NOT_FOUND",
            ErrorCode::WorkspaceIdRequired => "WORKSPACE_ID_REQUIRED",
            ErrorCode::LedgerError => "LEDGER_ERROR",
            ErrorCode::InvalidCommand => "INVALID_COMMAND",
            ErrorCode::ProcessSpawnFailed => "PROCESS_SPAWN_FAILED",
            ErrorCode::ProcessNotFound => "PROCESS_NOT_FOUND",
            ErrorCode::ProcessNotTty => "PROCESS_NOT_TTY",
            ErrorCode::ProcessNotRunning => "PROCESS_NOT_RUNNING",
            ErrorCode::StdinClosed => "STDIN_CLOSED",
            ErrorCode::ProcessIoFailed => "PROCESS_IO_FAILED",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::WorkNotFound => "WORK_NOT_FOUND",
            ErrorCode::WorkClosed => "WORK_CLOSED",
            ErrorCode::IntentNotFound => "INTENT_NOT_FOUND",
            ErrorCode::IntentAlreadyClaimed => "INTENT_ALREADY_CLAIMED",
            ErrorCode::IntentNotEditable => "INTENT_NOT_EDITABLE",
            ErrorCode::IntentRevisionConflict => "INTENT_REVISION_CONFLICT",
            ErrorCode::ApprovalRequired => "APPROVAL_REQUIRED",
            ErrorCode::ApprovalNotFound => "APPROVAL_NOT_FOUND",
            ErrorCode::ApprovalConflict => "APPROVAL_CONFLICT",
            ErrorCode::ApprovalAmbiguous => "APPROVAL_AMBIGUOUS",
            ErrorCode::Internal => "INTERNAL",
        }
    }

    /// What the code means, in one sentence.
    pub fn meaning(self) -> &'static str {
        match self {
            ErrorCode::InvalidArguments => {
                "The arguments do not fit the tool's input schema (a missing field, a wrong type); nothing ran."
            }
            ErrorCode::Unauthorized => {
                "The operator's policy denies this action: a read-only profile, an unavailable environment backend, or sandbox=on on a host that cannot enforce it."
            }
            ErrorCode::WorkspaceNotFound => "The workspace_id is not registered.",
            ErrorCode::InvalidPattern => {
                "The glob or regular expression does not parse, or the compiled expression is over the 1 MiB size cap."
            }
            ErrorCode::PathEscape => {
                "The path is absolute, empty, contains NUL, is too long, or leaves the workspace."
            }
            ErrorCode::FileNotFound => "The file does not exist.",
            ErrorCode::PathNotDirectory => {
                "A component of the path that must be a directory is not one."
            }
            ErrorCode::FileOperationFailed => "Another filesystem error inside the workspace.",
            ErrorCode::SymlinkRejected => "The path or one of its ancestors is a symbolic link.",
            ErrorCode::SpecialFileRejected => {
                "The path is not a regular file (directory, FIFO, socket or device)."
            }
            ErrorCode::OutputLimit => "A limit argument is 0 or above its cap.",
            ErrorCode::WorkspaceBusy => {
                "Another mutation or a live process holds the workspace's mutation lease."
            }
            ErrorCode::ResourceQueueFull => {
                "64 requests are already waiting for this workspace's lease."
            }
            ErrorCode::InvalidPatch => {
                "The patch is not valid V4A, or its context does not match the file; the message names the file, chunk and line."
            }
            ErrorCode::AddFileExists => "An Add File target already exists.",
            ErrorCode::MoveDestinationExists => "A Move to destination already exists.",
            ErrorCode::VersionConflict => {
                "A file's current version differs from expected_versions; nothing was written."
            }
            ErrorCode::OperationKeyConflict => {
                "The operation_key was already used in this workspace for a different request."
            }
            ErrorCode::OperationNotFound => {
                "No operation with that id (or key in that workspace), or not exactly one of id and key was given."
            }
            ErrorCode::WorkspaceIdRequired => {
                "An operation_key given without workspace_id is used in more than one workspace."
            }
            ErrorCode::LedgerError => {
                "The operation ledger, or the undo log beside it, could not be read or written."
            }
            ErrorCode::InvalidCommand => {
                "The command or its arguments are invalid (empty argv, a NUL byte, a zero terminal size)."
            }
            ErrorCode::ProcessSpawnFailed => {
                "No process was started (for example the executable is not on the PATH)."
            }
            ErrorCode::ProcessNotFound => {
                "No process with that id: never started, or evicted after it completed."
            }
            ErrorCode::ProcessNotTty => "The process runs on pipes, not a terminal.",
            ErrorCode::ProcessNotRunning => "The process has exited.",
            ErrorCode::StdinClosed => "The process's stdin was already closed.",
            ErrorCode::ProcessIoFailed => {
                "Writing to the process's stdin or resizing its terminal failed."
            }
            ErrorCode::Timeout => {
                "The command was killed at its time limit: read_process says so once, at the end of its output, instead of eof. Also: the runner worker (`--runner uds`) could not be reached (the message says nothing ran), its connection was lost after the request was sent, or it did not answer within its deadline (the message says the request may have run)."
            }
            ErrorCode::WorkNotFound => {
                "No work with that work_id in this workspace (never opened here, or the id is of another workspace)."
            }
            ErrorCode::WorkClosed => {
                "The work is closed: nothing more can be claimed from it or finished."
            }
            ErrorCode::IntentNotFound => "No instruction with that intent_id in this work.",
            ErrorCode::IntentAlreadyClaimed => {
                "The agent already claimed this instruction: its content is frozen."
            }
            ErrorCode::IntentNotEditable => {
                "The instruction's state does not allow this: only draft or queued ones can be edited, queued or cancelled, only claimed ones completed."
            }
            ErrorCode::IntentRevisionConflict => {
                "The instruction changed since the revision given (another edit, queue or claim came first)."
            }
            ErrorCode::ApprovalRequired => {
                "Policy allows the patch or command, but the workspace has approvals=confirm: a hold was created (or the same request's active hold reused) and nothing ran. approval_id names it. A pause, not a grant."
            }
            ErrorCode::ApprovalNotFound => "No confirmation hold has that approval_id.",
            ErrorCode::ApprovalConflict => {
                "The hold is in the wrong state for the call: resolving one that is no longer pending, resuming one still pending or denied, or a second resume while one runs."
            }
            ErrorCode::ApprovalAmbiguous => {
                "A resume was interrupted (a crash) and whether the action ran cannot be told from the ledger: an interrupted command is never started again. Carries approval_id (and operation_id for a patch)."
            }
            ErrorCode::Internal => "An invariant of the server failed; this is a bug.",
        }
    }

    /// What the caller should do next.
    pub fn next_action(self) -> &'static str {
        match self {
            ErrorCode::InvalidArguments => {
                "Fix the field the message names, as the tool's input schema describes it, and call again."
            }
            ErrorCode::Unauthorized => "Do not retry: no argument can escalate. Ask the operator.",
            ErrorCode::WorkspaceNotFound => {
                "Fix the id (workspace_info lists none; the operator knows them)."
            }
            ErrorCode::InvalidPattern => {
                "Fix the pattern; the message names the parse error, or says the pattern is too large (use fewer or smaller repetitions)."
            }
            ErrorCode::PathEscape => {
                "Use a workspace-relative path that stays inside the workspace."
            }
            ErrorCode::FileNotFound => "Check the path (find lists files).",
            ErrorCode::PathNotDirectory => "Check the path: a parent component is a file.",
            ErrorCode::FileOperationFailed => "Inspect the message; a retry may succeed.",
            ErrorCode::SymlinkRejected => "Use the real path; symbolic links are never followed.",
            ErrorCode::SpecialFileRejected => "Only regular files can be read or changed.",
            ErrorCode::OutputLimit => "Use a limit within the advertised cap.",
            ErrorCode::WorkspaceBusy => {
                "Wait for it to finish, then retry with backoff. Reads still work."
            }
            ErrorCode::ResourceQueueFull => "Retry later with backoff.",
            ErrorCode::InvalidPatch => "Read the file again and send a corrected patch.",
            ErrorCode::AddFileExists => "Read the file, then use Update File.",
            ErrorCode::MoveDestinationExists => {
                "Pick another destination, or delete it in a separate step first."
            }
            ErrorCode::VersionConflict => {
                "Read the file again and produce a new patch; never force the old one."
            }
            ErrorCode::OperationKeyConflict => {
                "Look up the earlier operation; use a new key only for a new logical change."
            }
            ErrorCode::OperationNotFound => "Check the id, or the key and workspace_id.",
            ErrorCode::WorkspaceIdRequired => {
                "Repeat the call with the workspace_id the key was used in, or use the operation_id."
            }
            ErrorCode::LedgerError => {
                "Do not retry under a new key: check operation_status and the files once the operator has fixed the ledger."
            }
            ErrorCode::InvalidCommand => "Fix the request.",
            ErrorCode::ProcessSpawnFailed => {
                "Fix the command; retrying is safe because nothing runs."
            }
            ErrorCode::ProcessNotFound => {
                "Do not invent or search for handles; start a new command if you need one."
            }
            ErrorCode::ProcessNotTty => "Resize applies only to processes started with tty: true.",
            ErrorCode::ProcessNotRunning => "Read its output and status instead.",
            ErrorCode::StdinClosed => "Start a new command if it needs more input.",
            ErrorCode::ProcessIoFailed => {
                "Check process_status; the process may have stopped reading."
            }
            ErrorCode::Timeout => {
                "For a command's time limit: treat the work as interrupted, not finished; rerun it with a larger exec_command timeout_secs (at most the max_timeout_secs workspace_info shows), or split it. For the runner: check operation_status (a patch) or process_status (a command) before retrying anything that may have run; workspace_info's runner.state says whether the server must be restarted."
            }
            ErrorCode::WorkNotFound => {
                "Use the work_id work_open returned for this workspace, or open a new work."
            }
            ErrorCode::WorkClosed => {
                "Open a new work (work_open); instructions left for later attach to it."
            }
            ErrorCode::IntentNotFound => {
                "Use the intent_id steer_claim_next returned, with the same work_id."
            }
            ErrorCode::IntentAlreadyClaimed => {
                "Write a new instruction instead of changing this one."
            }
            ErrorCode::IntentNotEditable => {
                "Read the instruction's state again; complete only what you claimed."
            }
            ErrorCode::IntentRevisionConflict => {
                "Fetch it again and redo the change on the current revision."
            }
            ErrorCode::ApprovalRequired => {
                "Ask the person (or grant it yourself with approval_resolve: the hold is not a security boundary), then operation_resume. Retrying the same request returns the same approval_id."
            }
            ErrorCode::ApprovalNotFound => {
                "Check the id; holds are created by approval_create or APPROVAL_REQUIRED."
            }
            ErrorCode::ApprovalConflict => {
                "Read the message: resolve the hold first, create a new one if it was denied, or wait for the running resume and call operation_resume again for its result."
            }
            ErrorCode::ApprovalAmbiguous => {
                "Do not run the command again blindly: inspect its effects. For a patch, check operation_status with the operation_id and read the files."
            }
            ErrorCode::Internal => "Report it; do not treat it as busy.",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The JSON text of a refused tool call (`isError: true`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorBody {
    /// The refusal's code; its meaning and the next action are in the server's documentation.
    pub code: ErrorCode,
    /// What was refused and why, for the caller to read.
    pub message: String,
    /// The workspace-relative path the refusal is about, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The operation the refusal is about: the earlier one a key belongs to, or one that ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    /// The confirmation hold the refusal is about (`APPROVAL_*` codes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
}

impl ErrorBody {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorBody {
            code,
            message: message.into(),
            path: None,
            operation_id: None,
            approval_id: None,
        }
    }

    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_spelling_matches_serde() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, serde_json::Value::String(code.as_str().to_owned()));
            assert!(!code.next_action().is_empty());
            assert!(!code.meaning().is_empty());
        }
    }

    #[test]
    fn optional_fields_are_omitted() {
        let body = ErrorBody::new(ErrorCode::PathEscape, "nope");
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            r#"{"code":"PATH_ESCAPE","message":"nope"}"#
        );
    }
}
