//! The harness: policies, commands run under the example launcher (or unsandboxed, for the
//! controls), with their combined output and exit code.
#![expect(
    clippy::disallowed_methods,
    reason = "the harness finds the example launcher, reads PATH and CODESPACE_REQUIRE_SANDBOX, and starts commands"
)]

use std::ffi::OsString;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use codespace_sandbox::{SandboxPolicy, envelope};
use codespace_types::NetworkPolicy;

pub(crate) const PYTHON: &str = "/usr/bin/python3";

/// The pid cap of the tests' policies (the fork-bomb test sets its own).
pub(crate) const TEST_MAX_PIDS: u32 = 1024;

/// `try <label> <path>`: prints `<label>=ok` if `echo x > path` worked, else `<label>=denied`.
pub(crate) const TRY: &str = "try() { if (echo x > \"$2\") 2>/dev/null; then echo \"$1=ok\"; else echo \"$1=denied\"; fi; }; ";

/// Fails the test (never skips) when this host cannot enforce the sandbox.
pub(crate) fn require_sandbox() {
    let p = codespace_sandbox::probe();
    let ok = p.landlock_abi.is_some_and(|v| v >= 7)
        && p.seccomp_filter
        && p.user_and_network_namespaces
        && p.mount_and_pid_namespaces;
    let required = std::env::var("CODESPACE_REQUIRE_SANDBOX").is_ok_and(|v| v == "1");
    assert!(
        ok,
        "this host cannot enforce the command sandbox (need Landlock ABI >= 7, seccomp filters, \
         user + network + mount + PID namespaces with a per-namespace pid_max): {p:?}; CODESPACE_REQUIRE_SANDBOX={required}. The sandbox \
         tests fail rather than skip."
    );
}

pub(crate) fn policy(read: &[&Path], write: &[&Path], network: NetworkPolicy) -> SandboxPolicy {
    SandboxPolicy {
        read_roots: read.iter().map(|p| p.to_path_buf()).collect(),
        writable_roots: write.iter().map(|p| p.to_path_buf()).collect(),
        masked: vec![],
        network,
        max_pids: TEST_MAX_PIDS,
        workdir: None,
    }
}

/// A command to run: its argv, working directory, and policy (none: unsandboxed).
pub(crate) struct Run {
    pub(crate) argv: Vec<String>,
    pub(crate) cwd: PathBuf,
    pub(crate) sandbox: Option<SandboxPolicy>,
}

/// `argv`, unsandboxed, in the host's `/tmp` (the controls).
pub(crate) fn req(argv: &[&str]) -> Run {
    Run { argv: argv.iter().map(|s| (*s).to_owned()).collect(), cwd: "/tmp".into(), sandbox: None }
}

/// `argv` under a policy with `roots` writable, started in the first root.
pub(crate) fn sandboxed(argv: &[&str], roots: &[&Path], network: NetworkPolicy) -> Run {
    with_policy(argv, policy(&[], roots, network))
}

pub(crate) fn with_policy(argv: &[&str], policy: SandboxPolicy) -> Run {
    require_sandbox();
    let mut r = req(argv);
    if let Some(root) = policy.writable_roots.first().or(policy.read_roots.first()) {
        r.cwd = root.clone();
    }
    r.sandbox = Some(policy);
    r
}

pub(crate) fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

pub(crate) fn argv(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// A scratch workspace under the host's `/tmp` (so host-`/tmp` cases are siblings of it).
pub(crate) fn workspace() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("codespace-sbx-ws-").tempdir_in("/tmp").unwrap()
}

/// A path outside every writable root, cleaned up by the test.
pub(crate) fn outside(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("codespace-sbx-{}-{name}", std::process::id()))
}

/// The example launcher, built by `cargo test` with the examples.
fn launcher() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/it-<hash> -> target/<profile>/examples/run_sandboxed
    let path = exe.parent().unwrap().parent().unwrap().join("examples").join("run_sandboxed");
    assert!(path.exists(), "{} not built (cargo test builds examples)", path.display());
    path
}

/// Runs `r` to its end: its exit code (`None` for a signal) and its stdout and stderr as
/// one stream, in the order of the writes.
pub(crate) fn output_of(r: Run) -> (Option<i32>, String) {
    let mut cmd = match &r.sandbox {
        Some(policy) => {
            let argv: Vec<OsString> = r.argv.iter().map(OsString::from).collect();
            let mut cmd = Command::new(launcher());
            cmd.args(envelope::to_args(&(policy, argv)).unwrap());
            cmd
        }
        None => {
            let mut cmd = Command::new(&r.argv[0]);
            cmd.args(&r.argv[1..]);
            cmd
        }
    };
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    let (mut reader, writer) = std::io::pipe().unwrap();
    cmd.current_dir(&r.cwd)
        .env_clear()
        .envs([("PATH", path.as_str()), ("HOME", "/tmp"), ("LANG", "C")])
        .stdin(Stdio::null())
        .stdout(writer.try_clone().unwrap())
        .stderr(writer);
    let mut child = cmd.spawn().unwrap();
    // The command holds the pipe's write ends until it is dropped.
    drop(cmd);
    let mut out = Vec::new();
    reader.read_to_end(&mut out).unwrap();
    let status = child.wait().unwrap();
    (status.code(), String::from_utf8_lossy(&out).into_owned())
}

pub(crate) fn has_line(out: &str, line: &str) -> bool {
    out.lines().any(|l| l.trim() == line)
}

/// The descriptor numbers `ls /proc/self/fd` printed.
pub(crate) fn fd_numbers(out: &str) -> Vec<u32> {
    let mut fds: Vec<u32> = out.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    fds.sort_unstable();
    fds
}
