//! V4A text → [`Patch`]: Codex's pre-processing (trim, boundaries, heredoc) and line state machine.
//!
//! Follows `shared/reference/v4a.md` §2–§4 (lenient mode, as Codex always runs), plus the
//! product's rule (d): unified diffs are refused with a message saying so.

use crate::error::PatchError;
use crate::model::{ChunkLine, Hunk, Patch, UpdateChunk};

const BEGIN_PATCH: &str = "*** Begin Patch";
const END_PATCH: &str = "*** End Patch";
const ADD_FILE: &str = "*** Add File: ";
const DELETE_FILE: &str = "*** Delete File: ";
const UPDATE_FILE: &str = "*** Update File: ";
const MOVE_TO: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";
const ENVIRONMENT_ID: &str = "*** Environment ID:";

const FIRST_LINE_MSG: &str = "The first line of the patch must be '*** Begin Patch'";
const LAST_LINE_MSG: &str = "The last line of the patch must be '*** End Patch'";

/// Parses a V4A patch.
///
/// Line numbers in errors and in the result are 1-based lines of `patch` exactly as given.
/// (Codex counts from the first non-blank line and skips a heredoc's `<<EOF` line; the two
/// agree unless the text starts with blank lines or a heredoc line.)
///
/// A patch with no operation parses; [`crate::plan`] refuses it.
pub fn parse(patch: &str) -> Result<Patch, PatchError> {
    let trimmed = patch.trim();
    // Lines removed by the leading trim, so numbers refer to the text the agent wrote.
    let leading = &patch[..patch.len() - patch.trim_start().len()];
    let mut first_line_no = leading.matches('\n').count() + 1;

    let mut lines: Vec<&str> = trimmed.lines().collect();
    if let Err(err) = check_boundaries(&lines) {
        if is_heredoc(&lines) {
            lines = lines[1..lines.len() - 1].to_vec();
            first_line_no += 1;
            check_boundaries(&lines)
                .map_err(|e| refine_boundary_error(e, &lines, first_line_no))?;
        } else {
            return Err(refine_boundary_error(err, &lines, first_line_no));
        }
    }

    let mut parser = Parser { hunks: Vec::new(), mode: Mode::Started, update: None };
    let last = lines.len() - 1; // check_boundaries guarantees at least two lines
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
    Ok(Patch { hunks: parser.hunks })
}

fn check_boundaries(lines: &[&str]) -> Result<(), PatchError> {
    let first = lines.first().map(|l| l.trim());
    let last = lines.last().map(|l| l.trim());
    if first.is_some_and(|f| f != BEGIN_PATCH) {
        return Err(invalid_patch(FIRST_LINE_MSG));
    }
    if lines.len() < 2 || last != Some(END_PATCH) {
        return Err(invalid_patch(LAST_LINE_MSG));
    }
    Ok(())
}

