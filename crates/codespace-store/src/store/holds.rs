//! Confirmation holds: create (or reuse the active hold of the same request), read, list,
//! and every state change as one compare-and-swap on the row's state.

use codespace_types::{ApprovalState, Decision, HeldTool};
use rusqlite::{Connection, OptionalExtension, Row, params};
use uuid::Uuid;

use super::Store;
use crate::error::StoreError;
use crate::model::{Cas, HoldFilter, HoldRecord, NewHold};

const SELECT_HOLD: &str = "SELECT approval_id, workspace_id, tool, fingerprint, summary, \
     params_json, state, created_at, resolved_at, operation_id, result_json, seal, \
     root_identity, owner FROM approvals";

/// The states a hold counts as active in, as the unique index names them.
const ACTIVE: &str = "('pending', 'granted', 'queued', 'resuming')";

impl Store {
    /// One IMMEDIATE transaction: the active hold of `(workspace_id, fingerprint)` when
    /// there is one (`false`: reused), else a new `pending` hold holding the arguments
    /// (`true`: created), under `new.approval_id` or a minted `appr-<uuid v4>`.
    pub fn create_hold(
        &self,
        new: &NewHold<'_>,
        now: i64,
    ) -> Result<(HoldRecord, bool), StoreError> {
        if new.workspace_id.is_empty() || new.fingerprint.is_empty() {
            return Err(StoreError::InvalidInput {
                reason: "a hold needs a workspace_id and a fingerprint".to_owned(),
            });
        }
        self.write(|conn| {
            let sql = format!(
                "{SELECT_HOLD} WHERE workspace_id = ?1 AND fingerprint = ?2 AND state IN {ACTIVE}"
            );
            let active = conn
                .prepare_cached(&sql)?
                .query_row(params![new.workspace_id, new.fingerprint], RawHold::from_row)
                .optional()?;
            if let Some(raw) = active {
                return Ok((raw.parse()?, false));
            }
            let approval_id = match new.approval_id {
                Some(id) => id.to_owned(),
                None => format!("appr-{}", Uuid::new_v4()),
            };
            conn.prepare_cached(
                "INSERT INTO approvals (approval_id, workspace_id, tool, fingerprint, summary, \
                 params_json, state, created_at, seal, root_identity) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?8, ?9)",
            )?
            .execute(params![
                approval_id,
                new.workspace_id,
                new.tool.as_str(),
                new.fingerprint,
                new.summary,
                new.params_json,
                now,
                new.seal,
                new.root_identity
            ])?;
            Ok((load(conn, &approval_id)?.ok_or_else(|| vanished(&approval_id))?, true))
        })
    }

    /// The hold with this id, or `Ok(None)`.
    pub fn hold(&self, approval_id: &str) -> Result<Option<HoldRecord>, StoreError> {
        self.read(|conn| load(conn, approval_id))
    }

    /// The newest `limit` holds matching `filter`, newest first.
    pub fn holds(&self, filter: &HoldFilter, limit: usize) -> Result<Vec<HoldRecord>, StoreError> {
        self.read(|conn| {
            let sql = format!(
                "{SELECT_HOLD} WHERE (?1 IS NULL OR workspace_id = ?1) AND (?2 IS NULL OR \
                 state = ?2) ORDER BY created_at DESC, rowid DESC LIMIT ?3"
            );
            let mut statement = conn.prepare_cached(&sql)?;
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let state = filter.state.map(ApprovalState::as_str);
            let rows = statement
                .query_map(params![filter.workspace_id, state, limit], RawHold::from_row)?;
            rows.map(|raw| raw?.parse()).collect()
        })
    }

    /// `pending` → `granted` or `denied` (which scrubs the arguments), stamping `resolved_at`.
    pub fn resolve_hold(
        &self,
        approval_id: &str,
        decision: Decision,
        now: i64,
    ) -> Result<Cas, StoreError> {
        let sql = match decision {
            Decision::Grant => {
                "UPDATE approvals SET state = 'granted', resolved_at = ?2 \
                 WHERE approval_id = ?1 AND state = 'pending'"
            }
            Decision::Deny => {
                "UPDATE approvals SET state = 'denied', resolved_at = ?2, params_json = NULL \
                 WHERE approval_id = ?1 AND state = 'pending'"
            }
        };
        self.swap(approval_id, sql, params![approval_id, now])
    }

    /// `granted` → `denied`: an operator's reset withdraws a grant no resume has claimed
    /// yet (its arguments scrubbed as a denial's are).
    pub fn withdraw_grant(&self, approval_id: &str, now: i64) -> Result<Cas, StoreError> {
        let sql = "UPDATE approvals SET state = 'denied', resolved_at = ?2, params_json = NULL \
                   WHERE approval_id = ?1 AND state = 'granted'";
        self.swap(approval_id, sql, params![approval_id, now])
    }

    /// `granted` → `queued`: a resume of this instance claimed the hold, which it now owns.
    pub fn queue_hold(&self, approval_id: &str) -> Result<Cas, StoreError> {
        let sql = "UPDATE approvals SET state = 'queued', owner = ?2 \
                   WHERE approval_id = ?1 AND state = 'granted'";
        self.swap(approval_id, sql, params![approval_id, self.instance_id()])
    }

    /// `queued` → `resuming`, once the workspace lease is held. With `reserve`, the hold
    /// also gets the ledger id its patch will begin under (kept when it already has one),
    /// so a resume interrupted from here on finds its ledger row by id. Only the hold's
    /// owner moves it.
    pub fn start_resume(&self, approval_id: &str, reserve: bool) -> Result<Cas, StoreError> {
        let minted = reserve.then(|| format!("op-{}", Uuid::new_v4()));
        let sql = "UPDATE approvals SET state = 'resuming', \
                   operation_id = coalesce(operation_id, ?2) \
                   WHERE approval_id = ?1 AND state = 'queued' AND owner IS ?3";
        self.swap(approval_id, sql, params![approval_id, minted, self.instance_id()])
    }

