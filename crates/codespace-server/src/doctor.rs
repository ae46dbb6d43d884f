//! `codespace doctor`: what this host can enforce (each kernel primitive, and which
//! `sandbox` modes it supports), the inotify limits the workspace watcher works within, and
//! the effective registry. Also the host facts `serve`
//! starts with and its start-up log of what an externally isolated workspace gets: one
//! probe, one answer, whichever of the three says it.

use codespace_gateway::HostFacts;
use codespace_policy::Registry;
use codespace_protocol::ExternalIsolation;
use codespace_sandbox::HostProbe;
use codespace_types::{NetworkPolicy, SandboxSetting};
use codespace_watch::InotifyLimits;
use serde_json::json;

/// What the gateway is told of this host.
pub(crate) fn host_facts(probe: &HostProbe) -> HostFacts {
    HostFacts {
        sandbox_missing: probe.missing(),
        landlock_abi: probe.landlock_abi,
        seccomp: probe.seccomp_filter,
    }
}

/// Probes the host for `serve`, and says on stderr, for each externally isolated workspace
/// of `registry`, exactly what is and is not enforced on its commands.
pub(crate) fn at_start(registry: &Registry) -> HostFacts {
    let host = host_facts(&codespace_sandbox::probe());
    announce_external(registry.workspaces(), &host);
    host
}

/// The start-up line (a reload's too) of each `sandbox: "external"` workspace of
/// `workspaces`: what is and is not enforced.
pub(crate) fn announce_external<'a>(
    workspaces: impl Iterator<Item = &'a codespace_policy::Workspace>,
    host: &HostFacts,
) {
    for w in workspaces.filter(|w| w.sandbox == SandboxSetting::External) {
        let iso = host.external_isolation(w.network);
        tracing::warn!(
            workspace = %w.id,
            enforced = %iso.enforced.join("; "),
            not_enforced = %iso.not_enforced.join("; "),
            "sandbox=external: the operator declared the pod or VM the isolation boundary; \
             commands run without the namespace sandbox"
        );
    }
}

pub(crate) fn report(probe: &HostProbe, registry: &Registry, source: &str, json: bool) -> String {
    let missing = probe.missing();
    let host = host_facts(probe);
    let enforced = Enforced::from_missing(&missing);
    let external = |network| host.external_isolation(network);
    if json {
        return json_report(probe, registry, source, &enforced, &missing, &external);
    }
    let mut s = host_text(probe, &missing);
    s += "\nenforced by this server:\n";
    s += &format!("  file tools:      {FILE_TOOLS}\n");
    s += &format!("  command sandbox: {}\n", enforced.sandbox);
    s += &format!("  network policy:  {}\n", enforced.network);
    s += "\nsandbox=external (restricted network) on this host:\n";
    let iso = external(NetworkPolicy::Restricted);
    for line in &iso.enforced {
        s += &format!("  enforced:     {line}\n");
    }
    for line in &iso.not_enforced {
        s += &format!("  not enforced: {line}\n");
    }
    s += &watching_text(&InotifyLimits::of_host());
    s += &registry_text(registry, source);
    s
}

const FILE_TOOLS: &str = "openat2 beneath the workspace root, no symlinks followed";

/// What is enforced follows from the probes, the same decision `serve` makes.
struct Enforced {
    sandbox: &'static str,
    network: &'static str,
}

impl Enforced {
    fn from_missing(missing: &[String]) -> Enforced {
        if missing.is_empty() {
            Enforced {
                sandbox: "linux-sandbox for sandbox=on workspaces (user, mount, PID, IPC and network namespaces, a private root with its own /tmp, a pid cap, Landlock, seccomp, no capabilities); external confinement for sandbox=external (below); none for sandbox=off",
                network: "enforced for sandbox=on workspaces (restricted: a private network namespace, no TCP/UDP/raw sockets; host abstract unix sockets cut; host pathname unix sockets inside the workspace or an extra read root stay reachable, the others are outside the private root)",
            }
        } else {
            Enforced {
                sandbox: "unavailable on this host: sandbox=on workspaces refuse commands; sandbox=external runs them confined as below (the pod or VM is the boundary); sandbox=off runs them unconfined",
                network: "not enforced by namespaces",
            }
        }
    }
}

/// Which `sandbox` settings run commands on this host.
fn modes(missing: &[String]) -> serde_json::Value {
    json!({
        "on": if missing.is_empty() { "runs commands in the namespace sandbox" } else { "refuses commands (the host lacks what the sandbox needs)" },
        "external": "runs commands without namespaces, confined as external.enforced says",
        "off": "runs commands unconfined",
    })
}

