//! Unit tests for the errno mapping and the messages.

use super::*;

#[test]
fn errno_mapping() {
    let map = |errno| from_errno(errno, "a/b", "open");
    assert!(matches!(
        map(Errno::XDEV),
        FsError::PathEscape { reason: PathEscapeReason::Beneath, .. }
    ));
    assert!(matches!(map(Errno::LOOP), FsError::SymlinkRejected { .. }));
    assert!(matches!(map(Errno::NOENT), FsError::NotFound { .. }));
    assert!(matches!(map(Errno::NOTDIR), FsError::NotDirectory { .. }));
    assert!(matches!(map(Errno::ISDIR), FsError::IsDirectory { .. }));
    assert!(matches!(
        map(Errno::NXIO),
        FsError::SpecialFileRejected { kind: FileKind::Unknown, .. }
    ));
    match map(Errno::ACCESS) {
        FsError::Io { path, op, source } => {
            assert_eq!((path.as_str(), op.as_ref()), ("a/b", "open"));
            assert_eq!(source.raw_os_error(), Some(Errno::ACCESS.raw_os_error()));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(map(Errno::AGAIN).path(), Some("a/b"));
}

#[test]
fn messages_quote_the_path() {
    let err = from_errno(Errno::LOOP, "evil\n[ok] fake line", "open");
    let message = err.to_string();
    assert!(!message.contains('\n'), "{message}");
    assert!(message.contains(r#""evil\n[ok] fake line""#), "{message}");
    let err = FsError::SpecialFileRejected { path: "p".into(), kind: FileKind::Fifo };
    assert_eq!(err.to_string(), r#"special file rejected: "p" is a fifo"#);
}
