//! Start-up recovery: every operation a crash left unfinished is finished from the disk and
//! the undo log. A path holding its after-version is put back (its old content from the
//! log, or an added file removed), so a half-applied patch ends all-old
//! (`failed_rolled_back`, event `recovered`); all-new is `applied`. A path taken by
//! something else is left alone (`failed_partial`, its old content named in the log); a
//! path the disk cannot read leaves the whole operation `unknown`, untouched.

use codespace_files::{Found, InterruptedFile, Undone};
use codespace_protocol::{ApplyPatchResult, PatchStatus, Preserved};
use codespace_runner::ops;
use codespace_runner::{Runner, RunnerError};
use codespace_store::{OpStatus, OperationRecord, Store};

use super::{Recorded, changes_of_plan, now, undo};
use crate::{Gateway, GatewayError};

/// How recovery finished one operation.
struct Verdict {
    status: PatchStatus,
    reason: String,
    unrestored: Vec<String>,
    preserved: Vec<Preserved>,
}

impl Verdict {
    fn of(status: PatchStatus, reason: impl Into<String>) -> Verdict {
        Verdict { status, reason: reason.into(), unrestored: vec![], preserved: vec![] }
    }
}

impl Gateway {
    /// Finishes every operation a crash left unfinished, from the disk, then drops the undo
    /// entries no terminal operation needs. Run once at start, before serving.
    pub fn recover(&self) -> Result<Vec<(String, PatchStatus)>, GatewayError> {
        // Before serving: no async executor runs here.
        let store = self.ledger.off_the_executor();
        let mut report = Vec::new();
        for rec in store.unfinished()? {
            let opened = self.workspaces.contains_key(&rec.workspace_id)
                && self.runner.root_path(&rec.workspace_id).is_some();
            let verdict = verdict(opened.then_some(&*self.runner), store, &rec);
            let changes = changes_of_plan(&rec.plan);
            let result = ApplyPatchResult {
                status: verdict.status,
                operation_id: rec.operation_id.clone(),
                replayed: false,
                files: changes.iter().map(|c| c.path.clone()).collect(),
                changes,
                unrestored: verdict.unrestored,
                failure: Some(verdict.reason.clone()),
                work_id: None,
                preserved: verdict.preserved,
                coordination: None,
                reverts: rec.reverts.clone(),
            };
            let json = serde_json::to_string(&Recorded::Result(result.clone()))
                .map_err(|e| GatewayError::Internal(format!("result serialization: {e}")))?;
            let status = OpStatus::Finished(verdict.status);
            store.recover(&rec.operation_id, status, &json, &verdict.reason, now())?;
            undo::settle(store, &rec.operation_id, &result.preserved);
            tracing::info!(operation_id = %rec.operation_id, status = ?verdict.status, "recovered an interrupted operation");
            report.push((rec.operation_id, verdict.status));
        }
        self.sweep_undo()?;
        Ok(report)
    }

    /// Entries of operations that ended (a crash between `finish` and the discard) and
    /// that no result names as preserved; then what the retention bound no longer allows.
    fn sweep_undo(&self) -> Result<(), GatewayError> {
        let store = self.ledger.off_the_executor();
        for op in store.undo().operations()? {
            let Some(rec) = store.get(&op)? else { continue };
            if rec.status.is_unfinished() {
                continue;
            }
            let recorded: Option<Recorded> =
                rec.result_json.as_deref().and_then(|j| serde_json::from_str(j).ok());
            let preserved = match recorded {
                Some(Recorded::Result(r)) => r.preserved,
                Some(Recorded::Error(_)) | None => vec![],
            };
            undo::settle(store, &op, &preserved);
        }
        undo::prune(store);
        Ok(())
    }
}

