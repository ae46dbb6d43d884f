//! What a held action does, in words a person can decide on: a patch's counts by kind and
//! its first files with their change kinds and line counts, a command's argv, terminal and
//! time limit, what a revert puts back. Every name is shown with its control and format
//! characters written out (`codespace_types::visible`), and a patch or a revert of any size
//! gives a summary of bounded length.

use codespace_patch::{ChunkLine, Hunk, Patch};
use codespace_protocol::{ExecCommandParams, OperationRevertParams};
use codespace_store::PlannedFile;
use codespace_types::{ChangeKind, visible};

use crate::error::TrustError;

/// How many files a patch's summary lists by name; the rest are counted.
pub(crate) const LISTED_FILES: usize = 50;

/// The longest name shown whole, in characters; a longer one keeps its start and its end.
const SHOWN_NAME_CHARS: usize = 240;

/// The most of a command's argv (as JSON) a summary shows, in characters.
const SHOWN_ARGV_CHARS: usize = 4096;

/// `apply a patch in workspace ws (3 files: 1 add, 1 update, 1 delete):` and one line per
/// file, `update src/a.rs (+3 -1)`, `add b.txt (+10)`, `delete c.txt`,
/// `move x -> y (+1 -1)`: the first [`LISTED_FILES`], then how many more there are.
pub(crate) fn patch(workspace_id: &str, patch: &Patch, check_only: bool) -> String {
    let verb = if check_only { "preview a patch" } else { "apply a patch" };
    let mut out = format!(
        "{verb} in workspace {} ({}):",
        visible::escape(workspace_id, false),
        counts(&patch.hunks)
    );
    for hunk in patch.hunks.iter().take(LISTED_FILES) {
        out.push_str("\n  ");
        out.push_str(&file_line(hunk));
    }
    if let Some(more) = patch.hunks.len().checked_sub(LISTED_FILES).filter(|n| *n > 0) {
        out.push_str(&format!("\n  ... and {more} more file(s), counted above but not listed"));
    }
    out
}

/// `3 files: 1 add, 1 update, 1 delete` (kinds with none left out).
fn counts(hunks: &[Hunk]) -> String {
    let (mut add, mut update, mut delete, mut moved) = (0, 0, 0, 0);
    for hunk in hunks {
        match hunk {
            Hunk::Add { .. } => add += 1,
            Hunk::Delete { .. } => delete += 1,
            Hunk::Update { move_to: Some(_), .. } => moved += 1,
            Hunk::Update { move_to: None, .. } => update += 1,
        }
    }
    let kinds: Vec<String> =
        [(add, "add"), (update, "update"), (delete, "delete"), (moved, "move")]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, kind)| format!("{n} {kind}"))
            .collect();
    let files =
        if hunks.len() == 1 { "1 file".to_owned() } else { format!("{} files", hunks.len()) };
    format!("{files}: {}", kinds.join(", "))
}

/// A name as a person sees it: hidden characters written out, and a very long one cut in
/// the middle.
pub(crate) fn name(path: &str) -> String {
    let shown = visible::escape(path, false);
    let count = shown.chars().count();
    if count <= SHOWN_NAME_CHARS {
        return shown.into_owned();
    }
    let half = SHOWN_NAME_CHARS / 2;
    let head: String = shown.chars().take(half).collect();
    let tail: String = shown.chars().skip(count - half).collect();
    format!("{head}...({} characters)...{tail}", count - 2 * half)
}

fn file_line(hunk: &Hunk) -> String {
    match hunk {
        Hunk::Add { path, contents, .. } => {
            format!("add {} (+{})", name(path), contents.lines().count())
        }
        Hunk::Delete { path, .. } => format!("delete {}", name(path)),
        Hunk::Update { path, move_to, chunks, .. } => {
            let (mut added, mut removed) = (0, 0);
            for line in chunks.iter().flat_map(|c| &c.lines) {
                match line {
                    ChunkLine::Add(_) => added += 1,
                    ChunkLine::Delete(_) => removed += 1,
                    ChunkLine::Context(_) => {}
                }
            }
            match move_to {
                Some(to) => format!("move {} -> {} (+{added} -{removed})", name(path), name(to)),
                None => format!("update {} (+{added} -{removed})", name(path)),
            }
        }
    }
}