    /// A `resuming` hold gets a new ledger id: its earlier operation was rolled back by
    /// recovery (nothing of it is on disk), so it runs again under the new one.
    pub fn reserve_again(&self, approval_id: &str) -> Result<Cas, StoreError> {
        let minted = format!("op-{}", Uuid::new_v4());
        let sql = "UPDATE approvals SET operation_id = ?2 \
                   WHERE approval_id = ?1 AND state = 'resuming' AND owner IS ?3";
        self.swap(approval_id, sql, params![approval_id, minted, self.instance_id()])
    }

    /// `resuming` → `queued`: the action was refused before anything ran (a process
    /// limit), so the hold can be resumed again, by any server: it is no longer owned.
    pub fn requeue_hold(&self, approval_id: &str) -> Result<Cas, StoreError> {
        let sql = "UPDATE approvals SET state = 'queued', owner = NULL \
                   WHERE approval_id = ?1 AND state = 'resuming' AND owner IS ?2";
        self.swap(approval_id, sql, params![approval_id, self.instance_id()])
    }

    /// `queued` or `resuming` → `consumed`, storing the terminal outcome and scrubbing the
    /// arguments, in one write. Only the hold's owner consumes it.
    pub fn consume_hold(&self, approval_id: &str, result_json: &str) -> Result<Cas, StoreError> {
        let sql = "UPDATE approvals SET state = 'consumed', result_json = ?2, params_json = NULL \
                   WHERE approval_id = ?1 AND state IN ('queued', 'resuming') AND owner IS ?3";
        self.swap(approval_id, sql, params![approval_id, result_json, self.instance_id()])
    }

    /// Replaces a `consumed` hold's stored outcome: an `unknown` patch outcome once start-up
    /// recovery has settled the operation. Any other state is stale and keeps its row.
    pub fn restate_consumed(
        &self,
        approval_id: &str,
        result_json: &str,
    ) -> Result<Cas, StoreError> {
        let sql =
            "UPDATE approvals SET result_json = ?2 WHERE approval_id = ?1 AND state = 'consumed'";
        self.swap(approval_id, sql, params![approval_id, result_json])
    }

    /// Runs one conditional update and reports whether it moved the row.
    pub(super) fn swap(
        &self,
        approval_id: &str,
        sql: &str,
        args: impl rusqlite::Params,
    ) -> Result<Cas, StoreError> {
        self.write(|conn| {
            let changed = conn.prepare_cached(sql)?.execute(args)?;
            let Some(record) = load(conn, approval_id)? else { return Ok(Cas::Missing) };
            Ok(if changed == 1 { Cas::Moved(record) } else { Cas::Stale(record) })
        })
    }
}

fn load(conn: &Connection, approval_id: &str) -> Result<Option<HoldRecord>, StoreError> {
    let sql = format!("{SELECT_HOLD} WHERE approval_id = ?1");
    let raw =
        conn.prepare_cached(&sql)?.query_row(params![approval_id], RawHold::from_row).optional()?;
    raw.map(RawHold::parse).transpose()
}

fn vanished(approval_id: &str) -> StoreError {
    StoreError::CorruptRow {
        operation_id: approval_id.to_owned(),
        detail: "the hold just inserted cannot be read back".to_owned(),
    }
}

/// A row as SQLite holds it, before its texts are checked.
struct RawHold {
    approval_id: String,
    workspace_id: String,
    tool: String,
    fingerprint: String,
    summary: String,
    params_json: Option<String>,
    state: String,
    created_at: i64,
    resolved_at: Option<i64>,
    operation_id: Option<String>,
    result_json: Option<String>,
    seal: Option<String>,
    root_identity: Option<String>,
    owner: Option<String>,
}

impl RawHold {
    fn from_row(row: &Row<'_>) -> rusqlite::Result<RawHold> {
        Ok(RawHold {
            approval_id: row.get(0)?,
            workspace_id: row.get(1)?,
            tool: row.get(2)?,
            fingerprint: row.get(3)?,
            summary: row.get(4)?,
            params_json: row.get(5)?,
            state: row.get(6)?,
            created_at: row.get(7)?,
            resolved_at: row.get(8)?,
            operation_id: row.get(9)?,
            result_json: row.get(10)?,
            seal: row.get(11)?,
            root_identity: row.get(12)?,
            owner: row.get(13)?,
        })
    }

    fn parse(self) -> Result<HoldRecord, StoreError> {
        let corrupt = |detail: String| StoreError::CorruptRow {
            operation_id: self.approval_id.clone(),
            detail,
        };
        let tool = HeldTool::parse(&self.tool)
            .ok_or_else(|| corrupt(format!("tool {:?} is not a held tool", self.tool)))?;
        let state = ApprovalState::parse(&self.state)
            .ok_or_else(|| corrupt(format!("state {:?} is not a hold state", self.state)))?;
        Ok(HoldRecord {
            approval_id: self.approval_id,
            workspace_id: self.workspace_id,
            tool,
            fingerprint: self.fingerprint,
            summary: self.summary,
            params_json: self.params_json,
            state,
            created_at: self.created_at,
            resolved_at: self.resolved_at,
            operation_id: self.operation_id,
            result_json: self.result_json,
            seal: self.seal,
            root_identity: self.root_identity,
            owner: self.owner,
        })
    }
}
