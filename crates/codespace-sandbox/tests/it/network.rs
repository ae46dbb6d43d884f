//! What a sandboxed command may reach: TCP and every socket family but `AF_UNIX` cut under
//! `restricted`, unix sockets outside the root unreachable, abstract sockets and signals
//! scoped to the sandbox.
#![expect(clippy::disallowed_methods, reason = "the wget case checks the host has wget")]

use std::net::TcpListener;
use std::os::linux::net::SocketAddrExt as _;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::Path;

use codespace_types::NetworkPolicy;

use crate::support::{PYTHON, has_line, output_of, req, sandboxed, workspace};

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
#[test]
fn restricted_network_blocks_tcp_and_enabled_allows_it() {
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

    let (_, out) = output_of(sandboxed(&[PYTHON, "-c", &py], &[root], NetworkPolicy::Restricted));
    // seccomp refuses the AF_INET socket itself: EPERM.
    assert!(has_line(&out, "connect=1"), "{out}");
    let (_, out) = output_of(sandboxed(&["bash", "-c", &bash], &[root], NetworkPolicy::Restricted));
    assert!(has_line(&out, "devtcp=denied"), "{out}");
    let (_, out) = output_of(sandboxed(&["sh", "-c", &wget], &[root], NetworkPolicy::Restricted));
    // 4: network failure (the socket is refused).
    assert!(has_line(&out, "wget=4"), "{out}");

    // Enabled: the same connects reach the listener (the backlog accepts them).
    let (_, out) = output_of(sandboxed(&[PYTHON, "-c", &py], &[root], NetworkPolicy::Enabled));
    assert!(has_line(&out, "connect=ok"), "{out}");
    let (_, out) = output_of(sandboxed(&["bash", "-c", &bash], &[root], NetworkPolicy::Enabled));
    assert!(has_line(&out, "devtcp=ok"), "{out}");
    let (_, out) = output_of(sandboxed(&["sh", "-c", &wget], &[root], NetworkPolicy::Enabled));
    assert!(has_line(&out, "wget=0"), "{out}");
    drop(listener);
}

/// N2, N7: under `restricted` no socket of another family than AF_UNIX can be created
/// (UDP for DNS, raw, netlink, packet, vsock); AF_UNIX still works. Under `enabled` the
/// same UDP socket is allowed (the control).
#[test]
fn restricted_refuses_every_socket_family_but_unix() {
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
        output_of(sandboxed(&[PYTHON, "-c", py], &[ws.path()], NetworkPolicy::Restricted));
    for line in
        ["udp=1", "udp6=1", "raw=1", "netlink=1", "packet=1", "vsock=1", "unix=ok", "socketpair=ok"]
    {
        assert!(has_line(&out, line), "missing {line:?} in {out:?}");
    }
    let (_, out) = output_of(sandboxed(&[PYTHON, "-c", py], &[ws.path()], NetworkPolicy::Enabled));
    assert!(has_line(&out, "udp=ok"), "{out}");
}

/// N4, N5: a *pathname* AF_UNIX socket outside the sandbox is unreachable. Landlock ABI 7
/// does not mediate `connect` to one, nor do the network namespace or the socket filter;
/// the private root does: the host's `/tmp`, `/run` and home directories are not there.
/// A socket inside the workspace still works, and unsandboxed the outside one connects.
#[test]
fn pathname_unix_sockets_outside_are_unreachable() {
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
        output_of(sandboxed(&[PYTHON, "-c", &script], &[ws.path()], NetworkPolicy::Restricted));
    assert!(has_line(&out, &format!("outside={}", libc::ENOENT)), "{out}");
    assert!(has_line(&out, "inside=ok"), "{out}");
    assert!(has_line(&out, &format!("dgram_outside={}", libc::ENOENT)), "{out}");
    assert!(has_line(&out, "dgram_inside=ok"), "{out}");
    assert!(has_line(&out, &format!("devlog={}", libc::ENOENT)), "{out}");
    let control =
        format!("{}{}", py("outside", &outside_sock), dgram("dgram_outside", &outside_dgram));
    let (_, out) = output_of(req(&[PYTHON, "-c", &control]));
    assert!(has_line(&out, "outside=ok") && has_line(&out, "dgram_outside=ok"), "control: {out}");
}

/// N4 (abstract part), R6 (kill the server): abstract unix sockets and signals stay inside the sandbox
/// (Landlock scopes), checked under `enabled` where no network namespace hides them.
#[test]
fn abstract_sockets_and_signals_are_scoped() {
    let ws = workspace();
    let name = format!("codespace-sbx-{}", std::process::id());
    let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = UnixListener::bind_addr(&addr).unwrap();
    let py = format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect('\\0{name}')\n    \
         print('abstract=ok')\nexcept OSError as e:\n    print('abstract=%s' % e.errno)\n"
    );
    let (_, out) = output_of(sandboxed(&[PYTHON, "-c", &py], &[ws.path()], NetworkPolicy::Enabled));
    assert!(has_line(&out, "abstract=1"), "{out}");
    let (_, out) = output_of(req(&[PYTHON, "-c", &py]));
    assert!(has_line(&out, "abstract=ok"), "control: {out}");

    // R6: the namespace's init (PID 1, the launcher, outside the Landlock domain and with
    // the same uid) can be neither signalled nor read; the command itself can.
    let attack = "for sig in 0 9 15; do if kill -$sig 1 2>/dev/null; then echo kill$sig=ok; \
                  else echo kill$sig=denied; fi; done; \
                  if (exec 3<>/proc/1/mem) 2>/dev/null; then echo mem=ok; else echo mem=denied; fi; \
                  if cat /proc/1/environ >/dev/null 2>&1; then echo environ=ok; else echo environ=denied; fi; \
                  if kill -0 $$ && cat /proc/$$/environ >/dev/null; then echo self=ok; fi";
    let (code, out) =
        output_of(sandboxed(&["sh", "-c", attack], &[ws.path()], NetworkPolicy::Enabled));
    for line in
        ["kill0=denied", "kill9=denied", "kill15=denied", "mem=denied", "environ=denied", "self=ok"]
    {
        assert!(has_line(&out, line), "missing {line:?} in {out:?}");
    }
    assert_eq!(code, Some(0), "the command outlived its attempts on init: {out}");
    let me = std::process::id();
    let kill =
        format!("if kill -0 {me} 2>/dev/null; then echo signal=ok; else echo signal=denied; fi");
    let (_, out) = output_of(req(&["sh", "-c", &kill]));
    assert!(has_line(&out, "signal=ok"), "control: {out}");
    drop(listener);
}