/// `revert operation op-… in workspace ws (2 file(s)):` then one line per path put back
/// (the first [`LISTED_FILES`]): `restore a.txt`, `remove new.txt`, `re-create gone.txt`,
/// `move to/x -> x`.
pub(crate) fn revert(p: &OperationRevertParams, plan: &[PlannedFile]) -> String {
    let verb = if p.check_only.unwrap_or(false) { "preview a revert of" } else { "revert" };
    let mut out = format!(
        "{verb} operation {} in workspace {} ({} file(s)):",
        visible::escape(&p.operation_id, false),
        visible::escape(&p.workspace_id, false),
        plan.len()
    );
    let moved_away = |path: &str| plan.iter().any(|f| f.move_from.as_deref() == Some(path));
    let mut listed = 0;
    for f in plan {
        let line = match (f.kind, &f.move_from) {
            (ChangeKind::Move, Some(from)) => format!("move {} -> {}", name(&f.path), name(from)),
            (ChangeKind::Delete, _) if moved_away(&f.path) => continue,
            (ChangeKind::Delete, _) => format!("re-create {}", name(&f.path)),
            (ChangeKind::Add | ChangeKind::Move, _) => format!("remove {}", name(&f.path)),
            (ChangeKind::Update, _) => format!("restore {}", name(&f.path)),
        };
        listed += 1;
        if listed > LISTED_FILES {
            out.push_str("\n  ... and more file(s), counted above but not listed");
            break;
        }
        out.push_str("\n  ");
        out.push_str(&line);
    }
    out
}

/// Refuses a patch that would create a name (an Add File path or a Move to destination)
/// holding a character a created name may not hold (`visible::is_refused_in_name`).
pub(crate) fn check_created_names(patch: &Patch) -> Result<(), TrustError> {
    for hunk in &patch.hunks {
        let (kind, created) = match hunk {
            Hunk::Add { path, .. } => ("Add File", path),
            Hunk::Update { move_to: Some(to), .. } => ("Move to", to),
            Hunk::Update { move_to: None, .. } | Hunk::Delete { .. } => continue,
        };
        if let Some(c) = visible::refused_in_name(created) {
            return Err(TrustError::unsafe_name(kind, created, c, hunk.line()));
        }
    }
    Ok(())
}

/// [`check_created_names`] on a patch's text, parsed only when a header line that creates
/// a name holds such a character (a text that does not parse is the transaction's to
/// refuse, as before).
pub(crate) fn check_created_names_in(text: &str) -> Result<(), TrustError> {
    let suspect = text.lines().any(|line| {
        (line.contains("Add File:") || line.contains("Move to:"))
            && line.chars().any(visible::is_refused_in_name)
    });
    match suspect.then(|| codespace_patch::parse(text)) {
        Some(Ok(parsed)) => check_created_names(&parsed),
        Some(Err(_)) | None => Ok(()),
    }
}

/// `run ["cargo", "test"] in workspace ws (pipes, time limit 600 s)`: the argv as JSON, so
/// spaces and quotes inside arguments stay visible (and the characters JSON leaves as
/// they are, bidirectional marks say, are written out too).
pub(crate) fn command(p: &ExecCommandParams, timeout_secs: u64) -> String {
    let argv = serde_json::to_string(&p.command).unwrap_or_else(|_| format!("{:?}", p.command));
    let argv = visible::escape(&argv, false);
    let count = argv.chars().count();
    let shown = if count > SHOWN_ARGV_CHARS {
        let head: String = argv.chars().take(SHOWN_ARGV_CHARS).collect();
        format!(
            "{head}... ({} more characters of {} arguments; `codespace approvals show` prints them all)",
            count - SHOWN_ARGV_CHARS,
            p.command.len()
        )
    } else {
        argv.into_owned()
    };
    let io = if p.tty.unwrap_or(false) { "terminal" } else { "pipes" };
    format!(
        "run {shown} in workspace {} ({io}, time limit {timeout_secs} s)",
        visible::escape(&p.workspace_id, false)
    )
}

#[cfg(test)]
mod tests;
