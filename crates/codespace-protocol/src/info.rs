//! Parameters and result of `workspace_info`: the effective contract of a workspace.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::process_info::{ProcessCapabilities, ProcessLimits, SerializationInfo};
use codespace_types::Approvers;

use crate::{Approvals, EnvironmentKind, NetworkPolicy, Profile, RootStatus, SandboxSetting};

/// Arguments of `workspace_info`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
pub struct WorkspaceInfoParams {
    /// Registered workspace id; omitted or empty: server identity only.
    #[serde(default)]
    pub workspace_id: Option<String>,
}

/// Result of `workspace_info`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct WorkspaceInfo {
    /// Always `codespace`.
    pub server: String,
    /// Server version.
    pub version: String,
    /// Always false: the server never calls a model.
    pub internal_model_calls: bool,
    /// The tools `tools/list` returns, in order.
    pub tools_exposed: Vec<String>,
    /// Transports the server speaks.
    pub transports: Vec<Transport>,
    /// The id asked about, echoed; omitted without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    /// Always false: the id selects, it does not authorize.
    pub workspace_id_is_credential: bool,
    /// Free text summary.
    pub note: String,
    /// Permission profile (with an id only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// Absolute registered root (with an id only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// Whether `root` still names the directory opened at start (with an id only):
    /// `current`, `replaced` (the path was moved, or replaced by a symlink or another
    /// directory) or `removed` (that directory was deleted). File tools and commands always
    /// stay on the directory opened at start; a root that is not `current` needs the
    /// operator.
    #[serde(rename = "root_status", default, skip_serializing_if = "Option::is_none")]
    pub root_status: Option<RootStatus>,
    /// The effective execution contract (with an id only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<WorkspaceExecutionInfo>,
    /// Where files are read and commands run, and whether that runner still serves.
    pub runner: RunnerInfo,
}

/// Where the runner (files and commands) is, and whether it still serves.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct RunnerInfo {
    /// `in-process`, or `uds` (a worker process behind a Unix socket).
    pub mode: RunnerMode,
    /// `serving`, or `lost` (no file or process tool can run until the server restarts).
    pub state: RunnerState,
    /// What this means for the caller, in a sentence.
    pub note: String,
}

/// Where the runner is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RunnerMode {
    /// In the server process.
    InProcess,
    /// In a worker process behind a Unix socket.
    Uds,
}

/// Whether the runner serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RunnerState {
    Serving,
    /// The worker's connection is lost: no file or process tool can run until the server
    /// restarts (there is no reconnect).
    Lost,
}

/// The effective contract of one workspace.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct WorkspaceExecutionInfo {
    /// Where the workspace's tools run.
    pub environment: EnvironmentInfo,
    /// What the profile permits.
    pub permissions: PermissionsInfo,
    /// Which file tools are available, and their caps.
    pub files: FilesInfo,
    /// Whether the process tools are available.
    pub process: ProcessInfo,
    /// How work in this workspace is serialized (the mutation lease and its queue).
    pub serialization: SerializationInfo,
    /// What confines file tools and commands.
    pub isolation: IsolationInfo,
    /// The network policy for commands and whether it is enforced.
    pub network: NetworkInfo,
    /// `off` or `confirm` (operator setting).
    pub approvals: Approvals,
    /// What a confirmation hold does here, and what it does not.
    pub holds: HoldsInfo,
}

/// Confirmation holds in this workspace.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct HoldsInfo {
    /// Whether apply_patch (not a check_only preview) and exec_command are held for a
    /// decision before anything runs (`approvals: confirm`).
    pub required: bool,
    /// Who may answer a hold (operator setting): `agent-or-person` (approval_resolve over
    /// MCP too) or `person` (only the /inbox page with the person token, the operator CLI
    /// or the client's prompt; approval_resolve is refused with APPROVAL_PERSON_REQUIRED).
    pub approvers: Approvers,
    /// True only when a person alone answers holds and commands run in the sandbox (which
    /// keeps them from the ledger and the person token); otherwise the caller can get its
    /// own hold granted, and a hold lets a person look first without keeping anyone out.
    pub security_boundary: bool,
    /// How holds work here, in one paragraph.
    pub note: String,
}

