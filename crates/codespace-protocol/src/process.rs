//! Parameters and results of the process tools: `exec_command`, `write_stdin`,
//! `read_process`, `process_status`, `process_resize`, `terminate_process`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Coordination, ProcessState, SignalInfo, Termination, is_false};

/// Arguments of `exec_command`. There is deliberately no cwd, env or terminal size: the
/// server fills them in (cwd = workspace root, a clean environment plus the workspace's
/// `env`, a 24x80 terminal). The time limit is the workspace's unless `timeout_secs` asks
/// for another, within the operator's ceiling.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ExecCommandParams {
    /// Registered workspace id.
    pub workspace_id: String,
    /// argv; `command[0]` is looked up on the command's PATH.
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    /// Run on a 24x80 pseudo-terminal instead of pipes (default false).
    #[serde(default)]
    pub tty: Option<bool>,
    /// Time limit in seconds (absent or 0: the workspace's `timeout_secs`), cut to its
    /// `max_timeout_secs`; the result says what applies.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// An open work of this workspace; the result carries its `coordination` hint.
    #[serde(default)]
    pub work_id: Option<String>,
    /// Milliseconds (at most 55000) to wait for the exit before answering (default 0).
    #[serde(default)]
    pub wait_ms: Option<u64>,
    /// With `wait_ms`: most output bytes to return (default 65536).
    #[serde(default)]
    #[schemars(range(min = 1, max = 262_144))]
    pub max_bytes: Option<u64>,
}

/// Result of `exec_command`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ExecCommandResult {
    /// `proc-<uuid>`, minted by the server; save it: a new connection can use it.
    pub process_id: String,
    /// `confirmed`: the process was started (not that it succeeded).
    pub dispatch_status: DispatchStatus,
    /// The time limit the process runs under, in seconds.
    pub timeout_secs: u64,
    /// The requested `timeout_secs` was above the workspace's `max_timeout_secs` and was
    /// cut to it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub timeout_clamped: bool,
    /// The request's `work_id`, echoed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_id: Option<String>,
    /// Set when the call belongs to an open work (its `work_id`, or the workspace's only
    /// open work): whether the person queued instructions since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination: Option<Coordination>,
    /// Only with `wait_ms`: `running` (the wait passed first) or `exited`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ProcessState>,
    /// Only when exited: `exited`, `signaled`, `timeout`, `terminated` or `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination: Option<Termination>,
    /// When it exited with a code (as in `process_status`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// When a signal killed it (as in `process_status`: `SIGTERM` or `SIGKILL` with
    /// `terminated` and `timeout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<SignalInfo>,
    /// Only with `wait_ms`: the output from its start, as `read_process` would read it at
    /// cursor 0; continue with `read_process` from its `cursor` until `eof`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputChunk>,
}

/// A piece of a process's combined output, as `exec_command` with `wait_ms` answers it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct OutputChunk {
    /// Output bytes as UTF-8 (invalid sequences replaced; a chunk may split a character).
    pub chunk: String,
    /// The next cursor for `read_process`: the chunk's start plus its length.
    pub cursor: u64,
    /// The output is complete and `cursor` is at its end (not a success signal).
    pub eof: bool,
    /// Older output was dropped before it could be read (the chunk starts later than 0).
    pub output_lost: bool,
}

/// What `exec_command` can say about dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DispatchStatus {
    /// The process was started (not that it succeeded).
    Confirmed,
    /// The runner worker's answer was lost: the process may be running under this
    /// `process_id`. Ask `process_status`; the workspace stays busy until it is known gone.
    Unknown,
}

/// Arguments of `write_stdin`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct WriteStdinParams {
    /// `proc-<uuid>` from `exec_command`.
    pub process_id: String,
    /// Text to write (may be empty).
    pub data: String,
    /// Then close stdin (EOF).
    #[serde(default)]
    pub close: Option<bool>,
}

/// Result of `write_stdin`, `process_resize` and `terminate_process`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ProcessAck {
    /// Always true: a failure is an error result instead.
    pub ok: bool,
    /// `terminate_process` on a process that had already exited: nothing was done.
    #[serde(default, skip_serializing_if = "is_false")]
    pub already_exited: bool,
    /// `process_resize`: the terminal's rows now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u16>,
    /// `process_resize`: the terminal's columns now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cols: Option<u16>,
    /// `terminate_process`: the milliseconds between SIGTERM and SIGKILL that apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_ms: Option<u64>,
    /// `terminate_process`: the requested `grace_ms` was above the workspace's
    /// `kill_grace_ms` and was cut to it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub grace_clamped: bool,
    /// Set when the process's workspace has exactly one open work: whether the person
    /// queued instructions for it (see `work_open`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination: Option<Coordination>,
}

