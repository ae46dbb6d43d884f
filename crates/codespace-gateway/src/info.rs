//! `workspace_info`: the effective contract of a workspace, telling the truth about what
//! this server enforces.

mod commands;
mod external;

use codespace_policy::{Action, Workspace, allow};
use codespace_protocol as wire;
use codespace_protocol::{
    Availability, CommandSandbox, DEFAULT_FIND_LIMIT, DEFAULT_READ_LIMIT, Enforcement,
    EnvironmentInfo, FileCapabilities, FilesInfo, IsolationInfo, LIVE_TOOLS, MAX_GREP_LIMIT,
    MAX_VERSION_PATHS, MAX_WALK_DEPTH, MAX_WALK_DIRECTORIES, MAX_WALK_ENTRIES, NetworkInfo,
    PermissionsInfo, SERVER_NAME, Transport, WorkspaceExecutionInfo, WorkspaceInfo,
    WorkspaceInfoParams, tool,
};

use codespace_runner::ops;
use codespace_runner::{Runner, WatchReport};
use codespace_types::{
    Approvals, Approvers, EnvironmentKind, NetworkPolicy, RootStatus, SandboxSetting,
};

use crate::{Gateway, GatewayError};

/// What this host and build can enforce, as probed at start.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostFacts {
    /// What the Linux command sandbox needs and this host lacks, as probed at start; empty
    /// when it can be entered.
    pub sandbox_missing: Vec<String>,
    /// The kernel's Landlock ABI, `None` when it has none (gVisor, say): what an
    /// externally isolated workspace's commands get of it.
    pub landlock_abi: Option<u32>,
    /// The kernel installs seccomp filters.
    pub seccomp: bool,
}

impl HostFacts {
    /// The command sandbox can be entered on this host.
    pub fn command_sandbox(&self) -> bool {
        self.sandbox_missing.is_empty()
    }
}

impl Gateway {
    pub async fn workspace_info(
        &self,
        p: WorkspaceInfoParams,
    ) -> Result<WorkspaceInfo, GatewayError> {
        let id = p.workspace_id.filter(|s| !s.is_empty());
        let mut info = self.identity(id.clone());
        let Some(id) = id else { return Ok(info) };
        let reg = self.lookup(&id)?;
        let ws = &reg.ws;
        info.note = format!(
            "profile={} network={} approvals={} environment={} sandbox={}",
            ws.profile.as_str(),
            ws.network.as_str(),
            ws.approvals.as_str(),
            ws.environment_kind.as_str(),
            ws.sandbox.as_str()
        );
        info.profile = Some(ws.profile);
        info.root = self
            .runner
            .root_path(&id)
            .map(|r| r.display().to_string())
            .or(Some(ws.root.display().to_string()));
        info.root_status = self.root_status(&id).await;
        let watch = self.runner.run(ops::WatchReport { ws: id.clone() }).await.unwrap_or_default();
        info.execution = Some(self.execution(ws, watch));
        Ok(info)
    }

    /// The server's identity, the whole answer without a workspace id.
    fn identity(&self, id: Option<String>) -> WorkspaceInfo {
        WorkspaceInfo {
            server: SERVER_NAME.to_owned(),
            version: self.server_version.clone(),
            internal_model_calls: false,
            tools_exposed: LIVE_TOOLS.iter().map(|s| (*s).to_owned()).collect(),
            transports: vec![Transport::Stdio, Transport::StreamableHttp],
            workspace_id: id,
            workspace_id_is_credential: false,
            note: "Pass a workspace_id to see its effective contract. Workspaces are registered by the operator and cannot be listed.".to_owned(),
            profile: None,
            root: None,
            root_status: None,
            execution: None,
            runner: self.runner_info(),
        }
    }

