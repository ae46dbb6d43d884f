//! Output beyond the ring spills to a bounded per-process file: nothing is lost for a
//! reader that keeps up with the spill cap, the cap drops the oldest and says so, and the
//! files go when their handle is evicted, their supervisor is dropped, or (left by a dead
//! supervisor) at the next supervisor's start.
#![expect(
    clippy::disallowed_methods,
    reason = "tests inspect spill directories on the host filesystem"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use codespace_process::{DEFAULT_RING_BYTES, Supervisor, SupervisorConfig, WaitFor};
use codespace_types::Termination;

use crate::support::*;

fn spilling(dir: &Path, spill_bytes: u64) -> SupervisorConfig {
    let mut config = config();
    config.spill_dir = Some(dir.to_owned());
    config.spill_bytes = spill_bytes;
    config
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn seq_output(n: u32) -> Vec<u8> {
    (1..=n).map(|i| format!("{i}\n")).collect::<String>().into_bytes()
}

/// Reads from `cursor` to the end in 256 KiB steps, waiting for output like a client does.
async fn drain(sup: &Supervisor, id: &str) -> (Vec<u8>, bool) {
    let (mut out, mut cursor, mut lost) = (Vec::new(), 0, false);
    loop {
        sup.wait(id, WaitFor::Output { cursor, min: 1 }, PATIENCE).await.unwrap();
        let chunk = sup.read(id, cursor, 256 * 1024).unwrap();
        lost |= chunk.output_lost;
        out.extend_from_slice(&chunk.chunk);
        cursor = chunk.cursor;
        if chunk.eof {
            return (out, lost);
        }
    }
}

#[tokio::test]
async fn seq_2000000_read_after_its_exit_arrives_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let sup = Supervisor::new(spilling(tmp.path(), 64 * 1024 * 1024));
    // Nobody reads while it runs: the pipe is drained into the ring and the spill file, so
    // the command is never blocked and finishes.
    let spawned = sup.spawn(req(&["seq", "1", "2000000"])).await.unwrap();
    let status = wait_exit(&sup, &spawned).await;
    assert_eq!((status.termination, status.exit_code), (Some(Termination::Exited), Some(0)));
    let expected = seq_output(2_000_000);
    assert_eq!(status.output_total, expected.len() as u64);
    assert_eq!(status.retained_from, 0);
    assert_eq!(files_under(tmp.path()).len(), 1, "one spill file");
    let (out, lost) = drain(&sup, &spawned.id).await;
    assert!(!lost);
    assert!(out == expected, "{} of {} bytes, differing", out.len(), expected.len());
    // Every cursor across the ring/spill boundary reads the right bytes.
    let boundary = expected.len() as u64 - DEFAULT_RING_BYTES as u64;
    for (from, len) in
        [(boundary - 10, 20), (boundary, 5), (boundary - 1, 1), (0, 7), (12345, 300_000)]
    {
        let chunk = sup.read(&spawned.id, from, len).unwrap();
        let from = from as usize;
        assert_eq!(chunk.chunk, &expected[from..from + len], "at {from}");
        assert!(!chunk.output_lost);
    }
}

#[tokio::test]
async fn a_reader_keeping_up_while_it_runs_gets_every_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let sup = Supervisor::new(spilling(tmp.path(), 64 * 1024 * 1024));
    let spawned = sup.spawn(req(&["seq", "1", "2000000"])).await.unwrap();
    let (out, lost) = drain(&sup, &spawned.id).await;
    assert!(!lost);
    assert!(out == seq_output(2_000_000), "{} bytes, differing", out.len());
}

