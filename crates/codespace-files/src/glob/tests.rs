//! Unit tests of `glob`.

use super::*;

fn m(glob: &str, path: &str) -> bool {
    PathGlob::new(glob).unwrap().is_match(path)
}

#[test]
fn semantics() {
    assert!(m("*.rs", "main.rs"));
    assert!(!m("/*.rs", "src/main.rs"), "* must not cross '/'");
    assert!(!m("src/*.rs", "src/a/main.rs"), "* must not cross '/'");
    assert!(m("**/*.rs", "src/main.rs"));
    assert!(m("**/*.rs", "main.rs"));
    assert!(m("src/**", "src/a/b/c.txt"));
    assert!(m("src/?.rs", "src/a.rs"));
    assert!(!m("src/?.rs", "src/ab.rs"));
    assert!(m("src/[ab].rs", "src/b.rs"));
    assert!(!m("src/[ab].rs", "src/c.rs"));
    assert!(m("src/[!ab].rs", "src/c.rs"));
    assert!(m("**/*.{rs,toml}", "x/Cargo.toml"));
    assert!(!m("**/*.{rs,toml}", "x/Cargo.lock"));
    assert!(m("README.md", "README.md"));
    assert!(!m("docs/README.md", "README.md"));
    assert!(!m("*.RS", "main.rs"), "case-sensitive");
}

#[test]
fn a_glob_without_a_slash_matches_the_name_at_any_depth() {
    for path in ["a.txt", "src/a.txt", "src/deep/b.txt"] {
        assert!(m("*.txt", path), "{path}");
    }
    assert!(m("README.md", "docs/README.md"));
    assert!(m("[ab].txt", "x/b.txt"));
    assert!(m("{a,b}.txt", "x/a.txt"));
    assert!(!m("*.txt", "src.txt/a.rs"), "only the last component is the name");
    assert!(m("*", "src/deep/b.txt"));
    assert!(m("**", "src/deep/b.txt"));
}

#[test]
fn a_leading_slash_or_dot_slash_anchors_at_the_root() {
    for g in ["/*.txt", "./*.txt"] {
        assert!(m(g, "a.txt"), "{g}");
        assert!(!m(g, "src/a.txt"), "{g}");
    }
    assert!(m("/src/*.txt", "src/a.txt"));
    assert!(m("src/*.txt", "src/a.txt"));
    assert!(!m("src/*.txt", "x/src/a.txt"), "a '/' inside anchors at the root");
    assert!(!m("{a,b/c}.txt", "x/a.txt"), "a '/' in an alternative anchors too");
}

#[test]
fn bad_globs_are_refused() {
    for g in ["", "/", "./", "//abs/*.rs", "src/[ab.rs", "{a,b"] {
        assert!(matches!(PathGlob::new(g), Err(FilesError::InvalidGlob { .. })), "{g}");
    }
}