fn json_report(
    probe: &HostProbe,
    registry: &Registry,
    source: &str,
    enforced: &Enforced,
    missing: &[String],
    external: &dyn Fn(NetworkPolicy) -> ExternalIsolation,
) -> String {
    let workspaces: Vec<serde_json::Value> = registry
        .workspaces()
        .map(|w| {
            let mut v = json!({
                "id": w.id, "root": w.root.display().to_string(), "profile": w.profile.as_str(),
                "network": w.network.as_str(), "approvals": w.approvals.as_str(),
                "environment": w.environment, "environment_kind": w.environment_kind.as_str(),
                "sandbox": w.sandbox.as_str(),
                "extra_read_roots": w.extra_read_roots.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            });
            if w.sandbox == SandboxSetting::External {
                v["external"] = json!(external(w.network));
            }
            v
        })
        .collect();
    let doc = json!({
        "server": codespace_protocol::SERVER_NAME,
        "version": env!("CARGO_PKG_VERSION"),
        "host": probe,
        "enforcement": {
            "file_tools": FILE_TOOLS,
            "command_sandbox": enforced.sandbox,
            "sandbox_missing": missing,
            "network": enforced.network,
            "modes": modes(missing),
            "external": external(NetworkPolicy::Restricted),
        },
        "watching": watching(&InotifyLimits::of_host()),
        "registry": { "source": source, "workspaces": workspaces },
    });
    format!("{doc:#}\n")
}

fn host_text(probe: &HostProbe, missing: &[String]) -> String {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let mut s = format!("codespace {}\n\nhost:\n", env!("CARGO_PKG_VERSION"));
    s += &format!(
        "  landlock ABI:                 {}\n",
        probe.landlock_abi.map_or("unavailable".to_owned(), |v| v.to_string())
    );
    s += &format!("  seccomp filters:              {}\n", yes_no(probe.seccomp_filter));
    s +=
        &format!("  user + network namespaces:    {}\n", yes_no(probe.user_and_network_namespaces));
    s += &format!("  mount + PID ns, pid_max:      {}\n", yes_no(probe.mount_and_pid_namespaces));
    s += &format!("  openat2 (RESOLVE_BENEATH):    {}\n", yes_no(probe.openat2));
    s += &format!(
        "  AppArmor userns restriction:  {}\n",
        match probe.apparmor_restricts_userns {
            None => "none (no such knob)",
            Some(true) => "on (unprivileged user namespaces need an AppArmor profile)",
            Some(false) => "off",
        }
    );
    if !missing.is_empty() {
        s += &format!("  missing for the command sandbox: {}\n", missing.join(", "));
    }
    let on = if missing.is_empty() { "runs commands" } else { "refuses commands" };
    s += &format!("  modes: sandbox=on {on}; sandbox=external and sandbox=off run them\n");
    s
}

/// What bounds the one watcher that serves every workspace.
fn watching(limits: &InotifyLimits) -> serde_json::Value {
    json!({
        "inotify_instances_used": 1,
        "limits": limits,
        "watches": "one per directory of every watched workspace; a workspace whose directories do not fit under max_user_watches answers uncached, and workspace_info (files.watch) and the log say why",
    })
}

fn watching_text(limits: &InotifyLimits) -> String {
    let n = |v: Option<u64>| v.map_or("unknown".to_owned(), |v| v.to_string());
    let mut s = "\nwatching (inotify):\n".to_owned();
    s += &format!(
        "  one instance and one event thread serve every workspace (max_user_instances: {})\n",
        n(limits.max_user_instances)
    );
    s += &format!(
        "  max_user_watches: {}: one watch per directory across every workspace; a workspace past it answers uncached and says why\n",
        n(limits.max_user_watches)
    );
    s += &format!(
        "  max_queued_events: {}: one queue for every workspace; an overflow makes each resync\n",
        n(limits.max_queued_events)
    );
    s
}

fn registry_text(registry: &Registry, source: &str) -> String {
    let mut s = format!("\nregistry ({source}):\n");
    if registry.is_empty() {
        s += "  (no workspaces)\n";
    }
    for w in registry.workspaces() {
        s += &format!(
            "  {}: root={} profile={} network={} approvals={} environment={} ({}) sandbox={}\n",
            w.id,
            w.root.display(),
            w.profile.as_str(),
            w.network.as_str(),
            w.approvals.as_str(),
            w.environment,
            w.environment_kind.as_str(),
            w.sandbox.as_str()
        );
        for extra in &w.extra_read_roots {
            s += &format!("    extra read root: {}\n", extra.display());
        }
    }
    s
}
