//! The limits as the kernel's files say them, and what a host without them gives.

use crate::InotifyLimits;

#[test]
fn limits_are_read_from_the_files_and_missing_ones_are_unknown() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("max_user_instances"), "128\n").unwrap();
    std::fs::write(dir.path().join("max_user_watches"), "8192\n").unwrap();
    let limits = InotifyLimits::at(dir.path());
    assert_eq!(limits.max_user_instances, Some(128));
    assert_eq!(limits.max_user_watches, Some(8192));
    assert_eq!(limits.max_queued_events, None);
    assert!(InotifyLimits::of_host().max_user_watches.is_some(), "this host has inotify");
}
