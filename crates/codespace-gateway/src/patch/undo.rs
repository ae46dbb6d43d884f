//! The gateway's side of the undo log (kept by the store, beside the ledger): the
//! before-content of every planned file that has one is saved before the first write,
//! under the file's plan ordinal; a result names what stayed in the log as `preserved`;
//! everything else is discarded once the operation is terminal and verified.

use codespace_protocol::Preserved;
use codespace_runner::PlannedWrite;
use codespace_store::{OperationRecord, PlannedFile, Store, Version};

use crate::GatewayError;

/// Makes the old content of every file the patch replaces, moves or deletes durable.
pub(super) fn save(store: &Store, op: &str, writes: &[PlannedWrite]) -> Result<(), GatewayError> {
    let entries: Vec<(usize, &[u8])> = writes
        .iter()
        .enumerate()
        .filter_map(|(i, w)| w.before.as_deref().map(|b| (i, b)))
        .collect();
    store.undo().save(op, &entries)?;
    Ok(())
}

/// The log entry of every path in `paths` that had old content.
pub(super) fn preserved(
    store: &Store,
    op: &str,
    plan: &[PlannedFile],
    paths: &[String],
) -> Vec<Preserved> {
    plan.iter()
        .enumerate()
        .filter(|(_, f)| f.before_version != Version::Absent && paths.contains(&f.path))
        .filter_map(|(i, f)| entry(store, op, i, &f.path))
        .collect()
}

/// The log entry of every planned file with old content that the log still holds.
pub(super) fn all_kept(store: &Store, rec: &OperationRecord) -> Vec<Preserved> {
    rec.plan
        .iter()
        .enumerate()
        .filter(|(_, f)| f.before_version != Version::Absent)
        .filter(|(i, _)| store.undo().load(&rec.operation_id, *i).is_ok_and(|b| b.is_some()))
        .filter_map(|(i, f)| entry(store, &rec.operation_id, i, &f.path))
        .collect()
}

fn entry(store: &Store, op: &str, ordinal: usize, path: &str) -> Option<Preserved> {
    let undo_path = store.undo().entry_path(op, ordinal).ok()?;
    Some(Preserved { path: path.to_owned(), undo_path: undo_path.display().to_string() })
}

/// The transaction's failure, saying where the content that is not in place is kept.
pub(super) fn partial_failure(failure: &str, preserved: &[Preserved]) -> String {
    if preserved.is_empty() {
        return failure.to_owned();
    }
    let named: Vec<String> =
        preserved.iter().map(|p| format!("{} in {}", p.path, p.undo_path)).collect();
    format!(
        "{failure}; the old content of what could not be put back is kept ({}): `codespace \
         operations restore` puts it back once the path is free",
        named.join(", ")
    )
}

/// Discards every entry of a terminal operation except those `preserved` names. A failure
/// only leaves more in the log than needed: logged, never fatal.
pub(super) fn settle(store: &Store, op: &str, preserved: &[Preserved]) {
    let keep: Vec<usize> = preserved.iter().filter_map(|p| ordinal_of(store, op, p)).collect();
    if let Err(e) = store.undo().discard(op, &keep) {
        tracing::warn!(operation_id = %op, error = %e, "undo log entries left behind");
    }
}

fn ordinal_of(store: &Store, op: &str, p: &Preserved) -> Option<usize> {
    let name = std::path::Path::new(&p.undo_path).file_name()?.to_str()?;
    let ordinal = name.parse().ok()?;
    // Only an entry of this operation's own directory counts.
    (store.undo().entry_path(op, ordinal).ok()?.display().to_string() == p.undo_path)
        .then_some(ordinal)
}