/// Codex accepts a patch wrapped as `<<EOF` … `EOF` (only these delimiter spellings).
fn is_heredoc(lines: &[&str]) -> bool {
    lines.len() >= 4
        && matches!(lines[0], "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
        && lines.last().is_some_and(|l| l.ends_with("EOF"))
}

/// Turns a boundary error into a "this is a unified diff" error when the text is one.
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
        None => err,
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

fn invalid_patch(message: &str) -> PatchError {
    PatchError::InvalidPatch { message: message.to_string() }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// After `*** Begin Patch`, before any operation.
    Started,
    AddFile,
    DeleteFile,
    UpdateFile,
    Ended,
}

/// The Update being built (pushed to `hunks` when the next marker or the end arrives).
struct UpdateBuilder {
    path: String,
    move_to: Option<String>,
    chunks: Vec<UpdateChunk>,
    line: usize,
}

struct Parser {
    hunks: Vec<Hunk>,
    mode: Mode,
    update: Option<UpdateBuilder>,
}

enum Marker<'a> {
    End,
    Add(&'a str),
    Delete(&'a str),
    Update(&'a str),
}

fn marker(text: &str) -> Option<Marker<'_>> {
    if text == END_PATCH {
        Some(Marker::End)
    } else if let Some(p) = text.strip_prefix(ADD_FILE) {
        Some(Marker::Add(p))
    } else if let Some(p) = text.strip_prefix(DELETE_FILE) {
        Some(Marker::Delete(p))
    } else {
        text.strip_prefix(UPDATE_FILE).map(Marker::Update)
    }
}

/// `@@` or `@@ …` (on the right-trimmed line).
fn is_chunk_header(rtrimmed: &str) -> bool {
    rtrimmed == "@@" || rtrimmed.starts_with("@@ ")
}

fn not_a_header(trimmed: &str, line: usize, file: Option<String>) -> PatchError {
    PatchError::InvalidHunk {
        line,
        file,
        chunk: None,
        message: format!(
            "'{trimmed}' is not a valid hunk header. Valid hunk headers: '*** Add File: {{path}}', \
             '*** Delete File: {{path}}', '*** Update File: {{path}}'"
        ),
    }
}

fn unexpected_line(raw: &str) -> String {
    format!(
        "Unexpected line found in update hunk: '{raw}'. Every line should start with ' ' \
         (context line), '+' (added line), or '-' (removed line)"
    )
}

impl Parser {
    fn hunk_error(&self, line: usize, chunk: Option<usize>, message: String) -> PatchError {
        let file = match (self.mode, &self.update, self.hunks.last()) {
            (Mode::UpdateFile, Some(u), _) => Some(u.path.clone()),
            (Mode::AddFile | Mode::DeleteFile, _, Some(h)) => Some(h.path().to_string()),
            _ => None,
        };
        PatchError::InvalidHunk { line, file, chunk, message }
    }

    /// Handles one line that is not the final one.
    fn line(&mut self, raw: &str, line_no: usize) -> Result<(), PatchError> {
        let trimmed = raw.trim();
        match self.mode {
            Mode::Started => {
                if trimmed.starts_with(ENVIRONMENT_ID) {
                    // Codex selects an execution environment with it; this server has one.
                    return Err(self.hunk_error(
                        line_no,
                        None,
                        format!("'{trimmed}' is not supported here: remove the line"),
                    ));
                }
                if self.try_marker(trimmed, raw, line_no)? {
                    return Ok(());
                }
                if trimmed.starts_with("--- ")
                    || trimmed.starts_with("+++ ")
                    || trimmed.starts_with("diff --git ")
                    || is_unified_hunk_header(trimmed)
                {
                    return Err(PatchError::UnifiedDiff {
                        line: line_no,
                        text: trimmed.to_string(),
                    });
                }
                Err(not_a_header(trimmed, line_no, None))
            }
            Mode::AddFile => {
                if self.try_marker(trimmed, raw, line_no)? {
                    return Ok(());
                }
                if let (Some(text), Some(Hunk::Add { contents, .. })) =
                    (raw.strip_prefix('+'), self.hunks.last_mut())
                {
                    contents.push_str(text);
                    contents.push('\n');
                    return Ok(());
                }
                let file = self.hunks.last().map(|h| h.path().to_string());
                Err(not_a_header(trimmed, line_no, file))
            }
            Mode::DeleteFile => {
                if self.try_marker(trimmed, raw, line_no)? {
                    return Ok(());
                }
                let file = self.hunks.last().map(|h| h.path().to_string());
                Err(not_a_header(trimmed, line_no, file))
            }
            Mode::UpdateFile => self.update_line(raw, line_no),
            Mode::Ended => {
                if trimmed.is_empty() {
                    Ok(())
                } else {
                    Err(invalid_patch(LAST_LINE_MSG))
                }
            }
        }
    }

    /// Recognises an operation marker or `*** End Patch` on `text`; `raw` is for messages.
    fn try_marker(&mut self, text: &str, raw: &str, line_no: usize) -> Result<bool, PatchError> {
        let Some(m) = marker(text) else { return Ok(false) };
        self.finish_op(line_no, raw, matches!(m, Marker::End))?;
        match m {
            Marker::End => {}
            Marker::Add(path) => {
                self.hunks.push(Hunk::Add {
                    path: path.to_string(),
                    contents: String::new(),
                    line: line_no,
                });
                self.mode = Mode::AddFile;
            }
            Marker::Delete(path) => {
                self.hunks.push(Hunk::Delete { path: path.to_string(), line: line_no });
                self.mode = Mode::DeleteFile;
            }
            Marker::Update(path) => {
                self.update = Some(UpdateBuilder {
                    path: path.to_string(),
                    move_to: None,
                    chunks: Vec::new(),
                    line: line_no,
                });
                self.mode = Mode::UpdateFile;
            }
        }
        Ok(true)
    }

    /// Closes the current operation before a marker (`end` for `*** End Patch`), applying
    /// Codex's emptiness rules to an Update.
    fn finish_op(&mut self, line_no: usize, raw: &str, end: bool) -> Result<(), PatchError> {
        if self.mode == Mode::UpdateFile {
            let Some(u) = &self.update else { return Ok(()) };
            match u.chunks.last() {
                None => {
                    return Err(PatchError::InvalidHunk {
                        line: u.line,
                        file: Some(u.path.clone()),
                        chunk: None,
                        message: format!("Update file hunk for path '{}' is empty", u.path),
                    });
                }
                Some(c) if c.lines.is_empty() => {
                    let message = if end {
                        "Update hunk does not contain any lines".to_string()
                    } else {
                        unexpected_line(raw)
                    };
                    return Err(self.hunk_error(line_no, Some(u.chunks.len()), message));
                }
                Some(_) => {}
            }
            if let Some(u) = self.update.take() {
                self.hunks.push(Hunk::Update {
                    path: u.path,
                    move_to: u.move_to,
                    chunks: u.chunks,
                    line: u.line,
                });
            }
        }
        self.mode = Mode::Ended;
        Ok(())
    }

    /// One line inside an Update (v4a.md §3.2, `UpdateFile` steps 1–9).
    fn update_line(&mut self, raw: &str, line_no: usize) -> Result<(), PatchError> {
        let rtrimmed = raw.trim_end();
        // 1. Markers, in column 0 only.
        if self.try_marker(rtrimmed, raw, line_no)? {
            return Ok(());
        }
        let Some(u) = self.update.as_mut() else { return Ok(()) };
        let n_chunks = u.chunks.len();
        let last_eof = u.chunks.last().is_some_and(|c| c.end_of_file);
        let last_empty = u.chunks.last().map(|c| c.lines.is_empty());

        // 2. After `*** End of File` only blank lines or a new chunk header may follow.
        if last_eof {
            if rtrimmed.is_empty() {
                return Ok(());
            }
            if !is_chunk_header(rtrimmed) {
                let msg =
                    format!("Expected update hunk to start with a @@ context marker, got: '{raw}'");
                return Err(self.hunk_error(line_no, Some(n_chunks), msg));
            }
        }
        // 3. `*** Move to:` directly after the header, once.
        if n_chunks == 0
            && u.move_to.is_none()
            && let Some(dest) = rtrimmed.strip_prefix(MOVE_TO)
        {
            u.move_to = Some(dest.to_string());
            return Ok(());
        }
        // 4./5. Chunk headers; stacked headers are an error.
        if is_chunk_header(rtrimmed) {
            if last_empty == Some(true) {
                return Err(self.hunk_error(line_no, Some(n_chunks), unexpected_line(raw)));
            }
            let context = rtrimmed.strip_prefix("@@ ").map(str::to_string);
            u.chunks.push(UpdateChunk {
                context,
                lines: Vec::new(),
                end_of_file: false,
                line: line_no,
            });
            return Ok(());
        }
        // 6. `*** End of File` anchors the last chunk.
        if rtrimmed == END_OF_FILE {
            return match u.chunks.last_mut() {
                None => Ok(()),
                Some(c) if c.lines.is_empty() => Err(self.hunk_error(
                    line_no,
                    Some(n_chunks),
                    "Update hunk does not contain any lines".to_string(),
                )),
                Some(c) => {
                    c.end_of_file = true;
                    Ok(())
                }
            };
        }
        // 7./8. Chunk lines.
        let parsed = if raw.is_empty() {
            Some(ChunkLine::Context(String::new()))
        } else if let Some(t) = raw.strip_prefix(' ') {
            Some(ChunkLine::Context(t.to_string()))
        } else if let Some(t) = raw.strip_prefix('+') {
            Some(ChunkLine::Add(t.to_string()))
        } else {
            raw.strip_prefix('-').map(|t| ChunkLine::Delete(t.to_string()))
        };
        if let Some(l) = parsed {
            if u.chunks.is_empty() {
                u.chunks.push(UpdateChunk {
                    context: None,
                    lines: Vec::new(),
                    end_of_file: false,
                    line: line_no,
                });
            }
            if let Some(c) = u.chunks.last_mut() {
                c.lines.push(l);
            }
            return Ok(());
        }
        // 9. Anything else.
        let (chunk, msg) = if last_empty == Some(false) {
            (
                Some(n_chunks),
                format!("Expected update hunk to start with a @@ context marker, got: '{raw}'"),
            )
        } else {
            (last_empty.map(|_| n_chunks), unexpected_line(raw))
        };
        Err(self.hunk_error(line_no, chunk, msg))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk_msg(patch: &str) -> (usize, String) {
        match parse(patch) {
            Err(PatchError::InvalidHunk { line, message, .. }) => (line, message),
            other => panic!("expected a hunk error, got {other:?}"),
        }
    }

    #[test]
    fn boundaries() {
        assert_eq!(parse("").unwrap_err(), invalid_patch(LAST_LINE_MSG));
        assert_eq!(parse("hello\n*** End Patch").unwrap_err(), invalid_patch(FIRST_LINE_MSG));
        assert_eq!(parse("*** Begin Patch").unwrap_err(), invalid_patch(LAST_LINE_MSG));
        assert_eq!(parse("*** Begin Patch\n*** End Patch\n").unwrap(), Patch::default());
        assert_eq!(parse(" *** Begin Patch \n\t*** End Patch  ").unwrap(), Patch::default());
    }

    #[test]
    fn heredoc_only_literal_eof() {
        let body = "*** Begin Patch\n*** Delete File: a\n*** End Patch\n";
        for open in ["<<EOF", "<<'EOF'", "<<\"EOF\""] {
            let p = parse(&format!("{open}\n{body}EOF\n")).unwrap();
            assert_eq!(p.hunks, vec![Hunk::Delete { path: "a".into(), line: 3 }]);
        }
        for open in ["<<END", "<<'EOF\"", "cat <<EOF"] {
            assert_eq!(
                parse(&format!("{open}\n{body}EOF\n")).unwrap_err(),
                invalid_patch(FIRST_LINE_MSG)
            );
        }
        // Fewer than four lines: no heredoc leniency.
        assert_eq!(
            parse("<<EOF\n*** Begin Patch\nEOF").unwrap_err(),
            invalid_patch(FIRST_LINE_MSG)
        );
    }

    #[test]
    fn line_numbers_count_the_text_as_given() {
        let (line, msg) = hunk_msg("\n\n*** Begin Patch\n*** Frobnicate\n*** End Patch");
        assert_eq!(line, 4);
        assert!(msg.starts_with("'*** Frobnicate' is not a valid hunk header"));
    }

    #[test]
    fn update_shapes() {
        let p = parse(
            "*** Begin Patch\n*** Update File: f\n*** Move to: g\n ctx\n-old\n+new\n\n@@ fn x  \n \
             a\n*** End of File\n\n*** End Patch",
        )
        .unwrap();
        let Hunk::Update { path, move_to, chunks, line } = &p.hunks[0] else { panic!() };
        assert_eq!((path.as_str(), move_to.as_deref(), *line), ("f", Some("g"), 2));
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].old_lines(), vec!["ctx", "old", ""]);
        assert_eq!(chunks[0].new_lines(), vec!["ctx", "new", ""]);
        assert_eq!(chunks[0].line, 4);
        assert_eq!(chunks[1].context.as_deref(), Some("fn x"));
        assert!(chunks[1].end_of_file && !chunks[0].end_of_file);
        assert_eq!(chunks[1].line, 8);
    }

    #[test]
    fn update_errors() {
        let (l, m) = hunk_msg("*** Begin Patch\n*** Update File: f\n*** End Patch");
        assert_eq!((l, m.as_str()), (2, "Update file hunk for path 'f' is empty"));
        let (l, m) = hunk_msg("*** Begin Patch\n*** Update File: f\n*** Move to: g\n*** End Patch");
        assert_eq!((l, m.as_str()), (2, "Update file hunk for path 'f' is empty"));
        let (l, m) = hunk_msg("*** Begin Patch\n*** Update File: f\n@@\n*** End Patch");
        assert_eq!((l, m.as_str()), (4, "Update hunk does not contain any lines"));
        let (l, m) =
            hunk_msg("*** Begin Patch\n*** Update File: f\n@@\n*** End of File\n*** End Patch");
        assert_eq!((l, m.as_str()), (4, "Update hunk does not contain any lines"));
        let (l, m) =
            hunk_msg("*** Begin Patch\n*** Update File: f\n@@\n*** Delete File: g\n*** End Patch");
        assert_eq!(l, 4);
        assert!(m.starts_with("Unexpected line found in update hunk: '*** Delete File: g'"));
        let (l, m) = hunk_msg("*** Begin Patch\n*** Update File: f\n@@ a\n@@ b\n-x\n*** End Patch");
        assert_eq!(l, 4);
        assert!(m.starts_with("Unexpected line found in update hunk: '@@ b'"));
        let (l, m) =
            hunk_msg("*** Begin Patch\n*** Update File: f\n-x\n*** End of File\n-y\n*** End Patch");
        assert_eq!(
            (l, m.as_str()),
            (5, "Expected update hunk to start with a @@ context marker, got: '-y'")
        );
        let (l, m) = hunk_msg("*** Begin Patch\n*** Update File: f\n-x\n\tz\n*** End Patch");
        assert_eq!(
            (l, m.as_str()),
            (4, "Expected update hunk to start with a @@ context marker, got: '\tz'")
        );
        let (l, m) = hunk_msg(
            "*** Begin Patch\n*** Update File: f\n*** Move to: g\n*** Move to: h\n*** End Patch",
        );
        assert_eq!(l, 4);
        assert!(m.starts_with("Unexpected line found in update hunk: '*** Move to: h'"));
        let (l, m) = hunk_msg("*** Begin Patch\n*** Add File: f\n+a\nb\n*** End Patch");
        assert_eq!(l, 4);
        assert!(m.starts_with("'b' is not a valid hunk header"));
    }

    #[test]
    fn ended_patch_accepts_only_blank_lines() {
        assert!(parse("*** Begin Patch\n*** End Patch\n\n  \n*** End Patch").is_ok());
        assert_eq!(
            parse("*** Begin Patch\n*** End Patch\n*** Delete File: a\n*** End Patch").unwrap_err(),
            invalid_patch(LAST_LINE_MSG)
        );
    }

    #[test]
    fn unified_diffs_are_named() {
        let e = parse("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n").unwrap_err();
        assert_eq!(e, PatchError::UnifiedDiff { line: 1, text: "--- a/x".into() });
        assert!(e.to_string().contains("not a V4A patch"));
        let e = parse("*** Begin Patch\n--- a/x\n+++ b/x\n*** End Patch").unwrap_err();
        assert_eq!(e.line(), Some(2));
        assert!(matches!(e, PatchError::UnifiedDiff { .. }));
        assert!(is_unified_hunk_header("@@ -1 +1 @@"));
        assert!(is_unified_hunk_header("@@ -10,3 +12,0 @@ fn x"));
        assert!(!is_unified_hunk_header("@@ -1,2 +1, @@"));
        assert!(!is_unified_hunk_header("@@ fn x"));
    }

    #[test]
    fn environment_id_is_refused() {
        let (l, m) = hunk_msg("*** Begin Patch\n*** Environment ID: x\n*** End Patch");
        assert_eq!(l, 2);
        assert!(m.contains("not supported"));
    }
}
