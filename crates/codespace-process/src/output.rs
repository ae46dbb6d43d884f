//! A process's output: the newest bytes in the in-memory [`Ring`], and, once the stream
//! outgrows the ring, every byte also in a bounded [`SpillFile`], so any cursor among the
//! newest `spill cap` bytes can be read. Without a spill directory, or once the spill file
//! failed (a full disk), only the ring is kept.

use std::sync::Arc;

use crate::ring::Ring;
use crate::spill::{SpillDir, SpillFile};

/// Where spilled output may go.
enum Spill {
    /// Not spilling: no directory, a cap no larger than the ring, or a failed file.
    Off,
    /// Not yet needed: the stream still fits the ring.
    Ready { dir: Arc<SpillDir>, cap: u64 },
    /// Every byte of the stream since the first is in this file (the newest `cap` of them).
    Active(SpillFile),
}

/// The output of one process.
pub(crate) struct Output {
    ring: Ring,
    spill: Spill,
}

impl Output {
    /// An empty output keeping `ring_bytes` in memory and, given a directory, the newest
    /// `spill_bytes` in a spill file there.
    pub(crate) fn new(ring_bytes: usize, spill: Option<(Arc<SpillDir>, u64)>) -> Self {
        let spill = match spill {
            Some((dir, cap)) if cap > ring_bytes as u64 => Spill::Ready { dir, cap },
            Some(_) | None => Spill::Off,
        };
        Self { ring: Ring::new(ring_bytes), spill }
    }

    /// Bytes ever produced.
    pub(crate) fn total(&self) -> u64 {
        self.ring.total()
    }

    /// The first absolute offset still readable.
    pub(crate) fn retained_from(&self) -> u64 {
        match &self.spill {
            Spill::Active(file) => self.total().saturating_sub(file.cap()),
            Spill::Off | Spill::Ready { .. } => self.ring.retained_from(),
        }
    }

    /// Appends `data`; the oldest bytes beyond what is kept are dropped.
    pub(crate) fn push(&mut self, data: &[u8]) {
        let total = self.total();
        if let Spill::Ready { dir, cap } = &self.spill
            && total + data.len() as u64 > self.ring.cap() as u64
        {
            // The ring has dropped nothing yet (it is about to): its bytes are the whole
            // stream so far, and seed the file.
            self.spill = match SpillFile::create(dir, *cap) {
                Ok(file) if file.write(0, &self.ring.copy(0, total)).is_ok() => Spill::Active(file),
                Ok(_) | Err(_) => Spill::Off,
            };
        }
        if let Spill::Active(file) = &self.spill
            && file.write(total, data).is_err()
        {
            self.spill = Spill::Off;
        }
        self.ring.push(data);
    }

    /// Copies absolute range `from..to`, clamped to what is readable: from memory when the
    /// ring still holds `from`, else from the spill file. A spill file that cannot be read
    /// is given up (the range then starts at the ring's first byte).
    pub(crate) fn copy(&mut self, from: u64, to: u64) -> Vec<u8> {
        let from = from.max(self.retained_from());
        let to = to.min(self.total());
        let ring_from = self.ring.retained_from();
        if from >= ring_from {
            return self.ring.copy(from, to);
        }
        if let Spill::Active(file) = &self.spill {
            let mut out = Vec::with_capacity(to.saturating_sub(from) as usize);
            let on_disk = to.min(ring_from);
            if file.read(from, on_disk, &mut out).is_ok() {
                out.extend_from_slice(&self.ring.copy(on_disk, to));
                return out;
            }
        }
        self.spill = Spill::Off;
        self.ring.copy(from.max(ring_from), to)
    }
}

#[cfg(test)]
mod tests;
