//! The command sandbox end to end: `SpawnRequest.sandbox` → the shim's argv → `enter()` in
//! the command's child → the real command. Each case asserts a denial that would fail if
//! its rule were missing, and (where it is safe to do) the same action succeeding without
//! the sandbox or under the policy that allows it. Case ids refer to
//! `security-cases.md` (F: filesystem, N: network, R: runtime).
//!
//! These tests never skip: a host that cannot enforce the sandbox fails them, loudly
//! (`CODESPACE_REQUIRE_SANDBOX=1` in CI only makes the message say so).
#![expect(
    clippy::disallowed_methods,
    reason = "tests build fixtures on the host, read the outcome and read CODESPACE_REQUIRE_SANDBOX"
)]

use std::net::TcpListener;
use std::os::linux::net::SocketAddrExt as _;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::{Path, PathBuf};
use std::time::Duration;

use codespace_process::{
    NetworkPolicy, ProcError, SandboxPolicy, SpawnRequest, Terminate, Termination,
};
use rustix::process::Signal;

use crate::support::{
    assert_gone, lossy, marker, req, run, supervisor, tty_req, wait_exit, wait_started,
};

pub(crate) const PYTHON: &str = "/usr/bin/python3";

/// Fails the test (never skips) when this host cannot enforce the sandbox.
fn require_sandbox() {
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

/// The pid cap of the tests' policies (the fork-bomb test sets its own).
const TEST_MAX_PIDS: u32 = 1024;

fn policy(read: &[&Path], write: &[&Path], network: NetworkPolicy) -> SandboxPolicy {
    SandboxPolicy {
        read_roots: read.iter().map(|p| p.to_path_buf()).collect(),
        writable_roots: write.iter().map(|p| p.to_path_buf()).collect(),
        masked: vec![],
        network,
        max_pids: TEST_MAX_PIDS,
        workdir: None,
    }
}

/// `argv` under a policy with `roots` writable, started in the first root.
pub(crate) fn sandboxed(argv: &[&str], roots: &[&Path], network: NetworkPolicy) -> SpawnRequest {
    with_policy(argv, policy(&[], roots, network))
}

fn with_policy(argv: &[&str], policy: SandboxPolicy) -> SpawnRequest {
    require_sandbox();
    let mut r = req(argv);
    if let Some(root) = policy.writable_roots.first().or(policy.read_roots.first()) {
        r.cwd = root.clone();
    }
    r.sandbox = Some(policy);
    r
}

fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

fn argv(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// A scratch workspace under the host's `/tmp` (so host-`/tmp` cases are siblings of it).
pub(crate) fn workspace() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("codespace-sbx-ws-").tempdir_in("/tmp").unwrap()
}

/// A path outside every writable root, cleaned up by the test.
fn outside(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("codespace-sbx-{}-{name}", std::process::id()))
}

/// `try <label> <path>`: prints `<label>=ok` if `echo x > path` worked, else `<label>=denied`.
const TRY: &str = "try() { if (echo x > \"$2\") 2>/dev/null; then echo \"$1=ok\"; else echo \"$1=denied\"; fi; }; ";

pub(crate) async fn output_of(r: SpawnRequest) -> (Option<i32>, String) {
    let sup = supervisor();
    let (status, out) = run(&sup, r).await;
    (status.exit_code, lossy(&out))
}

pub(crate) fn has_line(out: &str, line: &str) -> bool {
    out.lines().any(|l| l.trim() == line)
}

