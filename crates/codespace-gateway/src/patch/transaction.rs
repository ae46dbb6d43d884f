//! The transaction after the lease: draft, expected versions and plan (the runner's
//! `prepare`), the plan and old content made durable in one commit, the runner's write, and
//! the terminal record in one commit (for an applied patch, after the reply: see
//! [`Finish`]); and what a runner answer lost on its socket makes of it.

use std::collections::BTreeMap;
use std::sync::Arc;

use codespace_files::ApplyOutcome;
use codespace_protocol::{ApplyPatchParams, ApplyPatchResult, ExpectedVersion, PatchStatus};
use codespace_runner::ops;
use codespace_runner::{PrepareError, Runner, RunnerError, Transport, WorkspacePath};
use codespace_store::{Draft, Drafted, OpStatus, OperationRecord, PlannedFile, Store};
use codespace_types::Version;

use super::conflict::with_diffs;
use super::{Recorded, changes_of, fingerprint, replay, revert, undo};
use crate::seen::{SEEN_MAX_ENTRY_BYTES, Seen};
use crate::{GatewayError, now};

/// What a transaction plans: a patch against the disk, or a revert of an applied operation
/// from its undo record. Everything after the plan is the same for both.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) ws: String,
    pub(crate) key: Option<String>,
    pub(crate) fingerprint: String,
    pub(crate) check_only: bool,
    pub(crate) work_id: Option<String>,
    pub(crate) source: Source,
}

/// Where a transaction's plan comes from.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    Patch {
        patch: String,
        expected: BTreeMap<String, ExpectedVersion>,
    },
    /// The operation to revert.
    Revert {
        target: String,
    },
}

impl From<ApplyPatchParams> for Request {
    fn from(p: ApplyPatchParams) -> Request {
        Request {
            fingerprint: fingerprint(&p),
            ws: p.workspace_id,
            key: p.operation_key,
            check_only: p.check_only.unwrap_or(false),
            work_id: p.work_id,
            source: Source::Patch { patch: p.patch, expected: p.expected_versions },
        }
    }
}

impl Request {
    /// The operation a revert reverts.
    fn reverts(&self) -> Option<&str> {
        match &self.source {
            Source::Patch { .. } => None,
            Source::Revert { target } => Some(target),
        }
    }
}

/// How a transaction ended, for the caller holding the lease.
pub(super) struct Transacted {
    pub(super) result: Result<ApplyPatchResult, GatewayError>,
    /// False when the runner may still be writing (its answer timed out): the caller keeps
    /// the lease.
    pub(super) settled: bool,
    /// An applied patch's terminal record, still to be written: the caller answers first
    /// and keeps the lease until it is.
    pub(super) finish: Option<Finish>,
}

/// An applied patch's terminal record, written after the reply. Recovery classifies an
/// unfinished plan whose every file holds its after-version as `applied` from the disk
/// alone, so a crash before this commit ends exactly as the reply said; the commit only
/// moves the row from unfinished to finished and drops the undo content.
pub(super) struct Finish {
    store: Arc<Store>,
    draft: Draft,
    result: ApplyPatchResult,
}

impl Finish {
    /// Writes the record. A failure leaves the row unfinished for the next start's
    /// recovery (which reads the same answer off the disk), so it is logged, not returned.
    pub(super) fn record(self) {
        let op = self.draft.operation_id.clone();
        if let Err(e) = record(&self.store, &self.draft, Ok(self.result)) {
            tracing::error!(operation_id = %op, "the applied patch's terminal record failed ({e}); the next start's recovery records it from the disk");
        }
    }
}

/// Everything after the lease: draft, check, plan (with the old content, one commit),
/// write, verify, finish (one commit; an applied patch's is left to the caller).
pub(super) fn transaction(
    runner: &Runner,
    store: &Arc<Store>,
    seen: &Seen,
    p: Request,
    reserved: Option<String>,
) -> Transacted {
    let done = |result| Transacted { result, settled: true, finish: None };
    match decide(runner, store, seen, p, reserved) {
        Ok(Decided::Now(result)) => done(result),
        Ok(Decided::Later(finish)) => {
            Transacted { result: Ok(finish.result.clone()), settled: true, finish: Some(finish) }
        }
        Err(Undecided::Unrecorded(e)) => done(Err(e)),
        Err(Undecided::Uncertain(result, still_running)) => {
            Transacted { result: Ok(*result), settled: !still_running, finish: None }
        }
    }
}

