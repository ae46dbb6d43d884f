//! Unit tests of the bounded diff.

use super::*;

#[test]
fn a_change_is_shown_with_its_context() {
    let old = b"a\nb\nc\nd\ne\nf\ng\nh\n";
    let new = b"a\nb\nc\nd\nE\nf\ng\nh\n";
    let d = bounded_diff(old, new, "x.txt@sha256:1", "x.txt@sha256:2", 4096).unwrap();
    assert_eq!(
        d.text,
        "--- x.txt@sha256:1\n+++ x.txt@sha256:2\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
    );
    assert!(!d.truncated);
}

#[test]
fn it_is_cut_at_the_bound_and_says_so() {
    let old: String = (0..2000).map(|i| format!("line {i}\n")).collect();
    let new = old.replace("line 1", "LINE 1");
    let d = bounded_diff(old.as_bytes(), new.as_bytes(), "a", "b", 1000).unwrap();
    assert!(d.truncated);
    assert!(d.text.len() <= 1001, "{}", d.text.len());
    assert!(d.text.ends_with('\n'));
    // One over-long line is cut inside, at a character boundary.
    let long = "é".repeat(2000);
    let d = bounded_diff(b"x\n", long.as_bytes(), "a", "b", 300).unwrap();
    assert!(d.truncated && d.text.len() <= 301);
}

#[test]
fn binary_or_huge_sides_get_none_and_equal_sides_only_headers() {
    assert_eq!(bounded_diff(b"\xff\xfe", b"x", "a", "b", 100), None);
    let huge = vec![b'a'; MAX_DIFF_INPUT_BYTES + 1];
    assert_eq!(bounded_diff(&huge, b"x", "a", "b", 100), None);
    let same = bounded_diff(b"x\n", b"x\n", "a", "b", 100).unwrap();
    assert_eq!(same.text, "--- a\n+++ b\n");
}
