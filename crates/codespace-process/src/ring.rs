//! The bounded output ring: the last `cap` bytes of a stream, addressed by absolute offsets.
//!
//! Absolute offset `o` lives at physical index `o % cap`. Until the stream first exceeds
//! `cap` the buffer is a plain growing `Vec` (so a command with little output costs little
//! memory); after that it is exactly `cap` bytes and never grows again, whatever the
//! command writes.

/// The last `cap` bytes of a stream plus the count of every byte ever pushed.
#[derive(Debug)]
pub(crate) struct Ring {
    buf: Vec<u8>,
    cap: usize,
    total: u64,
}

impl Ring {
    /// A ring keeping at most `cap` bytes (at least 1).
    pub(crate) fn new(cap: usize) -> Self {
        Self { buf: Vec::new(), cap: cap.max(1), total: 0 }
    }

    /// Bytes kept at most.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    /// Bytes ever pushed.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// The first absolute offset still held; everything below it was dropped.
    pub(crate) fn retained_from(&self) -> u64 {
        self.total.saturating_sub(self.cap as u64)
    }

    /// Appends `data`, dropping the oldest bytes beyond `cap`.
    pub(crate) fn push(&mut self, data: &[u8]) {
        let mut data = data;
        if data.is_empty() {
            return;
        }
        if data.len() > self.cap {
            let skip = data.len() - self.cap;
            self.total += skip as u64;
            data = &data[skip..];
        }
        let linear = self.buf.len() < self.cap && self.buf.len() as u64 == self.total;
        if linear && self.buf.len() + data.len() <= self.cap {
            self.buf.extend_from_slice(data);
            self.total += data.len() as u64;
            return;
        }
        if self.buf.len() < self.cap {
            self.buf.resize(self.cap, 0);
        }
        let pos = self.phys(self.total);
        let first = (self.cap - pos).min(data.len());
        self.buf[pos..pos + first].copy_from_slice(&data[..first]);
        let rest = data.len() - first;
        self.buf[..rest].copy_from_slice(&data[first..]);
        self.total += data.len() as u64;
    }

    /// Copies absolute range `from..to`, clamped to what is retained.
    pub(crate) fn copy(&self, from: u64, to: u64) -> Vec<u8> {
        let from = from.max(self.retained_from());
        let to = to.min(self.total);
        let mut out = Vec::with_capacity(to.saturating_sub(from) as usize);
        let mut at = from;
        while at < to {
            let p = self.phys(at);
            let n = ((self.cap - p) as u64).min(to - at) as usize;
            out.extend_from_slice(&self.buf[p..p + n]);
            at += n as u64;
        }
        out
    }

    fn phys(&self, offset: u64) -> usize {
        (offset % self.cap as u64) as usize
    }
}

#[cfg(test)]
mod tests {
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
}
