//! The parsed form of a V4A patch: file operations and their chunks, with patch line numbers.

/// A parsed patch: its file operations in patch order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Patch {
    pub hunks: Vec<Hunk>,
    /// Patch line of `*** End Patch` (where a patch with no operation wanted one).
    pub end_line: usize,
}

/// One file operation of a patch.
///
/// `line` is the 1-based line of the operation's header in the patch text as given (see
/// [`crate::parse`] for how lines are counted); errors use it to point at the operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hunk {
    /// `*** Add File: <path>`; `contents` is the `+` lines, each followed by `\n`.
    Add { path: String, contents: String, line: usize },
    /// `*** Delete File: <path>`.
    Delete { path: String, line: usize },
    /// `*** Update File: <path>`, optionally `*** Move to: <move_to>`, then at least one chunk.
    Update { path: String, move_to: Option<String>, chunks: Vec<UpdateChunk>, line: usize },
}

impl Hunk {
    /// The path named by the operation's header (for a move, the source).
    pub fn path(&self) -> &str {
        match self {
            Self::Add { path, .. } | Self::Delete { path, .. } | Self::Update { path, .. } => path,
        }
    }

    /// The patch line of the operation's header.
    pub fn line(&self) -> usize {
        match self {
            Self::Add { line, .. } | Self::Delete { line, .. } | Self::Update { line, .. } => *line,
        }
    }
}

/// One chunk of an Update: an optional `@@ <context>` header and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateChunk {
    /// Text after `@@ ` (a single line to find before the chunk), `None` for a bare `@@` or
    /// a first chunk without header.
    pub context: Option<String>,
    /// The chunk's lines in patch order; never empty after a successful parse.
    pub lines: Vec<ChunkLine>,
    /// The chunk was followed by `*** End of File`: it must match the file's last lines.
    pub end_of_file: bool,
    /// Patch line where the chunk starts (its `@@` line, or its first line without one).
    pub line: usize,
    /// Patch line of the chunk's first line (the one after its `@@`, if it has one); the
    /// chunk's lines follow it one per patch line.
    pub body_line: usize,
}

/// One line of an update chunk, without its one-character prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkLine {
    /// ` text` (or an empty line): present before and after.
    Context(String),
    /// `-text`: present before only.
    Delete(String),
    /// `+text`: present after only.
    Add(String),
}

impl UpdateChunk {
    /// The lines the chunk expects in the file: context and `-` lines, in order.
    pub fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                ChunkLine::Context(t) | ChunkLine::Delete(t) => Some(t.as_str()),
                ChunkLine::Add(_) => None,
            })
            .collect()
    }

    /// The lines the chunk leaves in their place: context and `+` lines, in order.
    pub fn new_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                ChunkLine::Context(t) | ChunkLine::Add(t) => Some(t.as_str()),
                ChunkLine::Delete(_) => None,
            })
            .collect()
    }

    /// For every context line, its index among the old lines and among the new lines.
    pub(crate) fn context_indices(&self) -> Vec<(usize, usize)> {
        let (mut old, mut new) = (0, 0);
        let mut out = Vec::new();
        for l in &self.lines {
            match l {
                ChunkLine::Context(_) => {
                    out.push((old, new));
                    old += 1;
                    new += 1;
                }
                ChunkLine::Delete(_) => old += 1,
                ChunkLine::Add(_) => new += 1,
            }
        }
        out
    }
}
