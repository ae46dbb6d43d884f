//! Unit tests of the V4A parser: boundaries, heredocs, line numbers, update shapes and errors.

use super::*;
use crate::model::Hunk;

fn hunk_msg(patch: &str) -> (usize, String) {
    match parse(patch) {
        Err(PatchError::InvalidHunk { line, message, .. }) => (line, message),
        other => panic!("expected a hunk error, got {other:?}"),
    }
}

#[test]
fn boundaries() {
    assert_eq!(parse("").unwrap_err(), PatchError::Empty);
    assert_eq!(parse(" \n\t\n").unwrap_err(), PatchError::Empty);
    // No `*** Begin Patch` anywhere: not V4A at all; one further down: a malformed envelope.
    assert_eq!(parse("hello\n*** End Patch").unwrap_err(), PatchError::NotV4a { line: 1 });
    assert_eq!(
        parse("\nhello\n*** Begin Patch\n*** End Patch").unwrap_err(),
        invalid_patch(FIRST_LINE_MSG, 2)
    );
    assert_eq!(parse("*** Begin Patch").unwrap_err(), invalid_patch(LAST_LINE_MSG, 1));
    assert_eq!(
        parse("*** Begin Patch\n*** Add File: a\n+x").unwrap_err(),
        invalid_patch(LAST_LINE_MSG, 3)
    );
    let empty = Patch { hunks: vec![], end_line: 2 };
    assert_eq!(parse("*** Begin Patch\n*** End Patch\n").unwrap(), empty);
    assert_eq!(parse(" *** Begin Patch \n\t*** End Patch  ").unwrap(), empty);
}

#[test]
fn heredoc_only_literal_eof() {
    let body = "*** Begin Patch\n*** Delete File: a\n*** End Patch\n";
    for open in ["<<EOF", "<<'EOF'", "<<\"EOF\""] {
        let p = parse(&format!("{open}\n{body}EOF\n")).unwrap();
        assert_eq!(p.hunks, vec![Hunk::Delete { path: "a".into(), line: 3 }]);
    }
    for open in ["<<END", "<<'EOF\"", "cat <<EOF"] {
        assert_eq!(
            parse(&format!("{open}\n{body}EOF\n")).unwrap_err(),
            invalid_patch(FIRST_LINE_MSG, 1)
        );
    }
    // Fewer than four lines: no heredoc leniency.
    assert_eq!(parse("<<EOF\n*** Begin Patch\nEOF").unwrap_err(), invalid_patch(FIRST_LINE_MSG, 1));
}

#[test]
fn line_numbers_count_the_text_as_given() {
    let (line, msg) = hunk_msg("\n\n*** Begin Patch\n*** Frobnicate\n*** End Patch");
    assert_eq!(line, 4);
    assert!(msg.starts_with("'*** Frobnicate' is not a valid hunk header"));
}

#[test]
fn update_shapes() {
    let p = parse(
        "*** Begin Patch\n*** Update File: f\n*** Move to: g\n ctx\n-old\n+new\n\n@@ fn x  \n \
         a\n*** End of File\n\n*** End Patch",
    )
    .unwrap();
    let Hunk::Update { path, move_to, chunks, line } = &p.hunks[0] else { panic!() };
    assert_eq!((path.as_str(), move_to.as_deref(), *line), ("f", Some("g"), 2));
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0].old_lines(), vec!["ctx", "old", ""]);
    assert_eq!(chunks[0].new_lines(), vec!["ctx", "new", ""]);
    assert_eq!(chunks[0].line, 4);
    assert_eq!(chunks[1].context.as_deref(), Some("fn x"));
    assert!(chunks[1].end_of_file && !chunks[0].end_of_file);
    assert_eq!(chunks[1].line, 8);
}

#[test]
fn update_errors() {
    let (l, m) = hunk_msg("*** Begin Patch\n*** Update File: f\n*** End Patch");
    assert_eq!((l, m.as_str()), (2, "Update file hunk for path 'f' is empty"));
    let (l, m) = hunk_msg("*** Begin Patch\n*** Update File: f\n*** Move to: g\n*** End Patch");
    assert_eq!((l, m.as_str()), (2, "Update file hunk for path 'f' is empty"));
    let (l, m) = hunk_msg("*** Begin Patch\n*** Update File: f\n@@\n*** End Patch");
    assert_eq!((l, m.as_str()), (4, "Update hunk does not contain any lines"));
    let (l, m) =
        hunk_msg("*** Begin Patch\n*** Update File: f\n@@\n*** End of File\n*** End Patch");
    assert_eq!((l, m.as_str()), (4, "Update hunk does not contain any lines"));
    let (l, m) =
        hunk_msg("*** Begin Patch\n*** Update File: f\n@@\n*** Delete File: g\n*** End Patch");
    assert_eq!(l, 4);
    assert!(m.starts_with("Unexpected line found in update hunk: '*** Delete File: g'"));
    let (l, m) = hunk_msg("*** Begin Patch\n*** Update File: f\n@@ a\n@@ b\n-x\n*** End Patch");
    assert_eq!(l, 4);
    assert!(m.starts_with("Unexpected line found in update hunk: '@@ b'"));
    let (l, m) =
        hunk_msg("*** Begin Patch\n*** Update File: f\n-x\n*** End of File\n-y\n*** End Patch");
    assert_eq!(
        (l, m.as_str()),
        (5, "Expected update hunk to start with a @@ context marker, got: '-y'")
    );
    let (l, m) = hunk_msg("*** Begin Patch\n*** Update File: f\n-x\n\tz\n*** End Patch");
    assert_eq!(
        (l, m.as_str()),
        (4, "Expected update hunk to start with a @@ context marker, got: '\tz'")
    );
    let (l, m) = hunk_msg(
        "*** Begin Patch\n*** Update File: f\n*** Move to: g\n*** Move to: h\n*** End Patch",
    );
    assert_eq!(l, 4);
    assert!(m.starts_with("Unexpected line found in update hunk: '*** Move to: h'"));
    let (l, m) = hunk_msg("*** Begin Patch\n*** Add File: f\n+a\nb\n*** End Patch");
    assert_eq!(l, 4);
    assert!(m.starts_with("'b' is not a valid hunk header"));
}

#[test]
fn ended_patch_accepts_only_blank_lines() {
    assert!(parse("*** Begin Patch\n*** End Patch\n\n  \n*** End Patch").is_ok());
    assert_eq!(
        parse("*** Begin Patch\n*** End Patch\n*** Delete File: a\n*** End Patch").unwrap_err(),
        invalid_patch(LAST_LINE_MSG, 3)
    );
}

#[test]
fn unified_diffs_are_named() {
    let e = parse("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n").unwrap_err();
    assert_eq!(e, PatchError::UnifiedDiff { line: 1, text: "--- a/x".into() });
    assert!(e.to_string().contains("not a V4A patch"));
    let e = parse("*** Begin Patch\n--- a/x\n+++ b/x\n*** End Patch").unwrap_err();
    assert_eq!(e.line(), Some(2));
    assert!(matches!(e, PatchError::UnifiedDiff { .. }));
    assert!(is_unified_hunk_header("@@ -1 +1 @@"));
    assert!(is_unified_hunk_header("@@ -10,3 +12,0 @@ fn x"));
    assert!(!is_unified_hunk_header("@@ -1,2 +1, @@"));
    assert!(!is_unified_hunk_header("@@ fn x"));
}

#[test]
fn environment_id_is_refused() {
    let (l, m) = hunk_msg("*** Begin Patch\n*** Environment ID: x\n*** End Patch");
    assert_eq!(l, 2);
    assert!(m.contains("not supported"));
}
