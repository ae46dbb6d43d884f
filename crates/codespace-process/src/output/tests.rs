//! Unit tests of `output`.

use super::*;

fn stream(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 % 251) as u8).collect()
}

#[test]
fn reads_across_the_ring_and_spill_boundary() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = SpillDir::create(tmp.path()).unwrap();
    let mut out = Output::new(16, Some((dir, 64)));
    let all = stream(50);
    for chunk in all.chunks(5) {
        out.push(chunk);
    }
    assert_eq!(out.retained_from(), 0);
    assert_eq!(out.copy(0, 50), all);
    // 34 is the ring's first byte: this range starts on disk and ends in memory.
    assert_eq!(out.copy(30, 40), &all[30..40]);
    assert_eq!(out.copy(3, 9), &all[3..9]);
    // Past the cap the oldest go.
    let more = stream(100);
    out.push(&more);
    let whole: Vec<u8> = all.iter().chain(&more).copied().collect();
    assert_eq!(out.retained_from(), 150 - 64);
    assert_eq!(out.copy(0, 150), &whole[86..]);
}

#[test]
fn without_a_directory_only_the_ring_is_kept() {
    let mut out = Output::new(16, None);
    out.push(&stream(40));
    assert_eq!(out.retained_from(), 24);
    assert_eq!(out.copy(0, 40), &stream(40)[24..]);
}