    /// Where the runner is, and whether it still serves.
    fn runner_info(&self) -> wire::RunnerInfo {
        match &*self.runner {
            Runner::Local(_) => wire::RunnerInfo {
                mode: wire::RunnerMode::InProcess,
                state: wire::RunnerState::Serving,
                note: "files are read and commands run in the server process".to_owned(),
            },
            Runner::Socket(r) if r.is_lost() => wire::RunnerInfo {
                mode: wire::RunnerMode::Uds,
                state: wire::RunnerState::Lost,
                note: "the connection to the runner worker is lost: no file or process tool can run until the server restarts; every command it ran was killed".to_owned(),
            },
            Runner::Socket(_) => wire::RunnerInfo {
                mode: wire::RunnerMode::Uds,
                state: wire::RunnerState::Serving,
                note: "files are read and commands run in a worker process over a private Unix socket (not a sandbox: the command sandbox is separate)".to_owned(),
            },
        }
    }

    /// The effective contract of `ws`.
    fn execution(&self, ws: &Workspace, watch: Option<WatchReport>) -> WorkspaceExecutionInfo {
        let host_env = matches!(ws.environment_kind, EnvironmentKind::Host);
        let sandboxed = self.host.command_sandbox() && host_env && ws.sandbox == SandboxSetting::On;
        let external = (host_env && ws.sandbox == SandboxSetting::External)
            .then(|| self.host.external_isolation(ws.network));
        WorkspaceExecutionInfo {
            environment: environment(ws),
            permissions: PermissionsInfo {
                read: true,
                write: ws.profile.can_write(),
                exec: ws.profile.can_exec(),
            },
            files: files(ws, watch),
            process: self.process_info(ws, sandboxed),
            serialization: commands::serialization(),
            isolation: IsolationInfo {
                file_tools_workspace_scoped: true,
                command_sandbox: if sandboxed {
                    CommandSandbox::LinuxSandbox
                } else if external.is_some() {
                    CommandSandbox::External
                } else {
                    CommandSandbox::None
                },
                sandbox_setting: ws.sandbox,
                external: external.clone(),
            },
            network: match external {
                Some(_) => self.host.external_network(ws.network),
                None => NetworkInfo {
                    policy: ws.network,
                    enforcement: if sandboxed { Enforcement::Enforced } else { Enforcement::None },
                    client_may_escalate: false,
                    note: Some(network_note(sandboxed, ws.network).to_owned()),
                },
            },
            approvals: ws.approvals,
            holds: holds(ws.approvals, ws.approvers, sandboxed),
        }
    }
}

fn host_env(ws: &Workspace) -> bool {
    matches!(ws.environment_kind, EnvironmentKind::Host)
}

fn tool_live(name: &str) -> bool {
    LIVE_TOOLS.contains(&name)
}

fn environment(ws: &Workspace) -> EnvironmentInfo {
    let host_env = host_env(ws);
    EnvironmentInfo {
        kind: ws.environment_kind,
        client_selectable: false,
        exec_supported: host_env,
        file_read_supported: host_env,
        file_write_supported: host_env,
        unavailable_reason: (!host_env).then(|| {
            format!("the {} backend is not available in this server", ws.environment_kind.as_str())
        }),
    }
}

fn files(ws: &Workspace, watch: Option<WatchReport>) -> FilesInfo {
    let can_read = host_env(ws) && allow(ws, Action::Read).is_ok();
    FilesInfo {
        read: Availability { available: can_read },
        find: Availability { available: can_read },
        grep: Availability { available: can_read && tool_live(tool::GREP) },
        version: Availability { available: can_read && tool_live(tool::VERSION) },
        // Under approvals=confirm a patch waits in a hold, and still applies once granted.
        patch: Availability {
            available: host_env(ws)
                && allow(ws, Action::Write).is_ok()
                && tool_live(tool::APPLY_PATCH),
        },
        capabilities: FileCapabilities {
            read_range: true,
            find_pagination: true,
            read_max_bytes: u64::from(DEFAULT_READ_LIMIT),
            find_max_paths: u64::from(DEFAULT_FIND_LIMIT),
            grep_max_matches: u64::from(MAX_GREP_LIMIT),
            version_max_paths: MAX_VERSION_PATHS as u64,
            walk_max_depth: MAX_WALK_DEPTH as u64,
            walk_max_directories: MAX_WALK_DIRECTORIES as u64,
            walk_max_entries: MAX_WALK_ENTRIES as u64,
            symlinks_followed: false,
        },
        changes: Availability { available: can_read && tool_live(tool::CHANGES) },
        watch: watch.map(crate::changes::watch_info),
    }
}

