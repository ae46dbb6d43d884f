//! Applying an Update's chunks to one file's text, in Codex's line-ending preserving mode.
//!
//! v4a.md §7 (locating chunks) and §8.2 (rebuild): lines split at CRLF, lone CR and LF; lines
//! the patch does not replace (context included) keep their bytes and terminator; new lines
//! get the file's first terminator; the result always ends with a terminator unless empty.

use crate::diagnose::{Nearest, already_applied, nearest_block, nearest_line};
use crate::model::UpdateChunk;
use crate::seek::seek;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Eol {
    Lf,
    CrLf,
    Cr,
}

impl Eol {
    fn as_str(self) -> &'static str {
        match self {
            Self::Lf => "\n",
            Self::CrLf => "\r\n",
            Self::Cr => "\r",
        }
    }
}

/// A line of the source file and its own terminator (`None` only for an unterminated last line).
#[derive(Debug, Clone, Copy)]
struct SourceLine<'a> {
    text: &'a str,
    eol: Option<Eol>,
}

fn split_lines(content: &str) -> Vec<SourceLine<'_>> {
    let bytes = content.as_bytes();
    let mut lines = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        let (eol, len) = match bytes[i] {
            b'\n' => (Eol::Lf, 1),
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => (Eol::CrLf, 2),
            b'\r' => (Eol::Cr, 1),
            _ => {
                i += 1;
                continue;
            }
        };
        // `\r` and `\n` are ASCII, so these are char boundaries.
        lines.push(SourceLine { text: &content[start..i], eol: Some(eol) });
        i += len;
        start = i;
    }
    if start < bytes.len() {
        lines.push(SourceLine { text: &content[start..], eol: None });
    }
    lines
}

/// Why a chunk could not be placed; `chunk` is its 0-based index. The diagnostics are
/// computed after the match failed and never change it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChunkFailure {
    Context {
        chunk: usize,
        nearest: Option<Box<Nearest>>,
    },
    Lines {
        chunk: usize,
        nearest: Option<Box<Nearest>>,
    },
    /// The chunk's new lines already stand where its old lines would be.
    Applied {
        chunk: usize,
    },
}

/// `(index, old line count, new lines)` in source-line coordinates.
type Replacement<'p> = (usize, usize, Vec<&'p str>);

/// The file's new content after applying `chunks` to `content`.
pub(crate) fn apply_chunks(content: &str, chunks: &[UpdateChunk]) -> Result<String, ChunkFailure> {
    let source = split_lines(content);
    let texts: Vec<&str> = source.iter().map(|l| l.text).collect();
    let replacements = compute_replacements(&texts, chunks)?;
    Ok(rebuild(&source, &replacements))
}

fn compute_replacements<'p>(
    lines: &[&str],
    chunks: &'p [UpdateChunk],
) -> Result<Vec<Replacement<'p>>, ChunkFailure> {
    let mut replacements = Vec::new();
    let mut cursor = 0;
    for (index, chunk) in chunks.iter().enumerate() {
        if let Some(ctx) = &chunk.context {
            let Some(found) = seek(lines, &[ctx.as_str()], cursor, false) else {
                let nearest = nearest_line(lines, ctx, cursor, chunk.line).map(Box::new);
                return Err(ChunkFailure::Context { chunk: index, nearest });
            };
            cursor = found + 1;
        }
        let old = chunk.old_lines();
        let new = chunk.new_lines();
        if old.is_empty() {
            // A pure addition goes to the end of the file, whatever its `@@` header says.
            replacements.push((lines.len(), 0, new));
            continue;
        }
        let mut pattern: &[&str] = &old;
        let mut replacement: &[&str] = &new;
        let mut found = seek(lines, pattern, cursor, chunk.end_of_file);
        if found.is_none() && pattern.last() == Some(&"") {
            // Tolerate one stray blank line at the end of a chunk.
            pattern = &pattern[..pattern.len() - 1];
            if replacement.last() == Some(&"") {
                replacement = &replacement[..replacement.len() - 1];
            }
            found = seek(lines, pattern, cursor, chunk.end_of_file);
        }
        let Some(start) = found else {
            return Err(if already_applied(lines, chunk, cursor) {
                ChunkFailure::Applied { chunk: index }
            } else {
                let nearest = nearest_block(lines, chunk, cursor).map(Box::new);
                ChunkFailure::Lines { chunk: index, nearest }
            });
        };
        // Keep the file's own context lines: only the runs between them are replaced.
        let (mut old_from, mut new_from) = (0, 0);
        for (old_ctx, new_ctx) in chunk.context_indices() {
            if old_ctx >= pattern.len() || new_ctx >= replacement.len() {
                break; // a trailing blank context line dropped by the retry above
            }
            if old_from != old_ctx || new_from != new_ctx {
                replacements.push((
                    start + old_from,
                    old_ctx - old_from,
                    replacement[new_from..new_ctx].to_vec(),
                ));
            }
            old_from = old_ctx + 1;
            new_from = new_ctx + 1;
        }
        if old_from != pattern.len() || new_from != replacement.len() {
            replacements.push((
                start + old_from,
                pattern.len().saturating_sub(old_from),
                replacement.get(new_from..).unwrap_or_default().to_vec(),
            ));
        }
        cursor = start + pattern.len();
    }
    // Stable: insertions at one index stay in patch order.
    replacements.sort_by_key(|r| r.0);
    Ok(replacements)
}

fn rebuild(source: &[SourceLine<'_>], replacements: &[Replacement<'_>]) -> String {
    let preferred = source.iter().find_map(|l| l.eol).unwrap_or(Eol::Lf);
    let mut out: Vec<SourceLine<'_>> = Vec::with_capacity(source.len());
    let mut next = 0; // first source line not yet copied or dropped
    for (index, old_len, new_lines) in replacements {
        // Replacements never overlap (chunks match in increasing order); clamp anyway.
        let index = (*index).clamp(next, source.len());
        out.extend_from_slice(&source[next..index]);
        out.extend(new_lines.iter().map(|text| SourceLine { text, eol: Some(preferred) }));
        next = (index + old_len).min(source.len());
    }
    out.extend_from_slice(&source[next..]);

    let mut text = String::with_capacity(out.iter().map(|l| l.text.len() + 2).sum());
    for line in out {
        text.push_str(line.text);
        // Updates always end with a terminator, also when an unterminated line moved inward.
        text.push_str(line.eol.unwrap_or(preferred).as_str());
    }
    text
}

#[cfg(test)]
mod tests;