/// A transaction with an outcome: recorded already, or applied with its record to come.
enum Decided {
    Now(Result<ApplyPatchResult, GatewayError>),
    Later(Finish),
}

/// Why a transaction has no recorded outcome.
enum Undecided {
    /// The runner could not be asked to plan: nothing is durable and nothing was written,
    /// so nothing is recorded (a retry under the same key runs afresh).
    Unrecorded(GatewayError),
    /// The write's answer was lost (the flag: it may still be running).
    Uncertain(Box<ApplyPatchResult>, bool),
}

fn decide(
    runner: &Runner,
    store: &Arc<Store>,
    seen: &Seen,
    p: Request,
    reserved: Option<String>,
) -> Result<Decided, Undecided> {
    let key = p.key.as_deref();
    let drafted = match store.draft(reserved.as_deref(), &p.ws, key, &p.fingerprint, now()) {
        Ok(drafted) => drafted,
        Err(e) => return Ok(Decided::Now(Err(e.into()))),
    };
    let draft = match drafted {
        Drafted::Fresh(draft) => Draft { reverts: p.reverts().map(str::to_owned), ..draft },
        Drafted::Replayed(rec) if rec.finished_at.is_none() && !p.check_only => {
            return Ok(Decided::Now(replay(settled(runner, store, rec))));
        }
        Drafted::Replayed(rec) => return Ok(Decided::Now(replay(rec))),
        Drafted::KeyConflict(rec) => {
            return Ok(Decided::Now(Err(GatewayError::KeyConflict {
                operation_id: rec.operation_id,
            })));
        }
    };
    let outcome = match run(runner, store, seen, &draft, &p) {
        Ran::Done(outcome) => outcome,
        Ran::Unrecorded(e) => return Err(Undecided::Unrecorded(e)),
        Ran::Uncertain(result, still_running) => {
            return Err(Undecided::Uncertain(Box::new(result), still_running));
        }
        // Another handle on the ledger recorded this key first: its record answers.
        Ran::Raced(Drafted::Replayed(rec)) => return Ok(Decided::Now(replay(rec))),
        Ran::Raced(Drafted::KeyConflict(rec)) => {
            return Ok(Decided::Now(Err(GatewayError::KeyConflict {
                operation_id: rec.operation_id,
            })));
        }
        Ran::Raced(Drafted::Fresh(_)) => {
            let e = GatewayError::Internal("a planned draft raced with itself".to_owned());
            return Ok(Decided::Now(Err(e)));
        }
    };
    Ok(match outcome {
        Ok(result) if result.status == PatchStatus::Applied => {
            Decided::Later(Finish { store: Arc::clone(store), draft, result })
        }
        outcome => Decided::Now(record(store, &draft, outcome)),
    })
}

/// A retry met its key's unfinished operation, under the workspace's lease: when the server
/// that began it is gone, it is settled from the disk now and the settled record answers.
fn settled(runner: &Runner, store: &Store, rec: OperationRecord) -> OperationRecord {
    let id = rec.operation_id.clone();
    match super::recover::settle_orphan(runner, store, rec.clone()) {
        Ok(Some(_)) => store.get(&id).ok().flatten().unwrap_or(rec),
        Ok(None) => rec,
        Err(e) => {
            tracing::warn!(operation_id = %id, "an interrupted operation could not be settled: {e}");
            rec
        }
    }
}

