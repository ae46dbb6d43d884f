//! The tool table: every tool this server exposes, declared once, in `tools/list` order (the
//! reference's tools in the reference's order, so a client that indexes them keeps working,
//! then this server's own). [`tool`] and [`LIVE_TOOLS`] are made from it here; the server
//! expands it again into its catalog and its dispatch. Only implemented tools are listed: a
//! tool that is not built yet is absent rather than answering with a stub.

/// Calls the macro `$then` with the tool table, one row per tool:
///
/// `name, NAME, Params => Result, Effect, drive, "Title", "Description";`
///
/// - `name` is the wire name, and the gateway method that runs the tool; `NAME` its
///   constant in [`tool`];
/// - `Params` and `Result` are the argument and result types, whose schemas are listed;
/// - `Effect` says what the tool does to the world, for its annotations: `Read` (reads
///   only), `Mutate` (changes files or processes; a retry may act twice), `Adjust` (changes
///   a process or a queue entry, destroys nothing), `Stop` (ends something; again changes
///   nothing more), `Coordinate` (a retry acts twice: a second work, a second claim),
///   `Decide` (records a decision about a hold), `Resume` (runs a held action once), `Undo`
///   (puts an operation's files back once; a repeat is refused);
/// - `drive` says what the call hears from its client while it runs: `plain` (nothing),
///   `walk` (a cancellation stops the walk; a progress token gets its counts), `held` (a
///   hold may be put to the person through elicitation), `wait` (a cancellation ends a
///   `wait_ms` wait; a progress token gets a report every few seconds while it waits),
///   `held_wait` (both: a hold may be put to the person, then the started command is waited
///   for as `wait` waits).
#[macro_export]
macro_rules! for_each_tool {
    ($then:ident) => {
        $then! {
            workspace_info, WORKSPACE_INFO, $crate::WorkspaceInfoParams => $crate::WorkspaceInfo, Read, plain, "Workspace info",
            "Server identity; with workspace_id, that workspace's effective contract: profile, available tools, limits, and what is actually enforced.";
            read, READ, $crate::ReadParams => $crate::ReadResult, Read, plain, "Read file window",
            "Read a byte window of one regular file, with the sha256 version of the whole file. Continue at next_offset while truncated. Text comes as is; other bytes as base64, in content or in a resource content block (encoding says which).";
            find, FIND, $crate::FindParams => $crate::FindResult, Read, walk, "Find files",
            "List regular files whose workspace-relative path matches a glob, sorted, paginated. Files ignored by .gitignore, .ignore or .git/info/exclude, and .git/ itself, are left out unless include_ignored is true. Symlinks are never followed.";
            apply_patch, APPLY_PATCH, $crate::ApplyPatchParams => $crate::ApplyPatchResult, Mutate, held, "Apply patch",
            "Apply a V4A patch all-or-nothing, recorded in a durable ledger. Idempotent only with an operation_key: a retry with the same key returns the recorded result; without one, a retry applies again.";
            operation_status, OPERATION_STATUS, $crate::OperationStatusParams => $crate::OperationStatusResult, Read, plain, "Operation status",
            "Look up a recorded patch operation by operation_id or operation_key: status, changes, events. Never re-runs anything.";
            exec_command, EXEC_COMMAND, $crate::ExecCommandParams => $crate::ExecCommandResult, Mutate, held_wait, "Run command",
            "Start a command (argv, no shell) in the workspace root with a clean environment, on pipes or a 24x80 PTY, under a time limit. Returns a process_id at once; with wait_ms (up to 55000) it first waits for the exit and answers state, exit and the first max_bytes of output, so a quick command costs one call. The process outlives the request and holds the workspace's mutation lease until it exits. Not idempotent: a retry starts a second process.";
            write_stdin, WRITE_STDIN, $crate::WriteStdinParams => $crate::ProcessAck, Mutate, plain, "Write to process stdin",
            "Write UTF-8 text to a process's stdin and flush; close: true sends EOF after. Not idempotent: a retry writes again.";
            read_process, READ_PROCESS, $crate::ReadProcessParams => $crate::ReadProcessResult, Read, wait, "Read process output",
            "Read a process's combined stdout+stderr from an absolute cursor; continue with the returned cursor. wait_ms (up to 55000) waits for min_bytes past the cursor or the end instead of polling. output_lost: older bytes were dropped (the newest 64 MiB are kept); eof: the output is complete (not success); the error TIMEOUT, once at the end, means the time limit killed it.";
            process_status, PROCESS_STATUS, $crate::ProcessStatusParams => $crate::ProcessStatusResult, Read, wait, "Process status",
            "A process's state, termination (exited, signaled, timeout, terminated), exit_code or signal, time limit, output totals and timestamps. wait_ms (up to 55000) waits for the exit instead of polling.";
            process_resize, PROCESS_RESIZE, $crate::ProcessResizeParams => $crate::ProcessAck, Adjust, plain, "Resize process terminal",
            "Resize a running PTY process's terminal.";
            terminate_process, TERMINATE_PROCESS, $crate::TerminateProcessParams => $crate::ProcessAck, Stop, plain, "Terminate process",
            "End a process and its whole subtree: SIGTERM, then SIGKILL to what is left after grace_ms. On an exited process a no-op (already_exited).";
            work_open, WORK_OPEN, $crate::WorkOpenParams => $crate::WorkOpenResult, Coordinate, plain, "Open work",
            "Start a logical job and get its work_id; the person's instructions for it queue up while you work. Pass work_id to read, find, apply_patch and exec_command: their results then carry a coordination hint saying the person said something.";
            steer_status, STEER_STATUS, $crate::WorkIdParams => $crate::SteerStatusResult, Read, plain, "Instruction queue status",
            "Counts of the work's queued, claimed and claimable-now instructions and its queue_revision; never their text.";
            steer_claim_next, STEER_CLAIM_NEXT, $crate::WorkIdParams => $crate::SteerClaimResult, Coordinate, plain, "Claim next instruction",
            "Claim the person's next instruction, at a major checkpoint, not after every step (after_current_work ones once work_finish found them). No item when none is claimable. Complete it with steer_complete.";
            steer_complete, STEER_COMPLETE, $crate::SteerCompleteParams => $crate::UserIntent, Adjust, plain, "Complete instruction",
            "Mark an instruction you claimed done (default) or blocked; the person sees it.";
            work_finish, WORK_FINISH, $crate::WorkIdParams => $crate::WorkFinishResult, Adjust, plain, "Finish work",
            "Close the work unless the person has something pending for it. closed: false (pending_user_input): claim and do what is queued, then call again.";
            approval_create, APPROVAL_CREATE, $crate::ApprovalCreateParams => $crate::ApprovalResult, Decide, plain, "Create confirmation hold",
            "Open a confirmation hold in front of an apply_patch, exec_command or operation_revert call, checked as that tool checks it and running nothing; the same request's active hold is returned again. Under approvals=confirm the tools hold themselves (APPROVAL_REQUIRED). Unless the workspace's holds.approvers is person, approval_resolve can grant it.";
            approval_resolve, APPROVAL_RESOLVE, $crate::ApprovalResolveParams => $crate::ApprovalResult, Decide, plain, "Grant or deny hold",
            "Grant or deny a pending confirmation hold: deny is final, grant lets operation_resume run it. APPROVAL_PERSON_REQUIRED where holds.approvers is person.";
            operation_resume, OPERATION_RESUME, $crate::OperationResumeParams => $crate::OperationResumeResult, Resume, wait, "Run granted hold",
            "Run a granted hold once, re-checking the policy, and return the held tool's own result. With wait_ms (up to 55000) a pending hold is waited on until a person decides, and runs once granted. A repeat returns the same stored result; WORKSPACE_BUSY leaves it queued to retry. A command a crash interrupted never starts again (APPROVAL_AMBIGUOUS).";
            grep, GREP, $crate::GrepParams => $crate::GrepResult, Read, walk, "Search file contents",
            "Search file contents per line with a regular expression, or literal text with fixed_strings. Ignored files and .git/ are skipped unless include_ignored is true; binary files are skipped, long lines cut. Results {path, line, text} in path then line order, paginated.";
            version, VERSION, $crate::VersionParams => $crate::VersionResult, Read, plain, "File versions",
            "Versions (sha256 of the whole file, or absent) of up to 1000 workspace-relative paths; a refused path gets its own error.";
            changes, CHANGES, $crate::ChangesParams => $crate::ChangesResult, Read, plain, "What changed",
            "Paths that changed in the workspace since a cursor, from any cause, one entry per path (created, modified or removed), at most 1000 (truncated: more changed). Call without since to take a cursor, later with it. resync_required: true means the list may be incomplete: re-read what matters.";
            operation_revert, OPERATION_REVERT, $crate::OperationRevertParams => $crate::ApplyPatchResult, Undo, held, "Revert operation",
            "Put every file an applied operation changed back as it was before, from the server's undo record, all-or-nothing like apply_patch; only while every file still holds what the operation left (otherwise VERSION_CONFLICT, nothing written). Refused a second time (OPERATION_ALREADY_REVERTED) or once the record was pruned (UNDO_PRUNED).";
        }
    };
}

macro_rules! names {
    ($($name:ident, $konst:ident, $params:ty => $result:ty, $effect:ident, $drive:ident, $title:literal, $description:literal;)*) => {
        /// Tool names, as the table spells them.
        pub mod tool {
            $(pub const $konst: &str = stringify!($name);)*
        }

        /// The tools this server exposes, in `tools/list` order.
        pub const LIVE_TOOLS: &[&str] = &[$(tool::$konst),*];
    };
}

for_each_tool!(names);
