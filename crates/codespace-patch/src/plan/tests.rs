//! Unit tests of the planner: lookups, moves, adds, deletes, path conflicts and lookup errors.

use super::*;
use crate::error::ErrorKind;
use crate::parse;
use std::collections::BTreeMap;
use std::convert::Infallible;

/// Plans `patch` over `files` (directories implied by file paths) and counts lookups.
fn run(files: &[(&str, &str)], patch: &str) -> (Result<Plan, PlanError<Infallible>>, Vec<String>) {
    let files: BTreeMap<String, Vec<u8>> =
        files.iter().map(|(p, c)| (p.to_string(), c.as_bytes().to_vec())).collect();
    let mut asked = Vec::new();
    let patch = parse(patch).unwrap();
    let result = plan(&patch, |p| {
        asked.push(p.to_string());
        Ok(if let Some(c) = files.get(p) {
            Entry::File(c.clone())
        } else if files.keys().any(|k| k.starts_with(&format!("{p}/"))) {
            Entry::Directory
        } else {
            Entry::Absent
        })
    });
    (result, asked)
}

fn wrap(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

#[test]
fn lookups_are_once_per_path_and_skip_what_is_implied() {
    let (r, asked) = run(
        &[("src/a.rs", "x\n")],
        &wrap(
            "*** Add File: src/new/deep/f.rs\n+1\n*** Update File: ./src/a.rs\n-x\n+y\n*** Update File: src//a.rs\n-y\n+z\n",
        ),
    );
    let plan = r.unwrap();
    assert_eq!(asked, vec!["src", "src/new", "src/a.rs"]);
    assert_eq!(plan.changes.len(), 2);
    assert_eq!(plan.changes[0].path, "src/new/deep/f.rs");
    assert_eq!(plan.changes[1].after.as_deref(), Some(&b"z\n"[..]));
}

#[test]
fn move_then_move_keeps_first_source() {
    let (r, _) = run(
        &[("a", "1\n")],
        &wrap(
            "*** Update File: a\n*** Move to: b\n 1\n*** Update File: b\n*** Move to: c\n-1\n+2\n",
        ),
    );
    let c = r.unwrap().changes;
    assert_eq!(c.len(), 2);
    assert_eq!((c[0].path.as_str(), c[0].kind), ("a", ChangeKind::Delete));
    assert_eq!(
        (c[1].path.as_str(), c[1].kind, c[1].move_from.as_deref()),
        ("c", ChangeKind::Move, Some("a"))
    );
}

#[test]
fn add_then_move_is_an_add() {
    let (r, _) = run(&[], &wrap("*** Add File: a\n+1\n*** Update File: a\n*** Move to: b\n 1\n"));
    let c = r.unwrap().changes;
    assert_eq!(c.len(), 1);
    assert_eq!(
        (c[0].path.as_str(), c[0].kind, c[0].move_from.as_deref()),
        ("b", ChangeKind::Add, None)
    );
}

#[test]
fn add_then_delete_is_nothing() {
    let (r, _) = run(&[], &wrap("*** Add File: a\n+1\n*** Delete File: a\n"));
    assert_eq!(r.unwrap().changes, vec![]);
}

#[test]
fn invalid_paths() {
    for p in ["/etc/x", "../x", "a/../../x", "."] {
        let (r, asked) = run(&[], &wrap(&format!("*** Add File: {p}\n+1\n")));
        assert_eq!(r.unwrap_err().kind(), ErrorKind::InvalidPath, "{p}");
        assert!(asked.is_empty());
    }
}

#[test]
fn move_onto_itself_is_refused() {
    let (r, _) = run(&[("a", "1\n")], &wrap("*** Update File: a\n*** Move to: ./a\n 1\n"));
    assert_eq!(r.unwrap_err().kind(), ErrorKind::MoveDestinationExists);
}

#[test]
fn move_into_itself_is_a_conflict() {
    let (r, _) = run(&[("a", "1\n")], &wrap("*** Update File: a\n*** Move to: a/b\n 1\n"));
    assert_eq!(r.unwrap_err().kind(), ErrorKind::PathConflict);
}

#[test]
fn add_onto_directory_and_delete_directory() {
    let (r, _) = run(&[("d/f", "1\n")], &wrap("*** Add File: d\n+1\n"));
    let e = r.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AddFileExists);
    assert!(e.to_string().contains("a directory already exists"), "{e}");
    let (r, _) = run(&[("d/f", "1\n")], &wrap("*** Update File: d\n-1\n"));
    assert_eq!(r.unwrap_err().kind(), ErrorKind::NotAFile);
}

#[test]
fn update_of_binary_file_is_refused_but_delete_works() {
    let patch = parse(&wrap("*** Update File: b\n-x\n")).unwrap();
    let r = plan(&patch, |_| Ok::<_, Infallible>(Entry::File(vec![0xff, b'\n'])));
    assert_eq!(r.unwrap_err().kind(), ErrorKind::NotUtf8);
    let patch = parse(&wrap("*** Delete File: b\n")).unwrap();
    let r = plan(&patch, |_| Ok::<_, Infallible>(Entry::File(vec![0xff, b'\n'])));
    assert_eq!(r.unwrap().changes[0].kind, ChangeKind::Delete);
}

#[test]
fn lookup_errors_pass_through() {
    let patch = parse(&wrap("*** Delete File: link\n")).unwrap();
    let r: Result<Plan, PlanError<&str>> = plan(&patch, |_| Err("symlink rejected"));
    let e = r.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lookup);
    assert_eq!(e.to_string(), "Delete File 'link' (patch line 2): symlink rejected");
}
