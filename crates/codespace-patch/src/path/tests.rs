//! Unit tests of `path`.

use super::*;

#[test]
fn normalises() {
    assert_eq!(normalise("a.txt").unwrap(), "a.txt");
    assert_eq!(normalise("./a//b/./c/").unwrap(), "a/b/c");
    assert_eq!(normalise("a/../b").unwrap(), "b");
    assert_eq!(normalise(" a /b").unwrap(), " a /b");
    assert!(normalise("../a").is_err());
    assert!(normalise("a/../../a").is_err());
    assert!(normalise("/etc/passwd").is_err());
    assert!(normalise(".").is_err());
    assert!(normalise("a\0b").is_err());
}

#[test]
fn lists_ancestors() {
    assert_eq!(ancestors("a/b/c").collect::<Vec<_>>(), vec!["a", "a/b"]);
    assert_eq!(ancestors("a").count(), 0);
}
