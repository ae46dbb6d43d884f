//! Cost of the durable calls on a real file ledger (each write is one fsynced commit).
//! Prints the numbers; asserts only a generous bound so a slow disk does not fail it.

use std::time::{Duration, Instant};

use codespace_store::{Begin, OpStatus};

use crate::support::{TempLedger, plan};

#[test]
fn begin_plan_finish_cost_on_a_file_ledger() {
    const OPS: u32 = 200;
    let ledger = TempLedger::new();
    let store = ledger.open();
    let (mut begin, mut record, mut finish, mut replay) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO, Duration::ZERO);
    for n in 0..OPS {
        let key = format!("k{n}");
        let t = Instant::now();
        let Begin::Fresh { operation_id } = store.begin("ws", Some(&key), "fp", 1).unwrap() else {
            panic!("fresh expected");
        };
        begin += t.elapsed();
        let t = Instant::now();
        store.record_plan(&operation_id, &plan(u64::from(n)), 2).unwrap();
        record += t.elapsed();
        let t = Instant::now();
        store.finish(&operation_id, OpStatus::Applied, r#"{"status":"applied"}"#, None, 3).unwrap();
        finish += t.elapsed();
        let t = Instant::now();
        assert!(matches!(store.begin("ws", Some(&key), "fp", 4).unwrap(), Begin::Replayed(_)));
        replay += t.elapsed();
    }
    let per = |total: Duration| total / OPS;
    println!(
        "timing ({OPS} ops, file ledger, WAL + synchronous=FULL): begin {:?}, record_plan {:?}, \
         finish {:?}, begin+finish {:?}, replayed begin {:?}",
        per(begin),
        per(record),
        per(finish),
        per(begin + finish),
        per(replay),
    );
    assert!(per(begin + finish) < Duration::from_secs(1));
}
