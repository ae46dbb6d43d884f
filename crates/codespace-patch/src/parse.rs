//! V4A text → [`Patch`]: Codex's pre-processing (trim, boundaries, heredoc) and line state machine.
//!
//! Follows `shared/reference/v4a.md` §2–§4 (lenient mode, as Codex always runs), plus the
//! product's rule (d): unified diffs are refused with a message saying so.

use crate::error::PatchError;
use crate::model::Patch;

mod machine;
use machine::Parser;

const BEGIN_PATCH: &str = "*** Begin Patch";
pub(super) const END_PATCH: &str = "*** End Patch";

const FIRST_LINE_MSG: &str = "The first line of the patch must be '*** Begin Patch'";
pub(super) const LAST_LINE_MSG: &str = "The last line of the patch must be '*** End Patch'";

/// Parses a V4A patch.
///
/// Line numbers in errors and in the result are 1-based lines of `patch` exactly as given.
/// (Codex counts from the first non-blank line and skips a heredoc's `<<EOF` line; the two
/// agree unless the text starts with blank lines or a heredoc line.)
///
/// A patch with no operation parses; [`crate::plan`] refuses it.
pub fn parse(patch: &str) -> Result<Patch, PatchError> {
    let trimmed = patch.trim();
    if trimmed.is_empty() {
        return Err(PatchError::Empty);
    }
    // Lines removed by the leading trim, so numbers refer to the text the agent wrote.
    let leading = &patch[..patch.len() - patch.trim_start().len()];
    let mut first_line_no = leading.matches('\n').count() + 1;

    let mut lines: Vec<&str> = trimmed.lines().collect();
    if let Err(err) = check_boundaries(&lines, first_line_no) {
        if is_heredoc(&lines) {
            lines = lines[1..lines.len() - 1].to_vec();
            first_line_no += 1;
            check_boundaries(&lines, first_line_no)
                .map_err(|e| refine_boundary_error(e, &lines, first_line_no))?;
        } else {
            return Err(refine_boundary_error(err, &lines, first_line_no));
        }
    }

    let mut parser = Parser::new();
    let last = lines.len() - 1; // check_boundaries guarantees at least two lines
    let end_line = first_line_no + last;
    for (i, raw) in lines.iter().enumerate().skip(1) {
        let line_no = first_line_no + i;
        if i == last {
            // The final line always ends the patch (it trims to `*** End Patch`).
            parser.finish_op(line_no, raw, true)?;
            break;
        }
        // `str::lines` removed one `\r` before `\n`; Codex's state machine strips one more.
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        parser.line(line, line_no)?;
    }
    Ok(Patch { hunks: parser.hunks, end_line })
}

/// `first_line_no` is the patch line of `lines[0]`.
fn check_boundaries(lines: &[&str], first_line_no: usize) -> Result<(), PatchError> {
    let first = lines.first().map(|l| l.trim());
    let last = lines.last().map(|l| l.trim());
    if first.is_some_and(|f| f != BEGIN_PATCH) {
        return Err(invalid_patch(FIRST_LINE_MSG, first_line_no));
    }
    if lines.len() < 2 || last != Some(END_PATCH) {
        let last_no = first_line_no + lines.len().saturating_sub(1);
        return Err(invalid_patch(LAST_LINE_MSG, last_no));
    }
    Ok(())
}

/// Codex accepts a patch wrapped as `<<EOF` … `EOF` (only these delimiter spellings).
fn is_heredoc(lines: &[&str]) -> bool {
    lines.len() >= 4
        && matches!(lines[0], "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
        && lines.last().is_some_and(|l| l.ends_with("EOF"))
}

/// Turns a boundary error into a "this is a unified diff" error when the text is one, and a
/// missing first line into "not V4A" when no line is `*** Begin Patch`.
fn refine_boundary_error(err: PatchError, lines: &[&str], first_line_no: usize) -> PatchError {
    let found = lines.iter().enumerate().find(|(i, l)| {
        l.starts_with("diff --git ")
            || is_unified_hunk_header(l)
            || (l.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")))
    });
    match found {
        Some((i, l)) => {
            PatchError::UnifiedDiff { line: first_line_no + i, text: l.trim_end().to_string() }
        }
        None => match err {
            PatchError::InvalidPatch { message, line }
                if message == FIRST_LINE_MSG && !lines.iter().any(|l| l.trim() == BEGIN_PATCH) =>
            {
                PatchError::NotV4a { line }
            }
            err => err,
        },
    }
}

/// `@@ -a[,b] +c[,d] @@…`: a unified-diff hunk header.
pub(crate) fn is_unified_hunk_header(line: &str) -> bool {
    fn range(s: &str) -> Option<&str> {
        let digits = |s: &str| s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let n = digits(s);
        if n == 0 {
            return None;
        }
        let s = &s[n..];
        match s.strip_prefix(',') {
            Some(rest) if digits(rest) > 0 => Some(&rest[digits(rest)..]),
            Some(_) => None,
            None => Some(s),
        }
    }
    (|| {
        let s = line.strip_prefix("@@ -")?;
        let s = range(s)?.strip_prefix(" +")?;
        range(s)?.strip_prefix(" @@")
    })()
    .is_some()
}

pub(super) fn invalid_patch(message: &str, line: usize) -> PatchError {
    PatchError::InvalidPatch { message: message.to_string(), line }
}

#[cfg(test)]
mod tests;
