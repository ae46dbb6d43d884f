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
mod refusal;
mod tools;
mod work;

pub use approval::*;
pub use changes::*;
/// The values the wire shares with the layers below, defined once in `codespace-types`.
pub use codespace_types::{
    ApprovalState, Approvals, ChangeKind, Decision, EnvironmentKind, EventName, HeldTool,
    LineDifference, NetworkPolicy, ObservedChange, ParseVersionError, PatchStatus, ProcessState,
    Profile, RootStatus, SandboxSetting, SignalInfo, Termination, Version, WatchState,
};
pub use error::{Conflict, ErrorBody, ErrorCode};
pub use files::*;
pub use info::*;
pub use limits::*;
pub use patch::*;
pub use process::*;
pub use process_info::*;
pub use refusal::{Nearest, RefusalReason, TokenChange};
pub use tools::{LIVE_TOOLS, tool};
pub use work::*;

/// Server name reported in `initialize` and `workspace_info`.
pub const SERVER_NAME: &str = "codespace";

/// The `experimental` capability a client declares at `initialize` to receive a success as
/// `structuredContent` alone, with an empty `content` array instead of the same JSON again
/// as text (which carries every string twice, the second time escaped twice). The server
/// declares it back to say it honours it; a session that does not declare it gets both.
pub const STRUCTURED_ONLY_CAPABILITY: &str = "codespace/structuredContentOnly";

/// The routing header (SEP-2243) a tool's `workspace_id` is mirrored in: its input schema
/// marks the field with `x-mcp-header`, so a client of the 2026-07-28 revision sends the
/// value again as `Mcp-Param-Workspace-Id` and a gateway can route by workspace without
/// reading the body; a header that disagrees with the body is refused (-32020).
pub const WORKSPACE_ID_HEADER: &str = "Workspace-Id";

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
