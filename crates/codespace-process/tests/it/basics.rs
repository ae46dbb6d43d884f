//! Exit codes, output capture, spawn failures, argv and `PATH` handling, the clean
//! environment and descriptors (R7), no controlling terminal in pipe mode (R8), cursors.
#![expect(
    clippy::disallowed_methods,
    reason = "tests write programs to run and start a process whose descriptors leak"
)]

use std::os::unix::fs::PermissionsExt as _;
use std::time::Duration;

use codespace_process::{ProcError, SpawnRequest, Supervisor, SupervisorConfig};
use codespace_types::{ProcessState, Termination};

use crate::support::*;

#[tokio::test]
async fn exit_codes_0_1_and_127_are_reported() {
    let sup = supervisor();
    for (argv, code) in [
        (vec!["true"], 0),
        (vec!["false"], 1),
        (vec!["sh", "-c", "exit 7"], 7),
        // The shell's own "command not found".
        (vec!["sh", "-c", "no-such-command-codespace-test"], 127),
    ] {
        let (status, _) = run(&sup, req(&argv)).await;
        assert_eq!(status.state, ProcessState::Exited);
        assert_eq!(status.termination, Some(Termination::Exited), "{argv:?}");
        assert_eq!(status.exit_code, Some(code), "{argv:?}");
        assert_eq!(status.signal, None);
        assert!(status.eof);
        assert!(status.exited_at_ms.unwrap() >= status.started_at_ms);
    }
    assert_eq!(sup.live(), 0);
}

#[test]
fn the_supervisor_and_its_futures_can_be_shared_across_threads() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    fn send<T: Send>(_: &T) {}
    let sup = supervisor();
    send_sync(&sup);
    let spawn = sup.spawn(req(&["true"]));
    send(&spawn);
    drop(spawn);
    let shutdown = sup.shutdown();
    send(&shutdown);
}

#[tokio::test]
async fn ids_are_proc_uuids_and_the_exit_watch_fires() {
    let sup = supervisor();
    let spawned = sup.spawn(req(&["true"])).await.unwrap();
    let uuid = spawned.id.strip_prefix("proc-").unwrap();
    assert_eq!(uuid.len(), 36);
    assert_eq!(uuid.chars().nth(14), Some('4'), "uuid v4: {uuid}");
    tokio::time::timeout(PATIENCE, spawned.exited.clone().wait()).await.unwrap();
    assert!(spawned.exited.has_exited());
    assert_eq!(sup.status(&spawned.id).unwrap().state, ProcessState::Exited);
}

#[tokio::test]
async fn stdout_and_stderr_are_both_captured_in_write_order() {
    let sup = supervisor();
    let (status, out) =
        run(&sup, req(&["sh", "-c", "echo out1; echo err1 >&2; echo out2; echo err2 >&2"])).await;
    assert_eq!(status.exit_code, Some(0));
    // One pipe carries both streams, so the interleaving is exactly the order of the writes.
    assert_eq!(lossy(&out), "out1\nerr1\nout2\nerr2\n");
    assert_eq!(status.output_total, out.len() as u64);
}

#[tokio::test]
async fn argv_reaches_the_command_verbatim_without_a_shell() {
    let sup = supervisor();
    let (_, out) = run(&sup, req(&["echo", "$HOME", "*", ";", "a  b", "`id`"])).await;
    assert_eq!(lossy(&out), "$HOME * ; a  b `id`\n");
}

#[tokio::test]
async fn a_missing_executable_is_spawn_failed_and_leaves_nothing() {
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("not-executable");
    std::fs::write(&plain, "#!/bin/sh\necho hi\n").unwrap();
    let plain = plain.to_str().unwrap().to_owned();
    let dir_path = dir.path().to_str().unwrap().to_owned();
    for argv in [
        vec!["no-such-binary-codespace-test"],
        vec!["/nonexistent/dir/tool"],
        vec![plain.as_str()],
        vec![dir_path.as_str()],
    ] {
        match sup.spawn(req(&argv)).await {
            Err(ProcError::SpawnFailed(msg)) => assert!(!msg.is_empty()),
            other => panic!("{argv:?}: {other:?}"),
        }
    }
    assert_eq!(sup.live(), 0);
}