/// Records the outcome as the operation's terminal result, in one commit.
fn record(
    store: &Store,
    draft: &Draft,
    outcome: Result<ApplyPatchResult, GatewayError>,
) -> Result<ApplyPatchResult, GatewayError> {
    let op = draft.operation_id.clone();
    let (status, recorded, reason) = match &outcome {
        Ok(r) => (r.status, Recorded::Result(r.clone()), r.failure.as_deref()),
        Err(e) => {
            let mut body = e.to_body();
            body.operation_id = Some(op.clone());
            (PatchStatus::Rejected, Recorded::Error(body), None)
        }
    };
    let json = serde_json::to_string(&recorded)
        .map_err(|e| GatewayError::Internal(format!("result serialization: {e}")))?;
    match store.finish_draft(draft, OpStatus::Finished(status), &json, reason, now()) {
        Ok(None) => {}
        // A preview takes no lease (and another server has its own), so a request under the
        // same key may have reached the ledger first: its record answers, as it would have
        // after the lease.
        Ok(Some(known)) => return answer_of(known),
        Err(e) => {
            if let Some(known) = raced(store, draft) {
                return known;
            }
            let source = Box::new(e);
            return Err(GatewayError::LedgerAfterRun { operation_id: op, status, source });
        }
    }
    // Terminal and verified: only what a result names as preserved stays in the log.
    let preserved = match &recorded {
        Recorded::Result(r) => r.preserved.as_slice(),
        Recorded::Error(_) => &[],
    };
    undo::settle(store, &op, preserved);
    if matches!(status, PatchStatus::Applied | PatchStatus::FailedPartial | PatchStatus::Unknown) {
        undo::prune(store);
    }
    match recorded {
        Recorded::Result(r) => Ok(r),
        Recorded::Error(body) => Err(GatewayError::Recorded(Box::new(body))),
    }
}

/// The answer of a request under the draft's key that another request recorded first
/// (found after the draft's own row could not be inserted); `None` when there is none.
fn raced(store: &Store, draft: &Draft) -> Option<Result<ApplyPatchResult, GatewayError>> {
    let key = draft.operation_key.as_deref()?;
    match store.draft(None, &draft.workspace_id, Some(key), &draft.fingerprint, now()).ok()? {
        Drafted::Fresh(_) => None,
        known @ (Drafted::Replayed(_) | Drafted::KeyConflict(_)) => Some(answer_of(known)),
    }
}

/// The answer of a key another request recorded first.
fn answer_of(known: Drafted) -> Result<ApplyPatchResult, GatewayError> {
    match known {
        Drafted::Replayed(rec) => replay(rec),
        Drafted::KeyConflict(rec) => {
            Err(GatewayError::KeyConflict { operation_id: rec.operation_id })
        }
        Drafted::Fresh(_) => {
            Err(GatewayError::Internal("a recorded draft raced with itself".to_owned()))
        }
    }
}

/// How a run ended: with its outcome, or because the ledger already had the key, or with
/// no outcome to record (see [`Undecided`]).
enum Ran {
    Done(Result<ApplyPatchResult, GatewayError>),
    Raced(Drafted),
    Unrecorded(GatewayError),
    Uncertain(ApplyPatchResult, bool),
}

/// The plan: the patch planned against the disk, or the revert's; unless it is only
/// checked, the runner holds it for the `Apply` that names it. A conflict shows what changed
/// since the expected version, when the server still knows it.
fn prepare(
    runner: &Runner,
    store: &Store,
    seen: &Seen,
    p: &Request,
) -> Result<ops::Planned, GatewayError> {
    let hold = !p.check_only;
    let planned = match &p.source {
        Source::Patch { patch, expected: versions } => {
            let expected = expected(versions)?;
            let prepare = ops::Prepare { ws: p.ws.clone(), patch: patch.clone(), expected, hold };
            runner.run_blocking(prepare).map_err(GatewayError::from)
        }
        Source::Revert { target } => revert::prepare(runner, store, &p.ws, target, hold),
    };
    planned.map_err(|e| with_diffs(e, runner, store, seen, &p.ws))
}

