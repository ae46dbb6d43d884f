//! `codespace doctor`: what this host can enforce, and the effective registry.

use codespace_policy::Registry;
use codespace_sandbox::HostProbe;
use serde_json::json;

pub(crate) fn report(probe: &HostProbe, registry: &Registry, source: &str, json: bool) -> String {
    let missing = probe.missing();
    let enforced = Enforced::from_missing(&missing);
    if json {
        return json_report(probe, registry, source, &enforced, &missing);
    }
    let mut s = host_text(probe, &missing);
    s += "\nenforced by this server:\n";
    s += &format!("  file tools:      {FILE_TOOLS}\n");
    s += &format!("  command sandbox: {}\n", enforced.sandbox);
    s += &format!("  network policy:  {}\n", enforced.network);
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
                sandbox: "linux-sandbox for sandbox=on workspaces (user, mount, PID, IPC and network namespaces, a private root with its own /tmp, a pid cap, Landlock, seccomp, no capabilities); none for sandbox=off",
                network: "enforced for sandbox=on workspaces (restricted: a private network namespace, no TCP/UDP/raw sockets; host abstract unix sockets cut; host pathname unix sockets inside the workspace or an extra read root stay reachable, the others are outside the private root)",
            }
        } else {
            Enforced {
                sandbox: "unavailable on this host: sandbox=on workspaces refuse commands; sandbox=off runs them unconfined",
                network: "not enforced",
            }
        }
    }
}

fn json_report(
    probe: &HostProbe,
    registry: &Registry,
    source: &str,
    enforced: &Enforced,
    missing: &[String],
) -> String {
    let workspaces: Vec<serde_json::Value> = registry
        .workspaces()
        .map(|w| {
            json!({
                "id": w.id, "root": w.root.display().to_string(), "profile": w.profile.as_str(),
                "network": w.network.as_str(), "approvals": w.approvals.as_str(),
                "environment": w.environment, "environment_kind": w.environment_kind.as_str(),
                "sandbox": w.sandbox.as_str(),
                "extra_read_roots": w.extra_read_roots.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            })
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
        },
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
    if !missing.is_empty() {
        s += &format!("  missing for the command sandbox: {}\n", missing.join(", "));
    }
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
