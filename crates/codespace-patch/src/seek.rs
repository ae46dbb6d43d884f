//! Codex's `seek_sequence` (preserving mode): find a block of lines, from strict to fuzzy.
//!
//! Pass-major on purpose (v4a.md §7.1): an exact match anywhere beats a whitespace-tolerant
//! match earlier in the file; the first hit wins and uniqueness is never checked.

/// Position of `pattern` in `lines` at or after `start`; with `eof` only the window ending at
/// the last line is tried (and only if it is not before `start`).
pub(crate) fn seek(lines: &[&str], pattern: &[&str], start: usize, eof: bool) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start);
    }
    let last = lines.len().checked_sub(pattern.len())?;
    let (from, to) = if eof { (last, last) } else { (start, last) };
    if from < start || from > to {
        return None;
    }
    let passes: [fn(&str, &str) -> bool; 4] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
        |a, b| a.trim().chars().map(normalise).eq(b.trim().chars().map(normalise)),
    ];
    passes.iter().find_map(|same| {
        (from..=to).find(|&i| pattern.iter().zip(&lines[i..]).all(|(p, l)| same(p, l)))
    })
}

/// Maps typographic punctuation and exotic spaces to ASCII, as Codex's last pass does.
fn normalise(c: char) -> char {
    match c {
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => '-',
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}'
        | '\u{2007}' | '\u{2008}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}'
        | '\u{3000}' => ' ',
        other => other,
    }
}

#[cfg(test)]
mod tests {
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
        let lines =
            ["import x  # a \u{2013} b\u{2011}c \u{201C}d\u{201D} \u{2019}e\u{2019}\u{00A0}"];
        assert_eq!(seek(&lines, &["import x  # a - b-c \"d\" 'e'"], 0, false), Some(0));
        // U+2001 and U+200B are not mapped.
        assert_eq!(seek(&["a\u{200B}b"], &["a b"], 0, false), None);
    }
}
