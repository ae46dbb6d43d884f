//! What a refused chunk reports, computed only after the refusal: the file line nearest to
//! what the patch expected and how it differs, and whether the chunk's change is already in
//! the file. Nothing here decides a match: [`seek`] alone does, before any of this runs.

use std::collections::HashMap;

use codespace_types::LineDifference;

use crate::model::{ChunkLine, UpdateChunk};
use crate::seek::{normalise, same_fuzzy, seek};

/// Longest text a diagnostic quotes, in bytes.
const MAX_QUOTE: usize = 240;
/// Lowest token similarity (Dice coefficient over the lines' tokens) of a near line.
const NEAR: f64 = 0.5;
/// Most tokens of one line compared.
const MAX_TOKENS: usize = 256;
/// Most anchor votes counted for one chunk.
const MAX_VOTES: usize = 1_000_000;
/// Most bytes of file text tokenised while scanning for a similar line, for one chunk.
const SCAN_BUDGET: usize = 8 << 20;
/// Most expected lines of one chunk scanned for.
const SCAN_LINES: usize = 8;
/// Smallest anchor weight (non-whitespace characters of the lines that agree) that places a
/// chunk: a lone `}` does not.
const MIN_ANCHOR: usize = 4;

/// The file line nearest to a line the patch expected, and how the two differ.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Nearest {
    /// 1-based line of the file, as the patch found it at this chunk.
    pub line: usize,
    /// That line's text (at most 240 bytes, cut with `…`).
    pub text: String,
    /// The patch's line it was compared with (bounded the same way).
    pub expected: String,
    /// 1-based line of `expected` in the patch text.
    pub patch_line: usize,
    pub differs: LineDifference,
    /// For [`LineDifference::Token`]: the patch's token and the file's.
    pub token: Option<TokenChange>,
}

/// The one token that differs between the expected line and the file's.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TokenChange {
    pub expected: String,
    pub found: String,
}

/// The chunk's change already stands in the file: its new lines (context and `+` lines)
/// are where its old lines would be. "Where" needs a place: context lines around the
/// change (found anywhere), or else the `@@` line already found (`cursor` is just past it).
/// A chunk that changes nothing, leaves no line or has neither never counts: a bare
/// `+` line found somewhere says nothing about this change.
pub(crate) fn already_applied(lines: &[&str], chunk: &UpdateChunk, cursor: usize) -> bool {
    let (old, new) = (chunk.old_lines(), chunk.new_lines());
    let has_context = chunk.lines.iter().any(|l| matches!(l, ChunkLine::Context(_)));
    let from = match (has_context, &chunk.context) {
        (true, _) => 0,
        (false, Some(_)) => cursor,
        (false, None) => return false,
    };
    if new.is_empty() || old == new {
        return false;
    }
    let mut pattern: &[&str] = &new;
    if seek(lines, pattern, from, chunk.end_of_file).is_some() {
        return true;
    }
    if pattern.last() == Some(&"") {
        pattern = &pattern[..pattern.len() - 1];
        return !pattern.is_empty() && seek(lines, pattern, from, chunk.end_of_file).is_some();
    }
    false
}

