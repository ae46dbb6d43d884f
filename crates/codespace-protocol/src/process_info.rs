//! The process and serialization blocks of `workspace_info`: what the process tools can do,
//! the limits commands run under, and how work in a workspace is serialized.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use crate::ErrorCode;

/// What the process tools can do. Every flag is true in this server.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ProcessCapabilities {
    /// `exec_command` returns a `process_id` the other tools act on.
    pub handles: bool,
    /// A process outlives the request that started it.
    pub survives_request_end: bool,
    /// `write_stdin` sends text to a running process.
    pub write_stdin: bool,
    /// `write_stdin` with `close: true` sends end of file.
    pub stdin_close: bool,
    /// `read_process` pages output from an absolute cursor.
    pub incremental_read: bool,
    /// `read_process` and `process_status` take `wait_ms` instead of polling.
    pub wait: bool,
    /// `terminate_process` ends a process and its whole subtree (SIGTERM, then SIGKILL
    /// after the grace).
    pub terminate: bool,
    /// stdout and stderr arrive in one stream.
    pub output_combined: bool,
    /// Pseudo-terminal support.
    pub tty: TtyCapabilities,
    /// Who owns a process and what ends it.
    pub lifetime: ProcessLifetime,
}

/// Pseudo-terminal support.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct TtyCapabilities {
    /// `exec_command` takes `tty: true`.
    pub supported: bool,
    /// `tty` defaults to false.
    pub default: bool,
    /// Rows of a new terminal.
    pub initial_rows: u16,
    /// Columns of a new terminal.
    pub initial_cols: u16,
    /// `process_resize` changes a running terminal's size.
    pub resize_supported: bool,
}

/// Who owns a process and what ends it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ProcessLifetime {
    /// The server process supervises commands itself.
    pub owner: ProcessOwner,
    /// An MCP or HTTP disconnect leaves processes running.
    pub client_disconnect: DisconnectEffect,
    /// The server's exit (stdio EOF, a signal, even SIGKILL) kills every tree.
    pub server_exit: DisconnectEffect,
    /// Handles do not survive a server restart.
    pub restart_recovery: RestartRecovery,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProcessOwner {
    Server,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DisconnectEffect {
    KeepRunning,
    Terminate,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RestartRecovery {
    None,
}

/// The limits commands of a workspace run under.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ProcessLimits {
    /// The time limit of a command that does not ask for one, in seconds.
    pub timeout_secs: u64,
    /// The largest `timeout_secs` a command may ask for; larger requests are cut to it.
    pub max_timeout_secs: u64,
    /// Milliseconds between SIGTERM to a command's whole tree and SIGKILL to what is left,
    /// when `terminate_process`, the time limit or the server's shutdown ends it (shutdown
    /// gives at most 5000); the largest `grace_ms` `terminate_process` may ask for.
    pub kill_grace_ms: u64,
    /// Commands that may run at once, server-wide.
    pub max_live_processes: u64,
    /// Output kept in memory per process: the newest bytes.
    pub output_ring_bytes: u64,
    /// Output kept per process in all: the newest `output_ring_bytes` in memory, the rest
    /// spilled to a file in the server's state directory (the spill cap); older bytes are
    /// dropped (`output_lost`). Equal to `output_ring_bytes` when nothing spills.
    pub output_retained_bytes: u64,
    /// Largest `read_process` reply.
    pub read_max_bytes: u64,
    /// Longest `wait_ms`.
    pub wait_max_ms: u64,
    /// Tasks a sandboxed command's PID namespace holds at most, less one (its `pid_max`);
    /// absent when commands here are not sandboxed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pids: Option<u32>,
    /// How long a completed process stays readable, in seconds.
    pub completed_ttl_secs: u64,
    /// Completed processes kept at most, server-wide.
    pub max_completed: u64,
}

/// How work in a workspace is serialized: one mutation lease per workspace, held by a
/// patch while it applies and by a live process until it exits.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct SerializationInfo {
    /// What one mutation lease covers: the whole workspace.
    pub scope: SerializationScope,
    /// A running command holds its workspace's lease until it exits.
    pub live_process_holds_mutation_lease: bool,
    /// A second command while one runs: refused.
    pub parallel_exec: bool,
    /// `read` works while a command runs.
    pub read_while_process_live: bool,
    /// `find` works while a command runs.
    pub find_while_process_live: bool,
    /// `apply_patch` works while a command runs (it does not: the lease is held).
    pub patch_while_process_live: bool,
    /// What a conflicting request gets: `WORKSPACE_BUSY`.
    #[schemars(schema_with = "workspace_busy")]
    pub conflict_error: ErrorCode,
    /// Patches wait for each other in FIFO order.
    pub request_conflict: RequestConflict,
    /// A request that meets a live process is refused.
    pub process_conflict: ProcessConflict,
    /// The queue lives in memory only.
    pub queue_durable: bool,
    /// Requests that may wait for one workspace's lease at once.
    pub max_waiters_per_resource: u64,
    /// What a request beyond the queue gets: `RESOURCE_QUEUE_FULL`.
    #[schemars(schema_with = "resource_queue_full")]
    pub queue_full_error: ErrorCode,
}

/// The one code a field always holds, as its schema says (not the list of every code).
fn code_schema(code: ErrorCode) -> Schema {
    json_schema!({"type": "string", "const": code.as_str()})
}

fn workspace_busy(_: &mut SchemaGenerator) -> Schema {
    code_schema(ErrorCode::WorkspaceBusy)
}

fn resource_queue_full(_: &mut SchemaGenerator) -> Schema {
    code_schema(ErrorCode::ResourceQueueFull)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SerializationScope {
    Workspace,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RequestConflict {
    WaitFifo,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProcessConflict {
    Reject,
}
