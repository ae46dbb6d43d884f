//! Unit tests of `event`: what one inotify record says, named by its watch's path.

use rustix::fs::inotify::ReadFlags as F;

use super::*;

#[test]
fn names_join_the_watch_path_and_the_record_name() {
    assert_eq!(
        said(F::CREATE, "", Some(b"a.txt")),
        Said::Created { path: "a.txt".into(), dir: false }
    );
    assert_eq!(
        said(F::CREATE | F::ISDIR, "d/e", Some(b"f")),
        Said::Created { path: "d/e/f".into(), dir: true }
    );
    assert_eq!(said(F::DELETE, "d", Some(b"x")), Said::Removed { path: "d/x".into(), dir: false });
    assert_eq!(
        said(F::MOVED_FROM | F::ISDIR, "", Some(b"m")),
        Said::MovedFrom { path: "m".into(), dir: true }
    );
    assert_eq!(
        said(F::MOVED_TO, "d", Some(b"n")),
        Said::MovedTo { path: "d/n".into(), dir: false }
    );
    assert_eq!(
        said(F::MODIFY, "d", Some(b"n")),
        Said::Modified { path: "d/n".into(), dir: false, metadata: false }
    );
    assert_eq!(
        said(F::ATTRIB | F::ISDIR, "", Some(b"d")),
        Said::Modified { path: "d".into(), dir: true, metadata: true }
    );
    // The kernel pads names with NULs; an access is no change.
    assert_eq!(said(F::ACCESS, "", Some(b"a")), Said::Nothing);
}

#[test]
fn what_cannot_be_named_is_a_resync_and_the_root_going_stops() {
    assert_eq!(said(F::CREATE, "", Some(b"bad\xff")), Said::Resync);
    assert_eq!(said(F::QUEUE_OVERFLOW, "", None), Said::Overflow);
    assert_eq!(said(F::IGNORED, "d", None), Said::Ignored);
    for gone in [F::DELETE_SELF, F::MOVE_SELF, F::UNMOUNT] {
        assert_eq!(said(gone, "", None), Said::RootGone);
    }
    assert_eq!(said(F::MOVE_SELF, "d", None), Said::MovedSelf);
    assert_eq!(said(F::DELETE_SELF, "d", None), Said::Nothing);
    assert_eq!(said(F::UNMOUNT, "d", None), Said::Resync);
    assert_eq!(said(F::ATTRIB, "", None), Said::Resync);
}

#[test]
fn cookies_and_server_temp_files_are_recognised() {
    assert!(is_cookie(".codespace-cookie-1"));
    assert!(!is_cookie("d/.codespace-cookie-1"));
    assert!(is_server_temp(&format!("d/{}x", codespace_fs::TEMP_PREFIX)));
    assert!(!is_server_temp("d/x"));
}
