//! Unit tests for the lexical validation.

use super::*;

fn ok(s: &str) -> String {
    WorkspacePath::parse(s).map(|p| p.as_str().to_owned()).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

fn reason(s: &str) -> PathEscapeReason {
    match WorkspacePath::parse(s) {
        Err(FsError::PathEscape { reason, .. }) => reason,
        other => panic!("{s:?}: expected PathEscape, got {other:?}"),
    }
}

#[test]
fn normalises_dot_dotdot_and_empty_components() {
    assert_eq!(ok("a"), "a");
    assert_eq!(ok("sub/../a"), "a");
    assert_eq!(ok("./a/./b/"), "a/b");
    assert_eq!(ok("a//b"), "a/b");
    assert_eq!(ok("a/b/../../c/d/.."), "c");
    assert_eq!(WorkspacePath::parse("sub/../a").unwrap().to_string(), "a");
}

#[test]
fn rejects_escapes() {
    assert_eq!(reason(".."), PathEscapeReason::ParentEscape);
    assert_eq!(reason("../x"), PathEscapeReason::ParentEscape);
    assert_eq!(reason("a/../../x"), PathEscapeReason::ParentEscape);
    // The escape is refused even when a later component would come back down.
    assert_eq!(reason("../ws/x"), PathEscapeReason::ParentEscape);
    assert_eq!(reason("/etc/passwd"), PathEscapeReason::Absolute);
    assert_eq!(reason("//x"), PathEscapeReason::Absolute);
}

#[test]
fn rejects_empty_root_and_nul() {
    assert_eq!(reason(""), PathEscapeReason::Empty);
    assert_eq!(reason("."), PathEscapeReason::Root);
    assert_eq!(reason("a/.."), PathEscapeReason::Root);
    assert_eq!(reason("./"), PathEscapeReason::Root);
    assert_eq!(reason("a\0b"), PathEscapeReason::Nul);
    assert_eq!(reason("a/b\0"), PathEscapeReason::Nul);
    assert!(PathEscapeReason::Nul.is_malformed());
    assert!(!PathEscapeReason::ParentEscape.is_malformed());
}

#[test]
fn length_limits_are_inclusive() {
    let name = "n".repeat(MAX_COMPONENT_BYTES);
    assert_eq!(ok(&name), name);
    assert_eq!(reason(&"n".repeat(MAX_COMPONENT_BYTES + 1)), PathEscapeReason::ComponentTooLong);
    // A multi-byte name is measured in bytes, not chars: 128 × "é" is 256 bytes.
    assert_eq!(reason(&"é".repeat(128)), PathEscapeReason::ComponentTooLong);
    let long = vec!["d".repeat(255); 16].join("/"); // 16*255 + 15 = 4095 bytes
    assert_eq!(ok(&format!("{long}/")), long); // 4096 bytes in
    assert_eq!(reason(&format!("{long}/x")), PathEscapeReason::TooLong); // 4097
}

#[test]
fn tilde_and_odd_names_are_plain_names() {
    assert_eq!(ok("~"), "~");
    assert_eq!(ok("~/x"), "~/x");
    assert_eq!(ok("..."), "...");
    assert_eq!(ok(".hidden"), ".hidden");
    assert_eq!(ok("a\\..\\b"), "a\\..\\b");
    assert_eq!(ok(" x "), " x ");
    assert_eq!(ok("-rf"), "-rf");
    assert_eq!(ok("a\nb"), "a\nb");
}

#[test]
fn byte_exact_no_unicode_normalisation() {
    let nfc = ok("caf\u{e9}");
    let nfd = ok("cafe\u{301}");
    assert_ne!(nfc, nfd);
    assert_ne!(WorkspacePath::parse(&nfc).unwrap(), WorkspacePath::parse(&nfd).unwrap());
}

#[test]
fn parent_and_file_name() {
    let p = WorkspacePath::parse("a/b/c.txt").unwrap();
    assert_eq!(p.parent(), Some("a/b"));
    assert_eq!(p.file_name(), "c.txt");
    assert_eq!(p.components().collect::<Vec<_>>(), ["a", "b", "c.txt"]);
    let top = WorkspacePath::parse("c.txt").unwrap();
    assert_eq!(top.parent(), None);
    assert_eq!(top.file_name(), "c.txt");
}

#[test]
fn refused_input_is_truncated_in_the_error() {
    let huge = format!("../{}", "é".repeat(5000));
    let err = WorkspacePath::parse(&huge).unwrap_err();
    let shown = err.path().unwrap();
    assert!(shown.len() <= SHOWN_BYTES + '…'.len_utf8(), "{}", shown.len());
    assert!(shown.ends_with('…'));
}
