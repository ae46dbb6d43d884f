//! Unit tests of `subscribe`.

use super::*;

#[test]
fn a_lagging_subscriber_gets_one_resync_with_seq_zero() {
    let sub = Subscription { shared: Arc::default() };
    for seq in 1..=(SUBSCRIBER_BUFFER as u64 + 1) {
        sub.shared.push(&WatchEvent {
            epoch: 3,
            seq,
            kind: EventKind::Modify { path: "a".into() },
        });
    }
    let ev = sub.recv_timeout(Duration::ZERO).unwrap();
    assert_eq!(ev, WatchEvent { epoch: 3, seq: 0, kind: EventKind::ResyncRequired });
    assert_eq!(sub.recv_timeout(Duration::ZERO), Err(RecvError::Timeout));
    sub.shared.push(&WatchEvent { epoch: 3, seq: 600, kind: EventKind::ResyncRequired });
    assert_eq!(sub.recv_timeout(Duration::ZERO).unwrap().seq, 600);
    sub.shared.close();
    assert_eq!(sub.recv_timeout(Duration::ZERO), Err(RecvError::WatchClosed));
}
