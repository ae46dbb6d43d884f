//! SIGKILL at random moments (D1, D4): a child process (this test binary, re-executed in
//! child mode) loops over requests as the gateway makes them: a `draft`, then `plan_draft`
//! with the old content of two files (`finish_draft` after it every other time), or, every
//! fourth request, `finish_draft` without a plan (a refusal). It prints an acknowledgement
//! after each durable call returns; the parent kills it, reopens the ledger and checks that
//! the database is sound, every acknowledged call is there, and no row is half-written.
//!
//! 20 kills by default; `CODESPACE_SLOW_TESTS=1` runs 1,000 (the catalogue's count).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use codespace_store::{Drafted, OpStatus, Store};
use codespace_types::PatchStatus;

use crate::support::{TempLedger, plan};

const CHILD_ENV: &str = "CODESPACE_STORE_CRASH_CHILD";
const ROUND_ENV: &str = "CODESPACE_STORE_CRASH_ROUND";

/// Child mode: does nothing unless the parent set `CODESPACE_STORE_CRASH_CHILD`.
#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the child reads the ledger path and round its parent set in its environment"
)]
fn child_mode() {
    let Ok(path) = std::env::var(CHILD_ENV) else { return };
    let round: u64 = std::env::var(ROUND_ENV).unwrap().parse().unwrap();
    let store = Store::open(path.as_ref()).unwrap();
    let mut out = std::io::stdout().lock();
    let deadline = Instant::now() + Duration::from_secs(30);
    for n in 0.. {
        if Instant::now() > deadline {
            break; // the parent is gone; never outlive it for long
        }
        let seq = round * 1_000_000 + n;
        let key = format!("key-{seq}");
        let Drafted::Fresh(draft) = store.draft(None, "ws", Some(&key), "fp", seq as i64).unwrap()
        else {
            panic!("key {key} was already used");
        };
        let id = &draft.operation_id;
        if n % 4 == 3 {
            let result = format!("{{\"refused\":{seq}}}");
            store
                .finish_draft(&draft, OpStatus::Finished(PatchStatus::Rejected), &result, None, 1)
                .unwrap();
            ack(&mut out, "REFUSED", id, seq);
            continue;
        }
        let undo = old_content(seq);
        let undo: Vec<(usize, &[u8])> = undo.iter().map(|(i, b)| (*i, b.as_slice())).collect();
        assert_eq!(store.plan_draft(&draft, &plan(seq), &undo, seq as i64).unwrap(), None);
        ack(&mut out, "PLANNED", id, seq);
        if n % 2 == 0 {
            let result = format!("{{\"n\":{seq}}}");
            store
                .finish_draft(&draft, OpStatus::Finished(PatchStatus::Applied), &result, None, 1)
                .unwrap();
            ack(&mut out, "FINISHED", id, seq);
        }
    }
}

/// Tells the parent that a durable call returned.
fn ack(out: &mut impl Write, tag: &str, operation_id: &str, seq: u64) {
    writeln!(out, "{tag} {operation_id} {seq}").unwrap();
    out.flush().unwrap();
}

/// The old content a plan of request `seq` keeps: the planned update and delete.
fn old_content(seq: u64) -> [(usize, Vec<u8>); 2] {
    [(1, format!("lib.rs before {seq}").into_bytes()), (2, format!("gone.md {seq}").into_bytes())]
}

