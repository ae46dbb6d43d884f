//! Unit tests of `path`.

use super::*;

#[test]
fn normalises_and_refuses() {
    assert_eq!(normalise_relative("a.txt"), Ok("a.txt".into()));
    assert_eq!(normalise_relative("./a//b/./c/"), Ok("a/b/c".into()));
    assert_eq!(normalise_relative("a/../b"), Ok("b".into()));
    assert_eq!(normalise_relative(" a /b"), Ok(" a /b".into()));
    assert_eq!(normalise_relative("../a"), Err(LexicalRefusal::ParentEscape));
    assert_eq!(normalise_relative("a/../../a"), Err(LexicalRefusal::ParentEscape));
    assert_eq!(normalise_relative("/etc/passwd"), Err(LexicalRefusal::Absolute));
    assert_eq!(normalise_relative("."), Err(LexicalRefusal::Root));
    assert_eq!(normalise_relative(""), Err(LexicalRefusal::Root));
    assert_eq!(normalise_relative("a\0b"), Err(LexicalRefusal::Nul));
}
