//! Recovery: every operation a server that is gone left unfinished is finished from the
//! disk and the undo log, at start and whenever a server meets one (its owner's lock is
//! free); an operation of a live server is never touched. A path holding its
//! after-version is put back (its old content from the log, or an added file removed), so
//! a half-applied patch ends all-old
//! (`failed_rolled_back`, event `recovered`); all-new is `applied`. A path taken by
//! something else is left alone (`failed_partial`, its old content named in the log); a
//! path the disk cannot read leaves the whole operation `unknown`, untouched.

use std::sync::Arc;

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
    /// Finishes every operation left unfinished by a server that is gone (killed, crashed,
    /// or an earlier run of this one), from the disk, then drops the undo entries no
    /// terminal operation needs. An operation whose owner is alive (another server on the
    /// same ledger) is never touched, and one whose workspace this server has not opened is
    /// left to a server that has it. Run once at start, before serving.
    pub fn recover(&self) -> Result<Vec<(String, PatchStatus)>, GatewayError> {
        // Before serving: no async executor runs here.
        let store = self.ledger.off_the_executor();
        let mut report = Vec::new();
        for rec in store.unfinished()? {
            let id = rec.operation_id.clone();
            if !self.opened(&rec.workspace_id) {
                tracing::info!(operation_id = %id, workspace_id = %rec.workspace_id, "an unfinished operation of a workspace this server has not opened is left to a server that has it");
                continue;
            }
            if let Some(status) = settle_orphan(&self.runner, store, rec)? {
                report.push((id, status));
            }
        }
        // Instances that died without ending are marked so (their lock files removed).
        if let Err(e) = store.end_dead_instances(now()) {
            tracing::warn!("the ledger's instance rows could not be tidied: {e}");
        }
        self.sweep_undo()?;
        Ok(report)
    }

    /// Whether this server opened workspace `id` (its registry names it and the runner
    /// holds its root).
    pub(crate) fn opened(&self, id: &str) -> bool {
        self.lookup(id).is_ok() && self.runner.root_path(id).is_some()
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

impl Gateway {
    /// An unfinished operation met while serving (a status query, a resume finding its
    /// reserved id): settled now when its owner is gone, its workspace is open here and its
    /// lease is free (waited for when `wait`). True when this call settled it.
    pub(crate) async fn settle_met(
        &self,
        rec: &OperationRecord,
        wait: bool,
    ) -> Result<bool, GatewayError> {
        let ws = rec.workspace_id.clone();
        if rec.finished_at.is_some() || !self.opened(&ws) {
            return Ok(false);
        }
        let owner = rec.owner.clone();
        if self.ledger.run(move |store| Ok(store.owner_alive(owner.as_deref()))).await? {
            return Ok(false);
        }
        let lease = if wait {
            self.leases.acquire(&ws).await.map_err(GatewayError::Lease)?
        } else {
            let Some(lease) = self.leases.try_acquire(&ws) else { return Ok(false) };
            lease
        };
        let runner = Arc::clone(&self.runner);
        let id = rec.operation_id.clone();
        let settled = self
            .ledger
            .run(move |store| {
                // Read again under the lease: another process may have settled it meanwhile.
                let Some(rec) = store.get(&id)? else { return Ok(None) };
                settle_orphan(&runner, store, rec)
            })
            .await?;
        drop(lease);
        Ok(settled.is_some())
    }
}

/// Settles one unfinished operation from the disk when its owner is gone and this process
/// wins the take-over (one compare-and-swap on the owner, so exactly one process settles
/// it); `None` when its owner is alive or another process took it first. The caller runs
/// it where nothing else of this process writes the operation's workspace (before serving,
/// or under the workspace's lease).
pub(crate) fn settle_orphan(
    runner: &Runner,
    store: &Store,
    rec: OperationRecord,
) -> Result<Option<PatchStatus>, GatewayError> {
    let owner = rec.owner.as_deref();
    if rec.finished_at.is_some() || store.owner_alive(owner) {
        return Ok(None);
    }
    if !store.take_over_operation(&rec.operation_id, owner)? {
        return Ok(None);
    }
    let verdict = verdict(runner, store, &rec);
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
    tracing::info!(operation_id = %rec.operation_id, status = ?verdict.status, owner = ?rec.owner, "settled an operation whose server is gone");
    Ok(Some(verdict.status))
}

fn verdict(runner: &Runner, store: &Store, rec: &OperationRecord) -> Verdict {
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
        | OpStatus::Finished(PatchStatus::Unknown) => match roll_back(runner, store, rec) {
            Ok(verdict) => verdict,
            Err(e) => Verdict {
                preserved: undo::all_kept(store, rec),
                ..Verdict::of(
                    PatchStatus::Unknown,
                    format!("interrupted; the runner could not look at the disk ({e})"),
                )
            },
        },
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