/// F1 (workspace-write) and a write through a symlink out of the root: only the workspace
/// (and /dev/null) is writable.
#[tokio::test]
async fn workspace_write_confines_writes_to_the_root() {
    let ws = workspace();
    let root = ws.path();
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let etc = outside(Path::new("/etc"), "etc");
    let home_file = outside(&home, "home");
    let host_tmp = outside(Path::new("/tmp"), "tmp");
    let escape_dir =
        tempfile::Builder::new().prefix("codespace-sbx-out-").tempdir_in("/tmp").unwrap();
    std::os::unix::fs::symlink(escape_dir.path(), root.join("link")).unwrap();
    let script = format!(
        "{TRY}try inside '{r}/inside'; try etc '{e}'; try home '{h}'; try tmp '{t}'; \
         try devnull /dev/null; try symlink '{r}/link/escaped'; \
         if mkdir '{t}.d' 2>/dev/null; then echo mkdir=ok; else echo mkdir=denied; fi; \
         mkdir '{r}/sub' && echo nested > '{r}/sub/f' && mv '{r}/sub/f' '{r}/sub/g' && echo tree=ok; \
         exit 7",
        r = root.display(),
        e = etc.display(),
        h = home_file.display(),
        t = host_tmp.display(),
    );
    let (code, out) =
        output_of(sandboxed(&argv(&sh(&script)), &[root], NetworkPolicy::Restricted)).await;
    for line in [
        "inside=ok",
        "etc=denied",
        "home=denied",
        // The private /tmp: writable, and nothing reaches the host's (checked below).
        "tmp=ok",
        "devnull=ok",
        "symlink=denied",
        "mkdir=ok",
        "tree=ok",
    ] {
        assert!(has_line(&out, line), "missing {line:?} in {out:?}");
    }
    // The command's own exit code comes through the sandbox unchanged.
    assert_eq!(code, Some(7), "{out}");
    assert_eq!(std::fs::read_to_string(root.join("inside")).unwrap(), "x\n");
    assert_eq!(std::fs::read_to_string(root.join("sub/g")).unwrap(), "nested\n");
    for p in [&etc, &home_file, &host_tmp, &escape_dir.path().join("escaped")] {
        assert!(!p.exists(), "{} was written", p.display());
    }

    // Control: unsandboxed, the host-/tmp write works, so the denial above is the sandbox's.
    let control = format!("{TRY}try tmp '{}'", host_tmp.display());
    let (_, out) = output_of(req(&argv(&sh(&control)))).await;
    assert!(has_line(&out, "tmp=ok"), "{out}");
    std::fs::remove_file(&host_tmp).unwrap();
}

/// F1 (read-only): every write is denied, the workspace included, but reads work.
#[tokio::test]
async fn read_only_denies_every_write() {
    let ws = workspace();
    let root = ws.path();
    std::fs::write(root.join("existing"), "before\n").unwrap();
    let script = format!(
        "{TRY}try inside '{r}/new'; try existing '{r}/existing'; try devnull /dev/null; \
         cat '{r}/existing'; if rm '{r}/existing' 2>/dev/null; then echo rm=ok; else echo rm=denied; fi",
        r = root.display()
    );
    let ro = policy(&[root], &[], NetworkPolicy::Restricted);
    let (code, out) = output_of(with_policy(&argv(&sh(&script)), ro)).await;
    for line in ["inside=denied", "existing=denied", "devnull=ok", "before", "rm=denied"] {
        assert!(has_line(&out, line), "missing {line:?} in {out:?}");
    }
    assert_eq!(code, Some(0), "{out}");
    assert!(!root.join("new").exists());
    assert_eq!(std::fs::read_to_string(root.join("existing")).unwrap(), "before\n");
}

/// Python that connects to 127.0.0.1:<port> and prints `connect=ok` or `connect=<errno>`.
fn py_connect(port: u16) -> String {
    format!(
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n    \
         print('connect=ok')\nexcept OSError as e:\n    print('connect=%s' % e.errno)\n"
    )
}

fn bash_tcp(port: u16) -> String {
    format!(
        "if (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; then echo devtcp=ok; else echo devtcp=denied; fi"
    )
}

/// N1, N3: restricted cuts TCP to a host listener (python socket, bash /dev/tcp, wget);
/// enabled lets the same commands through.
#[tokio::test]
async fn restricted_network_blocks_tcp_and_enabled_allows_it() {
    let ws = workspace();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // A minimal HTTP responder, so a client that gets through can tell (wget exits 0).
    let responder = listener.try_clone().unwrap();
    std::thread::spawn(move || {
        for mut conn in responder.incoming().flatten() {
            use std::io::Write as _;
            let _ = conn.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
        }
    });
    let py = py_connect(port);
    let bash = bash_tcp(port);
    let wget_bin = Path::new("/usr/bin/wget");
    assert!(wget_bin.exists(), "the N1 wget case needs /usr/bin/wget on this host");
    let wget = format!(
        "wget -q -O /dev/null --tries=1 --timeout=3 http://127.0.0.1:{port}/; echo wget=$?"
    );
    let root = ws.path();

    let (_, out) =
        output_of(sandboxed(&[PYTHON, "-c", &py], &[root], NetworkPolicy::Restricted)).await;
    // seccomp refuses the AF_INET socket itself: EPERM.
    assert!(has_line(&out, "connect=1"), "{out}");
    let (_, out) =
        output_of(sandboxed(&["bash", "-c", &bash], &[root], NetworkPolicy::Restricted)).await;
    assert!(has_line(&out, "devtcp=denied"), "{out}");
    let (_, out) =
        output_of(sandboxed(&["sh", "-c", &wget], &[root], NetworkPolicy::Restricted)).await;
    // 4: network failure (the socket is refused).
    assert!(has_line(&out, "wget=4"), "{out}");

    // Enabled: the same connects reach the listener (the backlog accepts them).
    let (_, out) =
        output_of(sandboxed(&[PYTHON, "-c", &py], &[root], NetworkPolicy::Enabled)).await;
    assert!(has_line(&out, "connect=ok"), "{out}");
    let (_, out) =
        output_of(sandboxed(&["bash", "-c", &bash], &[root], NetworkPolicy::Enabled)).await;
    assert!(has_line(&out, "devtcp=ok"), "{out}");
    let (_, out) =
        output_of(sandboxed(&["sh", "-c", &wget], &[root], NetworkPolicy::Enabled)).await;
    assert!(has_line(&out, "wget=0"), "{out}");
    drop(listener);
}

