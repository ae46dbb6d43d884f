//! [`bounded_diff`]: a unified diff from one version of a file to another, bounded in time
//! and size, for a caller whose expected version is stale (`VERSION_CONFLICT`): it shows
//! what changed since, so the caller can redo its patch without reading the whole file.

use std::time::Duration;

use similar::{Algorithm, TextDiff};

/// Largest side diffed, in bytes; a larger file gets no diff.
pub const MAX_DIFF_INPUT_BYTES: usize = 4 << 20;
/// Time the line diff may take before it settles for a coarser (still correct) answer.
const DIFF_TIMEOUT: Duration = Duration::from_millis(250);
/// Lines of context around each change.
const CONTEXT_LINES: usize = 3;

/// A unified diff, cut at a line boundary (or inside one over-long line) once `max_bytes`
/// is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundedDiff {
    /// `--- old_label`, `+++ new_label`, then the hunks (`@@ -a,b +c,d @@`, 3 lines of
    /// context), as far as they fit.
    pub text: String,
    /// Some of the diff was left out.
    pub truncated: bool,
}

/// The unified diff from `old` to `new`, at most `max_bytes` long. `None` when either side
/// is not UTF-8 text or is over [`MAX_DIFF_INPUT_BYTES`]. Identical sides give the two
/// header lines alone.
pub fn bounded_diff(
    old: &[u8],
    new: &[u8],
    old_label: &str,
    new_label: &str,
    max_bytes: usize,
) -> Option<BoundedDiff> {
    if old.len() > MAX_DIFF_INPUT_BYTES || new.len() > MAX_DIFF_INPUT_BYTES {
        return None;
    }
    let (old, new) = (std::str::from_utf8(old).ok()?, std::str::from_utf8(new).ok()?);
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let mut out = Budget { text: String::new(), left: max_bytes, truncated: false };
    out.push(&format!("--- {old_label}\n+++ {new_label}\n"));
    let mut unified = diff.unified_diff();
    unified.context_radius(CONTEXT_LINES).missing_newline_hint(true);
    for hunk in unified.iter_hunks() {
        if out.truncated {
            break;
        }
        out.push(&hunk.to_string());
    }
    Some(BoundedDiff { text: out.text, truncated: out.truncated })
}

struct Budget {
    text: String,
    left: usize,
    truncated: bool,
}

impl Budget {
    /// Appends whole lines of `chunk` while they fit; the first that does not is cut at a
    /// character boundary and ends the diff.
    fn push(&mut self, chunk: &str) {
        for line in chunk.split_inclusive('\n') {
            if self.truncated {
                return;
            }
            if line.len() <= self.left {
                self.text.push_str(line);
                self.left -= line.len();
                continue;
            }
            let mut end = self.left;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            self.text.push_str(&line[..end]);
            if !self.text.ends_with('\n') {
                self.text.push('\n');
            }
            self.truncated = true;
        }
    }
}

#[cfg(test)]
mod tests;
