//! Unit tests of `journal`.

use super::*;

fn cursor(epoch: u64, seq: u64) -> Cursor {
    Cursor { instance: 7, epoch, seq }
}

#[test]
fn cursors_round_trip_and_junk_is_refused() {
    let c = cursor(3, 42);
    assert_eq!(Cursor::parse(&c.encode()), Ok(c));
    for bad in ["", "c1", "c1.zz.1.2", "c2.07.1.2", "c1.07.1.2.3", "c1.07.-1.2"] {
        assert!(Cursor::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn changes_are_coalesced_per_path_and_sorted() {
    let mut j = Journal::default();
    j.record(1, &EventKind::Create { path: "b".into() });
    j.record(2, &EventKind::Modify { path: "b".into() });
    j.record(3, &EventKind::Modify { path: "a".into() });
    j.record(4, &EventKind::Rename { from: "a".into(), to: "c".into() });
    let out = j.since(&cursor(1, 0), cursor(1, 4));
    assert!(!out.resync_required && !out.truncated);
    assert_eq!(
        out.changes,
        vec![
            ("a".into(), ObservedChange::Removed),
            ("b".into(), ObservedChange::Created),
            ("c".into(), ObservedChange::Created)
        ]
    );
    let later = j.since(&cursor(1, 3), cursor(1, 4));
    assert_eq!(later.changes.len(), 2);
}

#[test]
fn a_resync_an_old_epoch_or_a_lost_event_says_resync() {
    let mut j = Journal::default();
    j.record(1, &EventKind::Create { path: "x".into() });
    j.record(2, &EventKind::ResyncRequired);
    assert!(j.since(&cursor(1, 1), cursor(1, 2)).resync_required);
    assert!(!j.since(&cursor(1, 2), cursor(1, 2)).resync_required);
    assert!(j.since(&cursor(0, 2), cursor(1, 2)).resync_required);
    assert!(j.since(&Cursor { instance: 8, epoch: 1, seq: 2 }, cursor(1, 2)).resync_required);
    let mut j = Journal::default();
    for seq in 1..=(JOURNAL_EVENTS as u64 + 5) {
        j.record(seq, &EventKind::Modify { path: format!("f{seq}") });
    }
    let now = cursor(1, JOURNAL_EVENTS as u64 + 5);
    assert!(j.since(&cursor(1, 1), now).resync_required);
    let recent = j.since(&cursor(1, 5), now);
    assert!(!recent.resync_required);
    assert!(recent.truncated);
    assert_eq!(recent.changes.len(), MAX_CHANGES);
}

#[test]
fn a_seeded_journal_tells_a_replacement_from_a_creation_and_lists_moved_files() {
    let mut j = Journal::default();
    j.record(1, &EventKind::Create { path: "late.txt".into() });
    j.seed(vec!["a.txt".into(), "d/x".into(), "d/e/y".into(), "late.txt".into()], 0, 1);
    let tmp = ".codespace-tmp.1.2.3".to_owned();
    j.record(2, &EventKind::Create { path: "sedAb12".into() });
    j.record(2, &EventKind::Remove { path: "sedAb12".into() });
    j.record(2, &EventKind::Create { path: tmp.clone() });
    j.record(3, &EventKind::Rename { from: tmp, to: "a.txt".into() });
    j.record(4, &EventKind::Rename { from: "d".into(), to: "m".into() });
    j.record(5, &EventKind::Rename { from: "m".into(), to: "n".into() });
    j.record(6, &EventKind::Create { path: "new.txt".into() });
    let out = j.since(&cursor(1, 1), cursor(1, 6));
    let changes: Vec<(&str, ObservedChange)> =
        out.changes.iter().map(|(p, k)| (p.as_str(), *k)).collect();
    assert_eq!(
        changes,
        vec![
            ("a.txt", ObservedChange::Modified),
            ("d", ObservedChange::Removed),
            ("d/e/y", ObservedChange::Removed),
            ("d/x", ObservedChange::Removed),
            ("n", ObservedChange::Created),
            ("n/e/y", ObservedChange::Created),
            ("n/x", ObservedChange::Created),
            ("new.txt", ObservedChange::Created),
        ]
    );
    // Unseeded (a new epoch), a name renamed in is `created`, as inotify alone says.
    j.clear();
    j.record(1, &EventKind::Rename { from: "t".into(), to: "a.txt".into() });
    let out = j.since(&cursor(1, 0), cursor(1, 1));
    assert!(out.changes.contains(&("a.txt".into(), ObservedChange::Created)));
}