/// Python calling a raw syscall through ctypes; prints `<label>=<ret>/<errno>`.
fn py_syscalls(calls: &[(&str, &str)]) -> String {
    let mut s = String::from(
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\n\
         buf = ctypes.create_string_buffer(256)\n",
    );
    for (label, call) in calls {
        s.push_str(&format!(
            "ctypes.set_errno(0)\nr = {call}\nprint('{label}=%d/%d' % (r, ctypes.get_errno()))\n"
        ));
    }
    s
}

/// N6, R6: io_uring (the socket-filter bypass), ptrace and process_vm_* are refused in
/// every mode;
/// the control shows io_uring_setup works on this host without the sandbox.
#[tokio::test]
async fn io_uring_and_ptrace_are_refused() {
    assert_eq!(std::env::consts::ARCH, "x86_64", "syscall numbers below are x86_64's");
    let ws = workspace();
    let script = py_syscalls(&[
        // io_uring_setup(1, &params)
        ("io_uring", "libc.syscall(425, 1, buf)"),
        // ptrace(PTRACE_SEIZE, 1, 0, 0): the namespace's init, outside the Landlock domain.
        ("seize", "libc.syscall(101, 0x4206, 1, 0, 0)"),
        // ptrace(PTRACE_TRACEME): only seccomp refuses this one.
        ("traceme", "libc.syscall(101, 0, 0, 0, 0)"),
        // process_vm_readv(1, ...)
        ("vm_readv", "libc.syscall(310, 1, 0, 0, 0, 0, 0)"),
    ]);
    for network in [NetworkPolicy::Restricted, NetworkPolicy::Enabled] {
        let (_, out) = output_of(sandboxed(&[PYTHON, "-c", &script], &[ws.path()], network)).await;
        for line in ["io_uring=-1/1", "seize=-1/1", "traceme=-1/1", "vm_readv=-1/1"] {
            assert!(has_line(&out, line), "{network:?}: missing {line:?} in {out:?}");
        }
    }
    let control = py_syscalls(&[("io_uring", "libc.syscall(425, 1, buf)")]);
    let (_, out) = output_of(req(&[PYTHON, "-c", &control])).await;
    let ret: i64 = out
        .trim()
        .strip_prefix("io_uring=")
        .and_then(|v| v.split('/').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1);
    assert!(ret >= 0, "io_uring_setup unsandboxed should work here: {out}");
}

/// R5: no_new_privs, no capabilities (even for a root server), seccomp on.
#[tokio::test]
async fn no_new_privs_and_no_capabilities() {
    let ws = workspace();
    for network in [NetworkPolicy::Restricted, NetworkPolicy::Enabled] {
        let (_, out) =
            output_of(sandboxed(&["cat", "/proc/self/status"], &[ws.path()], network)).await;
        let field = |name: &str| {
            out.lines()
                .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_owned()))
                .unwrap_or_else(|| panic!("no {name} in {out}"))
        };
        assert_eq!(field("NoNewPrivs:"), "1");
        assert_eq!(field("CapEff:"), "0000000000000000");
        assert_eq!(field("CapPrm:"), "0000000000000000");
        assert_eq!(field("CapInh:"), "0000000000000000");
        assert_eq!(field("CapAmb:"), "0000000000000000");
        assert_eq!(field("Seccomp:"), "2");
    }
}

