//! P7: FIFOs, sockets and devices are refused at once, never opened for reading or waited on
//! (`open_listed_file`, for a path a listing showed as regular, opens once and refuses).

use std::os::unix::net::UnixListener;
use std::path::Path;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use codespace_fs::{FileKind, FsError, Root, WalkLimits};
use rustix::fs::{CWD, FileType, Mode};

use crate::support::{Fx, assert_symlink_rejected, cannot_run, p};

fn mknod(path: &Path, kind: FileType, dev: rustix::fs::Dev) -> rustix::io::Result<()> {
    rustix::fs::mknodat(CWD, path, kind, Mode::from_raw_mode(0o666), dev)
}

/// Runs `f` on a thread and fails (instead of hanging) if it takes over 10 s.
fn within_timeout<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10)).expect("the call blocked (FIFO opened for reading?)")
}

fn assert_special(result: Result<impl std::fmt::Debug, FsError>, want: FileKind) {
    match result {
        Err(FsError::SpecialFileRejected { kind, .. }) => assert_eq!(kind, want),
        other => panic!("expected SpecialFileRejected({want}), got {other:?}"),
    }
}

/// Every entry point refuses `name` as `kind`, and `walk` does not list it.
fn assert_refused_everywhere(ws: &Path, name: &'static str, kind: FileKind) {
    let root = Root::open(ws).unwrap();
    let root = within_timeout(move || {
        let path = p(name);
        assert_special(root.open_file(&path), kind);
        // One open, no probe: refused all the same (a socket's open fails before its type
        // is known), and a FIFO's does not wait for a writer.
        let listed = root.open_listed_file(&path);
        assert!(matches!(listed, Err(FsError::SpecialFileRejected { .. })), "{listed:?}");
        assert_special(root.read_window(&path, 0, 10), kind);
        assert_special(root.version(&path), kind);
        assert_special(root.write_atomic(&path, b"x", None), kind);
        assert_special(root.remove_file(&path), kind);
        assert_eq!(root.metadata(&path).unwrap().unwrap().kind, kind);
        root
    });
    assert!(root.walk(&WalkLimits::default()).unwrap().files.iter().all(|f| f != name));
    // Still there and still special: nothing replaced or removed it.
    let st = rustix::fs::statat(CWD, ws.join(name), rustix::fs::AtFlags::SYMLINK_NOFOLLOW).unwrap();
    assert_ne!(FileType::from_raw_mode(st.st_mode), FileType::RegularFile);
}

#[test]
fn p7_fifo_without_writer_is_refused_promptly() {
    let fx = Fx::new();
    mknod(&fx.ws.join("fifo"), FileType::Fifo, 0).unwrap();
    assert_refused_everywhere(&fx.ws, "fifo", FileKind::Fifo);
}

#[test]
fn p7_unix_socket_is_refused() {
    let fx = Fx::new();
    let _listener = UnixListener::bind(fx.ws.join("sock")).unwrap();
    assert_refused_everywhere(&fx.ws, "sock", FileKind::Socket);
}

#[test]
fn p7_device_nodes_are_refused() {
    let fx = Fx::new();
    // /dev/null's and loop0's numbers: opening either would be harmless, but it must not happen.
    let devices = [
        ("null_dev", FileType::CharacterDevice, rustix::fs::makedev(1, 3), FileKind::CharDevice),
        ("block_dev", FileType::BlockDevice, rustix::fs::makedev(7, 0), FileKind::BlockDevice),
    ];
    for (name, kind, dev, want) in devices {
        match mknod(&fx.ws.join(name), kind, dev) {
            Ok(()) => assert_refused_everywhere(&fx.ws, name, want),
            Err(errno) => cannot_run(
                &format!("p7_device_nodes_are_refused ({name})"),
                &format!("mknod failed ({errno}); needs CAP_MKNOD"),
            ),
        }
    }
}

#[test]
fn p7_devices_via_symlink_are_refused_as_symlinks() {
    let fx = Fx::new();
    fx.symlink("/dev/null", "null");
    fx.symlink("/dev/zero", "zero");
    for name in ["null", "zero"] {
        assert_symlink_rejected(fx.root.open_file(&p(name)));
        assert_symlink_rejected(fx.root.read_window(&p(name), 0, 10));
        assert_symlink_rejected(fx.root.write_atomic(&p(name), b"x", None));
    }
}

#[test]
fn p7_fifo_as_ancestor_is_not_a_directory() {
    let fx = Fx::new();
    mknod(&fx.ws.join("fifo"), FileType::Fifo, 0).unwrap();
    let root = Root::open(&fx.ws).unwrap();
    within_timeout(move || {
        assert!(matches!(root.read_window(&p("fifo/x"), 0, 1), Err(FsError::NotDirectory { .. })));
        assert!(matches!(root.create_dirs(&p("fifo/x")), Err(FsError::NotDirectory { .. })));
    });
}
