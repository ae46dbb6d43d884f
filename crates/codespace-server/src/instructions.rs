//! The agent-facing contract sent as `instructions` in the `initialize` result.

use codespace_protocol::ErrorCode;

const CONTRACT: &str = "\
CodeSpace gives you deterministic file tools on workspaces an operator registered. It never calls a model and never decides for you.

Paths: always workspace-relative and '/'-separated (e.g. src/main.rs). Absolute, empty, NUL-containing or escaping ('..' above the root) paths are refused with PATH_ESCAPE. Symbolic links are never followed, as the file or as any ancestor (SYMLINK_REJECTED); FIFOs, sockets, devices and directories are not readable files (SPECIAL_FILE_REJECTED).

Versions: a file's version is sha256:<hex> of its whole content, or 'absent' when it does not exist. `read` returns it with every window; `version` returns it for up to 1000 paths in one cheap call. Use versions to know whether a file changed since you read it.

Windows and pages: `read` returns at most `limit` bytes (default and cap 1048576) from `offset`; when `truncated` is true, continue with `next_offset`. `content_lossy: true` means the bytes were not valid UTF-8 there (a window may also split a character): do not reconstruct the file from such content. `find` (glob over paths: * and ? stay within one path component, ** crosses components, [..] classes, {a,b} alternatives; regular files only, sorted) and `grep` (regex per line, optional glob, case_insensitive; binary files skipped; long lines cut with text_truncated) return pages: continue with `next_offset` while `truncated` is true. If `listing_version` changes between find pages, the tree changed: restart at offset 0. `incomplete: true` means a cap (depth 64, 10000 directories, 50000 entries, or time) cut the walk or search short: narrow the glob rather than trusting the list to be complete. A `limit` of 0 or above its cap is refused with OUTPUT_LIMIT.

Patches: `apply_patch` takes a V4A patch (*** Begin Patch / *** Add File: / *** Update File: with optional *** Move to: / *** Delete File: / @@ context / *** End Patch); unified diffs are refused. It is all-or-nothing: every path is checked and every change planned before the first write, each file is replaced atomically, every hash is verified, and any failure restores the previous content (status failed_rolled_back) or names what could not be restored (failed_partial, with unrestored). Add File onto an existing path and Move to onto an existing path are refused (ADD_FILE_EXISTS, MOVE_DESTINATION_EXISTS). Pass expected_versions {path: version} from your last read to refuse the patch if a file changed since (VERSION_CONFLICT: read again, never force). check_only: true plans and writes nothing (status checked). Give an operation_key per logical change: a retry with the same key and the same request returns the recorded result with replayed: true, the same key with a different request is OPERATION_KEY_CONFLICT; keys are scoped to the workspace. If a response is lost, ask operation_status with the key (and workspace_id) or the operation_id instead of sending a new key. status unknown means the outcome could not be told: inspect the files. Patches wait in arrival order for the workspace's mutation lease (at most 64 waiters, then RESOURCE_QUEUE_FULL); reads never wait.

Processes: `exec_command` takes an argv (no shell is interposed: run `sh -c '...'` yourself if you need one) and starts it in the workspace root with a clean environment (PATH, HOME, LANG; TERM=xterm on a PTY) and the operator's time limit. tty defaults to false; a PTY starts at a fixed 24x80 and `process_resize` changes it. It returns a process_id at once (dispatch_status confirmed = started, not succeeded); keep it: the process outlives the request and a disconnect, and a new connection can use it. A live process holds the workspace's mutation lease: apply_patch and another exec_command get WORKSPACE_BUSY until it exits (terminate it if needed), while read, find, grep and version keep working. `read_process` pages the combined output from an absolute cursor (continue with the returned cursor; output_lost means older bytes were dropped from the 256 KiB ring; eof means the output is complete, never success). `process_status` tells running/exited, the termination (exited with exit_code, signaled with signal, timeout, terminated) and totals. `write_stdin` writes text and close: true sends EOF. `terminate_process` kills the whole subtree. Completed processes stay readable for 15 minutes (at most 64), then PROCESS_NOT_FOUND. Commands run only where workspace_info says process.available. Under isolation.command_sandbox linux-sandbox a command runs in a private root: the system directories (read-only), the workspace, its own /tmp (TMPDIR=/tmp, discarded when the command ends) and nothing else of the host (no home directory, no /run, no host /tmp); it can write only beneath the workspace root (nothing under read-only) and in its /tmp, it has a capped number of processes, and under network restricted it has no TCP/UDP sockets; expect ENOENT, EACCES, EPERM or EAGAIN outside those bounds rather than retrying. Under command_sandbox none the operator chose to run commands unconfined.

Policy: `workspace_info` with a workspace_id tells you the workspace's profile, whether each tool family is available, and what is actually enforced (command_sandbox, network enforcement). Missing enforcement is not permission. workspace_id selects a workspace; it is not a credential, and no argument you send can widen the operator's policy (unknown arguments are ignored and grant nothing).

Errors: a refused call returns isError: true with a JSON body {code, message, path?}. Codes and what to do next:
";

/// The full instructions text, with one line per error code.
pub(crate) fn text() -> String {
    let mut s = String::from(CONTRACT);
    for code in ErrorCode::ALL {
        s.push_str(&format!("- {}: {} {}\n", code.as_str(), code.meaning(), code.next_action()));
    }
    s
}
