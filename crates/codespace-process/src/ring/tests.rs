//! Unit tests of `ring`.

use super::Ring;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[test]
fn small_output_stays_linear_and_small() {
    let mut r = Ring::new(1024);
    r.push(b"hello ");
    r.push(b"world");
    assert_eq!(r.total(), 11);
    assert_eq!(r.retained_from(), 0);
    assert_eq!(r.copy(0, 11), b"hello world");
    assert_eq!(r.copy(6, 8), b"wo");
    assert!(r.buf.capacity() < 1024);
}

#[test]
fn wraps_and_drops_oldest() {
    let mut r = Ring::new(4);
    r.push(b"abc");
    r.push(b"def");
    assert_eq!(r.total(), 6);
    assert_eq!(r.retained_from(), 2);
    assert_eq!(r.copy(0, 6), b"cdef");
    assert_eq!(r.copy(3, 5), b"de");
    r.push(b"0123456789");
    assert_eq!(r.total(), 16);
    assert_eq!(r.retained_from(), 12);
    assert_eq!(r.copy(0, 100), b"6789");
    assert_eq!(r.buf.len(), 4);
}

#[test]
fn matches_a_reference_model_under_mixed_pushes() {
    // A seeded generator drives chunk sizes across every boundary case, repeatably.
    let mut rng = StdRng::seed_from_u64(0x9E37_79B9_7F4A_7C15);
    let mut next = move || rng.next_u64();
    for cap in [1usize, 2, 7, 64, 1000] {
        let mut ring = Ring::new(cap);
        let mut all: Vec<u8> = Vec::new();
        for round in 0..300 {
            let len = (next() % (cap as u64 * 3 + 2)) as usize;
            let chunk: Vec<u8> = (0..len).map(|i| (round * 31 + i) as u8).collect();
            ring.push(&chunk);
            all.extend_from_slice(&chunk);
            let total = all.len() as u64;
            assert_eq!(ring.total(), total);
            let start = total.saturating_sub(cap as u64);
            assert_eq!(ring.retained_from(), start);
            assert_eq!(ring.copy(0, total), &all[start as usize..]);
            if total > start + 1 {
                let a = start + next() % (total - start);
                let b = a + next() % (total - a + 1);
                assert_eq!(ring.copy(a, b), &all[a as usize..b as usize]);
            }
            assert!(ring.buf.len() <= cap);
        }
    }
}