/// `runner`: the runner holding the operation's workspace (`None`: it is not registered).
fn verdict(runner: Option<&Runner>, store: &Store, rec: &OperationRecord) -> Verdict {
    match rec.status {
        OpStatus::Pending => Verdict::of(
            PatchStatus::Rejected,
            "interrupted before the plan was recorded: nothing was written",
        ),
        OpStatus::Applying
        | OpStatus::Finished(PatchStatus::Checked)
        | OpStatus::Finished(PatchStatus::Applied)
        | OpStatus::Finished(PatchStatus::Rejected)
        | OpStatus::Finished(PatchStatus::FailedRolledBack)
        | OpStatus::Finished(PatchStatus::FailedPartial)
        | OpStatus::Finished(PatchStatus::Unknown) => {
            match runner.map(|r| roll_back(r, store, rec)) {
                Some(Ok(verdict)) => verdict,
                Some(Err(e)) => Verdict {
                    preserved: undo::all_kept(store, rec),
                    ..Verdict::of(
                        PatchStatus::Unknown,
                        format!("interrupted; the runner could not look at the disk ({e})"),
                    )
                },
                None => Verdict {
                    preserved: undo::all_kept(store, rec),
                    ..Verdict::of(
                        PatchStatus::Unknown,
                        "interrupted; the workspace is no longer registered, so the disk cannot tell",
                    )
                },
            }
        }
    }
}

fn roll_back(
    runner: &Runner,
    store: &Store,
    rec: &OperationRecord,
) -> Result<Verdict, RunnerError> {
    let ws = rec.workspace_id.as_str();
    let paths: Vec<String> = rec.plan.iter().map(|f| f.path.clone()).collect();
    runner.run_blocking(ops::ClearTempFiles { ws: ws.to_owned(), paths })?;
    let files = interrupted_files(store, rec);
    let found = runner.run_blocking(ops::Survey { ws: ws.to_owned(), files: files.clone() })?;
    if let Some((f, why)) = files.iter().zip(&found).find_map(|(f, s)| match s {
        Found::Unreadable(why) => Some((f, why)),
        Found::Before | Found::After | Found::Other(_) => None,
    }) {
        return Ok(Verdict {
            preserved: undo::all_kept(store, rec),
            ..Verdict::of(
                PatchStatus::Unknown,
                format!("interrupted; {} cannot be read ({why}), so the disk cannot tell", f.path),
            )
        });
    }
    if found.iter().all(|s| *s == Found::After) {
        return Ok(Verdict::of(
            PatchStatus::Applied,
            "interrupted after writing: every file holds its planned content",
        ));
    }
    if found.iter().all(|s| *s == Found::Before) {
        return Ok(Verdict::of(
            PatchStatus::FailedRolledBack,
            "interrupted before any write took effect: every file holds its old content",
        ));
    }
    let undone =
        runner.run_blocking(ops::RollBack { ws: ws.to_owned(), files: files.clone(), found })?;
    Ok(rolled_back(store, rec, &files, &undone))
}

/// The plan with each file's old content from the undo log.
fn interrupted_files(store: &Store, rec: &OperationRecord) -> Vec<InterruptedFile> {
    rec.plan
        .iter()
        .enumerate()
        .map(|(i, f)| InterruptedFile {
            path: f.path.clone(),
            before: f.before_version,
            after: f.after_version,
            undo: store.undo_content(&rec.operation_id, i).ok().flatten(),
            mode: f.before_mode,
        })
        .collect()
}

/// The verdict once every path that could be was put back.
fn rolled_back(
    store: &Store,
    rec: &OperationRecord,
    files: &[InterruptedFile],
    undone: &[Undone],
) -> Verdict {
    let mut unrestored = Vec::new();
    let mut why = Vec::new();
    for (f, u) in files.iter().zip(undone) {
        match u {
            Undone::Untouched | Undone::Restored | Undone::Removed => {}
            Undone::Taken(v) => {
                why.push(format!("{} was taken by something else (it holds {v})", f.path));
                unrestored.push(f.path.clone());
            }
            Undone::Failed(reason) => {
                why.push(format!("{} could not be put back: {reason}", f.path));
                unrestored.push(f.path.clone());
            }
        }
    }
    if unrestored.is_empty() {
        return Verdict::of(
            PatchStatus::FailedRolledBack,
            "interrupted while writing; rolled back from the undo log: every file holds its old content",
        );
    }
    let preserved = undo::preserved(store, &rec.operation_id, &rec.plan, &unrestored);
    let reason = undo::partial_failure(
        &format!("interrupted while writing; rolled back except: {}", why.join("; ")),
        &preserved,
    );
    Verdict { status: PatchStatus::FailedPartial, reason, unrestored, preserved }
}