/// N4 (abstract part), R6 (kill the server): abstract unix sockets and signals stay inside the sandbox
/// (Landlock scopes), checked under `enabled` where no network namespace hides them.
#[tokio::test]
async fn abstract_sockets_and_signals_are_scoped() {
    let ws = workspace();
    let name = format!("codespace-sbx-{}", std::process::id());
    let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = UnixListener::bind_addr(&addr).unwrap();
    let py = format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect('\\0{name}')\n    \
         print('abstract=ok')\nexcept OSError as e:\n    print('abstract=%s' % e.errno)\n"
    );
    let (_, out) =
        output_of(sandboxed(&[PYTHON, "-c", &py], &[ws.path()], NetworkPolicy::Enabled)).await;
    assert!(has_line(&out, "abstract=1"), "{out}");
    let (_, out) = output_of(req(&[PYTHON, "-c", &py])).await;
    assert!(has_line(&out, "abstract=ok"), "control: {out}");

    // R6: the namespace's init (PID 1, the launcher, outside the Landlock domain and with
    // the same uid) can be neither signalled nor read; the command itself can.
    let attack = "for sig in 0 9 15; do if kill -$sig 1 2>/dev/null; then echo kill$sig=ok; \
                  else echo kill$sig=denied; fi; done; \
                  if (exec 3<>/proc/1/mem) 2>/dev/null; then echo mem=ok; else echo mem=denied; fi; \
                  if cat /proc/1/environ >/dev/null 2>&1; then echo environ=ok; else echo environ=denied; fi; \
                  if kill -0 $$ && cat /proc/$$/environ >/dev/null; then echo self=ok; fi";
    let (code, out) =
        output_of(sandboxed(&["sh", "-c", attack], &[ws.path()], NetworkPolicy::Enabled)).await;
    for line in
        ["kill0=denied", "kill9=denied", "kill15=denied", "mem=denied", "environ=denied", "self=ok"]
    {
        assert!(has_line(&out, line), "missing {line:?} in {out:?}");
    }
    assert_eq!(code, Some(0), "the command outlived its attempts on init: {out}");
    let me = std::process::id();
    let kill =
        format!("if kill -0 {me} 2>/dev/null; then echo signal=ok; else echo signal=denied; fi");
    let (_, out) = output_of(req(&["sh", "-c", &kill])).await;
    assert!(has_line(&out, "signal=ok"), "control: {out}");
    drop(listener);
}

/// N4, N5: a *pathname* AF_UNIX socket outside the sandbox is unreachable. Landlock ABI 7
/// does not mediate `connect` to one, nor do the network namespace or the socket filter;
/// the private root does: the host's `/tmp`, `/run` and home directories are not there.
/// A socket inside the workspace still works, and unsandboxed the outside one connects.
#[tokio::test]
async fn pathname_unix_sockets_outside_are_unreachable() {
    let ws = workspace();
    let dir = tempfile::Builder::new().prefix("codespace-sbx-sock-").tempdir_in("/tmp").unwrap();
    let outside_sock = dir.path().join("s");
    let inside_sock = ws.path().join("s");
    let _outside = UnixListener::bind(&outside_sock).unwrap();
    let _inside = UnixListener::bind(&inside_sock).unwrap();
    let (outside_dgram, inside_dgram) = (dir.path().join("d"), ws.path().join("d"));
    let _outside_d = std::os::unix::net::UnixDatagram::bind(&outside_dgram).unwrap();
    let _inside_d = std::os::unix::net::UnixDatagram::bind(&inside_dgram).unwrap();
    // N5: connection-less sends name their target in each sendmsg.
    let dgram = |label: &str, path: &Path| {
        format!(
            "import socket\ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\ntry:\n    \
             s.sendto(b'x', '{}')\n    print('{label}=ok')\nexcept OSError as e:\n    \
             print('{label}=%s' % e.errno)\n",
            path.display()
        )
    };
    let py = |label: &str, path: &Path| {
        format!(
            "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect('{}')\n    \
             s.sendall(b'x')\n    print('{label}=ok')\nexcept OSError as e:\n    \
             print('{label}=%s' % e.errno)\n",
            path.display()
        )
    };
    let script = format!(
        "{}{}{}{}{}",
        py("outside", &outside_sock),
        py("inside", &inside_sock),
        dgram("dgram_outside", &outside_dgram),
        dgram("dgram_inside", &inside_dgram),
        dgram("devlog", Path::new("/dev/log")),
    );
    let (_, out) =
        output_of(sandboxed(&[PYTHON, "-c", &script], &[ws.path()], NetworkPolicy::Restricted))
            .await;
    assert!(has_line(&out, &format!("outside={}", libc::ENOENT)), "{out}");
    assert!(has_line(&out, "inside=ok"), "{out}");
    assert!(has_line(&out, &format!("dgram_outside={}", libc::ENOENT)), "{out}");
    assert!(has_line(&out, "dgram_inside=ok"), "{out}");
    assert!(has_line(&out, &format!("devlog={}", libc::ENOENT)), "{out}");
    let control =
        format!("{}{}", py("outside", &outside_sock), dgram("dgram_outside", &outside_dgram));
    let (_, out) = output_of(req(&[PYTHON, "-c", &control])).await;
    assert!(has_line(&out, "outside=ok") && has_line(&out, "dgram_outside=ok"), "control: {out}");
}

