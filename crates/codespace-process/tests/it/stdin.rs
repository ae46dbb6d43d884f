//! Pipe stdin: ordered writes, close as end of file, and the error of each misuse.

use codespace_process::ProcError;
use codespace_types::Termination;

use crate::support::*;

#[tokio::test]
async fn pipe_stdin_round_trip_then_close_ends_cat() {
    let sup = supervisor();
    let spawned = sup.spawn(req(&["cat"])).await.unwrap();
    sup.write_stdin(&spawned.id, b"hello\n", false).unwrap();
    wait_output(&sup, &spawned.id, |t| t == "hello\n").await;
    sup.write_stdin(&spawned.id, b"", false).unwrap();
    sup.write_stdin(&spawned.id, b"world", true).unwrap();
    let status = wait_exit(&sup, &spawned).await;
    assert_eq!((status.termination, status.exit_code), (Some(Termination::Exited), Some(0)));
    assert_eq!(lossy(&read_all(&sup, &spawned.id).await), "hello\nworld");
}

#[tokio::test]
async fn many_writes_arrive_in_order() {
    let sup = supervisor();
    let spawned = sup.spawn(req(&["cat"])).await.unwrap();
    let mut expected = String::new();
    for i in 0..500 {
        let line = format!("line {i}\n");
        sup.write_stdin(&spawned.id, line.as_bytes(), false).unwrap();
        expected.push_str(&line);
    }
    sup.write_stdin(&spawned.id, b"", true).unwrap();
    wait_exit(&sup, &spawned).await;
    assert_eq!(lossy(&read_all(&sup, &spawned.id).await), expected);
}

#[tokio::test]
async fn write_stdin_errors_say_what_happened() {
    let sup = supervisor();
    assert_eq!(sup.write_stdin("proc-unknown", b"x", false), Err(ProcError::NotFound));

    let spawned = sup.spawn(req(&["cat"])).await.unwrap();
    sup.write_stdin(&spawned.id, b"x", true).unwrap();
    assert_eq!(sup.write_stdin(&spawned.id, b"y", false), Err(ProcError::StdinClosed));
    assert_eq!(sup.write_stdin(&spawned.id, b"", true), Err(ProcError::StdinClosed));
    wait_exit(&sup, &spawned).await;
    assert_eq!(sup.write_stdin(&spawned.id, b"y", false), Err(ProcError::StdinClosed));

    let done = sup.spawn(req(&["true"])).await.unwrap();
    wait_exit(&sup, &done).await;
    assert_eq!(sup.write_stdin(&done.id, b"y", false), Err(ProcError::NotRunning));
    assert_eq!(sup.write_stdin(&done.id, b"", true), Err(ProcError::NotRunning));
}

#[tokio::test]
async fn writing_to_a_command_that_closed_its_stdin_is_an_io_error() {
    let sup = supervisor();
    let m = marker();
    let spawned = sup.spawn(req(&["sh", "-c", &format!("exec 0<&-; sleep {m}")])).await.unwrap();
    wait_started(&[&m]).await;
    // The first write is queued; the writer task then meets EPIPE and later writes say so.
    let failed = eventually_async(PATIENCE, || {
        matches!(sup.write_stdin(&spawned.id, b"data\n", false), Err(ProcError::Io(_)))
    })
    .await;
    assert!(failed.is_some());
    sup.terminate(&spawned.id, None).unwrap();
    let status = wait_exit(&sup, &spawned).await;
    assert_eq!(status.termination, Some(Termination::Terminated));
}