/// The nearest candidate for a chunk's old lines that `seek` did not find from `cursor`.
pub(crate) fn nearest_block(lines: &[&str], chunk: &UpdateChunk, cursor: usize) -> Option<Nearest> {
    let expected = expected_lines(chunk);
    let pattern: Vec<&str> = expected.iter().map(|(t, _)| *t).collect();
    let at = |file: usize, k: usize, differs| {
        let (text, patch_line) = expected[k];
        described(lines, file, text, patch_line, Some(differs))
    };
    // Found when searched from the top without the end-of-file anchor: only its place is wrong.
    let mut whole: &[&str] = &pattern;
    if whole.last() == Some(&"") && whole.len() > 1 {
        whole = &whole[..whole.len() - 1];
    }
    if let Some(i) = seek(lines, whole, 0, false) {
        return at(i, 0, LineDifference::Position);
    }
    let mut first_miss = 0;
    if let Some(s) = anchored_window(lines, &pattern, cursor) {
        let Some(k) = (0..pattern.len()).find(|&k| !same_fuzzy(pattern[k], lines[s + k])) else {
            return at(s, 0, LineDifference::Position);
        };
        first_miss = k;
        if similarity(pattern[k], lines[s + k]) >= NEAR {
            let (text, patch_line) = expected[k];
            return described(lines, s + k, text, patch_line, None);
        }
        // A line inserted or removed around it: the most similar line close by.
        let around = (s + k).saturating_sub(3)..(s + k + 4).min(lines.len());
        let mut unbounded = usize::MAX;
        if let Some(j) = most_similar(lines, pattern[k], around, s + k, &mut unbounded) {
            let (text, patch_line) = expected[k];
            return described(lines, j, text, patch_line, None);
        }
    }
    let mut budget = SCAN_BUDGET;
    let order = (first_miss..pattern.len()).chain(0..first_miss);
    let mut best: Option<(f64, usize, usize)> = None;
    for k in order.filter(|&k| key_hash(pattern[k]).1 > 0).take(SCAN_LINES) {
        let Some(j) = most_similar(lines, pattern[k], 0..lines.len(), cursor, &mut budget) else {
            continue;
        };
        let score = similarity(pattern[k], lines[j]);
        if best.is_none_or(|(b, _, _)| score > b) {
            best = Some((score, j, k));
        }
    }
    let (_, j, k) = best?;
    let (text, patch_line) = expected[k];
    described(lines, j, text, patch_line, None)
}

/// The nearest candidate for an `@@ <context>` line that `seek` did not find from `cursor`.
pub(crate) fn nearest_line(
    lines: &[&str],
    context: &str,
    cursor: usize,
    patch_line: usize,
) -> Option<Nearest> {
    if let Some(i) = seek(lines, &[context], 0, false) {
        return described(lines, i, context, patch_line, Some(LineDifference::Position));
    }
    let mut budget = SCAN_BUDGET;
    let j = most_similar(lines, context, 0..lines.len(), cursor, &mut budget)?;
    described(lines, j, context, patch_line, None)
}

/// The chunk's old lines with their patch lines.
fn expected_lines(chunk: &UpdateChunk) -> Vec<(&str, usize)> {
    chunk
        .lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| match l {
            ChunkLine::Context(t) | ChunkLine::Delete(t) => Some((t.as_str(), chunk.body_line + i)),
            ChunkLine::Add(_) => None,
        })
        .collect()
}

fn described(
    lines: &[&str],
    file: usize,
    expected: &str,
    patch_line: usize,
    differs: Option<LineDifference>,
) -> Option<Nearest> {
    let found = *lines.get(file)?;
    let (differs, token) = match differs {
        Some(d) => (d, None),
        None => difference(expected, found),
    };
    Some(Nearest {
        line: file + 1,
        text: quote(found),
        expected: quote(expected),
        patch_line,
        differs,
        token,
    })
}

/// The window start most file lines agree on (equal but for whitespace and punctuation),
/// weighted by their length; ties go to the window nearest `cursor` at or after it.
fn anchored_window(lines: &[&str], pattern: &[&str], cursor: usize) -> Option<usize> {
    let (n, m) = (lines.len(), pattern.len());
    if m == 0 || m > n {
        return None;
    }
    // Lines are compared by a hash of their text without whitespace: no allocation per
    // line, and a collision only misplaces a diagnostic.
    let mut wanted: HashMap<u64, Vec<(usize, usize)>> = HashMap::new();
    for (k, p) in pattern.iter().enumerate() {
        let (hash, len) = key_hash(p);
        if len > 0 {
            wanted.entry(hash).or_default().push((k, len.min(32)));
        }
    }
    let mut votes: HashMap<usize, usize> = HashMap::new();
    let mut counted = 0;
    'scan: for (j, line) in lines.iter().enumerate() {
        let Some(ks) = wanted.get(&key_hash(line).0) else { continue };
        for &(k, weight) in ks {
            if j >= k && j - k + m <= n {
                *votes.entry(j - k).or_default() += weight;
                counted += 1;
                if counted >= MAX_VOTES {
                    break 'scan;
                }
            }
        }
    }
    let rank = |s: usize| (s < cursor, s.abs_diff(cursor), s);
    votes
        .into_iter()
        .filter(|&(_, w)| w >= MIN_ANCHOR)
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| rank(b.0).cmp(&rank(a.0))))
        .map(|(s, _)| s)
}

