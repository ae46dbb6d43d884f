//! The process and serialization blocks of `workspace_info`: what the process tools can
//! do, the limits this workspace's commands run under, and how its work is serialized.

use codespace_policy::{Action, Workspace, allow};
use codespace_protocol::{
    DisconnectEffect, ErrorCode, MAX_READ_PROCESS_BYTES, MAX_WAIT_MS, ProcessCapabilities,
    ProcessConflict, ProcessInfo, ProcessLifetime, ProcessLimits, ProcessOwner, RequestConflict,
    RestartRecovery, SerializationInfo, SerializationScope, TtyCapabilities, tool,
};
use codespace_types::SandboxSetting;

use super::{host_env, tool_live};
use crate::{Gateway, MAX_WAITERS};

impl Gateway {
    /// Commands run only where policy and the sandbox setting allow it: with sandbox=on and
    /// no sandbox built, they are refused, not run unconfined (nor externally confined). Under approvals=confirm they
    /// wait in a hold, and still run once granted.
    pub(super) fn process_info(&self, ws: &Workspace, sandboxed: bool) -> ProcessInfo {
        let available = host_env(ws)
            && allow(ws, Action::Exec).is_ok()
            && (self.host.command_sandbox() || ws.sandbox != SandboxSetting::On)
            && tool_live(tool::EXEC_COMMAND);
        ProcessInfo {
            available,
            capabilities: available.then(capabilities),
            limits: self.limits(ws, sandboxed),
            env_keys: ws.env.keys().cloned().collect(),
        }
    }

    fn limits(&self, ws: &Workspace, sandboxed: bool) -> ProcessLimits {
        let settings = &self.exec;
        let facts = self.runner.process_facts();
        let timeouts = ws.timeouts(settings.timeout.as_secs());
        ProcessLimits {
            timeout_secs: timeouts.default_secs,
            max_timeout_secs: timeouts.max_secs,
            kill_grace_ms: ws.kill_grace_ms,
            max_live_processes: facts.max_live,
            output_ring_bytes: facts.ring_bytes,
            output_retained_bytes: facts.retained_bytes,
            read_max_bytes: u64::from(MAX_READ_PROCESS_BYTES),
            wait_max_ms: MAX_WAIT_MS,
            max_pids: sandboxed.then_some(settings.max_pids),
            completed_ttl_secs: facts.completed_ttl.as_secs(),
            max_completed: facts.max_completed,
        }
    }
}

fn capabilities() -> ProcessCapabilities {
    ProcessCapabilities {
        handles: true,
        survives_request_end: true,
        write_stdin: true,
        stdin_close: true,
        incremental_read: true,
        wait: true,
        terminate: true,
        output_combined: true,
        tty: TtyCapabilities {
            supported: true,
            default: false,
            initial_rows: codespace_runner::TTY_ROWS,
            initial_cols: codespace_runner::TTY_COLS,
            resize_supported: true,
        },
        lifetime: ProcessLifetime {
            owner: ProcessOwner::Server,
            client_disconnect: DisconnectEffect::KeepRunning,
            server_exit: DisconnectEffect::Terminate,
            restart_recovery: RestartRecovery::None,
        },
    }
}

/// One mutation lease per workspace: patches queue for it in FIFO order, a live process
/// holds it until it exits, and reads never need it.
pub(super) fn serialization() -> SerializationInfo {
    SerializationInfo {
        scope: SerializationScope::Workspace,
        live_process_holds_mutation_lease: true,
        parallel_exec: false,
        read_while_process_live: true,
        find_while_process_live: true,
        patch_while_process_live: false,
        conflict_error: ErrorCode::WorkspaceBusy,
        request_conflict: RequestConflict::WaitFifo,
        process_conflict: ProcessConflict::Reject,
        queue_durable: false,
        max_waiters_per_resource: MAX_WAITERS as u64,
        queue_full_error: ErrorCode::ResourceQueueFull,
    }
}
