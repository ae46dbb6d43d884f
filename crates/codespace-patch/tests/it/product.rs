//! The product's own scenarios: its refusals on top of Codex, sequential semantics within one
//! patch, and error messages that locate the problem.

use codespace_patch::{Entry, ErrorKind, PatchError, PlanError, parse, plan};
use codespace_types::ChangeKind;

use crate::support::{Outcome, Tree, run, wrap};

fn applied(tree: &Tree, patch: &str) -> Tree {
    match run(tree, patch) {
        Outcome::Applied(t) => t,
        other => panic!("expected success, got {other:?}"),
    }
}

fn plan_error(tree: &Tree, patch: &str) -> PlanError<std::convert::Infallible> {
    match run(tree, patch) {
        Outcome::PlanError(e) => e,
        other => panic!("expected a plan error, got {other:?}"),
    }
}

fn parse_error(patch: &str) -> PatchError {
    match parse(patch) {
        Err(e) => e,
        Ok(p) => panic!("expected a parse error, got {p:?}"),
    }
}

#[test]
fn add_onto_existing_file_is_refused() {
    let tree = Tree::of(&[("a.txt", "old\n")]);
    let e = plan_error(&tree, &wrap("*** Add File: a.txt\n+new\n"));
    assert_eq!(e.kind(), ErrorKind::AddFileExists);
    let m = e.to_string();
    assert!(m.contains("Add File 'a.txt' (patch line 2)") && m.contains("Update File"), "{m}");
}

#[test]
fn move_onto_existing_file_is_refused() {
    let tree = Tree::of(&[("a.txt", "x\n"), ("b.txt", "y\n")]);
    let e = plan_error(&tree, &wrap("*** Update File: a.txt\n*** Move to: b.txt\n@@\n-x\n+z\n"));
    assert_eq!(e.kind(), ErrorKind::MoveDestinationExists);
    assert!(matches!(&e, PlanError::MoveDestinationExists { path, from, directory: false, .. }
        if path == "b.txt" && from == "a.txt"));
    assert!(e.to_string().contains("Move to 'b.txt' (Update File 'a.txt', patch line 2)"), "{e}");
}

#[test]
fn unified_diff_is_refused_as_not_v4a() {
    let diff = "--- a/x.txt\n+++ b/x.txt\n@@ -1,2 +1,2 @@\n line\n-old\n+new\n";
    let e = parse_error(diff);
    assert_eq!(e.kind(), ErrorKind::InvalidPatch);
    let m = e.to_string();
    assert!(m.contains("not a V4A patch") && m.contains("unified-diff"), "{m}");
    assert!(m.contains("line 1 ('--- a/x.txt')"), "{m}");

    let git = "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
    assert!(matches!(parse_error(git), PatchError::UnifiedDiff { line: 1, .. }));

    // Inside the envelope, Codex parity: the header is read as `@@ <context>`; the failure
    // then says what is wrong.
    let tree = Tree::of(&[("x.txt", "line\nold\n")]);
    let e =
        plan_error(&tree, &wrap("*** Update File: x.txt\n@@ -1,2 +1,2 @@\n line\n-old\n+new\n"));
    assert_eq!(e.kind(), ErrorKind::ContextMismatch);
    assert!(e.to_string().contains("unified-diff hunk header"), "{e}");
}

#[test]
fn created_file_then_used_as_directory_is_refused() {
    let e = plan_error(&Tree::default(), &wrap("*** Add File: a\n+1\n*** Add File: a/b\n+2\n"));
    assert_eq!(e.kind(), ErrorKind::PathConflict);
    assert!(matches!(&e, PlanError::PathConflict { path, ancestor, line: 4, .. }
        if path == "a/b" && ancestor == "a"));

    // Also after deleting the file: a path is never both a file and a directory in one patch.
    let tree = Tree::of(&[("a", "1\n")]);
    let e = plan_error(&tree, &wrap("*** Delete File: a\n*** Add File: a/b\n+2\n"));
    assert_eq!(e.kind(), ErrorKind::PathConflict);

    // And the other way round: an implied directory cannot become a file.
    let e = plan_error(&Tree::default(), &wrap("*** Add File: a/b\n+1\n*** Add File: a\n+2\n"));
    assert_eq!(e.kind(), ErrorKind::AddFileExists);
}

