//! Unit tests of `lease`.

use std::time::Duration;

use super::*;

#[tokio::test]
async fn fifo_order_and_release() {
    let leases = Arc::new(Leases::default());
    let first = leases.acquire("w").await.unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for i in 0..5 {
        let (l, o) = (leases.clone(), order.clone());
        tasks.push(tokio::spawn(async move {
            let _lease = l.acquire("w").await.unwrap();
            o.lock().unwrap().push(i);
        }));
        // Let each task enqueue before the next, to fix the FIFO order.
        while leases.waiting("w") <= i {
            tokio::task::yield_now().await;
        }
    }
    drop(first);
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3, 4]);
    // Other workspaces never wait.
    let _a = leases.acquire("a").await.unwrap();
    let _b = leases.acquire("b").await.unwrap();
}

#[tokio::test]
async fn queue_is_bounded() {
    let leases = Arc::new(Leases::default());
    let _held = leases.acquire("w").await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..MAX_WAITERS {
        let l = leases.clone();
        tasks.push(tokio::spawn(async move { l.acquire("w").await.map(drop) }));
    }
    while leases.waiting("w") < MAX_WAITERS {
        tokio::task::yield_now().await;
    }
    assert_eq!(leases.acquire("w").await.err(), Some(LeaseError::QueueFull));
    for t in &tasks {
        t.abort();
    }
}

#[tokio::test]
async fn a_waiter_that_gives_up_leaves_the_queue() {
    let leases = Arc::new(Leases::default());
    let held = leases.acquire("w").await.unwrap();
    let gave_up = tokio::time::timeout(Duration::from_millis(20), leases.acquire("w")).await;
    assert!(gave_up.is_err());
    assert_eq!(leases.waiting("w"), 0);
    drop(held);
    // The lease is free, not stuck with the departed waiter.
    let again = tokio::time::timeout(Duration::from_secs(1), leases.acquire("w")).await;
    assert!(again.is_ok_and(|r| r.is_ok()));
}

#[tokio::test]
async fn a_grant_racing_a_drop_is_passed_on() {
    let leases = Arc::new(Leases::default());
    let held = leases.acquire("w").await.unwrap();
    let l = leases.clone();
    let waiter = tokio::spawn(async move { l.acquire("w").await.map(drop) });
    while leases.waiting("w") < 1 {
        tokio::task::yield_now().await;
    }
    let l2 = leases.clone();
    let second = tokio::spawn(async move { l2.acquire("w").await.map(drop) });
    while leases.waiting("w") < 2 {
        tokio::task::yield_now().await;
    }
    waiter.abort();
    drop(held);
    assert!(tokio::time::timeout(Duration::from_secs(1), second).await.is_ok());
}

#[tokio::test]
async fn a_process_holder_fails_waiters_busy() {
    let leases = Arc::new(Leases::default());
    let held = leases.acquire("w").await.unwrap();
    let l = leases.clone();
    let waiter = tokio::spawn(async move { l.acquire("w").await.map(drop) });
    while leases.waiting("w") < 1 {
        tokio::task::yield_now().await;
    }
    let alive = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let probe = alive.clone();
    let by = HeldBy::process("proc-1", &["sleep".to_owned(), "30".to_owned()]);
    let busy = Some(LeaseError::Busy(Some(Box::new(by.clone()))));
    let process =
        held.into_process(by, Box::new(move || probe.load(std::sync::atomic::Ordering::SeqCst)));
    assert_eq!(waiter.await.unwrap().err(), busy);
    assert_eq!(leases.acquire("w").await.err(), busy);
    // Seen as exited: free at once, and the late release cannot free the new holder.
    alive.store(false, std::sync::atomic::Ordering::SeqCst);
    let next = leases.acquire("w").await.unwrap();
    drop(process);
    let l = leases.clone();
    let blocked =
        tokio::time::timeout(
            Duration::from_millis(50),
            async move { l.acquire("w").await.map(drop) },
        )
        .await;
    assert!(blocked.is_err(), "the new holder keeps the lease");
    drop(next);
    assert!(leases.acquire("w").await.is_ok());
}

#[test]
fn a_holder_argv_is_shortened() {
    let long = vec!["x".repeat(200)];
    let by = HeldBy::process("proc-1", &long);
    assert_eq!(by.argv.chars().count(), ARGV_SHOWN + 1, "{}", by.argv);
    assert!(by.argv.ends_with('…'));
    let short = HeldBy::process("proc-1", &["sleep".to_owned(), "30".to_owned()]);
    assert_eq!(short.argv, "sleep 30");
    let msg = LeaseError::Busy(Some(Box::new(short))).to_string();
    assert!(msg.contains("proc-1 (sleep 30)") && msg.contains("terminate_process"), "{msg}");
}
