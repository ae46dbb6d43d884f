//! Simulating a parsed patch over an in-memory overlay of the caller's tree, with the product's
//! refusals, and reporting the net change of every affected file.

use std::collections::{HashMap, HashSet};

use codespace_types::ChangeKind;

use crate::error::{Operation, PlanError};
use crate::model::{Hunk, Patch, UpdateChunk};
use crate::path::{ancestors, normalise};
use crate::update::{ChunkFailure, apply_chunks};

/// What the caller's filesystem says is at a path. The caller validates paths: symlinks,
/// special files and escapes are the caller's errors, returned from `lookup`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    File(Vec<u8>),
    Absent,
    Directory,
}

/// The net effect of a patch: one change per affected file, in first-touched order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    pub changes: Vec<PlannedChange>,
}

/// The net change of one file path (normalised, `/`-separated, relative to the root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedChange {
    pub path: String,
    pub kind: ChangeKind,
    /// Content before the patch; `None` = absent.
    pub before: Option<Vec<u8>>,
    /// Content after the patch; `None` = deleted.
    pub after: Option<Vec<u8>>,
    /// For [`ChangeKind::Move`]: the source, which has its own [`ChangeKind::Delete`] entry.
    pub move_from: Option<String>,
    /// The last operation of the patch that touched the path (for a move destination,
    /// [`Operation::MoveTo`]), and the patch line of its header: what a later refusal of
    /// this change names.
    pub op: Operation,
    pub line: usize,
}

/// Simulates `patch` in order over the tree `lookup` describes and returns the net changes.
///
/// All checks happen here, so a caller that writes only after `plan` succeeded never writes a
/// refused patch. Paths are normalised lexically first (`./a//b` → `a/b`; `..` pops a
/// segment); absolute paths, NUL, and `..` above the root are [`PlanError::InvalidPath`].
///
/// `lookup` receives normalised paths and is called at most once per distinct path: for the
/// file each operation reads, deletes or creates, and, for a created file (Add, Move
/// destination), for its ancestor directories from the outermost down. A path whose state
/// follows from an earlier answer (beneath an absent directory) is not looked up.
///
/// Product rules on top of Codex: Add or Move onto any existing path is refused; a path that is
/// a file at any point of the patch (in the tree or created by it) cannot be used as a
/// directory in the same patch, so the changes never depend on their write order.
pub fn plan<E>(
    patch: &Patch,
    lookup: impl FnMut(&str) -> Result<Entry, E>,
) -> Result<Plan, PlanError<E>> {
    if patch.hunks.is_empty() {
        return Err(PlanError::NoOperations { line: patch.end_line });
    }
    let mut overlay = Overlay { lookup, slots: HashMap::new(), order: Vec::new() };
    for hunk in &patch.hunks {
        overlay.apply(hunk)?;
    }
    Ok(overlay.finish())
}

/// One path's state: as the caller reported it, and as the patch has left it so far.
struct Slot {
    base: Entry,
    current: Entry,
    /// The path is or was a file during this patch; it may never serve as a directory.
    ever_file: bool,
    /// The original source of the content, when the file was last written by a move.
    moved_from: Option<String>,
    touched: bool,
    /// The last operation that touched the path, and its patch line.
    by: (Operation, usize),
}

struct Overlay<F> {
    lookup: F,
    slots: HashMap<String, Slot>,
    /// Paths touched by operations, in first-touched order.
    order: Vec<String>,
}

fn norm<E>(op: Operation, path: &str, line: usize) -> Result<String, PlanError<E>> {
    normalise(path).map_err(|reason| PlanError::InvalidPath {
        op,
        path: path.to_string(),
        line,
        reason: reason.into(),
    })
}

