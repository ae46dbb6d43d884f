//! The operator's view of the ledger (`codespace operations list|show|restore`): the
//! newest operations, one operation in full, and putting preserved content back.
//!
//! A restore writes only to a path that is free (absent) or already holds the old content;
//! anything else there is the operator's to move first, so nothing is overwritten.

use codespace_files::{InterruptedFile, Undone};
use codespace_protocol::{OperationStatusResult, Preserved};
use codespace_runner::ops;
use codespace_runner::{Runner, WorkspacePath};
use codespace_store::{OperationRecord, Store};
use codespace_types::Version;

use super::{Recorded, now, status_of};
use crate::{Gateway, GatewayError};

/// The newest `limit` operations, newest first, as `operation_status` shows them.
pub fn list_operations(
    store: &Store,
    limit: usize,
) -> Result<Vec<OperationStatusResult>, GatewayError> {
    Ok(store.list(limit)?.into_iter().map(status_of).collect())
}

/// One operation as `operation_status` shows it.
pub fn show_operation(store: &Store, id: &str) -> Result<OperationStatusResult, GatewayError> {
    store
        .get(id)?
        .map(status_of)
        .ok_or_else(|| GatewayError::OperationNotFound(format!("no operation {id} in the ledger")))
}

/// What a restore did with one preserved path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutBack {
    /// The old content was written back and verified.
    Restored,
    /// The path already holds the old content.
    AlreadyThere,
    /// Something else is at the path (its version): left alone.
    Occupied(Version),
    /// The path cannot be written or read, or the log's copy is gone; why.
    Blocked(String),
}

/// What `restore` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreOutcome {
    /// The operation has not finished: a running server, or the next start's recovery,
    /// owns it.
    Unfinished,
    /// Each preserved path and what happened to it (empty: nothing was preserved).
    Done(Vec<(Preserved, PutBack)>),
}

impl Gateway {
    /// Puts the content `operation_id`'s result names as preserved back where it belongs,
    /// wherever the path is free; records a `restored` event naming what was put back and
    /// drops those entries from the undo log.
    pub fn restore_operation(&self, operation_id: &str) -> Result<RestoreOutcome, GatewayError> {
        // The operator's command: no async executor runs here.
        let store = self.ledger.off_the_executor();
        let rec = store.get(operation_id)?.ok_or_else(|| {
            GatewayError::OperationNotFound(format!("no operation {operation_id} in the ledger"))
        })?;
        if rec.status.is_unfinished() {
            return Ok(RestoreOutcome::Unfinished);
        }
        let preserved = match rec.result_json.as_deref().and_then(|j| serde_json::from_str(j).ok())
        {
            Some(Recorded::Result(r)) => r.preserved,
            Some(Recorded::Error(_)) | None => vec![],
        };
        if preserved.is_empty() {
            return Ok(RestoreOutcome::Done(vec![]));
        }
        self.lookup(&rec.workspace_id)?;
        let done: Vec<(Preserved, PutBack)> = preserved
            .into_iter()
            .map(|p| (p.clone(), put_back(&self.runner, store, &rec, &p)))
            .collect();
        let restored: Vec<&str> = done
            .iter()
            .filter(|(_, r)| *r == PutBack::Restored)
            .map(|(p, _)| p.path.as_str())
            .collect();
        if !restored.is_empty() {
            let reason = format!("put back from the undo log: {}", restored.join(", "));
            store.note_restored(operation_id, &reason, now())?;
        }
        let still: Vec<Preserved> = done
            .iter()
            .filter(|(_, r)| matches!(r, PutBack::Occupied(_) | PutBack::Blocked(_)))
            .map(|(p, _)| p.clone())
            .collect();
        super::undo::settle(store, operation_id, &still);
        Ok(RestoreOutcome::Done(done))
    }
}

fn put_back(runner: &Runner, store: &Store, rec: &OperationRecord, p: &Preserved) -> PutBack {
    let Some((ordinal, file)) = rec.plan.iter().enumerate().find(|(i, f)| {
        f.path == p.path
            && store
                .undo()
                .entry_path(&rec.operation_id, *i)
                .is_ok_and(|e| e.display().to_string() == p.undo_path)
    }) else {
        return PutBack::Blocked("the plan has no such entry".to_owned());
    };
    let ws = rec.workspace_id.as_str();
    let now = match WorkspacePath::parse(&p.path)
        .map_err(Into::into)
        .and_then(|path| runner.run_blocking(ops::VersionNow { ws: ws.to_owned(), path }))
    {
        Ok(v) => v,
        Err(e) => return PutBack::Blocked(e.to_string()),
    };
    if now == file.before_version {
        return PutBack::AlreadyThere;
    }
    if now != Version::Absent {
        return PutBack::Occupied(now);
    }
    let undo = match store.undo().load(&rec.operation_id, ordinal) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return PutBack::Blocked(format!("{} is gone from the undo log", p.undo_path)),
        Err(e) => return PutBack::Blocked(e.to_string()),
    };
    let f = InterruptedFile {
        path: p.path.clone(),
        before: file.before_version,
        after: Version::Absent,
        undo: Some(undo),
        mode: file.before_mode,
    };
    match runner.run_blocking(ops::PutBack { ws: ws.to_owned(), file: f.clone() }) {
        Ok(Undone::Restored) => PutBack::Restored,
        Ok(Undone::Untouched | Undone::Removed) => PutBack::AlreadyThere,
        Ok(Undone::Taken(v)) => PutBack::Occupied(v),
        Ok(Undone::Failed(why)) => PutBack::Blocked(why),
        Err(e) => PutBack::Blocked(e.to_string()),
    }
}
