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
        same_fuzzy,
    ];
    passes.iter().find_map(|same| {
        (from..=to).find(|&i| pattern.iter().zip(&lines[i..]).all(|(p, l)| same(p, l)))
    })
}

/// The last, most tolerant pass: equal once trimmed and with punctuation mapped.
pub(crate) fn same_fuzzy(a: &str, b: &str) -> bool {
    a.trim().chars().map(normalise).eq(b.trim().chars().map(normalise))
}

/// Maps typographic punctuation and exotic spaces to ASCII, as Codex's last pass does.
pub(crate) fn normalise(c: char) -> char {
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
mod tests;
