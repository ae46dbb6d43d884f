//! The V4A line state machine (v4a.md §3): operation markers, Add/Delete bodies and the
//! Update steps, building [`Hunk`]s with Codex's messages.

use super::{END_PATCH, LAST_LINE_MSG, invalid_patch, is_unified_hunk_header};
use crate::error::PatchError;
use crate::model::{ChunkLine, Hunk, UpdateChunk};

const ADD_FILE: &str = "*** Add File: ";
const DELETE_FILE: &str = "*** Delete File: ";
const UPDATE_FILE: &str = "*** Update File: ";
const MOVE_TO: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";
const ENVIRONMENT_ID: &str = "*** Environment ID:";

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

pub(super) struct Parser {
    pub(super) hunks: Vec<Hunk>,
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
    pub(super) fn new() -> Self {
        Parser { hunks: Vec::new(), mode: Mode::Started, update: None }
    }

    fn hunk_error(&self, line: usize, chunk: Option<usize>, message: String) -> PatchError {
        let file = match (self.mode, &self.update, self.hunks.last()) {
            (Mode::UpdateFile, Some(u), _) => Some(u.path.clone()),
            (Mode::AddFile | Mode::DeleteFile, _, Some(h)) => Some(h.path().to_string()),
            _ => None,
        };
        PatchError::InvalidHunk { line, file, chunk, message }
    }

    /// Handles one line that is not the final one.
    pub(super) fn line(&mut self, raw: &str, line_no: usize) -> Result<(), PatchError> {
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
                    Err(invalid_patch(LAST_LINE_MSG, line_no))
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
    pub(super) fn finish_op(
        &mut self,
        line_no: usize,
        raw: &str,
        end: bool,
    ) -> Result<(), PatchError> {
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
                body_line: line_no + 1,
            });
            return Ok(());
        }
        // 6. `*** End of File` anchors the last chunk.
        if rtrimmed == END_OF_FILE {
            return self.end_of_file(line_no);
        }
        // 7./8. Chunk lines.
        if let Some(l) = chunk_line(raw) {
            if u.chunks.is_empty() {
                u.chunks.push(UpdateChunk {
                    context: None,
                    lines: Vec::new(),
                    end_of_file: false,
                    line: line_no,
                    body_line: line_no,
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

    /// `*** End of File` (step 6): anchors the last chunk, which must have lines.
    fn end_of_file(&mut self, line_no: usize) -> Result<(), PatchError> {
        let Some(u) = self.update.as_mut() else { return Ok(()) };
        let n_chunks = u.chunks.len();
        match u.chunks.last_mut() {
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
        }
    }
}

/// A context, added or removed line of a chunk (steps 7 and 8); an empty line is context.
fn chunk_line(raw: &str) -> Option<ChunkLine> {
    if raw.is_empty() {
        Some(ChunkLine::Context(String::new()))
    } else if let Some(t) = raw.strip_prefix(' ') {
        Some(ChunkLine::Context(t.to_string()))
    } else if let Some(t) = raw.strip_prefix('+') {
        Some(ChunkLine::Add(t.to_string()))
    } else {
        raw.strip_prefix('-').map(|t| ChunkLine::Delete(t.to_string()))
    }
}
