//! Unit tests of the seen-content cache.

use super::*;

fn v(bytes: &[u8]) -> Version {
    Version::of_bytes(bytes)
}

#[test]
fn content_is_found_by_workspace_path_and_version() {
    let seen = Seen::default();
    seen.remember("w", "a.txt", v(b"one"), b"one");
    assert_eq!(seen.get("w", "a.txt", v(b"one")).as_deref(), Some(&b"one"[..]));
    assert_eq!(seen.get("other", "a.txt", v(b"one")), None);
    assert_eq!(seen.get("w", "b.txt", v(b"one")), None);
    assert_eq!(seen.get("w", "a.txt", v(b"two")), None);
    seen.remember("w", "gone.txt", Version::Absent, b"");
    assert_eq!(seen.get("w", "gone.txt", Version::Absent), None);
}

#[test]
fn the_oldest_content_goes_first_past_the_byte_bound() {
    let seen = Seen::default();
    let big = vec![b'x'; SEEN_MAX_ENTRY_BYTES];
    let count = SEEN_MAX_BYTES / SEEN_MAX_ENTRY_BYTES;
    for i in 0..count {
        seen.remember("w", &format!("f{i}"), v(&big), &big);
    }
    // Remembered again: kept once, in its first place, so f0 still goes first.
    seen.remember("w", "f0", v(&big), &big);
    seen.remember("w", "extra", v(&big), &big);
    assert!(seen.get("w", "f0", v(&big)).is_none());
    assert!(seen.get("w", "f1", v(&big)).is_some());
    assert!(seen.get("w", "extra", v(&big)).is_some());
    let too_big = vec![b'y'; SEEN_MAX_ENTRY_BYTES + 1];
    seen.remember("w", "huge", v(&too_big), &too_big);
    assert!(seen.get("w", "huge", v(&too_big)).is_none());
    let inner = seen.inner.lock().unwrap();
    assert!(inner.bytes <= SEEN_MAX_BYTES);
}
