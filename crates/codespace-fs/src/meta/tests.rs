//! Unit tests for the stat conversions.

use super::*;

#[test]
fn file_kind_from_mode() {
    assert_eq!(FileKind::from_mode(0o100644), FileKind::Regular);
    assert_eq!(FileKind::from_mode(0o040755), FileKind::Directory);
    assert_eq!(FileKind::from_mode(0o120777), FileKind::Symlink);
    assert_eq!(FileKind::from_mode(0o010644), FileKind::Fifo);
    assert_eq!(FileKind::from_mode(0o140755), FileKind::Socket);
    assert_eq!(FileKind::from_mode(0o020666), FileKind::CharDevice);
    assert_eq!(FileKind::from_mode(0o060660), FileKind::BlockDevice);
}

#[test]
fn times_keep_nanoseconds_and_sign() {
    let t = system_time(1_700_000_000, 123_456_789);
    assert_eq!(
        t.duration_since(SystemTime::UNIX_EPOCH).unwrap(),
        Duration::new(1_700_000_000, 123_456_789)
    );
    let before_epoch = system_time(-10, 500_000_000);
    assert_eq!(
        SystemTime::UNIX_EPOCH.duration_since(before_epoch).unwrap(),
        Duration::from_millis(9_500)
    );
}
