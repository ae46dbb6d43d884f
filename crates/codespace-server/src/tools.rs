//! The tool catalog: names, descriptions, input and output schemas, annotations.

use std::sync::Arc;

use codespace_protocol::{
    ApplyPatchParams, ApplyPatchResult, ExecCommandParams, ExecCommandResult, FindParams,
    FindResult, GrepParams, GrepResult, OperationStatusParams, OperationStatusResult, ProcessAck,
    ProcessIdParams, ProcessResizeParams, ProcessStatusParams, ProcessStatusResult, ReadParams,
    ReadProcessParams, ReadProcessResult, ReadResult, VersionParams, VersionResult, WorkspaceInfo,
    WorkspaceInfoParams, WriteStdinParams, tool,
};
use rmcp::handler::server::common::{schema_for_output, schema_for_type};
use rmcp::model::{Tool, ToolAnnotations};
use rmcp::schemars::JsonSchema;

fn spec<P: JsonSchema + 'static, R: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
) -> Tool {
    spec_with::<P, R>(name, description, true)
}

fn spec_with<P: JsonSchema + 'static, R: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
    read_only: bool,
) -> Tool {
    let mut annotations = ToolAnnotations::new();
    annotations.read_only_hint = Some(read_only);
    annotations.destructive_hint = Some(!read_only);
    // A replay by operation_key never applies twice; reads are idempotent anyway.
    annotations.idempotent_hint = Some(true);
    annotations.open_world_hint = Some(false);
    Tool::new(name, description, schema_for_type::<P>())
        .with_raw_output_schema(schema_for_output::<R>())
        .with_annotations(annotations)
}

/// Every live tool, in `LIVE_TOOLS` order.
pub(crate) fn catalog() -> Arc<Vec<Tool>> {
    Arc::new(vec![
        spec::<WorkspaceInfoParams, WorkspaceInfo>(
            tool::WORKSPACE_INFO,
            "Server identity; with workspace_id, that workspace's effective contract: profile, which tools are available, limits, and what is actually enforced.",
        ),
        spec::<ReadParams, ReadResult>(
            tool::READ,
            "Read a byte window of one regular file (offset, limit up to 1 MiB) with the sha256 version of the whole file. Continue with next_offset while truncated.",
        ),
        spec::<FindParams, FindResult>(
            tool::FIND,
            "List regular files whose workspace-relative path matches a glob (* and ? within a component, ** across, [..], {a,b}), sorted, paginated. A glob without '/' matches the file name at any depth (*.txt finds src/a.txt); a leading / or ./ anchors it at the root, as does a / elsewhere (src/*.rs). Files ignored by .gitignore (every directory), .ignore or .git/info/exclude, and .git/ itself, are left out unless include_ignored is true; the global git excludes file is not read. Symlinks are never followed.",
        ),
        spec::<GrepParams, GrepResult>(
            tool::GREP,
            "Search file contents line by line with a regular expression, or literal text with fixed_strings: true (optional glob filter with find's rules, case_insensitive). Files ignored by .gitignore, .ignore or .git/info/exclude, and .git/, are skipped unless include_ignored is true. Results {path, line, text} in path then line order, paginated; binary files skipped; long lines cut.",
        ),
        spec::<VersionParams, VersionResult>(
            tool::VERSION,
            "Versions (sha256 of the whole file, or absent) of up to 1000 workspace-relative paths in one call; a refused path gets its own error.",
        ),
        spec_with::<ApplyPatchParams, ApplyPatchResult>(
            tool::APPLY_PATCH,
            "Apply a V4A patch (*** Begin Patch ... *** End Patch) all-or-nothing: expected_versions guard, check_only preview, operation_key replay (scoped to the workspace). Every outcome is recorded in a durable ledger.",
            false,
        ),
        spec::<OperationStatusParams, OperationStatusResult>(
            tool::OPERATION_STATUS,
            "Look up a recorded patch operation by operation_id, or by operation_key with workspace_id: status, changes, events (minted, planned, finished, recovered). Never re-runs anything.",
        ),
        spec_with::<ExecCommandParams, ExecCommandResult>(
            tool::EXEC_COMMAND,
            "Start a command (argv, no shell; command[0] resolved on the child's PATH among the directories the command can see) in the workspace root, on pipes or a 24x80 PTY, under a time limit (timeout_secs, cut to the workspace's max_timeout_secs; the result says which applies). Returns a process_id at once; the process outlives the request and holds the workspace's mutation lease until it exits.",
            false,
        ),
        spec_with::<WriteStdinParams, ProcessAck>(
            tool::WRITE_STDIN,
            "Write UTF-8 text to a process's stdin and flush; close: true sends EOF afterwards.",
            false,
        ),
        spec::<ReadProcessParams, ReadProcessResult>(
            tool::READ_PROCESS,
            "Read a process's combined stdout+stderr from an absolute cursor (max_bytes per reply). wait_ms (up to 30000) waits for output past the cursor or the end instead of polling. Continue with the returned cursor; output_lost says older bytes were dropped from the 256 KiB ring; eof means the output is complete (not success); TIMEOUT (once, at the end) means the time limit killed it.",
        ),
        spec::<ProcessStatusParams, ProcessStatusResult>(
            tool::PROCESS_STATUS,
            "A process's state (running/exited), termination (exited, signaled, timeout, terminated), exit_code or signal, its time limit, output totals and timestamps. wait_ms (up to 30000) waits for the exit instead of polling.",
        ),
        spec_with::<ProcessResizeParams, ProcessAck>(
            tool::PROCESS_RESIZE,
            "Resize a running PTY process's terminal (rows, cols >= 1).",
            false,
        ),
        spec_with::<ProcessIdParams, ProcessAck>(
            tool::TERMINATE_PROCESS,
            "Kill a process and its whole subtree; on an exited process a no-op that says so (already_exited).",
            false,
        ),
    ])
}