/// F7, F2, private `/tmp`: the command's root holds the system directories, its roots and
/// its own `/tmp`; the host's home, `/tmp` and `/run` are absent, masked paths inside a
/// visible root are empty, and what the command writes to `/tmp` never reaches the host.
#[tokio::test]
async fn the_private_root_hides_the_host() {
    let ws = workspace();
    let root = ws.path();
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let host_tmp_file = outside(Path::new("/tmp"), "visible");
    std::fs::write(&host_tmp_file, "host\n").unwrap();
    std::fs::create_dir(root.join("state")).unwrap();
    std::fs::write(root.join("state/token"), "s3cr3t\n").unwrap();
    std::fs::write(root.join("ledger.db"), "ledger\n").unwrap();
    // An extra read root (a toolchain outside the workspace): readable and executable.
    let tools = tempfile::Builder::new().prefix("codespace-sbx-tools-").tempdir_in("/tmp").unwrap();
    let hello = tools.path().join("hello");
    std::fs::write(&hello, "#!/bin/sh\necho hello-from-tools\n").unwrap();
    std::fs::set_permissions(&hello, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut p = policy(&[tools.path()], &[root], NetworkPolicy::Restricted);
    p.masked = vec![root.join("state"), root.join("ledger.db"), "/nonexistent/x".into()];
    let script = format!(
        "{TRY}see() {{ if [ -e \"$2\" ]; then echo \"$1=visible\"; else echo \"$1=absent\"; fi; }}; \
         see home '{home}'; see hosttmp '{htf}'; see run /run; see usr /usr/bin/env; \
         see state_token '{r}/state/token'; echo ledger=$(cat '{r}/ledger.db' | wc -c); \
         try state '{r}/state/new'; try tmp /tmp/scratch; try shm /dev/shm/scratch; \
         '{hello}'; try tools '{tools}/new'; echo shadow=$(cat /etc/shadow | wc -c); \
         echo tmpdir=$(ls -A /tmp); echo proc=$(ls /proc | grep -c '^[0-9]'); echo pid=$$",
        hello = hello.display(),
        tools = tools.path().display(),
        home = home.display(),
        htf = host_tmp_file.display(),
        r = root.display(),
    );
    let (code, out) = output_of(with_policy(&argv(&sh(&script)), p)).await;
    assert_eq!(code, Some(0), "{out}");
    for line in [
        "home=absent",
        "hosttmp=absent",
        "run=absent",
        "usr=visible",
        "state_token=absent",
        "ledger=0",
        "state=denied",
        "tmp=ok",
        "shm=ok",
        "hello-from-tools",
        "tools=denied",
        // The host's password hashes are masked (readable to a root server's uid otherwise).
        "shadow=0",
        // The workspace and the tools lie under the host's /tmp, so they stay visible there.
        &{
            let mut names: Vec<&str> = [root, tools.path()]
                .iter()
                .map(|p| p.file_name().unwrap().to_str().unwrap())
                .collect();
            names.push("scratch");
            names.sort_unstable();
            format!("tmpdir={}", names.join(" "))
        },
        // PID 1 (the namespace's init), the shell and `ls`: nothing of the host.
        "pid=2",
    ] {
        assert!(has_line(&out, line), "missing {line:?} in {out:?}");
    }
    let procs: u32 = out.lines().find_map(|l| l.strip_prefix("proc=")).unwrap().parse().unwrap();
    assert!(procs <= 6, "host processes visible in /proc: {out}");
    assert!(!Path::new("/tmp/scratch").exists(), "the private /tmp leaked to the host");
    assert_eq!(std::fs::read_to_string(root.join("state/token")).unwrap(), "s3cr3t\n");
    std::fs::remove_file(&host_tmp_file).unwrap();

    // Control: unsandboxed, the same paths are there.
    let control = format!("cat '{}' '{}/state/token'", host_tmp_file.display(), root.display());
    std::fs::write(&host_tmp_file, "host\n").unwrap();
    let (code, out) = output_of(req(&["sh", "-c", &control])).await;
    assert_eq!((code, out.as_str()), (Some(0), "host\ns3cr3t\n"));
    std::fs::remove_file(&host_tmp_file).unwrap();
}

/// R3: the PID namespace's `pid_max` caps how many processes a command may have at once,
/// so a fork bomb stops at the cap, the supervisor keeps serving, and terminating the
/// command leaves nothing behind.
#[tokio::test]
async fn a_fork_bomb_is_capped_and_killable() {
    let ws = workspace();
    let mut p = policy(&[], &[ws.path()], NetworkPolicy::Restricted);
    p.max_pids = 400;
    let py = "import os, time\nn = 0\ntry:\n    while n < 5000:\n        if os.fork() == 0:\n            \
              time.sleep(60)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n    \
              print('forks=%d errno=%d' % (n, e.errno))\n";
    let (_, out) = output_of(with_policy(&[PYTHON, "-c", py], p.clone())).await;
    let forks: u32 = out
        .lines()
        .find_map(|l| l.strip_prefix("forks="))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no fork count: {out}"));
    assert!((300..400).contains(&forks), "{out}");
    assert!(out.contains(&format!("errno={}", libc::EAGAIN)), "{out}");

    // A real fork bomb, terminated while it runs.
    let sup = supervisor();
    let m = marker();
    let bomb = format!("b() {{ b | b & }}; b; sleep {m}");
    let spawned = sup.spawn(with_policy(&["bash", "-c", &bomb], p)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (status, out) = run(&sup, req(&["echo", "still-serving"])).await;
    assert_eq!((status.exit_code, lossy(&out).trim()), (Some(0), "still-serving"));
    assert_eq!(sup.terminate(&spawned.id).unwrap(), Terminate::Sent);
    assert_eq!(wait_exit(&sup, &spawned).await.termination, Some(Termination::Terminated));
    assert_gone(&[&m], Duration::from_secs(5)).await;
}

/// F8: a sandbox that cannot be entered is a spawn failure naming the step; the command never
/// runs (no weaker fallback).
#[tokio::test]
async fn unenterable_sandbox_is_a_spawn_failure() {
    let ws = workspace();
    let marker = outside(ws.path(), "ran");
    let missing = ws.path().join("does-not-exist");
    let mut r = sandboxed(
        &["touch", marker.to_str().unwrap()],
        &[&missing, ws.path()],
        NetworkPolicy::Restricted,
    );
    r.cwd = ws.path().to_path_buf();
    let sup = supervisor();
    match sup.spawn(r).await {
        Err(ProcError::SpawnFailed(msg)) => {
            assert!(msg.contains("sandbox root"), "{msg}");
            assert!(msg.contains("does-not-exist"), "{msg}");
        }
        other => panic!("expected SpawnFailed, got {other:?}"),
    }
    assert!(!marker.exists(), "the command ran unsandboxed");
}

/// A PTY works through the sandbox: size, `/dev/tty` writes, stdin-free output.
#[tokio::test]
async fn pty_works_under_the_sandbox() {
    require_sandbox();
    let ws = workspace();
    let mut r = tty_req(&["sh", "-c", "stty size; echo via-tty > /dev/tty; echo done"]);
    r.cwd = ws.path().to_path_buf();
    r.sandbox = Some(policy(&[], &[ws.path()], NetworkPolicy::Restricted));
    let (code, out) = output_of(r).await;
    assert_eq!(code, Some(0), "{out}");
    for line in ["24 80", "via-tty", "done"] {
        assert!(has_line(&out, line), "missing {line:?} in {out:?}");
    }

    // Resize and stdin reach the command through the launcher; its exit code comes back.
    let mut r = tty_req(&["sh", "-c", "stty size; read line; echo got=$line; stty size; exit 3"]);
    r.cwd = ws.path().to_path_buf();
    r.sandbox = Some(policy(&[], &[ws.path()], NetworkPolicy::Restricted));
    let sup = supervisor();
    let spawned = sup.spawn(r).await.unwrap();
    crate::support::wait_output(&sup, &spawned.id, |t| t.contains("24 80\r\n")).await;
    sup.resize(&spawned.id, 40, 120).unwrap();
    sup.write_stdin(&spawned.id, b"hi\n", false).unwrap();
    let status = wait_exit(&sup, &spawned).await;
    let out = lossy(&crate::support::read_all(&sup, &spawned.id).await);
    assert_eq!(status.exit_code, Some(3), "{out}");
    for line in ["got=hi", "40 120"] {
        assert!(has_line(&out, line), "missing {line:?} in {out:?}");
    }
}

/// Sanity of the harness: `/dev/stdout` (a pipe reached through /proc) still works.
#[tokio::test]
async fn stdout_through_proc_works() {
    let ws = workspace();
    let (code, out) = output_of(sandboxed(
        &["sh", "-c", "echo via-proc > /dev/stdout; echo err >&2"],
        &[ws.path()],
        NetworkPolicy::Restricted,
    ))
    .await;
    assert_eq!(code, Some(0), "{out}");
    assert!(has_line(&out, "via-proc") && has_line(&out, "err"), "{out}");
    // R7 under the sandbox: the launcher's pipes and descriptors never reach the command
    // (3 is `ls`'s own directory handle).
    let (_, out) =
        output_of(sandboxed(&["ls", "/proc/self/fd"], &[ws.path()], NetworkPolicy::Restricted))
            .await;
    assert_eq!(crate::support::fd_numbers(&out), vec![0, 1, 2, 3], "{out}");
    // The shim's ignored SIGPIPE does not leak into the command: `yes` dies of it.
    let pipe = "yes | head -c 1 > /dev/null; echo pipe=${PIPESTATUS[0]}";
    for r in [
        sandboxed(&["bash", "-c", pipe], &[ws.path()], NetworkPolicy::Restricted),
        req(&["bash", "-c", pipe]),
    ] {
        let (_, out) = output_of(r).await;
        assert!(has_line(&out, "pipe=141"), "{out}");
    }
}

/// N3: `restricted` gets its own network namespace (only a loopback, down) and every mode
/// its own user namespace (the caller's uid mapped to itself, nothing else); `enabled`
/// keeps the host's network namespace.
#[tokio::test]
async fn namespaces_isolate_user_and_network() {
    let ws = workspace();
    let host_ns = |kind: &str| std::fs::read_link(format!("/proc/self/ns/{kind}")).unwrap();
    let (host_net, host_user) = (host_ns("net"), host_ns("user"));
    let script = "readlink /proc/self/ns/net; readlink /proc/self/ns/user; cat /proc/self/uid_map; \
                  cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; \
                  for ns in mnt pid ipc; do echo $ns=$(readlink /proc/self/ns/$ns); done";
    let (_, out) =
        output_of(sandboxed(&["sh", "-c", script], &[ws.path()], NetworkPolicy::Restricted)).await;
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() >= 4, "{out}");
    assert_ne!(lines[0], host_net.to_str().unwrap(), "{out}");
    assert_ne!(lines[1], host_user.to_str().unwrap(), "{out}");
    // The test process's effective uid.
    let uid = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("Uid:").map(|v| v.split_whitespace().nth(1).unwrap().to_owned())
        })
        .unwrap();
    let map: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(map, [uid.as_str(), uid.as_str(), "1"], "{out}");
    assert_eq!(lines[3], "lo", "only a loopback in the private netns: {out}");
    for ns in ["mnt", "pid", "ipc"] {
        let inside = lines.iter().find_map(|l| l.strip_prefix(&format!("{ns}="))).unwrap();
        assert_ne!(inside, host_ns(ns).to_str().unwrap(), "{ns}: {out}");
    }
    assert!(lines[4].starts_with("mnt="), "more than a loopback in the private netns: {out}");

    let (_, out) =
        output_of(sandboxed(&["sh", "-c", script], &[ws.path()], NetworkPolicy::Enabled)).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], host_net.to_str().unwrap(), "{out}");
    assert_ne!(lines[1], host_user.to_str().unwrap(), "{out}");
}

