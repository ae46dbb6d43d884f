//! Wire types of the CodeSpace MCP surface: every tool's parameters and result, the error
//! codes with the caller's next action, limits and tool names.
//!
//! Architecture Invariant: this crate is data only (serde + schemars); it performs no I/O and
//! knows nothing about rmcp or transports.

mod approval;
mod changes;
mod error;
mod files;
mod info;
mod limits;
mod patch;
mod process;
mod process_info;
mod work;

pub use approval::*;
pub use changes::*;
/// The values the wire shares with the layers below, defined once in `codespace-types`.
pub use codespace_types::{
    ApprovalState, ChangeKind, Decision, EventName, HeldTool, ObservedChange, ParseVersionError,
    Version,
};
pub use error::{ErrorBody, ErrorCode};
pub use files::*;
pub use info::*;
pub use limits::*;
pub use patch::*;
pub use process::*;
pub use process_info::*;
pub use work::*;

/// Server name reported in `initialize` and `workspace_info`.
pub const SERVER_NAME: &str = "codespace";

/// The `experimental` capability a client declares at `initialize` to receive a success as
/// `structuredContent` alone, with an empty `content` array instead of the same JSON again
/// as text (which carries every string twice, the second time escaped twice). The server
/// declares it back to say it honours it; a session that does not declare it gets both.
pub const STRUCTURED_ONLY_CAPABILITY: &str = "codespace/structuredContentOnly";

/// Tool names: the reference's tools in its order, then this server's own.
pub mod tool {
    pub const WORKSPACE_INFO: &str = "workspace_info";
    pub const READ: &str = "read";
    pub const FIND: &str = "find";
    pub const APPLY_PATCH: &str = "apply_patch";
    pub const OPERATION_STATUS: &str = "operation_status";
    pub const EXEC_COMMAND: &str = "exec_command";
    pub const WRITE_STDIN: &str = "write_stdin";
    pub const READ_PROCESS: &str = "read_process";
    pub const PROCESS_STATUS: &str = "process_status";
    pub const PROCESS_RESIZE: &str = "process_resize";
    pub const TERMINATE_PROCESS: &str = "terminate_process";
    pub const WORK_OPEN: &str = "work_open";
    pub const STEER_STATUS: &str = "steer_status";
    pub const STEER_CLAIM_NEXT: &str = "steer_claim_next";
    pub const STEER_COMPLETE: &str = "steer_complete";
    pub const WORK_FINISH: &str = "work_finish";
    pub const APPROVAL_CREATE: &str = "approval_create";
    pub const APPROVAL_RESOLVE: &str = "approval_resolve";
    pub const OPERATION_RESUME: &str = "operation_resume";
    pub const GREP: &str = "grep";
    pub const VERSION: &str = "version";
    pub const CHANGES: &str = "changes";
}

/// The tools this server exposes, in `tools/list` order: the reference's tools in the
/// reference's order (a client that indexes them keeps working), then this server's own.
/// Only implemented tools are listed: a tool that is not built yet is absent rather than
/// answering with a stub.
pub const LIVE_TOOLS: &[&str] = &[
    tool::WORKSPACE_INFO,
    tool::READ,
    tool::FIND,
    tool::APPLY_PATCH,
    tool::OPERATION_STATUS,
    tool::EXEC_COMMAND,
    tool::WRITE_STDIN,
    tool::READ_PROCESS,
    tool::PROCESS_STATUS,
    tool::PROCESS_RESIZE,
    tool::TERMINATE_PROCESS,
    tool::WORK_OPEN,
    tool::STEER_STATUS,
    tool::STEER_CLAIM_NEXT,
    tool::STEER_COMPLETE,
    tool::WORK_FINISH,
    tool::APPROVAL_CREATE,
    tool::APPROVAL_RESOLVE,
    tool::OPERATION_RESUME,
    tool::GREP,
    tool::VERSION,
    tool::CHANGES,
];

/// Version string of a missing file.
pub const VERSION_ABSENT: &str = "absent";

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_false(v: &bool) -> bool {
    !*v
}

#[cfg(test)]
mod tests;
