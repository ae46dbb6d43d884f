//! Cost of the durable calls on a real file ledger (each write is one fsynced commit).
//! Prints the numbers; asserts only a generous bound so a slow disk does not fail it.

use std::time::{Duration, Instant};

use codespace_store::{Drafted, OpStatus};
use codespace_types::PatchStatus;

use crate::support::{TempLedger, draft, plan};

#[test]
fn draft_plan_finish_cost_on_a_file_ledger() {
    const OPS: u32 = 200;
    let ledger = TempLedger::new();
    let store = ledger.open();
    let (mut drafting, mut planning, mut finishing, mut replay) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO, Duration::ZERO);
    for n in 0..OPS {
        let key = format!("k{n}");
        let t = Instant::now();
        let d = draft(&store, "ws", Some(&key), "fp");
        drafting += t.elapsed();
        let t = Instant::now();
        let old = b"old content".as_slice();
        assert_eq!(store.plan_draft(&d, &plan(u64::from(n)), &[(1, old)], 2).unwrap(), None);
        planning += t.elapsed();
        let t = Instant::now();
        store
            .finish_draft(
                &d,
                OpStatus::Finished(PatchStatus::Applied),
                r#"{"status":"applied"}"#,
                None,
                3,
            )
            .unwrap();
        finishing += t.elapsed();
        let t = Instant::now();
        let again = store.draft(None, "ws", Some(&key), "fp", 4).unwrap();
        assert!(matches!(again, Drafted::Replayed(_)));
        replay += t.elapsed();
    }
    let per = |total: Duration| total / OPS;
    println!(
        "timing ({OPS} ops, file ledger, WAL + synchronous=FULL): draft {:?}, plan_draft {:?}, \
         finish_draft {:?}, plan+finish {:?}, replayed draft {:?}",
        per(drafting),
        per(planning),
        per(finishing),
        per(planning + finishing),
        per(replay),
    );
    assert!(per(planning + finishing) < Duration::from_secs(1));
}
