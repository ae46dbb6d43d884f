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
mod tests;
