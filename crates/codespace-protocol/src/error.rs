//! Error codes and the `ErrorBody` a refused tool call carries.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Nearest, RefusalReason};

/// Declares [`ErrorCode`] from one row per code: its variant, wire spelling, meaning and the
/// caller's next action. Everything else (`ALL`, `as_str`, `meaning`, `next_action`, serde,
/// the schema) is generated from the rows; the README's table is checked against them.
macro_rules! error_codes {
    ($($variant:ident = $wire:literal { meaning: $meaning:literal, next: $next:literal, })+) => {
        /// Every refusal the exposed tools can return. Serialized in `SCREAMING_SNAKE_CASE`. Codes
        /// of the reference contract that belong to tools not exposed yet (patches, processes) are
        /// added together with those tools, so the list never promises a refusal nothing returns.
        ///
        /// Each code documents what it means and what the caller should do next
        /// ([`ErrorCode::next_action`]); the README's error table is generated from the same text.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
        pub enum ErrorCode {
            $(#[serde(rename = $wire)] $variant,)+
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)+];

            /// The wire spelling, e.g. `PATH_ESCAPE`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $wire,)+
                }
            }

            /// What the code means, in one sentence.
            pub fn meaning(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $meaning,)+
                }
            }

            /// What the caller should do next.
            pub fn next_action(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $next,)+
                }
            }
        }
    };
}

