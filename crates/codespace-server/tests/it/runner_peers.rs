//! A standalone worker (`codespace worker --socket`) and a server meeting bad peers: a
//! connect-and-close, random bytes, a junk frame, a silent connection and a 256 MiB frame
//! announced before the handshake each cost only that connection (the worker keeps
//! listening and then serves the real server); a server connecting to a fake worker that
//! announces a 256 MiB frame gives up at once, having read no more than a handshake frame;
//! the socket's path appears only once the worker listens, so a client that connects the
//! moment it exists is answered; and the README's two-user setup (worker as one user, server
//! as another, sharing a group) works with `--socket-mode` and `--socket-group`.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::runner_uds::wait_for_file;
use crate::support::{Env, bin, call};

/// What the kernel says about a live process (`VmHWM`: its peak resident memory), in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Writes `bytes` and then reads until the worker closes the connection.
fn send_and_wait_close(socket: &Path, bytes: &[u8]) {
    let mut peer = UnixStream::connect(socket).unwrap();
    peer.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // The worker may close before taking everything: that is the point.
    let _ = peer.write_all(bytes);
    let mut rest = Vec::new();
    let _ = peer.read_to_end(&mut rest);
}

/// Announces a 256 MiB frame, then streams up to `budget` bytes of it; returns how many
/// the other end took before it hung up.
fn announce_huge_frame(stream: &mut UnixStream, budget: usize) -> usize {
    let _ = stream.write_all(&(256u32 << 20).to_be_bytes());
    let chunk = vec![0u8; 64 << 10];
    let mut sent = 0;
    while sent < budget {
        match stream.write(&chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => sent += n,
        }
    }
    sent
}

/// Starts a standalone worker, lets `peer` do its worst on the socket, checks the worker
/// still listens, then has a real server read a file through it.
async fn survives(what: &str, peer: impl FnOnce(&Path, u32)) {
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    std::fs::write(root.join("hello.txt"), "hello\n").unwrap();
    let socket = env.path().join("worker.sock");
    let mut worker = env
        .command()
        .arg("worker")
        .arg("--socket")
        .arg(&socket)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_file(&socket, Duration::from_secs(10), "the worker never listened");
    peer(&socket, worker.id());
    std::thread::sleep(Duration::from_millis(100));
    assert!(worker.try_wait().unwrap().is_none(), "the worker exited after {what}");
    assert!(socket.exists(), "the worker removed its socket after {what}");
    // A silent connection holds no one up: the server is served meanwhile.
    let _silent = UnixStream::connect(&socket).unwrap();
    let (client, _) =
        env.stdio_with(&[("CODESPACE_RUNNER_SOCKET", socket.to_str().unwrap())]).await;
    let r = call(&client, "read", json!({"workspace_id": "w", "path": "hello.txt"})).await.unwrap();
    assert_eq!(r["content"], "hello\n", "after {what}");
    assert!(!socket.exists(), "a served worker stops listening");
    client.cancel().await.unwrap();
    assert!(worker.wait().unwrap().success());
}

#[tokio::test]
async fn a_worker_survives_a_connect_and_close() {
    survives("a connect-and-close", |socket, _| drop(UnixStream::connect(socket).unwrap())).await;
}

#[tokio::test]
async fn a_worker_survives_random_bytes() {
    // A fixed pseudo-random run, so that a failure can be replayed.
    let mut x: u32 = 0x9e37_79b9;
    let noise: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x.to_le_bytes()[0]
        })
        .collect();
    survives("random bytes", |socket, _| send_and_wait_close(socket, &noise)).await;
}

#[tokio::test]
async fn a_worker_survives_a_junk_frame() {
    let junk = [0, 0, 0, 5, 0xde, 0xad, 0xbe, 0xef, 0x01];
    survives("a junk frame", |socket, _| send_and_wait_close(socket, &junk)).await;
}

#[tokio::test]
async fn a_worker_survives_a_huge_frame_announced_before_the_handshake() {
    survives("a 256 MiB frame announced", |socket, pid| {
        let mut huge = UnixStream::connect(socket).unwrap();
        let taken = announce_huge_frame(&mut huge, 64 << 20);
        assert!(taken < 8 << 20, "the worker read {taken} bytes of a frame before any handshake");
        let peak = peak_rss_kib(pid);
        assert!(peak < 100 << 10, "the worker peaked at {peak} KiB after the announcement");
    })
    .await;
}

/// The worker's socket takes its name only once the worker listens with its final access
/// and has made everything it serves with (it is bound under a hidden staging name,
/// `.worker-<pid>.sock`, and renamed into place): a client that connects the moment the path
/// exists, never retrying a refusal, finds it with its final mode and is answered (the
/// handshake succeeds). Several starts, each raced as tightly as a loop can.
#[tokio::test]
async fn a_worker_socket_answers_as_soon_as_its_path_exists() {
    let env = Env::new();
    for n in 0..6 {
        let socket = env.path().join(format!("worker-{n}.sock"));
        let mut worker = env
            .command()
            .args(["worker", "--socket-mode", "0640", "--socket"])
            .arg(&socket)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let staged = socket.with_file_name(format!(".worker-{}.sock", worker.id()));
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let stream = loop {
            match UnixStream::connect(&socket) {
                Ok(stream) => break stream,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    assert!(std::time::Instant::now() < deadline, "the worker never listened");
                    assert!(worker.try_wait().unwrap().is_none(), "the worker exited");
                    std::thread::yield_now();
                }
                Err(e) => panic!("start {n}: the path existed but the connection failed: {e}"),
            }
        };
        let mode = std::fs::symlink_metadata(&socket).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640, "start {n}: the socket was visible before its mode was set");
        assert!(!staged.exists(), "start {n}: the staging name outlived the rename");
        stream.set_nonblocking(true).unwrap();
        let stream = tokio::net::UnixStream::from_std(stream).unwrap();
        let answered = tokio::time::timeout(
            Duration::from_secs(20),
            codespace_wire::Client::<(), (), ()>::connect(stream, "test"),
        )
        .await
        .expect("the worker never answered the handshake");
        assert!(answered.is_ok(), "start {n}: {:?}", answered.err());
        drop(answered);
        let _ = worker.kill();
        let _ = worker.wait();
    }
}