#[tokio::test]
async fn past_the_cap_the_oldest_is_dropped_and_output_lost_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let cap = 1024 * 1024;
    let sup = Supervisor::new(spilling(tmp.path(), cap));
    let spawned = sup.spawn(req(&["seq", "1", "1000000"])).await.unwrap();
    let status = wait_exit(&sup, &spawned).await;
    let expected = seq_output(1_000_000);
    let total = expected.len() as u64;
    assert_eq!(status.output_total, total);
    assert_eq!(status.retained_from, total - cap);
    let spill = files_under(tmp.path());
    assert_eq!(spill.len(), 1);
    assert_eq!(std::fs::metadata(&spill[0]).unwrap().len(), cap, "never beyond the cap");
    let chunk = sup.read(&spawned.id, 0, 100).unwrap();
    assert!(chunk.output_lost);
    assert_eq!(chunk.retained_from, total - cap);
    let from = (total - cap) as usize;
    assert_eq!(chunk.chunk, &expected[from..from + 100]);
    // From the returned cursor on, nothing more is lost, across the ring boundary too.
    let mut out = chunk.chunk;
    let mut cursor = chunk.cursor;
    loop {
        let next = sup.read(&spawned.id, cursor, 100_000).unwrap();
        assert!(!next.output_lost);
        out.extend_from_slice(&next.chunk);
        cursor = next.cursor;
        if next.eof {
            break;
        }
    }
    assert!(out == expected[from..], "the newest {cap} bytes, in order");
}

#[tokio::test]
async fn a_100_mb_flood_nobody_reads_finishes_and_keeps_only_the_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let cap = 8 * 1024 * 1024;
    let sup = Supervisor::new(spilling(tmp.path(), cap));
    let spawned = sup.spawn(req(&["head", "-c", "100000000", "/dev/zero"])).await.unwrap();
    let status = wait_exit(&sup, &spawned).await;
    assert_eq!((status.termination, status.exit_code), (Some(Termination::Exited), Some(0)));
    assert_eq!(status.retained_from, 100_000_000 - cap);
    let chunk = sup.read(&spawned.id, 0, 256 * 1024).unwrap();
    assert!(chunk.output_lost && chunk.chunk.len() == 256 * 1024);
    assert!(chunk.chunk.iter().all(|b| *b == 0));
}

#[tokio::test]
async fn spill_files_go_with_their_handle_and_their_supervisor() {
    let tmp = tempfile::tempdir().unwrap();
    let mut config = spilling(tmp.path(), 4 * 1024 * 1024);
    config.max_completed = 1;
    let sup = Supervisor::new(config);
    let first = sup.spawn(req(&["seq", "1", "100000"])).await.unwrap();
    wait_exit(&sup, &first).await;
    assert_eq!(files_under(tmp.path()).len(), 1, "the large output spilled");
    // A second completed handle evicts the first (at most one kept), and its file with it;
    // small output never touches the disk.
    let small = sup.spawn(req(&["echo", "hi"])).await.unwrap();
    wait_exit(&sup, &small).await;
    assert!(sup.read(&first.id, 0, 1).is_err(), "evicted");
    assert!(
        eventually_async(PATIENCE, || files_under(tmp.path()).is_empty()).await.is_some(),
        "left behind: {:?}",
        files_under(tmp.path())
    );
    drop(sup);
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "the supervisor's directory stays after it: {left:?}");
}

#[tokio::test]
async fn a_start_sweeps_what_dead_supervisors_left_but_not_a_live_ones_files() {
    let tmp = tempfile::tempdir().unwrap();
    let live = Supervisor::new(spilling(tmp.path(), 4 * 1024 * 1024));
    let spawned = live.spawn(req(&["seq", "1", "100000"])).await.unwrap();
    wait_exit(&live, &spawned).await;
    let stale = tmp.path().join("12345-deadbeef");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join("0"), vec![b'x'; 4096]).unwrap();

    let next: Arc<Supervisor> = Supervisor::new(spilling(tmp.path(), 4 * 1024 * 1024));
    assert!(!stale.exists(), "a dead supervisor's files are swept at start");
    let (out, lost) = drain(&live, &spawned.id).await;
    assert!(!lost && out == seq_output(100_000), "a live supervisor's spill is untouched");
    drop(next);
    tokio::time::sleep(Duration::from_millis(1)).await;
}
