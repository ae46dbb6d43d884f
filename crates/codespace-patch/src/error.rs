//! Error types of parsing ([`PatchError`]) and planning ([`PlanError`]) and their stable kinds.
//!
//! Messages keep Codex's wording where Codex has one (agents know it) and add what Codex leaves
//! out: the file, the 1-based chunk within the file's Update, and the patch line.

use std::fmt;

use codespace_types::LineDifference;

use crate::diagnose::Nearest;

/// A stable, machine-readable class of error, for mapping to wire codes in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The patch text is not a valid V4A patch, or has no operation (wire: `INVALID_PATCH`).
    InvalidPatch,
    /// A path in the patch is absolute, empty, contains NUL or leaves the root with `..`
    /// (wire: `PATH_ESCAPE`).
    InvalidPath,
    /// A chunk's `@@` context line or expected lines are not in the file (wire: `INVALID_PATCH`;
    /// the client should read the file again and redo the patch).
    ContextMismatch,
    /// `*** Add File:` onto an existing path (wire: `ADD_FILE_EXISTS`).
    AddFileExists,
    /// `*** Move to:` onto an existing path (wire: `MOVE_DESTINATION_EXISTS`).
    MoveDestinationExists,
    /// Delete or Update of a path that does not exist (wire: `FILE_NOT_FOUND`).
    FileNotFound,
    /// Delete or Update of a directory (wire: e.g. `FILE_OPERATION_FAILED`).
    NotAFile,
    /// Update of a file that is not UTF-8 text (wire: e.g. `FILE_OPERATION_FAILED`).
    NotUtf8,
    /// A path would be both a file and a directory within one patch (wire:
    /// `PATH_NOT_DIRECTORY`).
    PathConflict,
    /// The caller's `lookup` failed; the caller knows what its error means.
    Lookup,
}

impl ErrorKind {
    /// A stable snake_case name, e.g. for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidPatch => "invalid_patch",
            Self::InvalidPath => "invalid_path",
            Self::ContextMismatch => "context_mismatch",
            Self::AddFileExists => "add_file_exists",
            Self::MoveDestinationExists => "move_destination_exists",
            Self::FileNotFound => "file_not_found",
            Self::NotAFile => "not_a_file",
            Self::NotUtf8 => "not_utf8",
            Self::PathConflict => "path_conflict",
            Self::Lookup => "lookup",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The patch text could not be parsed. Always [`ErrorKind::InvalidPatch`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum PatchError {
    /// The text is blank (Codex reports its last-line message).
    #[error(
        "invalid patch: The last line of the patch must be '*** End Patch': the patch text is \
         empty; send '*** Begin Patch', the operations, then '*** End Patch'"
    )]
    Empty,
    /// No line of the text is `*** Begin Patch` (Codex reports its first-line message).
    #[error(
        "invalid patch: The first line of the patch must be '*** Begin Patch': no line of this \
         text is '*** Begin Patch', so it is not a V4A patch"
    )]
    NotV4a { line: usize },
    /// The envelope is wrong (Codex `InvalidPatchError`): `line` is the first or last line
    /// its message is about, or the line after `*** End Patch` that is not blank.
    #[error("invalid patch: {message}")]
    InvalidPatch { message: String, line: usize },
    /// A line is wrong (Codex `InvalidHunkError`). `file` and `chunk` (1-based within the
    /// file's Update) say where the line sits, when it sits inside an operation.
    #[error("invalid hunk at line {line}{}, {message}", location(.file, .chunk))]
    InvalidHunk { line: usize, file: Option<String>, chunk: Option<usize>, message: String },
    /// The text is (or contains) a unified diff, which this server does not accept.
    #[error(
        "invalid patch: not a V4A patch: line {line} ('{text}') is unified-diff syntax. Only V4A \
         patches are accepted: '*** Begin Patch', then '*** Add File: <path>', \
         '*** Delete File: <path>' or '*** Update File: <path>' sections (update lines start \
         with ' ', '-' or '+', chunks are introduced by '@@' or '@@ <a line of the file>'), \
         then '*** End Patch'"
    )]
    UnifiedDiff { line: usize, text: String },
}

impl PatchError {
    /// Always [`ErrorKind::InvalidPatch`].
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidPatch
    }

    /// The patch line at fault, when one is.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::Empty => None,
            Self::NotV4a { line }
            | Self::InvalidPatch { line, .. }
            | Self::InvalidHunk { line, .. }
            | Self::UnifiedDiff { line, .. } => Some(*line),
        }
    }

    /// The file the faulty line belongs to, when it sits inside an operation.
    pub fn path(&self) -> Option<&str> {
        match self {
            Self::InvalidHunk { file, .. } => file.as_deref(),
            Self::Empty
            | Self::NotV4a { .. }
            | Self::InvalidPatch { .. }
            | Self::UnifiedDiff { .. } => None,
        }
    }

    /// The 1-based chunk of the file's Update the faulty line belongs to, when it does.
    pub fn chunk(&self) -> Option<usize> {
        match self {
            Self::InvalidHunk { chunk, .. } => *chunk,
            Self::Empty
            | Self::NotV4a { .. }
            | Self::InvalidPatch { .. }
            | Self::UnifiedDiff { .. } => None,
        }
    }
}