/// R1/R2 under the sandbox: the shim (outside the Landlock domain) still kills the whole
/// sandboxed tree, a signal death is reported as such, and the command's parent-death
/// signal survives the namespace and capability changes (a SIGKILLed shim takes it along).
#[tokio::test]
async fn sandboxed_trees_are_killed_and_signals_reported() {
    let ws = workspace();
    let policy = |argv: &[&str]| sandboxed(argv, &[ws.path()], NetworkPolicy::Restricted);
    let sup = supervisor();

    let (status, _) = run(&sup, policy(&["sh", "-c", "kill -TERM $$"])).await;
    assert_eq!(status.termination, Some(Termination::Signaled));
    assert_eq!(status.signal.map(|s| s.number), Some(15));

    let (esc, fg) = (marker(), marker());
    let script = format!("setsid sh -c 'sleep {esc}' & sleep {fg}");
    let spawned = sup.spawn(policy(&["sh", "-c", &script])).await.unwrap();
    wait_started(&[&esc, &fg]).await;
    assert_eq!(sup.terminate(&spawned.id).unwrap(), Terminate::Sent);
    assert_gone(&[&esc, &fg], Duration::from_secs(5)).await;
    assert_eq!(wait_exit(&sup, &spawned).await.termination, Some(Termination::Terminated));

    let m = marker();
    let spawned = sup.spawn(policy(&["sleep", &m])).await.unwrap();
    wait_started(&[&m]).await;
    let shim = shim_of(&m);
    rustix::process::kill_process(rustix::process::Pid::from_raw(shim).unwrap(), Signal::KILL)
        .unwrap();
    assert_gone(&[&m], Duration::from_secs(5)).await;
    let _ = tokio::time::timeout(Duration::from_secs(5), spawned.exited.wait()).await;
}