#[derive(Debug, Default)]
struct Acked {
    round: u64,
    seq: u64,
    planned: bool,
    finished: bool,
    refused: bool,
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test re-runs its own binary as the child it kills, and reads CODESPACE_SLOW_TESTS"
)]
fn sigkill_at_random_moments_loses_no_acknowledged_write() {
    let slow = std::env::var_os("CODESPACE_SLOW_TESTS").is_some_and(|v| v == "1");
    let rounds: u64 = if slow { 1000 } else { 20 };
    let ledger = TempLedger::new();
    let exe = std::env::current_exe().unwrap();
    let mut acked: BTreeMap<String, Acked> = BTreeMap::new();
    let mut kills_after_ack = 0;
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args(["--exact", "crash::child_mode", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &ledger.path)
            .env(ROUND_ENV, round.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let lines = forward_lines(child.stdout.take().unwrap());
        let mut output = Vec::new();
        if round % 4 == 0 {
            // Anywhere from process start: also lands in open, WAL setup and migration.
            std::thread::sleep(Duration::from_millis(rand::random_range(0..60)));
        } else {
            // Somewhere in the write loop: after the first acknowledgement.
            while let Ok(line) = lines.recv_timeout(Duration::from_secs(20)) {
                let first_ack = line.starts_with("PLANNED ") || line.starts_with("REFUSED ");
                output.push(line);
                if first_ack {
                    break;
                }
            }
            std::thread::sleep(Duration::from_micros(rand::random_range(0..100_000)));
        }
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        assert!(!status.success(), "round {round}: the child exited on its own");
        output.extend(lines.iter());
        // Only whole lines count: a torn last line was not acknowledged.
        output.retain(|line| line.ends_with('\n'));

        let mut this_round = 0;
        for line in &output {
            let mut words = line.split_whitespace();
            let (Some(tag), Some(id), Some(seq)) = (words.next(), words.next(), words.next())
            else {
                continue; // the test harness's own lines
            };
            let Ok(seq) = seq.parse() else { continue };
            let entry = acked.entry(id.to_owned()).or_insert_with(|| Acked {
                round,
                seq,
                ..Acked::default()
            });
            match tag {
                "PLANNED" => entry.planned = true,
                "FINISHED" => entry.finished = true,
                "REFUSED" => entry.refused = true,
                _ => continue,
            }
            this_round += 1;
        }
        if this_round > 0 {
            kills_after_ack += 1;
        }

        let store = Store::open(&ledger.path)
            .unwrap_or_else(|e| panic!("round {round}: reopen after SIGKILL: {e}"));
        assert_eq!(store.integrity_check().unwrap(), "ok", "round {round}");
        // This round's acknowledgements, and a sample of earlier ones (all at the end).
        let sample = acked.len() / 50 + 1;
        for (id, ack) in
            acked.iter().filter(|(_, a)| a.round == round || a.seq % sample as u64 == 0)
        {
            check(&store, round, id, ack);
        }
        // Atomicity: an unfinished row was written with its whole plan and all its old
        // content, in one transaction; it is never half-planned, and the draft path never
        // leaves a row without a plan. (Sampled in the slow run: O(rows).)
        if slow && round % 25 != 0 {
            continue;
        }
        for record in store.unfinished().unwrap() {
            assert_eq!(record.status, OpStatus::Applying, "{record:?}");
            assert_eq!(record.plan.len(), 4, "{record:?}");
            let seq: u64 = record.operation_key.as_deref().unwrap()[4..].parse().unwrap();
            for (ordinal, bytes) in old_content(seq) {
                let kept = store.undo_content(&record.operation_id, ordinal).unwrap();
                assert_eq!(kept, Some(bytes), "round {round}: {record:?}");
            }
        }
    }
    let store = Store::open(&ledger.path).unwrap();
    for (id, ack) in &acked {
        check(&store, rounds, id, ack);
    }
    println!(
        "crash: {rounds} SIGKILLs ({kills_after_ack} after at least one acknowledged write), \
         {} acknowledged operations all present",
        acked.len()
    );
    assert!(kills_after_ack > 0, "no kill landed after a write; the test exercised nothing");
}

/// Sends each line the child prints, as read (a complete line ends with `\n`).
fn forward_lines(stdout: ChildStdout) -> mpsc::Receiver<String> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if send.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    receive
}

/// Every acknowledged call of `ack` is in the reopened ledger.
fn check(store: &Store, round: u64, id: &str, ack: &Acked) {
    let record = store
        .get(id)
        .unwrap()
        .unwrap_or_else(|| panic!("round {round}: acknowledged {id} is missing"));
    assert_eq!(record.operation_key, Some(format!("key-{}", ack.seq)));
    if ack.planned {
        assert_eq!(record.plan, plan(ack.seq), "round {round}: {id}");
        if record.status == OpStatus::Applying {
            for (ordinal, bytes) in old_content(ack.seq) {
                let kept = store.undo_content(id, ordinal).unwrap();
                assert_eq!(kept, Some(bytes), "round {round}: {id}");
            }
        }
    }
    if ack.finished {
        assert_eq!(record.status, OpStatus::Finished(PatchStatus::Applied), "round {round}: {id}");
        assert_eq!(record.result_json, Some(format!("{{\"n\":{}}}", ack.seq)));
        // An applied operation keeps its old content as its undo record (for a revert).
        for (ordinal, bytes) in old_content(ack.seq) {
            let kept = store.undo_content(id, ordinal).unwrap();
            assert_eq!(kept, Some(bytes), "round {round}: {id}: the undo record");
        }
    }
    if ack.refused {
        assert_eq!(record.status, OpStatus::Finished(PatchStatus::Rejected), "round {round}: {id}");
        assert_eq!(record.result_json, Some(format!("{{\"refused\":{}}}", ack.seq)));
        assert!(record.plan.is_empty(), "round {round}: {id}");
    }
}