#[test]
fn add_under_an_existing_file_is_refused() {
    let tree = Tree::of(&[("src/lib.rs", "x\n")]);
    let e = plan_error(&tree, &wrap("*** Add File: src/lib.rs/inner.rs\n+1\n"));
    assert_eq!(e.kind(), ErrorKind::PathConflict);
    assert!(e.to_string().contains("'src/lib.rs' is a file"), "{e}");
    let e =
        plan_error(&tree, &wrap("*** Update File: src/lib.rs\n*** Move to: src/lib.rs/x\n x\n"));
    assert_eq!(e.kind(), ErrorKind::PathConflict);
}

#[test]
fn update_twice_in_one_patch_applies_sequentially() {
    let tree = Tree::of(&[("f.txt", "a\r\nb\r\nc\r\n")]);
    let after = applied(
        &tree,
        &wrap("*** Update File: f.txt\n-a\n+A\n*** Update File: ./f.txt\n-A\n+AA\n b\n+b2\n"),
    );
    assert_eq!(after.files["f.txt"], b"AA\r\nb\r\nb2\r\nc\r\n");
    // One net change, from the original bytes.
    let p =
        parse(&wrap("*** Update File: f.txt\n-a\n+A\n*** Update File: f.txt\n-A\n+AA\n")).unwrap();
    let plan = plan(&p, |path| Ok::<_, std::convert::Infallible>(tree.entry(path))).unwrap();
    assert_eq!(plan.changes.len(), 1);
    assert_eq!(plan.changes[0].kind, ChangeKind::Update);
    assert_eq!(plan.changes[0].before.as_deref(), Some(&b"a\r\nb\r\nc\r\n"[..]));
}

#[test]
fn delete_then_add_same_path_is_an_update() {
    let tree = Tree::of(&[("f.txt", "old\n")]);
    let p = parse(&wrap("*** Delete File: f.txt\n*** Add File: f.txt\n+new\n")).unwrap();
    let plan = plan(&p, |path| Ok::<_, std::convert::Infallible>(tree.entry(path))).unwrap();
    assert_eq!(plan.changes.len(), 1);
    let c = &plan.changes[0];
    assert_eq!(
        (c.kind, c.before.as_deref(), c.after.as_deref()),
        (ChangeKind::Update, Some(&b"old\n"[..]), Some(&b"new\n"[..]))
    );
}

#[test]
fn add_then_update_then_move() {
    let after = applied(
        &Tree::default(),
        &wrap(
            "*** Add File: n/a.txt\n+1\n*** Update File: n/a.txt\n*** Move to: m/b.txt\n-1\n+2\n",
        ),
    );
    assert_eq!(after.files.len(), 1);
    assert_eq!(after.files["m/b.txt"], b"2\n");
}

#[test]
fn move_yields_destination_and_source_deletion() {
    let tree = Tree::of(&[("old/name.txt", "x\n")]);
    let p =
        parse(&wrap("*** Update File: old/name.txt\n*** Move to: new/name.txt\n-x\n+y\n")).unwrap();
    let mut asked = Vec::new();
    let plan = plan(&p, |path| {
        asked.push(path.to_string());
        Ok::<_, std::convert::Infallible>(tree.entry(path))
    })
    .unwrap();
    assert_eq!(asked, ["old/name.txt", "new"]); // `new/name.txt` follows from `new` absent
    let kinds: Vec<_> =
        plan.changes.iter().map(|c| (c.path.as_str(), c.kind, c.move_from.as_deref())).collect();
    assert_eq!(
        kinds,
        [
            ("old/name.txt", ChangeKind::Delete, None),
            ("new/name.txt", ChangeKind::Move, Some("old/name.txt")),
        ]
    );
    assert_eq!(plan.changes[1].before, None);
}

#[test]
fn missing_and_directory_targets() {
    let tree = Tree::of(&[("d/f", "1\n")]);
    let e = plan_error(&tree, &wrap("*** Delete File: nope\n"));
    assert_eq!(e.kind(), ErrorKind::FileNotFound);
    assert_eq!(e.to_string(), "Delete File 'nope' (patch line 2): file not found");
    let e = plan_error(&tree, &wrap("*** Delete File: d\n"));
    assert_eq!(e.kind(), ErrorKind::NotAFile);
    let e = plan_error(&tree, &wrap("*** Delete File: d/f\n*** Update File: d/f\n-1\n"));
    assert_eq!(e.kind(), ErrorKind::FileNotFound);
    assert!(e.to_string().contains("patch line 3"), "{e}");
}