/// The pid of the reaper shim of the command `sleep <marker>`: the last of its ancestors
/// below this test process, or below the spawn helper (a child of this process whose
/// forks, the shim among them, all show its `--helper` command line).
fn shim_of(marker: &str) -> i32 {
    let me = std::process::id() as i32;
    let ppid = |pid: i32| -> i32 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let rest = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
        rest.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0)
    };
    let pid =
        *crate::support::pids_with_arg(marker).first().unwrap_or_else(|| panic!("no {marker}"));
    let mut chain = vec![pid as i32];
    while let Some(&last) = chain.last() {
        let parent = ppid(last);
        if parent == me || parent <= 1 {
            break;
        }
        chain.push(parent);
    }
    let top = *chain.last().unwrap();
    let cmdline = std::fs::read(format!("/proc/{top}/cmdline")).unwrap_or_default();
    let helper = cmdline.split(|b| *b == 0).any(|a| a == b"--helper");
    if helper { chain[chain.len() - 2] } else { top }
}

/// N2, N7: under `restricted` no socket of another family than AF_UNIX can be created
/// (UDP for DNS, raw, netlink, packet, vsock); AF_UNIX still works. Under `enabled` the
/// same UDP socket is allowed (the control).
#[tokio::test]
async fn restricted_refuses_every_socket_family_but_unix() {
    let ws = workspace();
    let py = "import socket\n\
              cases = [('udp', socket.AF_INET, socket.SOCK_DGRAM), ('udp6', socket.AF_INET6, socket.SOCK_DGRAM),\n\
                       ('raw', socket.AF_INET, socket.SOCK_RAW), ('netlink', socket.AF_NETLINK, socket.SOCK_RAW),\n\
                       ('packet', socket.AF_PACKET, socket.SOCK_RAW), ('vsock', socket.AF_VSOCK, socket.SOCK_STREAM),\n\
                       ('unix', socket.AF_UNIX, socket.SOCK_STREAM)]\n\
              for name, fam, kind in cases:\n\
              \x20   try:\n\
              \x20       socket.socket(fam, kind).close(); print(name + '=ok')\n\
              \x20   except OSError as e:\n\
              \x20       print('%s=%s' % (name, e.errno))\n\
              a, b = socket.socketpair(); print('socketpair=ok')\n";
    let (_, out) =
        output_of(sandboxed(&[PYTHON, "-c", py], &[ws.path()], NetworkPolicy::Restricted)).await;
    for line in
        ["udp=1", "udp6=1", "raw=1", "netlink=1", "packet=1", "vsock=1", "unix=ok", "socketpair=ok"]
    {
        assert!(has_line(&out, line), "missing {line:?} in {out:?}");
    }
    let (_, out) =
        output_of(sandboxed(&[PYTHON, "-c", py], &[ws.path()], NetworkPolicy::Enabled)).await;
    assert!(has_line(&out, "udp=ok"), "{out}");
}

/// F7 (part): the server's `/proc/<pid>/environ` and `cmdline` are unreadable: the
/// command's `/proc` belongs to its own PID namespace, where the server does not exist.
#[tokio::test]
async fn server_proc_secrets_are_unreadable() {
    let ws = workspace();
    let me = std::process::id();
    let script = format!(
        "for f in environ cmdline; do if cat /proc/{me}/$f >/dev/null 2>&1; then echo $f=ok; \
         else echo $f=denied; fi; done"
    );
    let (_, out) =
        output_of(sandboxed(&["sh", "-c", &script], &[ws.path()], NetworkPolicy::Enabled)).await;
    assert!(has_line(&out, "environ=denied") && has_line(&out, "cmdline=denied"), "{out}");
    let control = format!(
        "if cat /proc/{me}/environ >/dev/null 2>&1; then echo environ=ok; else echo environ=denied; fi"
    );
    let (_, out) = output_of(req(&["sh", "-c", &control])).await;
    assert!(has_line(&out, "environ=ok"), "control: {out}");
}