fn location(file: &Option<String>, chunk: &Option<usize>) -> String {
    match (file, chunk) {
        (Some(f), Some(c)) => format!(" (file '{f}', chunk {c})"),
        (Some(f), None) => format!(" (file '{f}')"),
        (None, _) => String::new(),
    }
}

/// Which operation of the patch an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Operation {
    Add,
    Delete,
    Update,
    /// The `*** Move to:` destination of an Update.
    MoveTo,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Add => "Add File",
            Self::Delete => "Delete File",
            Self::Update => "Update File",
            Self::MoveTo => "Move to",
        })
    }
}

/// The patch cannot be applied to the tree `lookup` describes. Nothing has been written.
///
/// Paths are the normalised ones (see [`crate::plan`]); `line` is the patch line of the
/// operation's header, or of the chunk for `chunk` errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum PlanError<E> {
    /// `line`: the `*** End Patch` line.
    #[error(
        "invalid patch: No files were modified: the patch has no '*** Add File:', \
         '*** Delete File:' or '*** Update File:' operation"
    )]
    NoOperations { line: usize },
    #[error("{op} '{path}' (patch line {line}): invalid path: {reason}")]
    InvalidPath { op: Operation, path: String, line: usize, reason: std::borrow::Cow<'static, str> },
    /// `identical`: the existing file already holds exactly the content to add.
    #[error(
        "Add File '{path}' (patch line {line}): {} already exists at this path; Add File never \
         overwrites: {}",
        what(*.directory),
        if *.identical { "it already holds exactly this content, so the patch was already applied" }
        else { "read the file and use '*** Update File:' instead" }
    )]
    AddFileExists { path: String, line: usize, directory: bool, identical: bool },
    #[error(
        "Move to '{path}' (Update File '{from}', patch line {line}): {} already exists at the \
         destination; a move never overwrites",
        what(*.directory)
    )]
    MoveDestinationExists { path: String, from: String, line: usize, directory: bool },
    #[error("{op} '{path}' (patch line {line}): file not found")]
    FileNotFound { op: Operation, path: String, line: usize },
    #[error("{op} '{path}' (patch line {line}): is a directory, not a file")]
    NotAFile { op: Operation, path: String, line: usize },
    #[error(
        "Update File '{path}' (patch line {line}): the file is not UTF-8 text; it cannot be patched"
    )]
    NotUtf8 { path: String, line: usize },
    #[error(
        "{op} '{path}' (patch line {line}): '{ancestor}' is a file (in the tree or earlier in \
         this patch), so it cannot also be used as a directory in the same patch"
    )]
    PathConflict { op: Operation, path: String, ancestor: String, line: usize },
    #[error(
        "Failed to find context '{context}' in {path} (chunk {chunk}, patch line {line}){}{}",
        context_hint(.context),
        nearest_hint(.nearest.as_deref())
    )]
    ContextNotFound {
        path: String,
        chunk: usize,
        line: usize,
        context: String,
        nearest: Option<Box<Nearest>>,
    },
    #[error(
        "Failed to find expected lines in {path} (chunk {chunk}, patch line {line}{}){}:\n{}",
        eof_hint(*.end_of_file),
        nearest_hint(.nearest.as_deref()),
        .expected.join("\n")
    )]
    LinesNotFound {
        path: String,
        chunk: usize,
        line: usize,
        /// The chunk's context and `-` lines, as written in the patch.
        expected: Vec<String>,
        end_of_file: bool,
        nearest: Option<Box<Nearest>>,
    },
    /// The chunk's lines are not in the file, but its new lines (context and `+`) are, where
    /// the old ones would be.
    #[error(
        "Update File '{path}' (chunk {chunk}, patch line {line}): this chunk's change is already \
         in the file: its context and '+' lines stand where its '-' lines would be, so the \
         patch (or this part of it) was already applied"
    )]
    AlreadyApplied { path: String, chunk: usize, line: usize },
    #[error("{op} '{path}' (patch line {line}): {source}")]
    Lookup {
        op: Operation,
        path: String,
        line: usize,
        #[source]
        source: E,
    },
}