#[tokio::test]
async fn an_exec_failure_inside_the_shim_is_spawn_failed_too() {
    // The file exists and is executable, so the supervisor's resolution accepts it; execve
    // in the shim fails (ENOENT for the interpreter) and the shim reports it.
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad-interpreter");
    std::fs::write(&script, "#!/no/such/interpreter\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    match sup.spawn(req(&[script.to_str().unwrap()])).await {
        Err(ProcError::SpawnFailed(msg)) => {
            assert!(msg.contains("No such file"), "{msg}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(sup.live(), 0);
}

#[tokio::test]
async fn a_missing_working_directory_or_reaper_is_spawn_failed() {
    let sup = supervisor();
    let mut r = req(&["/bin/true"]);
    r.cwd = "/nonexistent/codespace/cwd".into();
    assert!(matches!(sup.spawn(r).await, Err(ProcError::SpawnFailed(_))));

    let bad = Supervisor::new(SupervisorConfig::new("/nonexistent/codespace-reaper"));
    assert!(matches!(bad.spawn(req(&["true"])).await, Err(ProcError::SpawnFailed(_))));
    assert_eq!(bad.live(), 0);
    assert_eq!(sup.live(), 0);
}

#[tokio::test]
async fn malformed_requests_are_invalid() {
    let sup = supervisor();
    let mut cases: Vec<SpawnRequest> = vec![req(&[]), req(&[""]), req(&["echo", "a\0b"])];
    let mut zero = req(&["true"]);
    zero.timeout = Duration::ZERO;
    cases.push(zero);
    let mut bad_env = req(&["true"]);
    bad_env.env.push(("A=B".into(), "x".into()));
    cases.push(bad_env);
    for r in cases {
        let argv = r.argv.clone();
        assert!(matches!(sup.spawn(r).await, Err(ProcError::Invalid(_))), "{argv:?}");
    }
    assert_eq!(sup.live(), 0);
}

#[tokio::test]
async fn argv0_is_resolved_on_the_childs_path_not_the_servers() {
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let tool = bin.join("codespace-test-tool");
    std::fs::write(&tool, "#!/bin/sh\necho \"tool:$0:$1\"\n").unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();

    // Absolute PATH entry.
    let mut r = req(&["codespace-test-tool", "x"]);
    r.env = vec![("PATH".into(), format!("{}:/usr/bin:/bin", bin.display()))];
    let (status, out) = run(&sup, r).await;
    assert_eq!(status.exit_code, Some(0));
    assert_eq!(lossy(&out), format!("tool:{}:x\n", tool.display()));

    // A relative PATH entry is taken against the child's cwd.
    let mut r = req(&["codespace-test-tool", "y"]);
    r.env = vec![("PATH".into(), "bin:/usr/bin:/bin".into())];
    r.cwd = dir.path().to_owned();
    let (_, out) = run(&sup, r).await;
    assert!(lossy(&out).ends_with(":y\n"), "{}", lossy(&out));

    // Not on the child's PATH: not found, even though the server could find `sh`.
    let mut r = req(&["codespace-test-tool"]);
    r.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    assert!(matches!(sup.spawn(r).await, Err(ProcError::SpawnFailed(_))));
}

#[tokio::test]
async fn r7_the_environment_is_exactly_the_requested_one() {
    // This process has its own variables (HOME, PATH, and CARGO_* under `cargo test`);
    // none but the requested ones may reach the child.
    let sup = supervisor();
    let mut r = req(&["env"]);
    r.env = vec![("PATH".into(), "/usr/bin:/bin".into()), ("ONLY_THIS".into(), "1".into())];
    let (status, out) = run(&sup, r).await;
    assert_eq!(status.exit_code, Some(0));
    let mut lines: Vec<String> = lossy(&out).lines().map(str::to_owned).collect();
    lines.sort();
    assert_eq!(lines, vec!["ONLY_THIS=1".to_owned(), "PATH=/usr/bin:/bin".to_owned()]);
}

#[tokio::test]
async fn r7_the_command_sees_only_descriptors_0_to_2() {
    let sup = supervisor();
    // `ls` itself holds one more descriptor (3) for the directory it lists.
    let (_, out) = run(&sup, req(&["ls", "-l", "/proc/self/fd"])).await;
    let text = lossy(&out);
    let fds: Vec<u32> = text
        .lines()
        .filter_map(|l| l.split_whitespace().rev().nth(2).and_then(|n| n.parse().ok()))
        .collect();
    assert_eq!(fds, vec![0, 1, 2, 3], "{text}");
    let three = text.lines().find(|l| l.contains(" 3 -> ")).unwrap();
    assert!(three.contains("/proc/") && three.ends_with("/fd"), "{three}");
    // And the shell's own table, without ls's directory.
    let (_, out) = run(&sup, req(&["sh", "-c", "ls /proc/$$/fd"])).await;
    assert_eq!(fd_numbers(&lossy(&out)), vec![0, 1, 2]);
}

#[test]
fn r7_a_leaked_server_descriptor_and_secret_never_reach_the_command() {
    // In a helper process that has CODESPACE_SECRET_TOKEN in its environment and a
    // descriptor without close-on-exec, run `env` and `ls /proc/self/fd` through it.
    let helper = example("supervise");
    let reaper = example("reaper");
    let run_helper = |argv: &[&str]| {
        let out = std::process::Command::new(&helper)
            .arg(&reaper)
            .arg("leaky")
            .args(argv)
            .env("CODESPACE_SECRET_TOKEN", "s3cr3t-token")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", lossy(&out.stderr));
        lossy(&out.stdout)
    };
    let env = run_helper(&["env"]);
    assert!(!env.contains("CODESPACE_SECRET_TOKEN") && !env.contains("s3cr3t"), "{env}");
    assert!(env.starts_with("PATH="), "{env}");
    let fds = run_helper(&["ls", "/proc/self/fd"]);
    assert_eq!(fd_numbers(&fds), vec![0, 1, 2, 3], "{fds}");
}

#[tokio::test]
async fn r8_a_pipe_command_has_its_own_session_and_no_terminal() {
    let sup = supervisor();
    let my_sid = my_sid();
    let (status, out) = run(&sup, req(&["sh", "-c", "ps -o sid=,tty= -p $$; tty"])).await;
    let text = lossy(&out);
    let mut lines = text.lines();
    let mut first = lines.next().unwrap().split_whitespace();
    let sid: i32 = first.next().unwrap().parse().unwrap();
    assert_ne!(sid, my_sid, "{text}");
    assert_eq!(first.next(), Some("?"), "no controlling terminal: {text}");
    assert_eq!(lines.next(), Some("not a tty"));
    assert_eq!(status.exit_code, Some(1));
}

#[tokio::test]
async fn read_cursors_max_bytes_and_eof() {
    let sup = supervisor();
    let spawned = sup.spawn(req(&["printf", "0123456789"])).await.unwrap();
    wait_exit(&sup, &spawned).await;
    let id = &spawned.id;
    let a = sup.read(id, 0, 4).unwrap();
    assert_eq!(
        (a.chunk.as_slice(), a.cursor, a.eof, a.output_lost),
        (&b"0123"[..], 4, false, false)
    );
    let b = sup.read(id, a.cursor, 4).unwrap();
    assert_eq!((b.chunk.as_slice(), b.cursor, b.eof), (&b"4567"[..], 8, false));
    let c = sup.read(id, b.cursor, 100).unwrap();
    assert_eq!((c.chunk.as_slice(), c.cursor, c.eof), (&b"89"[..], 10, true));
    let d = sup.read(id, 10, 100).unwrap();
    assert_eq!((d.chunk.len(), d.cursor, d.eof), (0, 10, true));
    let zero = sup.read(id, 3, 0).unwrap();
    assert_eq!((zero.chunk.len(), zero.cursor, zero.eof), (0, 3, false));
    // Past the end: an empty chunk at the real end, as the reference answers.
    let past = sup.read(id, 11, 1).unwrap();
    assert_eq!((past.chunk.len(), past.cursor, past.eof), (0, 10, true));
    assert_eq!(sup.read("proc-nope", 0, 1), Err(ProcError::NotFound));
}

/// A read with its status is one snapshot: running and short of the end while the command
/// runs, then exited with every byte, the chunk's `eof` and the status's agreeing.
#[tokio::test]
async fn a_read_with_its_status_is_one_snapshot() {
    let sup = supervisor();
    let spawned = sup.spawn(req(&["sh", "-c", "printf ab; read line; printf cd"])).await.unwrap();
    let id = &spawned.id;
    wait_output(&sup, id, |o| o == "ab").await;
    let (chunk, st) = sup.read_with_status(id, 0, 100).unwrap();
    assert_eq!((chunk.chunk.as_slice(), chunk.eof), (&b"ab"[..], false));
    assert_eq!((st.state, st.output_total, st.eof), (ProcessState::Running, 2, false));
    sup.write_stdin(id, b"\n", true).unwrap();
    wait_exit(&sup, &spawned).await;
    let (chunk, st) = sup.read_with_status(id, 1, 2).unwrap();
    assert_eq!((chunk.chunk.as_slice(), chunk.cursor, chunk.eof), (&b"bc"[..], 3, false));
    assert_eq!((st.state, st.exit_code, st.output_total), (ProcessState::Exited, Some(0), 4));
    let (chunk, st) = sup.read_with_status(id, 3, 2).unwrap();
    assert_eq!((chunk.chunk.as_slice(), chunk.eof, st.eof), (&b"d"[..], true, true));
    assert!(matches!(sup.read_with_status("proc-nope", 0, 1), Err(ProcError::NotFound)));
}

#[tokio::test]
async fn a_cursor_below_the_ring_is_moved_up_and_says_so() {
    let mut config = config();
    config.ring_bytes = 1000;
    let sup = Supervisor::new(config);
    let expected: String = (1..=2000).map(|i| format!("{i}\n")).collect();
    let spawned = sup.spawn(req(&["seq", "1", "2000"])).await.unwrap();
    let status = wait_exit(&sup, &spawned).await;
    let total = expected.len() as u64;
    assert_eq!(status.output_total, total);
    assert_eq!(status.retained_from, total - 1000);

    let lost = sup.read(&spawned.id, 0, usize::MAX).unwrap();
    assert!(lost.output_lost);
    assert_eq!(lost.retained_from, total - 1000);
    assert_eq!(lost.chunk, expected.as_bytes()[expected.len() - 1000..]);
    assert_eq!(lost.cursor, total);
    assert!(lost.eof);

    let kept = sup.read(&spawned.id, total - 10, 5).unwrap();
    assert!(!kept.output_lost);
    assert_eq!(kept.chunk, expected.as_bytes()[expected.len() - 10..expected.len() - 5]);
}

#[tokio::test]
async fn a_program_still_open_for_writing_a_moment_runs_once_closed() {
    // ETXTBSY: a forking server makes this race routine (a file just written, a fork in
    // another thread still holding the write descriptor). The shim retries briefly.
    let sup = supervisor();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("just-written");
    let mut file = std::fs::File::create(&script).unwrap();
    std::io::Write::write_all(&mut file, b"#!/bin/sh\necho ran\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let closer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        drop(file);
    });
    let (status, out) = run(&sup, req(&[script.to_str().unwrap()])).await;
    closer.join().unwrap();
    assert_eq!(status.exit_code, Some(0));
    assert_eq!(lossy(&out), "ran\n");
}