/// Arguments of `read_process`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ReadProcessParams {
    /// `proc-<uuid>` from `exec_command`.
    pub process_id: String,
    /// Byte offset in the combined output (default 0).
    #[serde(default)]
    pub cursor: Option<u64>,
    /// Most bytes to return (default 65536).
    #[serde(default)]
    #[schemars(range(min = 1, max = 262_144))]
    pub max_bytes: Option<u64>,
    /// Milliseconds (at most 55000) to wait for `min_bytes` past `cursor` or the end
    /// (default 0).
    #[serde(default)]
    pub wait_ms: Option<u64>,
    /// Bytes past `cursor` a wait waits for (default 1), cut to `max_bytes`.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub min_bytes: Option<u64>,
}

/// Result of `read_process`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ReadProcessResult {
    /// The process read.
    pub process_id: String,
    /// The next cursor: start of this chunk plus its length.
    pub cursor: u64,
    /// Output bytes as UTF-8 (invalid sequences replaced; a chunk may split a character).
    pub chunk: String,
    /// The output is complete and the cursor is at its end. Not a success signal: see
    /// `exit_code`.
    pub eof: bool,
    /// The requested cursor was below `retained_from`: older output was dropped.
    pub output_lost: bool,
    /// First byte offset still retained.
    pub retained_from: u64,
    /// Only at `eof`: `exited` (with the fields below, as `process_status` has them), or
    /// `running` when the command closed its output but lives on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ProcessState>,
    /// Only at `eof`, once exited: as `process_status`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination: Option<Termination>,
    /// Only at `eof`, once exited: as `process_status`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Only at `eof`, once exited: as `process_status`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<SignalInfo>,
    /// Set when the process's workspace has exactly one open work: whether the person
    /// queued instructions for it (see `work_open`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination: Option<Coordination>,
}

/// Arguments of `terminate_process`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct TerminateProcessParams {
    /// `proc-<uuid>` from `exec_command`.
    pub process_id: String,
    /// Milliseconds from SIGTERM to SIGKILL (default and most: the workspace's
    /// `kill_grace_ms`; 0: at once).
    #[serde(default)]
    pub grace_ms: Option<u64>,
}

/// Arguments of `process_status`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ProcessStatusParams {
    /// `proc-<uuid>` from `exec_command`.
    pub process_id: String,
    /// Milliseconds (at most 55000) to wait for the exit (default 0).
    #[serde(default)]
    pub wait_ms: Option<u64>,
}

/// Result of `process_status`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ProcessStatusResult {
    /// The process asked about.
    pub process_id: String,
    /// `running` or `exited`.
    pub state: ProcessState,
    /// Only when exited: `exited`, `signaled`, `timeout`, `terminated` or `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination: Option<Termination>,
    /// The exit code, when the command exited: `termination` `exited`, or `terminated` or
    /// `timeout` when it exited after the server's SIGTERM (a TERM handler's code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that killed the command: `termination` `signaled`, or `terminated` or
    /// `timeout` with `SIGTERM` (it died of it) or `SIGKILL` (the grace ran out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<SignalInfo>,
    /// Total output bytes produced.
    pub output_total: u64,
    /// First output byte still retained.
    pub output_retained_from: u64,
    /// Output collection is complete.
    pub eof: bool,
    /// The time limit the process runs under, in seconds (`termination` is `timeout` when
    /// it was killed at it).
    pub timeout_secs: u64,
    /// Unix milliseconds.
    pub started_at: u64,
    /// Unix milliseconds; only when exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exited_at: Option<u64>,
    /// Set when the process's workspace has exactly one open work: whether the person
    /// queued instructions for it (see `work_open`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination: Option<Coordination>,
}

/// Arguments of `process_resize`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ProcessResizeParams {
    /// `proc-<uuid>` of a `tty: true` process.
    pub process_id: String,
    /// Rows.
    #[schemars(range(min = 1))]
    pub rows: u16,
    /// Columns.
    #[schemars(range(min = 1))]
    pub cols: u16,
}
