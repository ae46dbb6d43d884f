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
            "Server identity; with workspace_id, that workspace's effective contract: profile, which tools are available, limits, and what is actually enforced.";
            read, READ, $crate::ReadParams => $crate::ReadResult, Read, plain, "Read file window",
            "Read a byte window of one regular file (offset, limit up to 1 MiB) with the sha256 version of the whole file. Continue with next_offset while truncated. Text comes as is; other bytes as base64 (encoding says which); image: true shows a whole PNG, JPEG, GIF or WebP as an image.";
            find, FIND, $crate::FindParams => $crate::FindResult, Read, walk, "Find files",
            "List regular files whose workspace-relative path matches a glob (* and ? within a component, ** across, [..], {a,b}), sorted, paginated. A glob without '/' matches the file name at any depth (*.txt finds src/a.txt); a leading / or ./ anchors it at the root, as does a / elsewhere (src/*.rs). Files ignored by .gitignore (every directory), .ignore or .git/info/exclude, and .git/ itself, are left out unless include_ignored is true; the global git excludes file is not read. Symlinks are never followed.";
            apply_patch, APPLY_PATCH, $crate::ApplyPatchParams => $crate::ApplyPatchResult, Mutate, held, "Apply patch",
            "Apply a V4A patch (*** Begin Patch ... *** End Patch) all-or-nothing: expected_versions guard, check_only preview. Idempotent only with an operation_key (scoped to the workspace): a retry with the same key returns the recorded result instead of applying again; without one, a retry applies again. Every outcome is recorded in a durable ledger.";
            operation_status, OPERATION_STATUS, $crate::OperationStatusParams => $crate::OperationStatusResult, Read, plain, "Operation status",
            "Look up a recorded patch operation by operation_id, or by operation_key (with workspace_id; without it, a key used in exactly one workspace): status, changes, events (minted, planned, finished, recovered). Never re-runs anything.";
            exec_command, EXEC_COMMAND, $crate::ExecCommandParams => $crate::ExecCommandResult, Mutate, held_wait, "Run command",
            "Start a command (argv, no shell; command[0] resolved on the child's PATH among the directories the command can see) in the workspace root, on pipes or a 24x80 PTY, under a time limit (timeout_secs, cut to the workspace's max_timeout_secs; the result says which applies). Returns a process_id at once; with wait_ms (up to 55000) it first waits for the exit and also answers state, exit_code/termination/signal and the first max_bytes of output, so a quick command costs one call. The process outlives the request and holds the workspace's mutation lease until it exits. Not idempotent: a retry starts a second process.";
            write_stdin, WRITE_STDIN, $crate::WriteStdinParams => $crate::ProcessAck, Mutate, plain, "Write to process stdin",
            "Write UTF-8 text to a process's stdin and flush; close: true sends EOF afterwards. Not idempotent: a retry writes the text again.";
            read_process, READ_PROCESS, $crate::ReadProcessParams => $crate::ReadProcessResult, Read, wait, "Read process output",
            "Read a process's combined stdout+stderr from an absolute cursor (max_bytes per reply). wait_ms (up to 55000) waits for min_bytes (default 1) past the cursor or the end instead of polling; a large min_bytes and max_bytes take a whole output in few calls. Continue with the returned cursor; output_lost says older bytes were dropped (the newest 64 MiB are kept: 256 KiB in memory, the rest in a spill file; workspace_info's process.limits.output_retained_bytes); eof means the output is complete (not success); TIMEOUT (once, at the end) means the time limit killed it. A cursor past the end reads an empty chunk.";
            process_status, PROCESS_STATUS, $crate::ProcessStatusParams => $crate::ProcessStatusResult, Read, wait, "Process status",
            "A process's state (running/exited), termination (exited, signaled, timeout, terminated), exit_code or signal, its time limit, output totals and timestamps. wait_ms (up to 55000) waits for the exit instead of polling.";
            process_resize, PROCESS_RESIZE, $crate::ProcessResizeParams => $crate::ProcessAck, Adjust, plain, "Resize process terminal",
            "Resize a running PTY process's terminal (rows, cols >= 1).";
            terminate_process, TERMINATE_PROCESS, $crate::TerminateProcessParams => $crate::ProcessAck, Stop, plain, "Terminate process",
            "End a process and its whole subtree: SIGTERM (so TERM traps and cleanup run), then SIGKILL to whatever is left after grace_ms (default and most: the workspace's kill_grace_ms; 0 kills at once). process_status then says terminated, with the signal that ended it or the exit code its handler chose. On an exited process a no-op that says so (already_exited).";
            work_open, WORK_OPEN, $crate::WorkOpenParams => $crate::WorkOpenResult, Coordinate, plain, "Open work",
            "Start a logical job in a workspace and get its work_id: the person's instructions for it queue up while you work (they write them at /inbox). Pass work_id to read, find, apply_patch and exec_command: their results then carry a coordination hint (claimable_now, queue_revision) telling you the person said something. Instructions the person left for the next work attach to this one.";
            steer_status, STEER_STATUS, $crate::WorkIdParams => $crate::SteerStatusResult, Read, plain, "Instruction queue status",
            "Counts of the work's queued, claimed and claimable-now instructions and its queue_revision; never their text.";
            steer_claim_next, STEER_CLAIM_NEXT, $crate::WorkIdParams => $crate::SteerClaimResult, Coordinate, plain, "Claim next instruction",
            "Atomically claim the person's next instruction (at a major checkpoint, not after every step): next_checkpoint ones while the work is active, also after_current_work ones once work_finish made it closing. No item when nothing is claimable. Claimed content is frozen; complete it with steer_complete.";
            steer_complete, STEER_COMPLETE, $crate::SteerCompleteParams => $crate::UserIntent, Adjust, plain, "Complete instruction",
            "Mark an instruction you claimed done (default) or blocked; the person sees it.";
            work_finish, WORK_FINISH, $crate::WorkIdParams => $crate::WorkFinishResult, Adjust, plain, "Finish work",
            "Close the work if the person has nothing pending for it. closed: false with reason pending_user_input means claim and do what is queued first (after_current_work instructions become claimable now), then call again.";
            approval_create, APPROVAL_CREATE, $crate::ApprovalCreateParams => $crate::ApprovalResult, Decide, plain, "Create confirmation hold",
            "Open a confirmation hold in front of an apply_patch, exec_command or operation_revert (arguments: the tool's own argument object), checked as the tool checks it (INVALID_PATCH, INVALID_COMMAND, INVALID_ARGUMENTS, UNAUTHORIZED) and running nothing. The same request's active hold is returned instead of a second one. Under approvals=confirm the tools create holds themselves (APPROVAL_REQUIRED). Unless the workspace's holds.approvers is person, the same caller can grant it with approval_resolve.";
            approval_resolve, APPROVAL_RESOLVE, $crate::ApprovalResolveParams => $crate::ApprovalResult, Decide, plain, "Grant or deny hold",
            "Grant or deny a pending confirmation hold (APPROVAL_CONFLICT when it is no longer pending). Deny is final and discards the stored arguments; grant lets operation_resume run it. Refused with APPROVAL_PERSON_REQUIRED where the workspace's holds.approvers is person: there only the person decides.";
            operation_resume, OPERATION_RESUME, $crate::OperationResumeParams => $crate::OperationResumeResult, Resume, wait, "Run granted hold",
            "Run a granted hold once, re-checking the policy as it is now, and return the tool's own result (apply_patch, exec_command or operation_revert). With wait_ms (up to 55000) a pending hold is waited on until a person decides (codespace approvals grant ID, the /inbox page) and runs in the same call once granted; APPROVAL_DENIED when it is denied. A repeat returns the same stored result (same operation_id or process_id, or the same error); WORKSPACE_BUSY leaves the hold queued to retry. A command interrupted by a crash is never started again (APPROVAL_AMBIGUOUS). A hold whose stored request no longer matches its seal, or whose workspace is now another directory, never runs (APPROVAL_UNVERIFIED, APPROVAL_ROOT_MISMATCH).";
            grep, GREP, $crate::GrepParams => $crate::GrepResult, Read, walk, "Search file contents",
            "Search file contents line by line with a regular expression, or literal text with fixed_strings: true (optional glob filter with find's rules, case_insensitive). Files ignored by .gitignore, .ignore or .git/info/exclude, and .git/, are skipped unless include_ignored is true. Results {path, line, text} in path then line order, paginated; binary files skipped; long lines cut.";
            version, VERSION, $crate::VersionParams => $crate::VersionResult, Read, plain, "File versions",
            "Versions (sha256 of the whole file, or absent) of up to 1000 workspace-relative paths in one call; a refused path gets its own error.";
            changes, CHANGES, $crate::ChangesParams => $crate::ChangesResult, Read, plain, "What changed",
            "The paths that changed in the workspace since a cursor (from any cause: commands, patches, other programs), one entry per path (created, modified or removed), at most 1000 (truncated says more changed). Call without since to take a cursor, do the work (run a command, say), then call with since. resync_required: true means the list cannot be trusted to be complete (the server restarted, events were lost): re-read what matters. The paths are hints of what to re-read, not permissions.";
            operation_revert, OPERATION_REVERT, $crate::OperationRevertParams => $crate::ApplyPatchResult, Undo, held, "Revert operation",
            "Put every file an applied operation changed back to its content before it (updates undone, added files removed, deleted files re-created byte for byte with their mode, moves moved back), from the server's undo record, all-or-nothing as apply_patch writes. Runs only while every file still holds what the operation left (VERSION_CONFLICT lists each file that changed since; nothing is written). The revert is an operation of its own (operation_status shows what it reverts; the reverted one shows reverted_by); a second revert is OPERATION_ALREADY_REVERTED; a record the retention bound dropped is UNDO_PRUNED. operation_key and check_only work as for apply_patch.";
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
