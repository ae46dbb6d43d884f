//! Pseudo-terminal processes (R8): their own controlling terminal and session, the
//! 24x80 start and resize, stdin with EOF, signal deaths, descriptors.

use codespace_process::ProcError;
use codespace_types::{SignalInfo, Termination};

use crate::support::*;

#[tokio::test]
async fn r8_a_pty_command_has_its_own_controlling_terminal_and_session() {
    let sup = supervisor();
    let my_sid = my_sid();
    let (status, out) =
        run(&sup, tty_req(&["sh", "-c", "tty; ps -o sid=,tty= -p $$; echo $TERM"])).await;
    assert_eq!(status.exit_code, Some(0));
    let text = lossy(&out);
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let pts = lines[0].strip_prefix("/dev/pts/").unwrap_or_else(|| panic!("{text:?}"));
    assert!(pts.parse::<u32>().is_ok(), "{text:?}");
    let mut ps = lines[1].split_whitespace();
    let sid: i32 = ps.next().unwrap().parse().unwrap();
    assert_ne!(sid, my_sid);
    assert_eq!(ps.next(), Some(format!("pts/{pts}").as_str()), "{text:?}");
    assert_eq!(lines[2], "xterm");
    // A terminal translates newlines.
    assert!(text.contains("\r\n"));
}

#[tokio::test]
async fn r8_a_pty_starts_at_24x80_and_sees_a_resize() {
    let sup = supervisor();
    let spawned =
        sup.spawn(tty_req(&["sh", "-c", "stty size; read line; stty size"])).await.unwrap();
    wait_output(&sup, &spawned.id, |t| t.contains("24 80\r\n")).await;
    sup.resize(&spawned.id, 40, 120).unwrap();
    sup.write_stdin(&spawned.id, b"\n", false).unwrap();
    let status = wait_exit(&sup, &spawned).await;
    assert_eq!(status.exit_code, Some(0));
    let text = lossy(&read_all(&sup, &spawned.id).await);
    assert_eq!(text, "24 80\r\n\r\n40 120\r\n");
    assert_eq!(sup.resize(&spawned.id, 10, 10), Err(ProcError::NotRunning));
}

#[tokio::test]
async fn resize_errors() {
    let sup = supervisor();
    let pipe = sup.spawn(req(&["cat"])).await.unwrap();
    assert_eq!(sup.resize(&pipe.id, 10, 10), Err(ProcError::NotTty));
    let tty = sup.spawn(tty_req(&["cat"])).await.unwrap();
    assert!(matches!(sup.resize(&tty.id, 0, 10), Err(ProcError::Invalid(_))));
    assert!(matches!(sup.resize(&tty.id, 10, 0), Err(ProcError::Invalid(_))));
    assert_eq!(sup.resize("proc-unknown", 10, 10), Err(ProcError::NotFound));
    sup.resize(&tty.id, 1, 1).unwrap();
    sup.shutdown().await;
}

#[tokio::test]
async fn r8_pty_stdin_round_trip_then_close_ends_cat() {
    let sup = supervisor();
    let spawned = sup.spawn(tty_req(&["cat"])).await.unwrap();
    sup.write_stdin(&spawned.id, b"hello\n", false).unwrap();
    // Once echoed by the terminal, once written back by cat.
    wait_output(&sup, &spawned.id, |t| t.matches("hello\r\n").count() == 2).await;
    sup.write_stdin(&spawned.id, b"", true).unwrap();
    let status = wait_exit(&sup, &spawned).await;
    assert_eq!((status.termination, status.exit_code), (Some(Termination::Exited), Some(0)));
    assert!(sup.read(&spawned.id, status.output_total, 10).unwrap().eof);
    assert_eq!(sup.write_stdin(&spawned.id, b"x", false), Err(ProcError::StdinClosed));
}

#[tokio::test]
async fn pty_close_after_a_partial_line_still_ends_input() {
    let sup = supervisor();
    let spawned = sup.spawn(tty_req(&["cat"])).await.unwrap();
    // No newline: the first ^D hands "abc" to cat, the second is end of file.
    sup.write_stdin(&spawned.id, b"abc", true).unwrap();
    let status = wait_exit(&sup, &spawned).await;
    assert_eq!(status.exit_code, Some(0));
    let text = lossy(&read_all(&sup, &spawned.id).await);
    assert!(text.ends_with("abc"), "{text:?}");
}

#[tokio::test]
async fn r8_a_pty_signal_death_is_signaled_not_exit_1() {
    let sup = supervisor();
    let (status, _) = run(&sup, tty_req(&["sh", "-c", "kill -TERM $$"])).await;
    assert_eq!(status.termination, Some(Termination::Signaled));
    assert_eq!(status.signal, Some(SignalInfo { number: 15, name: Some("SIGTERM".to_owned()) }));
    assert_eq!(status.exit_code, None);
    let (status, _) = run(&sup, tty_req(&["sh", "-c", "exit 3"])).await;
    assert_eq!((status.termination, status.exit_code), (Some(Termination::Exited), Some(3)));
}

#[tokio::test]
async fn r7_a_pty_command_sees_only_descriptors_0_to_2() {
    let sup = supervisor();
    let (_, out) = run(&sup, tty_req(&["ls", "/proc/self/fd"])).await;
    assert_eq!(fd_numbers(&lossy(&out)), vec![0, 1, 2, 3], "{}", lossy(&out));
}

#[tokio::test]
async fn r2_terminate_kills_a_pty_tree() {
    let sup = supervisor();
    let (esc, fg) = (marker(), marker());
    let script = format!("setsid sleep {esc} & sleep {fg}");
    let spawned = sup.spawn(tty_req(&["sh", "-c", &script])).await.unwrap();
    wait_started(&[&esc, &fg]).await;
    sup.terminate(&spawned.id, None).unwrap();
    assert_gone(&[&esc, &fg], std::time::Duration::from_secs(2)).await;
    let status = wait_exit(&sup, &spawned).await;
    assert_eq!(status.termination, Some(Termination::Terminated));
    assert!(status.eof);
}
