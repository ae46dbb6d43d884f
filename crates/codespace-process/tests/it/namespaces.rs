//! No new namespaces inside the sandbox: `unshare` and `clone` with a namespace flag are
//! refused and `clone3` says it does not exist (libc then falls back to `clone`), while
//! fork, exec and threads still work. The controls show the same calls succeed unsandboxed.

use codespace_types::NetworkPolicy;

use crate::sandbox::{PYTHON, has_line, output_of, sandboxed, workspace};
use crate::support::req;

/// `unshare` of user, network and mount namespaces, a plain fork and the nested user
/// namespace limit, from the shell.
const SHELL: &str = "for f in -U -Ur -n -m; do if unshare $f true 2>/dev/null; \
                     then echo unshare$f=ok; else echo unshare$f=denied; fi; done; \
                     (true & wait) && echo fork=ok; \
                     echo userns_max=$(cat /proc/sys/user/max_user_namespaces)";

/// Raw `clone` with and without namespace flags, `clone3`, and a thread (glibc's
/// `pthread_create` tries `clone3` first).
const PY: &str = "import ctypes, os, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
CLONE = {'x86_64': 56, 'aarch64': 220}[os.uname().machine]
def clone(label, flags):
    ctypes.set_errno(0)
    r = libc.syscall(CLONE, flags | 17, 0, 0, 0, 0)
    if r == 0:
        os._exit(0)
    if r > 0:
        os.waitpid(r, 0)
        print(label + '=ok')
    else:
        print('%s=%d' % (label, ctypes.get_errno()))
clone('clone_user', 0x10000000)
clone('clone_net', 0x40000000)
clone('clone_mount', 0x00020000)
clone('clone_plain', 0)
ctypes.set_errno(0)
libc.syscall(435, 0, 0)
print('clone3=%d' % ctypes.get_errno())
done = []
t = threading.Thread(target=lambda: done.append(1))
t.start()
t.join()
print('thread=ok' if done else 'thread=missing')
";

#[tokio::test]
async fn no_new_namespaces_but_fork_exec_and_threads_work() {
    let ws = workspace();
    for network in [NetworkPolicy::Restricted, NetworkPolicy::Enabled] {
        let (code, out) = output_of(sandboxed(&["sh", "-c", SHELL], &[ws.path()], network)).await;
        assert_eq!(code, Some(0), "{network:?}: {out}");
        for line in [
            "unshare-U=denied",
            "unshare-Ur=denied",
            "unshare-n=denied",
            "unshare-m=denied",
            "fork=ok",
            "userns_max=0",
        ] {
            assert!(has_line(&out, line), "{network:?}: missing {line:?} in {out:?}");
        }
        let (code, out) = output_of(sandboxed(&[PYTHON, "-c", PY], &[ws.path()], network)).await;
        assert_eq!(code, Some(0), "{network:?}: {out}");
        let eperm = libc::EPERM;
        let enosys = libc::ENOSYS;
        for line in [
            format!("clone_user={eperm}"),
            format!("clone_net={eperm}"),
            format!("clone_mount={eperm}"),
            "clone_plain=ok".to_owned(),
            format!("clone3={enosys}"),
            "thread=ok".to_owned(),
        ] {
            assert!(has_line(&out, &line), "{network:?}: missing {line:?} in {out:?}");
        }
    }
    // Unsandboxed, a user namespace can be made both ways and clone3 exists.
    let (_, out) = output_of(req(&["sh", "-c", SHELL])).await;
    assert!(has_line(&out, "unshare-U=ok"), "control: {out}");
    let (_, out) = output_of(req(&[PYTHON, "-c", PY])).await;
    for line in ["clone_user=ok", "clone_plain=ok", "thread=ok"] {
        assert!(has_line(&out, line), "control: missing {line:?} in {out:?}");
    }
    assert!(!has_line(&out, &format!("clone3={}", libc::ENOSYS)), "control: {out}");
}