fn run(runner: &Runner, store: &Store, seen: &Seen, draft: &Draft, p: &Request) -> Ran {
    let ws = p.ws.as_str();
    let ops::Planned { id: held, writes } = match prepare(runner, store, seen, p) {
        Ok(planned) => planned,
        // Nothing is durable and nothing was written: a retry under this key runs afresh.
        Err(e @ GatewayError::Runner(RunnerError::Transport(_))) => return Ran::Unrecorded(e),
        Err(e) => return Ran::Done(Err(e)),
    };
    let op = draft.operation_id.as_str();
    let changes = changes_of(&writes);
    let mut result = ApplyPatchResult {
        status: PatchStatus::Checked,
        operation_id: op.to_owned(),
        replayed: false,
        files: changes.iter().map(|c| c.path.clone()).collect(),
        changes,
        unrestored: vec![],
        failure: None,
        work_id: p.work_id.clone(),
        preserved: vec![],
        coordination: None,
        reverts: p.reverts().map(str::to_owned),
    };
    if p.check_only {
        return Ran::Done(Ok(result));
    }
    let Some(plan_id) = held else {
        let e = GatewayError::Internal("the runner did not hold the plan it made".to_owned());
        return Ran::Done(Err(e));
    };
    let plan: Vec<PlannedFile> = result
        .changes
        .iter()
        .map(|c| PlannedFile {
            path: c.path.clone(),
            kind: c.kind,
            before_version: c.before_version,
            after_version: c.after_version,
            move_from: c.move_from.clone(),
            before_mode: None,
        })
        .zip(&writes)
        .map(|(f, w)| PlannedFile { before_mode: w.before.as_ref().and(w.mode), ..f })
        .collect();
    // Durable before the first write, in one commit: the plan and the old content of every
    // file it replaces, so a crash from here on is rolled back from the disk.
    match store.plan_draft(draft, &plan, &undo::entries(&writes), now()) {
        Ok(None) => {}
        Ok(Some(known)) => return Ran::Raced(known),
        Err(e) => return Ran::Done(Err(e.into())),
    }
    let written: Vec<(String, Vec<u8>)> = writes
        .into_iter()
        .filter_map(|w| Some((w.path.as_str().to_owned(), w.after?)))
        .filter(|(_, after)| after.len() <= SEEN_MAX_ENTRY_BYTES)
        .collect();
    // The runner writes the plan it holds: the content does not cross to it again.
    let applied = match runner.run_blocking(ops::Apply { ws: ws.to_owned(), plan: plan_id }) {
        Ok(outcome) => outcome,
        Err(RunnerError::Transport(t)) => return lost_write(result, &t),
        Err(e) => return Ran::Done(Err(e.into())),
    };
    match applied {
        ApplyOutcome::Applied => {
            result.status = PatchStatus::Applied;
            // What the caller now holds as each file's after_version, for a later conflict.
            for (path, after) in &written {
                seen.remember(ws, path, Version::of_bytes(after), after);
            }
        }
        ApplyOutcome::RolledBack { failure } => {
            result.status = PatchStatus::FailedRolledBack;
            result.failure = Some(failure);
        }
        ApplyOutcome::Partial { failure, unrestored } => {
            result.status = PatchStatus::FailedPartial;
            result.preserved = undo::preserved(store, op, &plan, &unrestored);
            result.failure = Some(undo::partial_failure(&failure, &result.preserved));
            result.unrestored = unrestored;
        }
    }
    Ran::Done(Ok(result))
}

/// The write's answer did not come back. Never sent: nothing was written, the plan is
/// finished as rolled back. Otherwise it may have run: the row stays unfinished (the next
/// start classifies it from the disk, as after a crash) and the caller hears `unknown`.
fn lost_write(mut result: ApplyPatchResult, t: &Transport) -> Ran {
    result.failure = Some(t.to_string());
    match t {
        Transport::NotSent { .. } => {
            result.status = PatchStatus::FailedRolledBack;
            Ran::Done(Ok(result))
        }
        Transport::Ambiguous { .. } | Transport::Timeout { .. } => {
            result.status = PatchStatus::Unknown;
            result.failure = Some(format!(
                "{t}; the operation stays unfinished and the next start classifies it from the disk: check operation_status"
            ));
            Ran::Uncertain(result, matches!(t, Transport::Timeout { .. }))
        }
    }
}

/// The versions the caller said it read, each path and version checked.
fn expected(
    versions: &BTreeMap<String, ExpectedVersion>,
) -> Result<Vec<(WorkspacePath, Version)>, GatewayError> {
    versions
        .iter()
        .map(|(path, expected)| {
            let wp = WorkspacePath::parse(path)?;
            match expected {
                ExpectedVersion::Valid(v) => Ok((wp, *v)),
                ExpectedVersion::Invalid(text) => Err(GatewayError::BadExpectedVersion {
                    path: path.clone(),
                    value: text.clone(),
                }),
            }
        })
        .collect()
}

impl From<PrepareError> for GatewayError {
    fn from(e: PrepareError) -> Self {
        match e {
            PrepareError::VersionConflict { path, expected, actual } => {
                GatewayError::VersionConflict { path, expected, actual, diff: None }
            }
            PrepareError::Plan(e) => GatewayError::Patch(e),
            PrepareError::Runner(e) => e.into(),
        }
    }
}