#[test]
fn error_messages_name_file_chunk_and_line() {
    let tree = Tree::of(&[("src/app.py", "def a():\n    return 1\n\ndef b():\n    return 2\n")]);
    // Chunk 2 of the second operation fails: its expected lines are shown.
    let patch = wrap(
        "*** Add File: notes.txt\n+hi\n*** Update File: src/app.py\n@@ def a():\n-    return 1\n+    \
         return 10\n@@ def b():\n-    return 3\n+    return 30\n",
    );
    let m = plan_error(&tree, &patch).to_string();
    assert_eq!(
        m,
        "Failed to find expected lines in src/app.py (chunk 2, patch line 8); nearest: line 5 of \
         the file ('    return 2') differs from patch line 9 in one token: '3' in the patch, '2' \
         in the file:\n    return 3"
    );
    // A missing `@@` context line.
    let patch = wrap("*** Update File: src/app.py\n@@ def c():\n-    return 3\n");
    let e = plan_error(&tree, &patch);
    assert_eq!(e.kind(), ErrorKind::ContextMismatch);
    assert_eq!(
        e.to_string(),
        "Failed to find context 'def c():' in src/app.py (chunk 1, patch line 3); nearest: line 1 \
         of the file ('def a():') differs from patch line 3 in one token: 'c' in the patch, 'a' in \
         the file"
    );
    let nearest = e.nearest().unwrap();
    assert_eq!((nearest.line, nearest.patch_line), (1, 3));
    // Parse errors inside an Update name the file and chunk.
    let e = parse_error(&wrap("*** Update File: src/app.py\n@@\n-x\n+y\n@@ def b():\nbad\n"));
    let m = e.to_string();
    assert!(m.starts_with("invalid hunk at line 7 (file 'src/app.py', chunk 2), "), "{m}");
    assert!(m.contains("'bad'"), "{m}");
    let e = parse_error(&wrap("*** Add File: a\n+x\n  oops\n"));
    assert_eq!(e.line(), Some(4));
    assert!(e.to_string().contains("(file 'a')"), "{e}");
    // Line numbers are those of the text as sent, leading blank lines included.
    let e = parse_error(&format!("\n\n{}", wrap("*** Update File: f\n*** End of File\n")));
    assert_eq!(e.line(), Some(4), "{e}");
}

#[test]
fn empty_patch_is_refused_in_plan() {
    let p = parse(&wrap("")).unwrap();
    let e = plan(&p, |_| Ok::<_, std::convert::Infallible>(Entry::Absent)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidPatch);
    assert!(e.to_string().contains("No files were modified"));
}

#[test]
fn invalid_paths_are_refused_before_lookup() {
    for path in ["/etc/passwd", "../outside", "a/../../b", "a\0b"] {
        let p = parse(&wrap(&format!("*** Delete File: {path}\n"))).unwrap();
        let e = plan(&p, |p: &str| -> Result<Entry, std::convert::Infallible> {
            panic!("looked up {p}")
        })
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidPath, "{path}");
    }
}

#[test]
fn line_endings_are_preserved_per_line() {
    let tree = Tree::of(&[("m.txt", "a\rb\r\nc\nd")]);
    let after = applied(&tree, &wrap("*** Update File: m.txt\n a\n-b\n+B\n+B2\n c\n d\n+e\n"));
    assert_eq!(after.files["m.txt"], b"a\rB\rB2\rc\nd\re\r");
}

#[test]
fn crlf_patch_and_heredoc_are_equivalent() {
    let tree = Tree::of(&[("f", "x\n")]);
    let lf = applied(&tree, &wrap("*** Update File: f\n-x\n+y\n"));
    let crlf = applied(&tree, &wrap("*** Update File: f\n-x\n+y\n").replace('\n', "\r\n"));
    let heredoc =
        applied(&tree, &format!("<<\"EOF\"\n{}EOF\n", wrap("*** Update File: f\n-x\n+y\n")));
    assert_eq!(lf, crlf);
    assert_eq!(lf, heredoc);
}
