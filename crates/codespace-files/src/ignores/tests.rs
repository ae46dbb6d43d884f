//! The ignore filter over real temporary trees: rule kinds, nesting, precedence, limits.

use std::path::Path;

use super::*;

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, body) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, body).unwrap();
    }
    dir
}

fn listed(dir: &Path, include_ignored: bool) -> Vec<String> {
    let root = Root::open(dir).unwrap();
    walk(&root, &WalkLimits::default(), include_ignored).unwrap().files
}

#[test]
fn nested_rules_negation_and_directory_only_patterns() {
    let dir = tree(&[
        (".gitignore", "*.log\n/build\ncache/\n!keep.log\n"),
        ("a.log", ""),
        ("keep.log", ""),
        ("build/out.txt", ""),
        ("src/build/gen.rs", ""),
        ("src/cache/x", ""),
        ("src/cache.txt", ""),
        ("src/.gitignore", "gen.rs\n!important.log\n/local.txt\n"),
        ("src/important.log", ""),
        ("src/local.txt", ""),
        ("src/deep/local.txt", ""),
        ("src/deep/cache", ""),
        ("main.rs", ""),
    ]);
    assert_eq!(
        listed(dir.path(), false),
        [
            ".gitignore",
            "keep.log",
            "main.rs",
            "src/.gitignore",
            "src/cache.txt",
            "src/deep/cache",
            "src/deep/local.txt",
            "src/important.log",
        ],
        "anchored rules stay in their directory; cache/ only hides directories; the deeper \
         file's !important.log wins over the root's *.log"
    );
    assert_eq!(listed(dir.path(), true).len(), 13, "include_ignored lists everything");
}

#[test]
fn dot_ignore_exclude_and_dot_git() {
    let dir = tree(&[
        (".git/config", ""),
        (".git/info/exclude", "secret.txt\n"),
        (".ignore", "!vendor/\nnotes.md\n"),
        (".gitignore", "vendor/\n"),
        ("vendor/lib.rs", ""),
        ("notes.md", ""),
        ("secret.txt", ""),
        ("sub/secret.txt", ""),
        ("sub/.git", "gitdir: elsewhere\n"),
        ("ok.txt", ""),
    ]);
    assert_eq!(
        listed(dir.path(), false),
        [".gitignore", ".ignore", "ok.txt", "vendor/lib.rs"],
        ".ignore beats .gitignore; exclude applies at any depth; .git is skipped as a \
         directory or a file"
    );
}

#[test]
fn an_ignored_directory_is_not_walked() {
    let mut files = vec![(".gitignore", "node_modules/\n".to_owned()), ("a.txt", String::new())];
    let mut deep = String::from("node_modules");
    for i in 0..70 {
        deep.push_str(&format!("/d{i}"));
    }
    let deep_file = format!("{deep}/x.js");
    files.push((&deep_file, String::new()));
    let files: Vec<(&str, &str)> = files.iter().map(|(p, b)| (*p, b.as_str())).collect();
    let dir = tree(&files);
    let root = Root::open(dir.path()).unwrap();
    let w = walk(&root, &WalkLimits::default(), false).unwrap();
    assert_eq!(w.files, [".gitignore", "a.txt"]);
    assert!(!w.incomplete, "past the depth cap, but never opened");
    assert!(walk(&root, &WalkLimits::default(), true).unwrap().incomplete);
}

#[test]
fn linked_rule_files_are_not_followed_and_huge_ones_are_capped() {
    let dir = tree(&[("outside-rules", "*\n"), ("ws/a.txt", ""), ("ws/sub/b.txt", "")]);
    let ws = dir.path().join("ws");
    std::os::unix::fs::symlink(dir.path().join("outside-rules"), ws.join(".gitignore")).unwrap();
    assert_eq!(listed(&ws, false), ["a.txt", "sub/b.txt"], "a linked .gitignore is not read");

    // The first line applies; everything past the cap (including the cut line) does not.
    let mut huge = String::from("a.txt\n");
    while huge.len() < MAX_RULE_FILE_BYTES + 10 {
        huge.push_str("# padding padding padding\n");
    }
    huge.push_str("b.txt\n");
    std::fs::write(ws.join("sub/.gitignore"), &huge).unwrap();
    std::fs::write(ws.join("sub/a.txt"), "").unwrap();
    std::fs::remove_file(ws.join(".gitignore")).unwrap();
    assert_eq!(listed(&ws, false), ["a.txt", "sub/.gitignore", "sub/b.txt"]);
}

#[test]
fn bad_lines_are_skipped_and_comments_and_blank_lines_are_not_rules() {
    let g = compile("# comment\n\n[unclosed\n*.o\n").unwrap();
    assert!(g.matched("x.o", false).is_ignore());
    assert!(!g.matched("comment", false).is_ignore());
    assert!(compile("# only a comment\n\n").is_none());
}
