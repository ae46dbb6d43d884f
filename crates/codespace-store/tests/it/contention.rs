//! Writer contention (C3, C5): many handles on one file draft, plan and finish at once,
//! including the same keys in flight together. No `SQLITE_BUSY` may reach a caller, and
//! every key must end with exactly one row, planned by exactly one request.

use std::collections::BTreeMap;
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use codespace_store::{Drafted, OpStatus, OperationRecord, Store};
use codespace_types::PatchStatus;

use crate::support::{TempLedger, draft, plan, planned};

const THREADS: usize = 8;
const HANDLES: usize = 3;
const CYCLES: usize = 200;

/// What one request came to.
#[derive(Debug)]
enum Ran {
    /// Its plan reached the ledger first: it ran, under this id.
    Won(String),
    /// The key was already the ledger's (at the draft, or inside the plan's transaction).
    Replayed(OperationRecord),
    Conflict(OperationRecord),
}

/// One request as the gateway makes it: a draft (replay decided by a read), the plan (the
/// key checked again inside its transaction), then the outcome.
fn request(store: &Store, key: &str, fingerprint: &str, at: i64) -> Result<Ran, String> {
    let draft = match store.draft(None, "ws", Some(key), fingerprint, at) {
        Ok(Drafted::Fresh(draft)) => draft,
        Ok(Drafted::Replayed(record)) => return Ok(Ran::Replayed(record)),
        Ok(Drafted::KeyConflict(record)) => return Ok(Ran::Conflict(record)),
        Err(error) => return Err(format!("draft {key}: {error}")),
    };
    match store.plan_draft(&draft, &plan(at as u64), &[], at) {
        Ok(None) => {}
        Ok(Some(Drafted::Replayed(record))) => return Ok(Ran::Replayed(record)),
        Ok(Some(Drafted::KeyConflict(record))) => return Ok(Ran::Conflict(record)),
        Ok(Some(Drafted::Fresh(d))) => return Err(format!("plan {key}: fresh again {d:?}")),
        Err(error) => return Err(format!("plan {key}: {error}")),
    }
    let result = format!(r#"{{"status":"applied","key":"{key}"}}"#);
    store
        .finish_draft(&draft, OpStatus::Finished(PatchStatus::Applied), &result, None, at)
        .map_err(|error| format!("finish {key}: {error}"))?;
    Ok(Ran::Won(draft.operation_id))
}

#[derive(Default)]
struct Tally {
    fresh: BTreeMap<String, usize>,
    replayed: usize,
    errors: Vec<String>,
    latencies: Vec<Duration>,
}

#[test]
fn many_handles_on_one_file_never_see_busy_and_mint_each_key_once() {
    let ledger = TempLedger::new();
    let path = Arc::new(ledger.path.clone());
    let tally = Arc::new(Mutex::new(Tally::default()));
    let start = Arc::new(Barrier::new(THREADS));
    let began = Instant::now();
    let workers: Vec<_> = (0..THREADS)
        .map(|thread_no| {
            let (path, tally, start) = (path.clone(), tally.clone(), start.clone());
            thread::spawn(move || {
                start.wait();
                // The file does not exist yet: the handles race to create and migrate it.
                let stores: Vec<Store> =
                    (0..HANDLES).map(|_| Store::open(&path)).collect::<Result<_, _>>().unwrap();
                let mut local = Tally::default();
                for cycle in 0..CYCLES {
                    let store = &stores[cycle % HANDLES];
                    // Even cycles: a key every thread uses at about the same moment.
                    let key = if cycle % 2 == 0 {
                        format!("shared-{cycle}")
                    } else {
                        format!("t{thread_no}-{cycle}")
                    };
                    let fingerprint = format!("fp-{key}");
                    let call = Instant::now();
                    match request(store, &key, &fingerprint, cycle as i64) {
                        Ok(Ran::Won(_)) => *local.fresh.entry(key.clone()).or_default() += 1,
                        Ok(Ran::Replayed(record)) => {
                            assert_eq!(record.operation_key.as_deref(), Some(key.as_str()));
                            local.replayed += 1;
                        }
                        Ok(Ran::Conflict(record)) => {
                            local.errors.push(format!("conflict {key}: {record:?}"));
                        }
                        Err(error) => local.errors.push(error),
                    }
                    local.latencies.push(call.elapsed());
                }
                let mut total = tally.lock().unwrap();
                for (key, n) in local.fresh {
                    *total.fresh.entry(key).or_default() += n;
                }
                total.replayed += local.replayed;
                total.errors.extend(local.errors);
                total.latencies.extend(local.latencies);
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let elapsed = began.elapsed();
    let mut tally = tally.lock().unwrap();
    assert!(
        tally.errors.is_empty(),
        "{} errors, first: {:?}",
        tally.errors.len(),
        &tally.errors[..tally.errors.len().min(5)]
    );

    let shared = CYCLES / 2;
    let own = THREADS * (CYCLES / 2);
    assert_eq!(tally.fresh.len(), shared + own, "every key was minted");
    assert!(tally.fresh.values().all(|&n| n == 1), "a key was minted twice");
    assert_eq!(tally.replayed, (THREADS - 1) * shared);

    let conn = rusqlite::Connection::open(&ledger.path).unwrap();
    let (rows, keys, finished): (i64, i64, i64) = conn
        .query_row(
            "SELECT count(*), count(DISTINCT operation_key), \
             count(*) FILTER (WHERE status = 'applied') FROM operations",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (rows, keys, finished),
        ((shared + own) as i64, (shared + own) as i64, (shared + own) as i64)
    );
    let store = Store::open(&ledger.path).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    assert!(store.unfinished().unwrap().is_empty());
    tally.latencies.sort();
    let at = |q: f64| tally.latencies[((tally.latencies.len() - 1) as f64 * q) as usize];
    println!(
        "contention: {THREADS} threads x {HANDLES} handles x {CYCLES} cycles in {elapsed:?} \
         ({} commits); request latency p50 {:?}, p99 {:?}, max {:?}",
        2 * (shared + own),
        at(0.5),
        at(0.99),
        at(1.0),
    );
}

#[test]
fn a_hundred_simultaneous_duplicates_run_once() {
    const DUPLICATES: usize = 100;
    let ledger = TempLedger::new();
    drop(ledger.open());
    let start = Arc::new(Barrier::new(DUPLICATES));
    let workers: Vec<_> = (0..DUPLICATES)
        .map(|_| {
            let (path, start) = (ledger.path.clone(), start.clone());
            thread::spawn(move || {
                let store = Store::open(&path).unwrap();
                start.wait();
                request(&store, "retry-storm", "fp", 1).unwrap()
            })
        })
        .collect();
    let outcomes: Vec<Ran> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    let won: Vec<&String> = outcomes
        .iter()
        .filter_map(|ran| match ran {
            Ran::Won(operation_id) => Some(operation_id),
            Ran::Replayed(_) | Ran::Conflict(_) => None,
        })
        .collect();
    assert_eq!(won.len(), 1, "exactly one executes");
    for outcome in &outcomes {
        match outcome {
            Ran::Won(_) => {}
            Ran::Replayed(record) => assert_eq!(&record.operation_id, won[0]),
            Ran::Conflict(record) => panic!("conflict: {record:?}"),
        }
    }
}

#[test]
fn a_writer_locked_out_past_the_busy_timeout_gets_busy_and_readers_are_not_blocked() {
    let ledger = TempLedger::new();
    let store = ledger.open();
    let id = planned(&store, "ws", Some("k"), "fp", 1).operation_id;
    // Another process's writer holds the write lock and never lets go in time.
    let holder = rusqlite::Connection::open(&ledger.path).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();

    let read = Instant::now();
    assert_eq!(store.get(&id).unwrap().unwrap().status, OpStatus::Applying);
    assert!(read.elapsed() < Duration::from_secs(1), "a WAL reader waited {:?}", read.elapsed());

    let write = Instant::now();
    let d = draft(&store, "ws", Some("k2"), "fp");
    let error = store.plan_draft(&d, &plan(2), &[], 1).unwrap_err();
    let waited = write.elapsed();
    assert!(matches!(error, codespace_store::StoreError::Busy(_)), "{error:?}");
    assert!(error.is_retryable());
    assert!(waited >= codespace_store::BUSY_TIMEOUT, "gave up after {waited:?}");
    assert!(waited < codespace_store::BUSY_TIMEOUT + Duration::from_secs(2), "{waited:?}");
    assert_eq!(store.degraded(), None, "contention is not a storage failure");

    holder.execute_batch("ROLLBACK").unwrap();
    assert!(store.get_by_key("ws", "k2").unwrap().is_none(), "nothing was minted");
    assert_eq!(store.plan_draft(&d, &plan(2), &[], 2).unwrap(), None);
}
