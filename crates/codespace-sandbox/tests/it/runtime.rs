//! What a sandboxed command may do to the kernel and its own processes: refused syscalls,
//! no privileges, its own namespaces, the pid cap, and the stdio it was given.
#![expect(clippy::disallowed_methods, reason = "the namespace case reads this process's /proc")]

use codespace_types::NetworkPolicy;

use crate::support::{
    PYTHON, fd_numbers, has_line, output_of, policy, req, sandboxed, with_policy, workspace,
};

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
#[test]
fn io_uring_and_ptrace_are_refused() {
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
        let (_, out) = output_of(sandboxed(&[PYTHON, "-c", &script], &[ws.path()], network));
        for line in ["io_uring=-1/1", "seize=-1/1", "traceme=-1/1", "vm_readv=-1/1"] {
            assert!(has_line(&out, line), "{network:?}: missing {line:?} in {out:?}");
        }
    }
    let control = py_syscalls(&[("io_uring", "libc.syscall(425, 1, buf)")]);
    let (_, out) = output_of(req(&[PYTHON, "-c", &control]));
    let ret: i64 = out
        .trim()
        .strip_prefix("io_uring=")
        .and_then(|v| v.split('/').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1);
    assert!(ret >= 0, "io_uring_setup unsandboxed should work here: {out}");
}

/// R5: no_new_privs, no capabilities (even for a root server), seccomp on.
#[test]
fn no_new_privs_and_no_capabilities() {
    let ws = workspace();
    for network in [NetworkPolicy::Restricted, NetworkPolicy::Enabled] {
        let (_, out) = output_of(sandboxed(&["cat", "/proc/self/status"], &[ws.path()], network));
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

/// N3: `restricted` gets its own network namespace (only a loopback, down) and every mode
/// its own user namespace (the caller's uid mapped to itself, nothing else); `enabled`
/// keeps the host's network namespace.
#[test]
fn namespaces_isolate_user_and_network() {
    let ws = workspace();
    let host_ns = |kind: &str| std::fs::read_link(format!("/proc/self/ns/{kind}")).unwrap();
    let (host_net, host_user) = (host_ns("net"), host_ns("user"));
    let script = "readlink /proc/self/ns/net; readlink /proc/self/ns/user; cat /proc/self/uid_map; \
                  cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; \
                  for ns in mnt pid ipc; do echo $ns=$(readlink /proc/self/ns/$ns); done";
    let (_, out) =
        output_of(sandboxed(&["sh", "-c", script], &[ws.path()], NetworkPolicy::Restricted));
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
        output_of(sandboxed(&["sh", "-c", script], &[ws.path()], NetworkPolicy::Enabled));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], host_net.to_str().unwrap(), "{out}");
    assert_ne!(lines[1], host_user.to_str().unwrap(), "{out}");
}

/// Sanity of the harness: `/dev/stdout` (a pipe reached through /proc) still works.
#[test]
fn stdout_through_proc_works() {
    let ws = workspace();
    let (code, out) = output_of(sandboxed(
        &["sh", "-c", "echo via-proc > /dev/stdout; echo err >&2"],
        &[ws.path()],
        NetworkPolicy::Restricted,
    ));
    assert_eq!(code, Some(0), "{out}");
    assert!(has_line(&out, "via-proc") && has_line(&out, "err"), "{out}");
    // R7 under the sandbox: the launcher's pipes and descriptors never reach the command
    // (3 is `ls`'s own directory handle).
    let (_, out) =
        output_of(sandboxed(&["ls", "/proc/self/fd"], &[ws.path()], NetworkPolicy::Restricted));
    assert_eq!(fd_numbers(&out), vec![0, 1, 2, 3], "{out}");
    // The shim's ignored SIGPIPE does not leak into the command: `yes` dies of it.
    let pipe = "yes | head -c 1 > /dev/null; echo pipe=${PIPESTATUS[0]}";
    for r in [
        sandboxed(&["bash", "-c", pipe], &[ws.path()], NetworkPolicy::Restricted),
        req(&["bash", "-c", pipe]),
    ] {
        let (_, out) = output_of(r);
        assert!(has_line(&out, "pipe=141"), "{out}");
    }
}

/// R3: the PID namespace's `pid_max` caps how many processes a command may have at once,
/// so a fork bomb stops at the cap (that the supervisor keeps serving, and that terminating
/// the command leaves nothing behind, is `codespace-process`'s
/// `a_sandboxed_fork_bomb_is_killable`).
#[test]
fn a_fork_bomb_is_capped_by_pid_max() {
    let ws = workspace();
    let mut p = policy(&[], &[ws.path()], NetworkPolicy::Restricted);
    p.max_pids = 400;
    let py = "import os, time\nn = 0\ntry:\n    while n < 5000:\n        if os.fork() == 0:\n            \
              time.sleep(60)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n    \
              print('forks=%d errno=%d' % (n, e.errno))\n";
    let (_, out) = output_of(with_policy(&[PYTHON, "-c", py], p));
    let forks: u32 = out
        .lines()
        .find_map(|l| l.strip_prefix("forks="))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no fork count: {out}"));
    assert!((300..400).contains(&forks), "{out}");
    assert!(out.contains(&format!("errno={}", libc::EAGAIN)), "{out}");
}
