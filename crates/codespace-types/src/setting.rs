//! The operator's settings of a workspace, as the registry spells them and `workspace_info`
//! reports them: [`Profile`], [`Approvals`], [`Approvers`], [`EnvironmentKind`], [`SandboxSetting`] and
//! [`NetworkPolicy`]. The registry decodes them, the gateway reports them, the sandbox
//! enforces the network one; each is this one type all the way.

words! {
    /// The operator's permission profile of a workspace.
    #[derive(Default)]
    pub enum Profile {
        #[default]
        ReadOnly = "read-only",
        WorkspaceWrite = "workspace-write",
    }
}

impl Profile {
    /// Whether the profile lets files be changed.
    pub fn can_write(self) -> bool {
        matches!(self, Profile::WorkspaceWrite)
    }

    /// Whether the profile lets commands run.
    pub fn can_exec(self) -> bool {
        matches!(self, Profile::WorkspaceWrite)
    }
}

words! {
    /// The operator's approvals setting.
    #[derive(Default)]
    pub enum Approvals {
        #[default]
        Off = "off",
        /// Patches and commands wait in a confirmation hold until granted and resumed.
        Confirm = "confirm",
    }
}

words! {
    /// Who may answer the workspace's confirmation holds (the operator's `approvers`).
    #[derive(Default)]
    pub enum Approvers {
        /// The person (the /inbox page, the CLI, the client's prompt) or the agent itself
        /// over MCP (`approval_resolve`): a hold lets a person look, it keeps no one out.
        #[default]
        AgentOrPerson = "agent-or-person",
        /// Only a person: `approval_resolve` over MCP is refused.
        Person = "person",
    }
}

words! {
    /// Where a workspace's tools run.
    pub enum EnvironmentKind {
        Host = "host",
        LinuxContainer = "linux-container",
    }
}

words! {
    /// The operator's `sandbox` setting.
    #[derive(Default)]
    pub enum SandboxSetting {
        // Fail closed: commands are refused where the sandbox cannot be enforced.
        #[default]
        On = "on",
        // The explicit opt-out.
        Off = "off",
        // The pod or VM the server runs in is the isolation boundary (the operator says
        // so): no namespaces, but no new privileges, Landlock and seccomp where the kernel
        // has them, and each reported.
        External = "external",
    }
}

words! {
    /// The operator's network setting for commands.
    #[derive(Default)]
    pub enum NetworkPolicy {
        // A private network namespace (only a down loopback), no TCP bind or connect
        // (Landlock), and no socket of any family but `AF_UNIX` (seccomp).
        #[default]
        Restricted = "restricted",
        // The host's network; the filesystem rules still apply.
        Enabled = "enabled",
    }
}