/// Where a workspace's tools run.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct EnvironmentInfo {
    /// `host` or `linux-container`.
    pub kind: EnvironmentKind,
    /// Always false: the environment is not a tool argument.
    pub client_selectable: bool,
    /// The backend can run commands.
    pub exec_supported: bool,
    /// The backend can read files.
    pub file_read_supported: bool,
    /// The backend can write files.
    pub file_write_supported: bool,
    /// Why the backend is unavailable, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
}

/// What the profile permits (before backend support is considered).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct PermissionsInfo {
    /// Files may be read.
    pub read: bool,
    /// Files may be changed.
    pub write: bool,
    /// Commands may be run.
    pub exec: bool,
}

/// Whether one tool is available in this workspace.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct Availability {
    /// The tool can be called here (profile and backend both allow it).
    pub available: bool,
}

/// The file tools of a workspace.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct FilesInfo {
    /// `read`.
    pub read: Availability,
    /// `find`.
    pub find: Availability,
    /// `grep`.
    pub grep: Availability,
    /// `version`.
    pub version: Availability,
    /// `apply_patch`: false until this server exposes it, or when the profile forbids writes.
    pub patch: Availability,
    /// Windows, pages and caps of the file tools.
    pub capabilities: FileCapabilities,
    /// `changes`.
    pub changes: Availability,
    /// The workspace watcher and its caches; absent where no root is opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<crate::WatchInfo>,
}

/// Windows, pages and caps of the file tools.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct FileCapabilities {
    /// `read` takes offset and limit.
    pub read_range: bool,
    /// `find` takes offset and limit.
    pub find_pagination: bool,
    /// Largest `read` window in bytes.
    pub read_max_bytes: u64,
    /// Largest `find` page.
    pub find_max_paths: u64,
    /// Largest `grep` page.
    pub grep_max_matches: u64,
    /// Most paths one `version` call takes.
    pub version_max_paths: u64,
    /// Deepest directory level a walk enters.
    pub walk_max_depth: u64,
    /// Most directories one walk reads.
    pub walk_max_directories: u64,
    /// Most entries one walk looks at.
    pub walk_max_entries: u64,
    /// Always false: symbolic links are never followed.
    pub symlinks_followed: bool,
}

/// The process tools of a workspace.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ProcessInfo {
    /// False until this server exposes the process tools, or when the profile forbids exec.
    pub available: bool,
    /// What the process tools can do (only when available).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<ProcessCapabilities>,
    /// The limits commands of this workspace run under.
    pub limits: ProcessLimits,
    /// Names of the variables the operator adds to every command's environment (their
    /// values are not shown).
    pub env_keys: Vec<String>,
}

/// What confines file tools and commands.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct IsolationInfo {
    /// Always true: file tools resolve beneath the registered root and never follow links.
    pub file_tools_workspace_scoped: bool,
    /// `none`, `linux-sandbox` or `external`: what confines commands in this process.
    pub command_sandbox: CommandSandbox,
    /// The operator's `sandbox` setting: `on`, `off` or `external`.
    pub sandbox_setting: SandboxSetting,
    /// Under `sandbox: "external"`: what this server still enforces on commands, and what
    /// it leaves to the pod or VM the operator declared the boundary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalIsolation>,
}

/// What confines commands of a workspace whose isolation boundary is the pod or VM.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct ExternalIsolation {
    /// What this server enforces on every command there, one phrase each.
    pub enforced: Vec<String>,
    /// What it does not (the pod or VM must), one phrase each.
    pub not_enforced: Vec<String>,
}

/// The network policy for commands.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct NetworkInfo {
    /// `restricted` or `enabled` (operator setting).
    pub policy: NetworkPolicy,
    /// `none` or `enforced`: whether the policy is actually enforced on commands.
    pub enforcement: Enforcement,
    /// Always false.
    pub client_may_escalate: bool,
    /// What a command can still reach, in words (which sockets stay reachable).
    #[serde(rename = "note", default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A transport the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    Stdio,
    StreamableHttp,
}

/// What confines commands in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CommandSandbox {
    /// Nothing: commands run unconfined, or are refused.
    None,
    LinuxSandbox,
    /// No namespaces (the pod or VM is the boundary), but no new privileges, Landlock and
    /// seccomp where the kernel has them: `external` says which.
    External,
}

/// Whether a policy is actually enforced on commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Enforcement {
    None,
    Enforced,
}
