//! SIGKILL at random moments (D1, D4): a child process (this test binary, re-executed in
//! child mode) loops `begin` + `record_plan` (+ `finish` every other time) and prints an
//! acknowledgement after each call returns; the parent kills it, reopens the ledger and
//! checks that the database is sound and every acknowledged call is there.
//!
//! 20 kills by default; `CODESPACE_SLOW_TESTS=1` runs 1,000 (the catalogue's count).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use codespace_store::{Begin, OpStatus, Store};

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
        let Begin::Fresh { operation_id } =
            store.begin("ws", Some(&key), "fp", seq as i64).unwrap()
        else {
            panic!("key {key} was already used");
        };
        writeln!(out, "BEGUN {operation_id} {seq}").unwrap();
        out.flush().unwrap();
        store.record_plan(&operation_id, &plan(seq), seq as i64).unwrap();
        writeln!(out, "PLANNED {operation_id} {seq}").unwrap();
        out.flush().unwrap();
        if n % 2 == 0 {
            store
                .finish(&operation_id, OpStatus::Applied, &format!("{{\"n\":{seq}}}"), None, 1)
                .unwrap();
            writeln!(out, "FINISHED {operation_id} {seq}").unwrap();
            out.flush().unwrap();
        }
    }
}

#[derive(Debug, Default)]
struct Acked {
    round: u64,
    seq: u64,
    planned: bool,
    finished: bool,
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
                let first_ack = line.starts_with("BEGUN ");
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
                "BEGUN" => this_round += 1,
                "PLANNED" => entry.planned = true,
                "FINISHED" => entry.finished = true,
                _ => {}
            }
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
        // Atomicity: an unfinished row is either minted without a plan or planned with
        // its whole plan; it is never half-planned. (Sampled in the slow run: O(rows).)
        if slow && round % 25 != 0 {
            continue;
        }
        for record in store.unfinished().unwrap() {
            match record.status {
                OpStatus::Pending => assert!(record.plan.is_empty(), "{record:?}"),
                OpStatus::Applying => assert_eq!(record.plan.len(), 4, "{record:?}"),
                other => panic!("unfinished() returned {other}"),
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
        assert_ne!(record.status, OpStatus::Pending, "round {round}: {id}");
    }
    if ack.finished {
        assert_eq!(record.status, OpStatus::Applied, "round {round}: {id}");
        assert_eq!(record.result_json, Some(format!("{{\"n\":{}}}", ack.seq)));
    }
}
