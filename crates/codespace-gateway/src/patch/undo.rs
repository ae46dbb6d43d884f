//! The gateway's side of the undo log: the before-content of every planned file that has
//! one goes into the ledger with the plan (one commit before the first write), under the
//! file's plan ordinal; what a result names as `preserved` is written out to the undo
//! directory beside the ledger before the terminal record, which drops the rest.

use codespace_files::PlannedWrite;
use codespace_protocol::Preserved;
use codespace_store::{OperationRecord, PlannedFile, Store, Version};

/// The old content of every file the patch replaces, moves or deletes, by plan ordinal: it
/// goes into the ledger with the plan.
pub(super) fn entries(writes: &[PlannedWrite]) -> Vec<(usize, &[u8])> {
    writes.iter().enumerate().filter_map(|(i, w)| w.before.as_deref().map(|b| (i, b))).collect()
}

/// The log entry of every path in `paths` that had old content.
pub(super) fn preserved(
    store: &Store,
    op: &str,
    plan: &[PlannedFile],
    paths: &[String],
) -> Vec<Preserved> {
    let named: Vec<(usize, &PlannedFile)> = plan
        .iter()
        .enumerate()
        .filter(|(_, f)| f.before_version != Version::Absent && paths.contains(&f.path))
        .collect();
    written_out(store, op, &named)
}

/// Writes the old content of `named` out of the ledger into the undo directory, where it
/// outlives the terminal record, and names each entry. A failure is logged, and the entries
/// that could not be written out are not named.
fn written_out(store: &Store, op: &str, named: &[(usize, &PlannedFile)]) -> Vec<Preserved> {
    let ordinals: Vec<usize> = named.iter().map(|(i, _)| *i).collect();
    if let Err(e) = store.preserve_undo(op, &ordinals) {
        tracing::error!(operation_id = %op, error = %e, "old content could not be written out of the ledger");
    }
    named
        .iter()
        .filter(|(i, _)| store.undo().load(op, *i).is_ok_and(|b| b.is_some()))
        .filter_map(|(i, f)| entry(store, op, *i, &f.path))
        .collect()
}

/// The log entry of every planned file with old content that the log still holds.
pub(super) fn all_kept(store: &Store, rec: &OperationRecord) -> Vec<Preserved> {
    let named: Vec<(usize, &PlannedFile)> = rec
        .plan
        .iter()
        .enumerate()
        .filter(|(_, f)| f.before_version != Version::Absent)
        .filter(|(i, _)| store.undo_content(&rec.operation_id, *i).is_ok_and(|b| b.is_some()))
        .collect();
    written_out(store, &rec.operation_id, &named)
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

/// Drops the undo records the ledger's retention bound no longer allows (oldest first). A
/// failure only leaves more kept than the bound: logged, never fatal.
pub(super) fn prune(store: &Store) {
    match store.prune_undo(crate::now()) {
        Ok(pruned) => {
            for (op, bytes) in pruned {
                tracing::debug!(operation_id = %op, bytes, "undo record pruned by the retention bound");
            }
        }
        Err(e) => tracing::warn!(error = %e, "undo records could not be pruned"),
    }
}
