//! What a held action does, in words a person can decide on: a patch's files with their
//! change kinds and line counts, a command's argv, terminal and time limit, what a revert
//! puts back.

use codespace_patch::{ChunkLine, Hunk, Patch};
use codespace_protocol::{ExecCommandParams, OperationRevertParams};
use codespace_store::PlannedFile;
use codespace_types::ChangeKind;

/// One line per file: `update src/a.rs (+3 -1)`, `add b.txt (+10)`, `delete c.txt`,
/// `move x -> y (+1 -1)`.
pub(crate) fn patch(workspace_id: &str, patch: &Patch, check_only: bool) -> String {
    let verb = if check_only { "preview a patch" } else { "apply a patch" };
    let mut out = format!("{verb} in workspace {workspace_id} ({} file(s)):", patch.hunks.len());
    for hunk in &patch.hunks {
        out.push_str("\n  ");
        out.push_str(&file_line(hunk));
    }
    out
}

fn file_line(hunk: &Hunk) -> String {
    match hunk {
        Hunk::Add { path, contents, .. } => format!("add {path} (+{})", contents.lines().count()),
        Hunk::Delete { path, .. } => format!("delete {path}"),
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
                Some(to) => format!("move {path} -> {to} (+{added} -{removed})"),
                None => format!("update {path} (+{added} -{removed})"),
            }
        }
    }
}

/// `revert operation op-… in workspace ws (2 file(s)):` then one line per path put back:
/// `restore a.txt`, `remove new.txt`, `re-create gone.txt`, `move to/x -> x`.
pub(crate) fn revert(p: &OperationRevertParams, plan: &[PlannedFile]) -> String {
    let verb = if p.check_only.unwrap_or(false) { "preview a revert of" } else { "revert" };
    let mut out = format!(
        "{verb} operation {} in workspace {} ({} file(s)):",
        p.operation_id,
        p.workspace_id,
        plan.len()
    );
    let moved_away = |path: &str| plan.iter().any(|f| f.move_from.as_deref() == Some(path));
    for f in plan {
        let line = match (f.kind, &f.move_from) {
            (ChangeKind::Move, Some(from)) => format!("move {} -> {from}", f.path),
            (ChangeKind::Delete, _) if moved_away(&f.path) => continue,
            (ChangeKind::Delete, _) => format!("re-create {}", f.path),
            (ChangeKind::Add | ChangeKind::Move, _) => format!("remove {}", f.path),
            (ChangeKind::Update, _) => format!("restore {}", f.path),
        };
        out.push_str("\n  ");
        out.push_str(&line);
    }
    out
}

/// `run ["cargo", "test"] in workspace ws (pipes, time limit 600 s)`: the argv as JSON, so
/// spaces and quotes inside arguments stay visible.
pub(crate) fn command(p: &ExecCommandParams, timeout_secs: u64) -> String {
    let argv = serde_json::to_string(&p.command).unwrap_or_else(|_| format!("{:?}", p.command));
    let io = if p.tty.unwrap_or(false) { "terminal" } else { "pipes" };
    format!("run {argv} in workspace {} ({io}, time limit {timeout_secs} s)", p.workspace_id)
}

#[cfg(test)]
mod tests;
