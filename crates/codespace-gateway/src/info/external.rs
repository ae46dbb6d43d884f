//! What an externally isolated workspace's commands get (`sandbox: "external"`: the pod or
//! VM is the boundary), in the words `workspace_info`, `doctor` and the start-up log share:
//! one answer from the host's probe, the same one the commands are confined by.

use codespace_protocol::{Enforcement, ExternalIsolation, NetworkInfo};
use codespace_types::NetworkPolicy;

use super::HostFacts;

/// The Landlock ABI that handles TCP bind and connect.
const LANDLOCK_TCP: u32 = 4;
/// The Landlock ABI that scopes signals and abstract unix sockets.
const LANDLOCK_SCOPE: u32 = 6;

impl HostFacts {
    /// What this server enforces on an externally isolated workspace's commands under
    /// `network`, and what it leaves to the pod or VM.
    pub fn external_isolation(&self, network: NetworkPolicy) -> ExternalIsolation {
        let restricted = network == NetworkPolicy::Restricted;
        let mut on: Vec<&str> = vec![
            "subtree kill: every command runs under its own reaper, a child subreaper, and its whole tree (orphans included) is ended by terminate_process, its time limit and the server's shutdown",
            "limits: the time limit, kill grace, output retention and live-process count",
            "no new privileges (PR_SET_NO_NEW_PRIVS) and no capabilities",
        ];
        let mut off: Vec<&str> = vec![
            "namespaces: commands share the server's user, PID, mount, IPC and network namespaces (the pod or VM is the boundary)",
            "a private root: what commands reach is the pod's own filesystem, /tmp shared with the server",
            "a process cap (max_pids)",
            "memory limits (the pod's own limits apply)",
        ];
        match self.landlock_abi {
            Some(_) => {
                on.push("Landlock: reads and execution only in the system directories (/usr, /bin, /sbin, /lib*, /etc, /opt, /nix), /proc, /sys, /dev, the workspace and its extra_read_roots; writes only beneath a workspace-write workspace, /tmp and /dev/shm (home directories, /run, /var and the server's state are out of reach)");
                off.push("masking beneath a visible root: a state directory, token or registry file inside the workspace or a system directory is readable by commands");
            }
            None => off.push(
                "Landlock (this kernel has none): commands read and write whatever the server's user can, the server's state, ledger and token included",
            ),
        }
        match self.landlock_abi {
            Some(abi) if abi >= LANDLOCK_SCOPE => on.push(
                "Landlock scoping: no signal to, and no abstract unix socket of, a process outside the command's tree (the server included)",
            ),
            _ => off.push(
                "signal scoping (Landlock ABI 6): a command can signal the server's processes, which run as the same user",
            ),
        }
        match (restricted, self.landlock_abi) {
            (true, Some(abi)) if abi >= LANDLOCK_TCP => {
                on.push("Landlock: no TCP bind or connect (network restricted)");
            }
            (true, _) => off.push("TCP by Landlock (ABI 4)"),
            (false, _) => {}
        }
        if self.seccomp {
            on.push("seccomp: no ptrace, io_uring, mounts, new namespaces, bpf, perf events, keyrings, module loading or TIOCSTI");
            if restricted {
                on.push("seccomp: no socket of any family but AF_UNIX (network restricted)");
            }
        } else {
            off.push("seccomp (this kernel installs no filters): ptrace, io_uring, mounts and new namespaces are as the pod allows");
        }
        if !restricted {
            off.push("network: enabled, commands use the pod's network");
        }
        ExternalIsolation {
            enforced: on.into_iter().map(str::to_owned).collect(),
            not_enforced: off.into_iter().map(str::to_owned).collect(),
        }
    }

    /// The network block of an externally isolated workspace under `network`: restricted
    /// is enforced where seccomp can refuse every socket but `AF_UNIX`.
    pub(crate) fn external_network(&self, network: NetworkPolicy) -> NetworkInfo {
        let enforced = network == NetworkPolicy::Restricted && self.seccomp;
        let note = match network {
            NetworkPolicy::Restricted if enforced => {
                "no TCP, UDP or raw sockets (seccomp refuses every socket but AF_UNIX); unix sockets the Landlock rules leave reachable stay reachable, and without Landlock ABI 6 abstract ones too"
            }
            NetworkPolicy::Restricted => {
                "not enforced: this kernel installs no seccomp filters, and without namespaces nothing else cuts the pod's network"
            }
            NetworkPolicy::Enabled => "the pod's network",
        };
        NetworkInfo {
            policy: network,
            enforcement: if enforced { Enforcement::Enforced } else { Enforcement::None },
            client_may_escalate: false,
            note: Some(note.to_owned()),
        }
    }

    /// Whether the kernel gives an externally isolated workspace's commands Landlock.
    pub fn external_landlock(&self) -> bool {
        self.landlock_abi.is_some()
    }
}