/// A server told to use a "worker" that announces a 256 MiB frame as its handshake answer
/// refuses it at once, having read no more of it than a handshake frame may be.
#[test]
fn a_server_refuses_a_fake_worker_announcing_a_huge_frame() {
    let env = {
        let mut env = Env::new();
        env.workspace("w", json!({}));
        env
    };
    let socket = env.path().join("fake.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let fake = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut hello = [0u8; 256];
        let _ = stream.read(&mut hello);
        let taken = announce_huge_frame(&mut stream, 32 << 20);
        // Held open: a server still reading would wait here for the rest.
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let _ = stream.read(&mut hello);
        taken
    });
    let out = env
        .command()
        .arg("serve")
        .arg("--config")
        .arg(env.config())
        .env("CODESPACE_RUNNER_SOCKET", &socket)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let taken = fake.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("frame size too big"), "{stderr}");
    assert!(taken < 8 << 20, "the server read {taken} bytes of the fake's frame: {stderr}");
}

/// The README's setup with two real users: the worker as uid 64001 (group 64010) with
/// `--socket-mode 0660 --socket-group 64010`, the server as uid 64002 with 64010 among its
/// groups. Files and patches work through it, and what the patch writes is the worker's.
#[tokio::test]
async fn a_worker_and_a_server_run_as_two_users_sharing_a_group() {
    use rmcp::ServiceExt;
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    if rustix::process::getuid().as_raw() != 0 {
        assert!(
            std::env::var_os("CODESPACE_REQUIRE_SANDBOX").is_none(),
            "running the worker and the server as two users needs root"
        );
        eprintln!("SKIPPED (not root): a_worker_and_a_server_run_as_two_users_sharing_a_group");
        return;
    }
    let (worker_uid, server_uid, group) = (64001u32, 64002u32, 64010u32);
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    std::fs::write(root.join("mine.txt"), "shared\n").unwrap();
    let chown = |p: &Path, uid: u32, gid: u32| {
        rustix::fs::chown(
            p,
            Some(rustix::fs::Uid::from_raw(uid)),
            Some(rustix::fs::Gid::from_raw(gid)),
        )
        .unwrap();
    };
    for dir in [env.path(), &env.path().join("ws")] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    chown(&root, worker_uid, group);
    chown(&root.join("mine.txt"), worker_uid, group);
    let sockets = env.path().join("sockets");
    std::fs::create_dir(&sockets).unwrap();
    chown(&sockets, worker_uid, group);
    std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o750)).unwrap();
    let socket = sockets.join("w.sock");
    let mut worker = Command::new("setpriv")
        .arg(format!("--reuid={worker_uid}"))
        .arg(format!("--regid={group}"))
        .args(["--clear-groups", "--"])
        .arg(bin())
        .args(["worker", "--socket-mode", "0660", "--socket-group", &group.to_string()])
        .arg("--socket")
        .arg(&socket)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_file(&socket, Duration::from_secs(10), "the worker never listened");
    let meta = std::fs::metadata(&socket).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o660);
    assert_eq!(std::os::unix::fs::MetadataExt::gid(&meta), group);
    // The server's own state directory, its user's alone.
    let state = env.path().join("server-state");
    std::fs::create_dir(&state).unwrap();
    chown(&state, server_uid, server_uid);
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let config = env.config();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    let transport =
        TokioChildProcess::new(tokio::process::Command::new("setpriv").configure(|c| {
            c.arg(format!("--reuid={server_uid}"))
                .arg(format!("--regid={server_uid}"))
                .arg(format!("--groups={group}"))
                .arg("--")
                .arg(bin())
                .arg("serve")
                .arg("--config")
                .arg(&config)
                .arg("--runner-socket")
                .arg(&socket)
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("HOME", &state)
                .env("XDG_STATE_HOME", &state)
                .env("RUST_LOG", "warn")
                .stderr(Stdio::inherit());
        }))
        .unwrap();
    let client: crate::support::Client =
        ().serve(transport).await.expect("the server as uid 64002");
    let r = call(&client, "read", json!({"workspace_id": "w", "path": "mine.txt"})).await.unwrap();
    assert_eq!(r["content"], "shared\n");
    let patch = "*** Begin Patch\n*** Add File: made.txt\n+by the worker\n*** End Patch\n";
    let p =
        call(&client, "apply_patch", json!({"workspace_id": "w", "patch": patch})).await.unwrap();
    assert_eq!(p["status"], "applied", "{p}");
    let made = std::fs::metadata(root.join("made.txt")).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&made), worker_uid, "the worker wrote it");
    assert!(state.join("codespace/operations.sqlite3").is_file(), "the server's ledger");
    client.cancel().await.unwrap();
    assert!(worker.wait().unwrap().success());
}