impl<F, E> Overlay<F>
where
    F: FnMut(&str) -> Result<Entry, E>,
{
    fn apply(&mut self, hunk: &Hunk) -> Result<(), PlanError<E>> {
        match hunk {
            Hunk::Add { path, contents, line } => {
                let p = norm(Operation::Add, path, *line)?;
                self.create(Operation::Add, &p, *line, Err(contents.as_bytes()))?;
                self.write(&p, contents.as_bytes().to_vec(), None);
            }
            Hunk::Delete { path, line } => {
                let p = norm(Operation::Delete, path, *line)?;
                self.resolve_existing(Operation::Delete, &p, *line)?;
                self.require_file(Operation::Delete, &p, *line)?;
                if let Some(s) = self.slots.get_mut(&p) {
                    s.current = Entry::Absent;
                    s.moved_from = None;
                }
            }
            Hunk::Update { path, move_to, chunks, line } => {
                let p = norm(Operation::Update, path, *line)?;
                let dest = match move_to {
                    Some(d) => Some(norm(Operation::MoveTo, d, *line)?),
                    None => None,
                };
                self.resolve_existing(Operation::Update, &p, *line)?;
                let new = self.updated_content(&p, chunks, *line)?;
                match dest {
                    None => {
                        if let Some(s) = self.slots.get_mut(&p) {
                            s.current = Entry::File(new);
                        }
                    }
                    Some(d) => {
                        self.create(Operation::MoveTo, &d, *line, Ok(&p))?;
                        let mut origin = Some(p.clone());
                        if let Some(s) = self.slots.get_mut(&p) {
                            s.current = Entry::Absent;
                            // A file moved twice still comes from its first source.
                            origin = s.moved_from.take().or(origin);
                        }
                        self.write(&d, new, origin);
                    }
                }
            }
        }
        Ok(())
    }

    fn write(&mut self, path: &str, content: Vec<u8>, moved_from: Option<String>) {
        if let Some(s) = self.slots.get_mut(path) {
            s.current = Entry::File(content);
            s.ever_file = true;
            s.moved_from = moved_from;
        }
    }

    fn updated_content(
        &self,
        path: &str,
        chunks: &[UpdateChunk],
        line: usize,
    ) -> Result<Vec<u8>, PlanError<E>> {
        let bytes = self.require_file(Operation::Update, path, line)?;
        let text = std::str::from_utf8(bytes)
            .map_err(|_| PlanError::NotUtf8 { path: path.to_string(), line })?;
        apply_chunks(text, chunks).map(String::into_bytes).map_err(|failure| match failure {
            ChunkFailure::Context { chunk, nearest } => PlanError::ContextNotFound {
                path: path.to_string(),
                chunk: chunk + 1,
                line: chunks[chunk].line,
                context: chunks[chunk].context.clone().unwrap_or_default(),
                nearest,
            },
            ChunkFailure::Lines { chunk, nearest } => PlanError::LinesNotFound {
                path: path.to_string(),
                chunk: chunk + 1,
                line: chunks[chunk].line,
                expected: chunks[chunk].old_lines().into_iter().map(str::to_string).collect(),
                end_of_file: chunks[chunk].end_of_file,
                nearest,
            },
            ChunkFailure::Applied { chunk } => PlanError::AlreadyApplied {
                path: path.to_string(),
                chunk: chunk + 1,
                line: chunks[chunk].line,
            },
        })
    }

    /// The current content of `path`, which must be a file now.
    fn require_file(&self, op: Operation, path: &str, line: usize) -> Result<&[u8], PlanError<E>> {
        match self.slots.get(path).map(|s| &s.current) {
            Some(Entry::File(bytes)) => Ok(bytes),
            Some(Entry::Directory) => Err(PlanError::NotAFile { op, path: path.to_string(), line }),
            Some(Entry::Absent) | None => {
                Err(PlanError::FileNotFound { op, path: path.to_string(), line })
            }
        }
    }

    /// Makes sure `path` has a slot, asking `lookup` unless an earlier answer decides it.
    fn ensure(
        &mut self,
        op: Operation,
        path: &str,
        line: usize,
        absent_above: bool,
    ) -> Result<(), PlanError<E>> {
        if self.slots.contains_key(path) {
            return Ok(());
        }
        let base = if absent_above {
            Entry::Absent
        } else {
            (self.lookup)(path).map_err(|source| PlanError::Lookup {
                op,
                path: path.to_string(),
                line,
                source,
            })?
        };
        let ever_file = matches!(base, Entry::File(_));
        self.slots.insert(
            path.to_string(),
            Slot {
                current: base.clone(),
                base,
                ever_file,
                moved_from: None,
                touched: false,
                by: (op, line),
            },
        );
        Ok(())
    }

    fn touch(&mut self, path: &str, op: Operation, line: usize) {
        if let Some(s) = self.slots.get_mut(path) {
            s.by = (op, line);
            if !s.touched {
                s.touched = true;
                self.order.push(path.to_string());
            }
        }
    }

    /// Resolves a path that an operation reads or deletes. Its ancestors are only consulted
    /// when already known: if one is or was a file, the path cannot be under it.
    fn resolve_existing(
        &mut self,
        op: Operation,
        path: &str,
        line: usize,
    ) -> Result<(), PlanError<E>> {
        if !self.slots.contains_key(path) {
            let mut absent_above = false;
            for anc in ancestors(path) {
                if let Some(s) = self.slots.get(anc) {
                    if s.ever_file {
                        return Err(conflict(op, path, anc, line));
                    }
                    absent_above |= !matches!(s.base, Entry::Directory);
                }
            }
            self.ensure(op, path, line, absent_above)?;
        }
        self.touch(path, op, line);
        Ok(())
    }

    /// Checks that a file may be created at `path` (the destination of a move from `Ok`
    /// source, or an Add of `Err` content), and records its missing ancestors as directories
    /// the write will create.
    fn create(
        &mut self,
        op: Operation,
        path: &str,
        line: usize,
        from: Result<&str, &[u8]>,
    ) -> Result<(), PlanError<E>> {
        let mut absent_above = false;
        for anc in ancestors(path) {
            self.ensure(op, anc, line, absent_above)?;
            if let Some(s) = self.slots.get(anc) {
                if s.ever_file {
                    return Err(conflict(op, path, anc, line));
                }
                absent_above |= !matches!(s.base, Entry::Directory);
            }
        }
        self.ensure(op, path, line, absent_above)?;
        self.touch(path, op, line);
        let (directory, identical) = match (self.slots.get(path).map(|s| &s.current), from) {
            (Some(Entry::Absent) | None, _) => (None, false),
            (Some(Entry::File(now)), Err(content)) => (Some(false), now == content),
            (Some(Entry::File(_)), Ok(_)) => (Some(false), false),
            (Some(Entry::Directory), _) => (Some(true), false),
        };
        if let Some(directory) = directory {
            let path = path.to_string();
            return Err(match from {
                Err(_) => PlanError::AddFileExists { path, line, directory, identical },
                Ok(from) => PlanError::MoveDestinationExists {
                    path,
                    from: from.to_string(),
                    line,
                    directory,
                },
            });
        }
        for anc in ancestors(path) {
            if let Some(s) = self.slots.get_mut(anc) {
                s.current = Entry::Directory;
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Plan {
        // Sources whose net effect is a deletion: only those make a destination a Move.
        let deleted: HashSet<String> = self
            .slots
            .iter()
            .filter(|(_, s)| matches!(s.base, Entry::File(_)) && matches!(s.current, Entry::Absent))
            .map(|(p, _)| p.clone())
            .collect();
        let mut changes = Vec::new();
        for path in self.order {
            let Some(slot) = self.slots.remove(&path) else { continue };
            let before = match slot.base {
                Entry::File(b) => Some(b),
                Entry::Absent | Entry::Directory => None,
            };
            let after = match slot.current {
                Entry::File(b) => Some(b),
                Entry::Absent | Entry::Directory => None,
            };
            let move_from = slot.moved_from.filter(|o| after.is_some() && deleted.contains(o));
            let kind = match (&before, &after, &move_from) {
                (None, None, _) => continue, // created and removed again, or never a file
                (_, Some(_), Some(_)) => ChangeKind::Move,
                (None, Some(_), None) => ChangeKind::Add,
                (Some(_), None, _) => ChangeKind::Delete,
                (Some(_), Some(_), None) => ChangeKind::Update,
            };
            let (op, line) = slot.by;
            changes.push(PlannedChange { path, kind, before, after, move_from, op, line });
        }
        Plan { changes }
    }
}

fn conflict<E>(op: Operation, path: &str, ancestor: &str, line: usize) -> PlanError<E> {
    PlanError::PathConflict { op, path: path.to_string(), ancestor: ancestor.to_string(), line }
}

#[cfg(test)]
mod tests;