impl<E> PlanError<E> {
    /// The stable kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::NoOperations { .. } => ErrorKind::InvalidPatch,
            Self::InvalidPath { .. } => ErrorKind::InvalidPath,
            Self::AddFileExists { .. } => ErrorKind::AddFileExists,
            Self::MoveDestinationExists { .. } => ErrorKind::MoveDestinationExists,
            Self::FileNotFound { .. } => ErrorKind::FileNotFound,
            Self::NotAFile { .. } => ErrorKind::NotAFile,
            Self::NotUtf8 { .. } => ErrorKind::NotUtf8,
            Self::PathConflict { .. } => ErrorKind::PathConflict,
            Self::ContextNotFound { .. }
            | Self::LinesNotFound { .. }
            | Self::AlreadyApplied { .. } => ErrorKind::ContextMismatch,
            Self::Lookup { .. } => ErrorKind::Lookup,
        }
    }

    /// The path the error is about, if any.
    pub fn path(&self) -> Option<&str> {
        match self {
            Self::NoOperations { .. } => None,
            Self::InvalidPath { path, .. }
            | Self::AddFileExists { path, .. }
            | Self::MoveDestinationExists { path, .. }
            | Self::FileNotFound { path, .. }
            | Self::NotAFile { path, .. }
            | Self::NotUtf8 { path, .. }
            | Self::PathConflict { path, .. }
            | Self::ContextNotFound { path, .. }
            | Self::LinesNotFound { path, .. }
            | Self::AlreadyApplied { path, .. }
            | Self::Lookup { path, .. } => Some(path),
        }
    }

    /// The 1-based patch line at fault: the line of the nearest candidate's expected line
    /// when there is one, else the chunk's or the operation's line.
    pub fn patch_line(&self) -> usize {
        match self {
            Self::ContextNotFound { nearest: Some(n), .. }
            | Self::LinesNotFound { nearest: Some(n), .. } => n.patch_line,
            Self::NoOperations { line }
            | Self::InvalidPath { line, .. }
            | Self::AddFileExists { line, .. }
            | Self::MoveDestinationExists { line, .. }
            | Self::FileNotFound { line, .. }
            | Self::NotAFile { line, .. }
            | Self::NotUtf8 { line, .. }
            | Self::PathConflict { line, .. }
            | Self::ContextNotFound { line, .. }
            | Self::LinesNotFound { line, .. }
            | Self::AlreadyApplied { line, .. }
            | Self::Lookup { line, .. } => *line,
        }
    }

    /// The 1-based chunk of the file's Update the error is about, when it is about one.
    pub fn chunk(&self) -> Option<usize> {
        match self {
            Self::ContextNotFound { chunk, .. }
            | Self::LinesNotFound { chunk, .. }
            | Self::AlreadyApplied { chunk, .. } => Some(*chunk),
            Self::NoOperations { .. }
            | Self::InvalidPath { .. }
            | Self::AddFileExists { .. }
            | Self::MoveDestinationExists { .. }
            | Self::FileNotFound { .. }
            | Self::NotAFile { .. }
            | Self::NotUtf8 { .. }
            | Self::PathConflict { .. }
            | Self::Lookup { .. } => None,
        }
    }

    /// The file line nearest to what a chunk expected, for a chunk that did not match.
    pub fn nearest(&self) -> Option<&Nearest> {
        match self {
            Self::ContextNotFound { nearest, .. } | Self::LinesNotFound { nearest, .. } => {
                nearest.as_deref()
            }
            Self::NoOperations { .. }
            | Self::InvalidPath { .. }
            | Self::AddFileExists { .. }
            | Self::MoveDestinationExists { .. }
            | Self::FileNotFound { .. }
            | Self::NotAFile { .. }
            | Self::NotUtf8 { .. }
            | Self::PathConflict { .. }
            | Self::AlreadyApplied { .. }
            | Self::Lookup { .. } => None,
        }
    }
}

fn what(directory: bool) -> &'static str {
    if directory { "a directory" } else { "a file" }
}

fn eof_hint(end_of_file: bool) -> &'static str {
    if end_of_file {
        "; the chunk ends with '*** End of File', so these must be the last lines of the file"
    } else {
        ""
    }
}

fn context_hint(context: &str) -> &'static str {
    if crate::parse::is_unified_hunk_header(&format!("@@ {context}")) {
        "; '@@ -l,n +l,n @@' is a unified-diff hunk header, which V4A does not use: write '@@' \
         alone, or '@@ <an exact line of the file above the change>'"
    } else {
        ""
    }
}

fn nearest_hint(nearest: Option<&Nearest>) -> String {
    let Some(n) = nearest else { return String::new() };
    let (line, text, p) = (n.line, &n.text, n.patch_line);
    match (n.differs, &n.token) {
        (LineDifference::Position, _) => format!(
            "; these lines are at line {line} of the file, where this chunk may not match: \
             above an earlier chunk's lines, or not the last lines of the file though the chunk \
             ends with '*** End of File'"
        ),
        (LineDifference::Token, Some(t)) => format!(
            "; nearest: line {line} of the file ('{text}') differs from patch line {p} in one \
             token: '{}' in the patch, '{}' in the file",
            t.expected, t.found
        ),
        (LineDifference::Whitespace, _) => format!(
            "; nearest: line {line} of the file ('{text}') differs from patch line {p} only in \
             whitespace inside the line"
        ),
        (LineDifference::Indentation, _) => format!(
            "; nearest: line {line} of the file ('{text}') differs from patch line {p} only in \
             indentation and whitespace"
        ),
        (LineDifference::Token | LineDifference::Text, _) => {
            format!("; nearest: line {line} of the file ('{text}') is similar to patch line {p}")
        }
    }
}
