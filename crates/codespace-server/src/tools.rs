//! The tool catalog: names, titles, descriptions, input and output schemas, annotations.
//! Schemas are normalised for clients: an optional field is simply not required.

use std::sync::Arc;

use codespace_protocol::{
    ApplyPatchParams, ApplyPatchResult, ApprovalCreateParams, ApprovalResolveParams,
    ApprovalResult, ChangesParams, ChangesResult, ExecCommandParams, ExecCommandResult, FindParams,
    FindResult, GrepParams, GrepResult, OperationResumeParams, OperationResumeResult,
    OperationStatusParams, OperationStatusResult, ProcessAck, ProcessIdParams, ProcessResizeParams,
    ProcessStatusParams, ProcessStatusResult, ReadParams, ReadProcessParams, ReadProcessResult,
    ReadResult, SteerClaimResult, SteerCompleteParams, SteerStatusResult, UserIntent,
    VersionParams, VersionResult, WorkFinishResult, WorkIdParams, WorkOpenParams, WorkOpenResult,
    WorkspaceInfo, WorkspaceInfoParams, WriteStdinParams, tool,
};
use rmcp::handler::server::common::{schema_for_output, schema_for_type};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use rmcp::schemars::JsonSchema;
use serde_json::Value;

/// What a tool does to the world, for its annotations.
#[derive(Clone, Copy)]
enum Effect {
    /// Reads only.
    Read,
    /// Changes files or processes; a retry with the same arguments may act twice.
    Mutate,
    /// Changes a process in a way that destroys nothing (a terminal size).
    Adjust,
    /// Ends something; doing it again changes nothing more.
    Stop,
    /// Changes a work's queue, destroys nothing, but a retry acts twice (a second work, a
    /// second claim).
    Coordinate,
    /// Records a decision about a held action; repeating it changes nothing more.
    Decide,
    /// Runs a held action once; a repeat returns the stored result.
    Resume,
}

fn spec<P: JsonSchema + 'static, R: JsonSchema + 'static>(
    name: &'static str,
    title: &'static str,
    effect: Effect,
    description: &'static str,
) -> Tool {
    let mut annotations = ToolAnnotations::with_title(title);
    annotations.read_only_hint = Some(matches!(effect, Effect::Read));
    annotations.destructive_hint =
        Some(matches!(effect, Effect::Mutate | Effect::Stop | Effect::Resume));
    // Only reads are idempotent: apply_patch is only with an operation_key, and a retried
    // exec_command or write_stdin starts a second process or writes twice.
    annotations.idempotent_hint = Some(!matches!(effect, Effect::Mutate | Effect::Coordinate));
    annotations.open_world_hint = Some(false);
    let input = normalised(&schema_for_type::<P>());
    let output = normalised(&schema_for_output::<R>());
    Tool::new(name, description, Arc::new(input))
        .with_title(title)
        .with_raw_output_schema(Arc::new(output))
        .with_annotations(annotations)
}

/// The schema as clients should see it: an optional field (`Option<T>`) is not required
/// and has the plain type, with no `null` alternative and no `default: null`.
pub(crate) fn normalised(schema: &JsonObject) -> JsonObject {
    let mut value = Value::Object(schema.clone());
    strip_null(&mut value);
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn strip_null(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".to_owned(), only);
                }
            }
            for key in ["anyOf", "oneOf"] {
                let Some(Value::Array(branches)) = map.get_mut(key) else { continue };
                branches.retain(|b| b.get("type") != Some(&Value::String("null".to_owned())));
                if branches.len() == 1 {
                    // `{anyOf: [X, null]}` becomes X itself, keeping this level's description.
                    if let Some(Value::Object(only)) = branches.pop() {
                        map.remove(key);
                        for (k, v) in only {
                            map.entry(k).or_insert(v);
                        }
                    }
                }
            }
            map.values_mut().for_each(strip_null);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_null),
        _ => {}
    }
}