/// The line in `range` most similar to `expected` (at least [`NEAR`], never one the matcher
/// would take as equal), ties nearest `cursor` at or after it; stops when `budget` bytes
/// have been compared.
fn most_similar(
    lines: &[&str],
    expected: &str,
    range: std::ops::Range<usize>,
    cursor: usize,
    budget: &mut usize,
) -> Option<usize> {
    let want = token_hashes(expected);
    if want.is_empty() {
        return None;
    }
    let size = expected.trim().len();
    let rank = |j: usize| (j < cursor, j.abs_diff(cursor));
    let mut best: Option<(f64, usize)> = None;
    for j in range {
        let line = lines[j];
        let len = line.trim().len();
        if len > 4 * size + 16 || size > 4 * len + 16 || same_fuzzy(expected, line) {
            continue;
        }
        if *budget < len {
            break;
        }
        *budget -= len;
        let score = dice(&want, &token_hashes(line));
        let better = match best {
            None => true,
            Some((b, i)) => score > b || (score == b && rank(j) < rank(i)),
        };
        if score >= NEAR && better {
            best = Some((score, j));
        }
    }
    best.map(|(_, j)| j)
}

fn difference(expected: &str, found: &str) -> (LineDifference, Option<TokenChange>) {
    if key(expected) == key(found) {
        let indent = |s: &str| s.len() - s.trim_start().len();
        let same = expected[..indent(expected)] == found[..indent(found)];
        return if same {
            (LineDifference::Whitespace, None)
        } else {
            (LineDifference::Indentation, None)
        };
    }
    let (want, got) = (tokens(expected), tokens(found));
    if want.len() == got.len() {
        let mut changed = want.iter().zip(&got).filter(|(a, b)| a != b);
        if let (Some((a, b)), None) = (changed.next(), changed.next()) {
            let token = TokenChange { expected: quote(a), found: quote(b) };
            return (LineDifference::Token, Some(token));
        }
    }
    (LineDifference::Text, None)
}

/// The line without whitespace, punctuation mapped as the matcher's last pass maps it.
fn key(line: &str) -> String {
    line.chars().map(normalise).filter(|c| !c.is_whitespace()).collect()
}

/// Words (runs of letters, digits and `_`) and single punctuation marks; whitespace
/// separates and is dropped.
fn tokens(line: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut word = String::new();
    for c in line.chars().map(normalise) {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        if !c.is_whitespace() {
            out.push(c.to_string());
        }
        if out.len() >= MAX_TOKENS {
            return out;
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out.truncate(MAX_TOKENS);
    out
}

fn similarity(a: &str, b: &str) -> f64 {
    if key(a) == key(b) { 1.0 } else { dice(&token_hashes(a), &token_hashes(b)) }
}

/// FNV-1a over characters: a cheap hash, no allocation.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn add(&mut self, c: char) {
        self.0 = (self.0 ^ u64::from(u32::from(c))).wrapping_mul(0x0100_0000_01b3);
    }
}

/// A hash of [`key`] and its length in characters, without building it.
fn key_hash(line: &str) -> (u64, usize) {
    let mut h = Fnv::new();
    let mut len = 0;
    for c in line.chars().map(normalise).filter(|c| !c.is_whitespace()) {
        h.add(c);
        len += 1;
    }
    (h.0, len)
}

/// The hashes of [`tokens`], sorted.
fn token_hashes(line: &str) -> Vec<u64> {
    let mut out = Vec::new();
    let mut word: Option<Fnv> = None;
    for c in line.chars().map(normalise) {
        if c.is_alphanumeric() || c == '_' {
            word.get_or_insert_with(Fnv::new).add(c);
            continue;
        }
        out.extend(word.take().map(|w| w.0));
        if !c.is_whitespace() {
            let mut h = Fnv::new();
            h.add(c);
            out.push(h.0);
        }
        if out.len() >= MAX_TOKENS {
            break;
        }
    }
    out.extend(word.map(|w| w.0));
    out.truncate(MAX_TOKENS);
    out.sort_unstable();
    out
}

/// `2·|common| / (|a| + |b|)` over sorted token multisets.
fn dice(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (2 * common) as f64 / (a.len() + b.len()) as f64
}

/// At most [`MAX_QUOTE`] bytes of `s`, cut at a character boundary with `…`.
pub(crate) fn quote(s: &str) -> String {
    if s.len() <= MAX_QUOTE {
        return s.to_owned();
    }
    let mut end = MAX_QUOTE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests;