impl Gateway {
    /// Whether the registered root path still names the directory pinned at start; a root
    /// that does not is logged each time it is looked at (the tools and commands stay on
    /// the pinned directory, and the operator should know the path no longer leads there).
    pub(crate) async fn root_status(&self, id: &str) -> Option<RootStatus> {
        let status = self.runner.run(ops::RootStatus { ws: id.to_owned() }).await.ok().flatten()?;
        let root = self.runner.root_path(id).map(|p| p.display().to_string()).unwrap_or_default();
        Some(wire_root_status(id, &root, status))
    }
}

/// Logs a root that no longer names the pinned directory, and passes the status on.
fn wire_root_status(id: &str, root: &str, status: RootStatus) -> RootStatus {
    let why = match status {
        RootStatus::Current => return status,
        RootStatus::Replaced => {
            "the workspace root path no longer names the directory opened at start; \
             tools and commands stay on that directory"
        }
        RootStatus::Removed => "the workspace root directory opened at start was deleted",
    };
    tracing::warn!(workspace = id, root, "{why}");
    status
}

/// What a command reaches under `network`. Landlock before ABI 9 does not mediate
/// `connect` to a pathname unix socket, so a host listener on one inside a visible
/// directory is reachable; the private root keeps every other host path out.
fn network_note(sandboxed: bool, network: NetworkPolicy) -> &'static str {
    match (sandboxed, network) {
        (false, _) => {
            "not enforced: commands use the host's network and every unix socket the server's user can reach"
        }
        (true, NetworkPolicy::Restricted) => {
            "a private network namespace: no TCP, UDP or raw sockets, and no host abstract unix sockets (also scoped by Landlock); pathname unix sockets inside the workspace or an extra read root stay reachable (a host process listening on one there can be connected to); the host's other pathname sockets are outside the private root"
        }
        (true, NetworkPolicy::Enabled) => {
            "the host's network; no host abstract unix sockets (scoped by Landlock); pathname unix sockets inside the workspace or an extra read root stay reachable (a host process listening on one there can be connected to); the host's other pathname sockets are outside the private root"
        }
    }
}

fn holds(a: Approvals, approvers: Approvers, sandboxed: bool) -> wire::HoldsInfo {
    let (required, how) = match a {
        Approvals::Off => (
            false,
            "Patches and commands run at once; approval_create can still open a hold explicitly.",
        ),
        Approvals::Confirm => (
            true,
            "apply_patch (except a check_only preview) and exec_command return APPROVAL_REQUIRED with an approval_id and run nothing; the same request reuses its hold. operation_resume (with wait_ms, it waits for the decision) runs it once and returns the tool's result. A client that supports elicitation is asked directly.",
        ),
    };
    let who = match approvers {
        Approvers::AgentOrPerson => {
            "Anyone may answer a hold: the person (the /inbox page with the person token, `codespace approvals grant|deny`, the client's prompt) or the caller itself with approval_resolve, so a hold is not a security boundary: it lets a person look before a change runs."
        }
        Approvers::Person if sandboxed => {
            "Only a person answers a hold (approvers: person): the /inbox page with the person token, `codespace approvals grant|deny`, or the client's prompt; approval_resolve over MCP is refused (APPROVAL_PERSON_REQUIRED), and the sandbox keeps commands away from the ledger and the person token."
        }
        Approvers::Person => {
            "Only a person answers a hold (approvers: person): the /inbox page with the person token, `codespace approvals grant|deny`, or the client's prompt; approval_resolve over MCP is refused (APPROVAL_PERSON_REQUIRED). Commands here run unsandboxed, so one could reach the ledger or the person token: not a security boundary."
        }
    };
    wire::HoldsInfo {
        required,
        approvers,
        security_boundary: approvers == Approvers::Person && sandboxed,
        note: format!(
            "{how} {who} Each hold runs only as it was shown (its request and summary are sealed with the server's key) and only on the directory it was made for. The profile, the sandbox and the network policy are what confine a change."
        ),
    }
}