/// Every live tool, in `LIVE_TOOLS` order.
pub(crate) fn catalog() -> Arc<Vec<Tool>> {
    use Effect::{Adjust, Coordinate, Decide, Mutate, Read, Resume, Stop};
    Arc::new(vec![
        spec::<WorkspaceInfoParams, WorkspaceInfo>(
            tool::WORKSPACE_INFO,
            "Workspace info",
            Read,
            "Server identity; with workspace_id, that workspace's effective contract: profile, which tools are available, limits, and what is actually enforced.",
        ),
        spec::<ReadParams, ReadResult>(
            tool::READ,
            "Read file window",
            Read,
            "Read a byte window of one regular file (offset, limit up to 1 MiB) with the sha256 version of the whole file. Continue with next_offset while truncated.",
        ),
        spec::<FindParams, FindResult>(
            tool::FIND,
            "Find files",
            Read,
            "List regular files whose workspace-relative path matches a glob (* and ? within a component, ** across, [..], {a,b}), sorted, paginated. A glob without '/' matches the file name at any depth (*.txt finds src/a.txt); a leading / or ./ anchors it at the root, as does a / elsewhere (src/*.rs). Files ignored by .gitignore (every directory), .ignore or .git/info/exclude, and .git/ itself, are left out unless include_ignored is true; the global git excludes file is not read. Symlinks are never followed.",
        ),
        spec::<ApplyPatchParams, ApplyPatchResult>(
            tool::APPLY_PATCH,
            "Apply patch",
            Mutate,
            "Apply a V4A patch (*** Begin Patch ... *** End Patch) all-or-nothing: expected_versions guard, check_only preview. Idempotent only with an operation_key (scoped to the workspace): a retry with the same key returns the recorded result instead of applying again; without one, a retry applies again. Every outcome is recorded in a durable ledger.",
        ),
        spec::<OperationStatusParams, OperationStatusResult>(
            tool::OPERATION_STATUS,
            "Operation status",
            Read,
            "Look up a recorded patch operation by operation_id, or by operation_key (with workspace_id; without it, a key used in exactly one workspace): status, changes, events (minted, planned, finished, recovered). Never re-runs anything.",
        ),
        spec::<ExecCommandParams, ExecCommandResult>(
            tool::EXEC_COMMAND,
            "Run command",
            Mutate,
            "Start a command (argv, no shell; command[0] resolved on the child's PATH among the directories the command can see) in the workspace root, on pipes or a 24x80 PTY, under a time limit (timeout_secs, cut to the workspace's max_timeout_secs; the result says which applies). Returns a process_id at once; the process outlives the request and holds the workspace's mutation lease until it exits. Not idempotent: a retry starts a second process.",
        ),
        spec::<WriteStdinParams, ProcessAck>(
            tool::WRITE_STDIN,
            "Write to process stdin",
            Mutate,
            "Write UTF-8 text to a process's stdin and flush; close: true sends EOF afterwards. Not idempotent: a retry writes the text again.",
        ),
        spec::<ReadProcessParams, ReadProcessResult>(
            tool::READ_PROCESS,
            "Read process output",
            Read,
            "Read a process's combined stdout+stderr from an absolute cursor (max_bytes per reply). wait_ms (up to 30000) waits for output past the cursor or the end instead of polling. Continue with the returned cursor; output_lost says older bytes were dropped (the newest 64 MiB are kept: 256 KiB in memory, the rest in a spill file; workspace_info's process.limits.output_retained_bytes); eof means the output is complete (not success); TIMEOUT (once, at the end) means the time limit killed it. A cursor past the end reads an empty chunk.",
        ),
        spec::<ProcessStatusParams, ProcessStatusResult>(
            tool::PROCESS_STATUS,
            "Process status",
            Read,
            "A process's state (running/exited), termination (exited, signaled, timeout, terminated), exit_code or signal, its time limit, output totals and timestamps. wait_ms (up to 30000) waits for the exit instead of polling.",
        ),
        spec::<ProcessResizeParams, ProcessAck>(
            tool::PROCESS_RESIZE,
            "Resize process terminal",
            Adjust,
            "Resize a running PTY process's terminal (rows, cols >= 1).",
        ),
        spec::<ProcessIdParams, ProcessAck>(
            tool::TERMINATE_PROCESS,
            "Terminate process",
            Stop,
            "Kill a process and its whole subtree; on an exited process a no-op that says so (already_exited).",
        ),
        spec::<WorkOpenParams, WorkOpenResult>(
            tool::WORK_OPEN,
            "Open work",
            Coordinate,
            "Start a logical job in a workspace and get its work_id: the person's instructions for it queue up while you work (they write them at /inbox). Pass work_id to read, find, apply_patch and exec_command: their results then carry a coordination hint (claimable_now, queue_revision) telling you the person said something. Instructions the person left for the next work attach to this one.",
        ),
        spec::<WorkIdParams, SteerStatusResult>(
            tool::STEER_STATUS,
            "Instruction queue status",
            Read,
            "Counts of the work's queued, claimed and claimable-now instructions and its queue_revision; never their text.",
        ),
        spec::<WorkIdParams, SteerClaimResult>(
            tool::STEER_CLAIM_NEXT,
            "Claim next instruction",
            Coordinate,
            "Atomically claim the person's next instruction (at a major checkpoint, not after every step): next_checkpoint ones while the work is active, also after_current_work ones once work_finish made it closing. No item when nothing is claimable. Claimed content is frozen; complete it with steer_complete.",
        ),
        spec::<SteerCompleteParams, UserIntent>(
            tool::STEER_COMPLETE,
            "Complete instruction",
            Adjust,
            "Mark an instruction you claimed done (default) or blocked; the person sees it.",
        ),
        spec::<WorkIdParams, WorkFinishResult>(
            tool::WORK_FINISH,
            "Finish work",
            Adjust,
            "Close the work if the person has nothing pending for it. closed: false with reason pending_user_input means claim and do what is queued first (after_current_work instructions become claimable now), then call again.",
        ),
        spec::<ApprovalCreateParams, ApprovalResult>(
            tool::APPROVAL_CREATE,
            "Create confirmation hold",
            Decide,
            "Open a confirmation hold in front of an apply_patch or exec_command (arguments: the tool's own argument object), checked as the tool checks it (INVALID_PATCH, INVALID_COMMAND, UNAUTHORIZED) and running nothing. The same request's active hold is returned instead of a second one. Under approvals=confirm the tools create holds themselves (APPROVAL_REQUIRED). A hold is not a security boundary: the same caller can grant it.",
        ),
        spec::<ApprovalResolveParams, ApprovalResult>(
            tool::APPROVAL_RESOLVE,
            "Grant or deny hold",
            Decide,
            "Grant or deny a pending confirmation hold (APPROVAL_CONFLICT when it is no longer pending). Deny is final and discards the stored arguments; grant lets operation_resume run it.",
        ),
        spec::<OperationResumeParams, OperationResumeResult>(
            tool::OPERATION_RESUME,
            "Run granted hold",
            Resume,
            "Run a granted hold once, re-checking the policy as it is now, and return the tool's own result (apply_patch or exec_command). A repeat returns the same stored result (same operation_id or process_id, or the same error); WORKSPACE_BUSY leaves the hold queued to retry. A command interrupted by a crash is never started again (APPROVAL_AMBIGUOUS).",
        ),
        spec::<GrepParams, GrepResult>(
            tool::GREP,
            "Search file contents",
            Read,
            "Search file contents line by line with a regular expression, or literal text with fixed_strings: true (optional glob filter with find's rules, case_insensitive). Files ignored by .gitignore, .ignore or .git/info/exclude, and .git/, are skipped unless include_ignored is true. Results {path, line, text} in path then line order, paginated; binary files skipped; long lines cut.",
        ),
        spec::<VersionParams, VersionResult>(
            tool::VERSION,
            "File versions",
            Read,
            "Versions (sha256 of the whole file, or absent) of up to 1000 workspace-relative paths in one call; a refused path gets its own error.",
        ),
        spec::<ChangesParams, ChangesResult>(
            tool::CHANGES,
            "What changed",
            Read,
            "The paths that changed in the workspace since a cursor (from any cause: commands, patches, other programs), one entry per path (created, modified or removed), at most 1000 (truncated says more changed). Call without since to take a cursor, do the work (run a command, say), then call with since. resync_required: true means the list cannot be trusted to be complete (the server restarted, events were lost): re-read what matters. The paths are hints of what to re-read, not permissions.",
        ),
    ])
}
