//! Unit tests of `seek`.

use super::seek;

#[test]
fn passes_are_pass_major() {
    let lines = ["  x", "y", "x"];
    // Exact match at 2 wins over the trim match at 0.
    assert_eq!(seek(&lines, &["x"], 0, false), Some(2));
    // Trailing-space tolerance finds the exact-after-rstrip line before the trim pass runs.
    assert_eq!(seek(&lines, &["x "], 0, false), Some(2));
    assert_eq!(seek(&lines, &[" x "], 0, false), Some(0));
    assert_eq!(seek(&lines, &["z"], 0, false), None);
}

#[test]
fn start_and_eof() {
    let lines = ["a", "b", "a"];
    assert_eq!(seek(&lines, &["a"], 1, false), Some(2));
    assert_eq!(seek(&lines, &["a"], 0, true), Some(2));
    assert_eq!(seek(&lines, &["b"], 0, true), None);
    assert_eq!(seek(&lines, &["a", "b"], 2, false), None);
    assert_eq!(seek(&lines, &["a"], 3, true), None);
    assert_eq!(seek(&lines, &[], 3, true), Some(3));
    assert_eq!(seek(&lines, &["a", "b", "a", "b"], 0, false), None);
}

#[test]
fn unicode_pass() {
    let lines = ["import x  # a \u{2013} b\u{2011}c \u{201C}d\u{201D} \u{2019}e\u{2019}\u{00A0}"];
    assert_eq!(seek(&lines, &["import x  # a - b-c \"d\" 'e'"], 0, false), Some(0));
    // U+2001 and U+200B are not mapped.
    assert_eq!(seek(&["a\u{200B}b"], &["a b"], 0, false), None);
}