error_codes! {
    InvalidArguments = "INVALID_ARGUMENTS" {
        meaning: "The arguments do not fit the tool's input schema (a missing field, a wrong type); nothing ran.",
        next: "Fix the field the message names, as the tool's input schema describes it, and call again.",
    }
    Unauthorized = "UNAUTHORIZED" {
        meaning: "The operator's policy denies this action: a read-only profile, an unavailable environment backend, or sandbox=on on a host that cannot enforce it.",
        next: "Do not retry: no argument can escalate. Ask the operator.",
    }
    WorkspaceNotFound = "WORKSPACE_NOT_FOUND" {
        meaning: "The workspace_id is not registered (or a registry reload removed it).",
        next: "Fix the id (workspace_info lists none; the operator knows them).",
    }
    InvalidPattern = "INVALID_PATTERN" {
        meaning: "The glob or regular expression does not parse, or the compiled expression is over the 1 MiB size cap.",
        next: "Fix the pattern; the message names the parse error, or says the pattern is too large (use fewer or smaller repetitions).",
    }
    PathEscape = "PATH_ESCAPE" {
        meaning: "The path is absolute, empty, contains NUL, is too long, or leaves the workspace.",
        next: "Use a workspace-relative path that stays inside the workspace.",
    }
    FileNotFound = "FILE_NOT_FOUND" {
        meaning: "The file does not exist.",
        next: "Check the path (find lists files).",
    }
    PathNotDirectory = "PATH_NOT_DIRECTORY" {
        meaning: "A component of the path that must be a directory is not one.",
        next: "Check the path: a parent component is a file.",
    }
    FileOperationFailed = "FILE_OPERATION_FAILED" {
        meaning: "Another filesystem error inside the workspace.",
        next: "Inspect the message; a retry may succeed.",
    }
    SymlinkRejected = "SYMLINK_REJECTED" {
        meaning: "The path or one of its ancestors is a symbolic link.",
        next: "Use the real path; symbolic links are never followed.",
    }
    SpecialFileRejected = "SPECIAL_FILE_REJECTED" {
        meaning: "The path is not a regular file (directory, FIFO, socket or device).",
        next: "Only regular files can be read or changed.",
    }
    OutputLimit = "OUTPUT_LIMIT" {
        meaning: "A limit argument is 0 or above its cap.",
        next: "Use a limit within the advertised cap.",
    }
    WorkspaceBusy = "WORKSPACE_BUSY" {
        meaning: "Another mutation or a live process holds the workspace's mutation lease; the message names the process (id and shortened argv).",
        next: "Wait for it (`process_status` or `read_process` with `wait_ms`) or stop it (`terminate_process`), then retry. Reads and `check_only` previews still work.",
    }
    RootReplaced = "ROOT_REPLACED" {
        meaning: "The workspace's root path no longer names the directory the server opened at start (deleted and re-created, say by a fresh clone, moved, or replaced by a symlink); nothing ran.",
        next: "Do not retry: ask the operator to reload the registry (SIGHUP) or restart the server, either of which opens the directory now at the root path (workspace_info shows root_status).",
    }
    ResourceQueueFull = "RESOURCE_QUEUE_FULL" {
        meaning: "64 requests are already waiting for this workspace's lease.",
        next: "Retry later with backoff.",
    }
    ServerDraining = "SERVER_DRAINING" {
        meaning: "The server was told to stop (SIGTERM) and is draining: it finishes the patches and commands under way but starts no new patch, revert or command; nothing ran. Reads still answer until it exits.",
        next: "Retry the same call with backoff once the server is back (a restarted pod) or on another server; keep the operation_key so a retry cannot apply twice.",
    }
    InvalidPatch = "INVALID_PATCH" {
        meaning: "The patch is not valid V4A, or its context does not match the file; the message names the file, chunk and line.",
        next: "Read the file again and send a corrected patch.",
    }
    AddFileExists = "ADD_FILE_EXISTS" {
        meaning: "An Add File target already exists.",
        next: "Read the file, then use Update File.",
    }
    MoveDestinationExists = "MOVE_DESTINATION_EXISTS" {
        meaning: "A Move to destination already exists.",
        next: "Pick another destination, or delete it in a separate step first.",
    }
    VersionConflict = "VERSION_CONFLICT" {
        meaning: "A file's current version differs from expected_versions, or (operation_revert) from what the operation left; nothing was written. conflicts lists every such file, with a bounded unified diff from the expected content to the file now when the server still knows that content.",
        next: "Redo the patch on the current content (conflicts[].diff shows what changed since the expected version; without it, read the file again); never force the old one. For a revert, undo the later changes first, or write the old content with a patch of your own.",
    }
    OperationKeyConflict = "OPERATION_KEY_CONFLICT" {
        meaning: "The operation_key was already used in this workspace for a different request.",
        next: "Look up the earlier operation; use a new key only for a new logical change.",
    }
    OperationNotFound = "OPERATION_NOT_FOUND" {
        meaning: "No operation with that id (or key in that workspace), or not exactly one of id and key was given.",
        next: "Check the id, or the key and workspace_id.",
    }
    OperationNotRevertible = "OPERATION_NOT_REVERTIBLE" {
        meaning: "operation_revert named an operation that did not apply (a check_only preview, a refusal, a rollback, a partial failure, an unknown or unfinished outcome); nothing was written.",
        next: "Check operation_status: only an applied operation can be reverted. A failed_partial one's preserved content is put back by the operator (codespace operations restore); an unfinished one is settled first.",
    }
    OperationAlreadyReverted = "OPERATION_ALREADY_REVERTED" {
        meaning: "The operation was already reverted, or a revert of it is running (operation_id names that revert); nothing was written.",
        next: "Look up the named revert with operation_status. To bring the change back, revert that revert.",
    }
    UndoPruned = "UNDO_PRUNED" {
        meaning: "The operation's undo record is gone: the operator's retention bound (age, total size) dropped it, or the operation was recorded before undo records were kept; nothing was written.",
        next: "Do not retry: write the old content back with a patch of your own (operation_status lists the versions before and after).",
    }
    WorkspaceIdRequired = "WORKSPACE_ID_REQUIRED" {
        meaning: "An operation_key given without workspace_id is used in more than one workspace.",
        next: "Repeat the call with the workspace_id the key was used in, or use the operation_id.",
    }
    LedgerError = "LEDGER_ERROR" {
        meaning: "The operation ledger, or the undo log beside it, could not be read or written.",
        next: "Do not retry under a new key: check operation_status and the files once the operator has fixed the ledger.",
    }
    InvalidCommand = "INVALID_COMMAND" {
        meaning: "The command or its arguments are invalid (empty argv, a NUL byte, a zero terminal size).",
        next: "Fix the request.",
    }
    ProcessSpawnFailed = "PROCESS_SPAWN_FAILED" {
        meaning: "No process was started (for example the executable is not on the PATH).",
        next: "Fix the command; retrying is safe because nothing runs.",
    }
    ProcessNotFound = "PROCESS_NOT_FOUND" {
        meaning: "No process with that id: never started, or evicted after it completed.",
        next: "Do not invent or search for handles; start a new command if you need one.",
    }
    ProcessNotTty = "PROCESS_NOT_TTY" {
        meaning: "The process runs on pipes, not a terminal.",
        next: "Resize applies only to processes started with tty: true.",
    }
    ProcessNotRunning = "PROCESS_NOT_RUNNING" {
        meaning: "The process has exited.",
        next: "Read its output and status instead.",
    }
    StdinClosed = "STDIN_CLOSED" {
        meaning: "The process's stdin was already closed.",
        next: "Start a new command if it needs more input.",
    }
    ProcessIoFailed = "PROCESS_IO_FAILED" {
        meaning: "Writing to the process's stdin or resizing its terminal failed.",
        next: "Check process_status; the process may have stopped reading.",
    }
    Timeout = "TIMEOUT" {
        meaning: "The command was killed at its time limit: read_process says so once, at the end of its output, instead of eof. Also: the runner worker (`--runner uds`) could not be reached (the message says nothing ran), its connection was lost after the request was sent, or it did not answer within its deadline (the message says the request may have run).",
        next: "For a command's time limit: treat the work as interrupted, not finished; rerun it with a larger exec_command timeout_secs (at most the max_timeout_secs workspace_info shows), or split it. For the runner: check operation_status (a patch) or process_status (a command) before retrying anything that may have run; workspace_info's runner.state says whether the server must be restarted.",
    }
    WorkNotFound = "WORK_NOT_FOUND" {
        meaning: "No work with that work_id in this workspace (never opened here, or the id is of another workspace).",
        next: "Use the work_id work_open returned for this workspace, or open a new work.",
    }
    WorkClosed = "WORK_CLOSED" {
        meaning: "The work is closed: nothing more can be claimed from it or finished.",
        next: "Open a new work (work_open); instructions left for later attach to it.",
    }
    IntentNotFound = "INTENT_NOT_FOUND" {
        meaning: "No instruction with that intent_id in this work.",
        next: "Use the intent_id steer_claim_next returned, with the same work_id.",
    }
    IntentAlreadyClaimed = "INTENT_ALREADY_CLAIMED" {
        meaning: "The agent already claimed this instruction: its content is frozen.",
        next: "Write a new instruction instead of changing this one.",
    }
    IntentNotEditable = "INTENT_NOT_EDITABLE" {
        meaning: "The instruction's state does not allow this: only draft or queued ones can be edited, queued or cancelled, only claimed ones completed.",
        next: "Read the instruction's state again; complete only what you claimed.",
    }
    IntentRevisionConflict = "INTENT_REVISION_CONFLICT" {
        meaning: "The instruction changed since the revision given (another edit, queue or claim came first).",
        next: "Fetch it again and redo the change on the current revision.",
    }
    ApprovalRequired = "APPROVAL_REQUIRED" {
        meaning: "Policy allows the patch or command, but the workspace has approvals=confirm: a hold was created (or the same request's active hold reused) and nothing ran. approval_id names it. A pause, not a grant.",
        next: "Ask the person (or, where holds.approvers is agent-or-person, grant it yourself with approval_resolve), then operation_resume with wait_ms. Retrying the same request returns the same approval_id.",
    }
    ApprovalNotFound = "APPROVAL_NOT_FOUND" {
        meaning: "No confirmation hold has that approval_id.",
        next: "Check the id; holds are created by approval_create or APPROVAL_REQUIRED.",
    }
    ApprovalConflict = "APPROVAL_CONFLICT" {
        meaning: "The hold is in the wrong state for the call: resolving one that is no longer pending, resuming one still pending (after the wait, when wait_ms was given), or a second resume while one runs.",
        next: "Read the message: a pending hold waits for the person (`codespace approvals grant ID`, the /inbox page): call operation_resume with wait_ms to wait for the decision; or wait for the running resume and call operation_resume again for its result.",
    }
    ApprovalDenied = "APPROVAL_DENIED" {
        meaning: "The hold was denied (by a person through elicitation, the /inbox page or `codespace approvals deny`, or by approval_resolve): nothing ran, and the hold never runs.",
        next: "A new request needs a new hold: change the request or ask the person why, then call the tool again (it opens a new hold).",
    }
    ApprovalAmbiguous = "APPROVAL_AMBIGUOUS" {
        meaning: "A resume was interrupted (a crash) and whether the action ran cannot be told from the ledger: an interrupted command is never started again. Carries approval_id (and operation_id for a patch).",
        next: "Do not run the command again blindly: inspect its effects. For a patch, check operation_status with the operation_id and read the files.",
    }
    UnsafePathName = "UNSAFE_PATH_NAME" {
        meaning: "A name the patch would create (an Add File path or a Move to destination) holds a control character (C0 such as NUL, ESC or CR, DEL, C1), a line or paragraph separator (U+2028, U+2029) or a bidirectional formatting character (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069); nothing ran and no hold was made.",
        next: "Create the file under a name without those characters (the message shows the name with each written as \\u{XXXX}); existing files with such names can still be updated and deleted.",
    }
    ApprovalPersonRequired = "APPROVAL_PERSON_REQUIRED" {
        meaning: "The workspace's holds are answered only by a person (approvers: person): approval_resolve over MCP cannot grant or deny them.",
        next: "Ask the person to decide (the /inbox page with the person token, `codespace approvals grant ID` or `deny ID`, or your client's prompt), then call operation_resume with wait_ms to wait for the decision.",
    }
    ApprovalUnverified = "APPROVAL_UNVERIFIED" {
        meaning: "The hold's stored request does not match its seal (the server's HMAC over what the person was shown): it was changed in the ledger, made under another server key, or made by an older version without a seal. Nothing ran, and the hold never runs.",
        next: "Do not retry the hold: call the tool again to open a new hold for the person to see, and tell the operator (the ledger was edited, or servers sharing it have different state directories).",
    }
    ApprovalRootMismatch = "APPROVAL_ROOT_MISMATCH" {
        meaning: "The workspace id of the hold now names another directory (device and inode) than the one the hold was made for (another registry, or the root replaced). Nothing ran, and the hold never runs.",
        next: "Call the tool again to open a new hold for the workspace as it is now, for the person to decide on.",
    }
    RequestStateInvalid = "REQUEST_STATE_INVALID" {
        meaning: "The requestState of a retry (MCP 2026-07-28, after an input_required answer to a held call) is not one this server sealed for this call: it was changed, cut, made under another server key, or made for another hold, tool, request or workspace. Nothing ran and no decision was recorded.",
        next: "Send requestState back exactly as it came, with the same tool and arguments; or call the tool again without requestState and inputResponses (the same request's pending hold is asked about again).",
    }
    RequestStateExpired = "REQUEST_STATE_EXPIRED" {
        meaning: "The requestState of a retry is this server's, but the time to answer its question (the elicitation timeout) has passed. Nothing ran and no decision was recorded: the hold stays as it was.",
        next: "Call the tool again without requestState and inputResponses: the same request's pending hold is asked about again, with a fresh requestState.",
    }
    TaskInterrupted = "TASK_INTERRUPTED" {
        meaning: "A task's server exited before the task settled, and the task cannot be settled from the ledger: a command or a search is never rerun (its process ended with that server), and a patch task whose operation was never recorded wrote nothing. The task is failed with this code in its error's data.",
        next: "Look at the workspace as it is now (process_status, changes, operation_status), then call the tool again if the work should still run.",
    }
    Internal = "INTERNAL" {
        meaning: "An invariant of the server failed; this is a bug.",
        next: "Report it; do not treat it as busy.",
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
    /// `VERSION_CONFLICT`: every file that is not at the version the call needs (for a
    /// revert, every file that no longer holds what the operation left).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<Conflict>,
    /// Why a patch was refused, one of a closed set (the README lists each with the next
    /// action): on every refusal the patch or its files cause, whatever the code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<RefusalReason>,
    /// The 1-based chunk of the file's `*** Update File:` the refusal is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<u64>,
    /// The 1-based line of the patch text at fault (the operation's header, the chunk's
    /// line, or the chunk line `nearest` was compared with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_line: Option<u64>,
    /// For `context_not_found`: the file line nearest to what the chunk expected, when one
    /// is similar enough.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nearest: Option<Box<Nearest>>,
}

/// A file whose version is not the one a call needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Conflict {
    /// The workspace-relative path.
    pub path: String,
    /// The version the call needs.
    pub expected: crate::Version,
    /// The version on the disk now.
    pub actual: crate::Version,
    /// A unified diff from the expected content to the file now (at most 16 KiB), when the
    /// server still knows the expected content: whole-file content it returned from `read`
    /// or wrote, or the undo record of one of its own operations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The diff was cut at its bound.
    #[serde(default, skip_serializing_if = "crate::is_false")]
    pub diff_truncated: bool,
}

impl ErrorBody {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorBody {
            code,
            message: message.into(),
            path: None,
            operation_id: None,
            approval_id: None,
            conflicts: Vec::new(),
            reason: None,
            chunk: None,
            patch_line: None,
            nearest: None,
        }
    }

    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
}

#[cfg(test)]
mod tests;
