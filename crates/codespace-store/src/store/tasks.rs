//! Tasks of the MCP Tasks extension ([`TaskRow`]): written before the client hears of
//! them, settled once, and taken over from a dead owner with one compare-and-swap.

use codespace_types::TaskState;
use rusqlite::{OptionalExtension, Row, params};

use super::Store;
use crate::error::StoreError;

/// One task as the ledger keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRow {
    /// `task-<uuid v4>`, minted by the server.
    pub task_id: String,
    /// The tool the task runs.
    pub tool: String,
    pub workspace_id: Option<String>,
    /// `apply_patch`: the key its operation is recorded under in `workspace_id`.
    pub operation_key: Option<String>,
    /// A command task: the process it started.
    pub process_id: Option<String>,
    /// The instance running it; `None` for nobody alive.
    pub owner: Option<String>,
    pub state: TaskState,
    pub status_message: Option<String>,
    /// A completed task's tool result (JSON).
    pub result: Option<String>,
    /// A failed task's JSON-RPC error (JSON).
    pub error: Option<String>,
    /// `tasks/cancel` asked for it and the owner has not settled it yet.
    pub cancel_requested: bool,
    /// The confirmation hold the task waits (or waited) on.
    pub approval_id: Option<String>,
    /// While `input_required`: the requests still unanswered (JSON, key to request).
    pub input_requests: Option<String>,
    pub ttl_ms: Option<u64>,
    /// Unix milliseconds.
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

/// How a task settles: its terminal state and what it keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSettle {
    /// `Completed`, `Failed` or `Cancelled` (anything else is refused).
    pub state: TaskState,
    pub status_message: Option<String>,
    pub result: Option<String>,
    pub error: Option<String>,
}

const COLUMNS: &str = "task_id, tool, workspace_id, operation_key, process_id, owner, state, \
                       status_message, result, error, cancel_requested, ttl_ms, created_at_ms, \
                       updated_at_ms, approval_id, input_requests";

fn row(r: &Row<'_>) -> rusqlite::Result<(TaskRow, String)> {
    let state: String = r.get(6)?;
    let ttl: Option<i64> = r.get(11)?;
    Ok((
        TaskRow {
            task_id: r.get(0)?,
            tool: r.get(1)?,
            workspace_id: r.get(2)?,
            operation_key: r.get(3)?,
            process_id: r.get(4)?,
            owner: r.get(5)?,
            state: TaskState::Working,
            status_message: r.get(7)?,
            result: r.get(8)?,
            error: r.get(9)?,
            cancel_requested: r.get::<_, i64>(10)? != 0,
            ttl_ms: ttl.and_then(|t| u64::try_from(t).ok()),
            created_at_ms: r.get(12)?,
            updated_at_ms: r.get(13)?,
            approval_id: r.get(14)?,
            input_requests: r.get(15)?,
        },
        state,
    ))
}

impl Store {
    /// Records a new task owned by this process's instance, committed (fsynced) before it
    /// returns: the task exists before the client hears its id.
    pub fn create_task(&self, task: &TaskRow) -> Result<(), StoreError> {
        let owner = self.instance_id().map(str::to_owned);
        let ttl = task.ttl_ms.map(|t| i64::try_from(t).unwrap_or(i64::MAX));
        self.write(|conn| {
            conn.prepare_cached(&format!(
                "INSERT INTO tasks ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL, NULL, \
                 0, ?9, ?10, ?10, NULL, NULL)"
            ))?
            .execute(params![
                task.task_id,
                task.tool,
                task.workspace_id,
                task.operation_key,
                task.process_id,
                owner,
                task.state.as_str(),
                task.status_message,
                ttl,
                task.created_at_ms,
            ])?;
            Ok(())
        })
    }

    /// The task `task_id`; `Ok(None)` when the ledger has none.
    pub fn task(&self, task_id: &str) -> Result<Option<TaskRow>, StoreError> {
        let found = self.read(|conn| {
            Ok(conn
                .prepare_cached(&format!("SELECT {COLUMNS} FROM tasks WHERE task_id = ?1"))?
                .query_row(params![task_id], row)
                .optional()?)
        })?;
        let Some((mut task, state)) = found else { return Ok(None) };
        task.state = state.parse().map_err(|e: codespace_types::UnknownWord| {
            StoreError::CorruptRow { operation_id: task_id.to_owned(), detail: e.to_string() }
        })?;
        Ok(Some(task))
    }

    /// Notes the process a command task started, or a non-terminal state change (`working`
    /// and `input_required` both ways, with its message; back to `working` its input
    /// requests go); `false` once it has settled.
    pub fn update_task(
        &self,
        task_id: &str,
        state: TaskState,
        status_message: Option<&str>,
        process_id: Option<&str>,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        if state.is_terminal() {
            return Err(StoreError::InvalidInput {
                reason: format!("a task settles through settle_task, not to {state}"),
            });
        }
        self.write(|conn| {
            let changed = conn
                .prepare_cached(
                    "UPDATE tasks SET state = ?2, status_message = ?3, \
                     process_id = coalesce(?4, process_id), updated_at_ms = ?5, \
                     input_requests = CASE WHEN ?2 = 'working' THEN NULL ELSE input_requests END \
                     WHERE task_id = ?1 AND state IN ('working', 'input_required')",
                )?
                .execute(params![task_id, state.as_str(), status_message, process_id, now_ms])?;
            Ok(changed == 1)
        })
    }

    /// Settles the task once: `false` when it had settled already (the first settlement
    /// stands, as an operation's terminal status does).
    pub fn settle_task(
        &self,
        task_id: &str,
        settle: &TaskSettle,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        self.settle_from(task_id, settle, now_ms, Unsettled::Any)
    }

    /// Puts an unsettled task in `input_required`, waiting for the answers to
    /// `input_requests` (JSON, key to request: those still unanswered), and on the hold
    /// `approval_id` when it waits on one; `false` once it has settled.
    pub fn await_task_input(
        &self,
        task_id: &str,
        approval_id: Option<&str>,
        input_requests: &str,
        status_message: Option<&str>,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        self.write(|conn| {
            let changed = conn
                .prepare_cached(
                    "UPDATE tasks SET state = 'input_required', input_requests = ?3, \
                     approval_id = coalesce(?2, approval_id), status_message = ?4, \
                     updated_at_ms = ?5 \
                     WHERE task_id = ?1 AND state IN ('working', 'input_required')",
                )?
                .execute(params![task_id, approval_id, input_requests, status_message, now_ms])?;
            Ok(changed == 1)
        })
    }

    /// Moves a task from `input_required` back to `working`, owned by this process's
    /// instance from now on: the answer it waited for came. Of every process delivering an
    /// answer at once exactly one gets `true` and runs the rest of the task; `false` when the
    /// task no longer waits, or its cancel was asked for.
    pub fn resume_task(&self, task_id: &str, now_ms: i64) -> Result<bool, StoreError> {
        let me = self.instance_id().map(str::to_owned);
        self.write(|conn| {
            let changed = conn
                .prepare_cached(
                    "UPDATE tasks SET state = 'working', input_requests = NULL, \
                     status_message = NULL, owner = ?2, updated_at_ms = ?3 \
                     WHERE task_id = ?1 AND state = 'input_required' AND cancel_requested = 0",
                )?
                .execute(params![task_id, me, now_ms])?;
            Ok(changed == 1)
        })
    }

    /// Settles a task only while it waits in `input_required` (nothing of it runs, so
    /// whoever reads the cancel may settle it); `false` once it runs again or has settled.
    pub fn settle_waiting_task(
        &self,
        task_id: &str,
        settle: &TaskSettle,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        self.settle_from(task_id, settle, now_ms, Unsettled::Waiting)
    }

    /// Settles the task if it is still in one of `from`'s states.
    fn settle_from(
        &self,
        task_id: &str,
        settle: &TaskSettle,
        now_ms: i64,
        from: Unsettled,
    ) -> Result<bool, StoreError> {
        if !settle.state.is_terminal() {
            return Err(StoreError::InvalidInput {
                reason: format!("a task settles in a terminal state, not {}", settle.state),
            });
        }
        // One settlement, two guards: the SET is written once.
        macro_rules! settle_where {
            ($guard:literal) => {
                concat!(
                    "UPDATE tasks SET state = ?2, status_message = ?3, result = ?4, error = ?5, ",
                    "updated_at_ms = ?6, input_requests = NULL WHERE task_id = ?1 AND ",
                    $guard
                )
            };
        }
        let sql = match from {
            Unsettled::Any => settle_where!("state IN ('working', 'input_required')"),
            Unsettled::Waiting => settle_where!("state = 'input_required'"),
        };
        self.write(|conn| {
            let changed = conn.prepare_cached(sql)?.execute(params![
                task_id,
                settle.state.as_str(),
                settle.status_message,
                settle.result,
                settle.error,
                now_ms
            ])?;
            Ok(changed == 1)
        })
    }

    /// The unsettled tasks of this process's instance whose cancel was asked for (by any
    /// server sharing the ledger), oldest first.
    pub fn cancelled_tasks(&self) -> Result<Vec<String>, StoreError> {
        let Some(me) = self.instance_id().map(str::to_owned) else { return Ok(Vec::new()) };
        self.read(|conn| {
            let mut statement = conn.prepare_cached(
                "SELECT task_id FROM tasks WHERE owner = ?1 AND cancel_requested = 1 \
                 AND state IN ('working', 'input_required') ORDER BY created_at_ms",
            )?;
            let ids = statement.query_map(params![me], |r| r.get(0))?;
            Ok(ids.collect::<rusqlite::Result<Vec<String>>>()?)
        })
    }

    /// How many tasks wait in `input_required` on the hold `approval_id`.
    pub fn tasks_waiting_on(&self, approval_id: &str) -> Result<u64, StoreError> {
        self.read(|conn| {
            Ok(conn
                .prepare_cached(
                    "SELECT count(*) FROM tasks \
                     WHERE approval_id = ?1 AND state = 'input_required'",
                )?
                .query_row(params![approval_id], |r| r.get::<_, i64>(0))
                .map(|n| n.unsigned_abs())?)
        })
    }

    /// Marks an unsettled task for cancellation (its owner stops it and settles it
    /// `cancelled`); `false` when it had settled already or is unknown.
    pub fn request_task_cancel(&self, task_id: &str, now_ms: i64) -> Result<bool, StoreError> {
        self.write(|conn| {
            let changed = conn
                .prepare_cached(
                    "UPDATE tasks SET cancel_requested = 1, updated_at_ms = ?2 \
                     WHERE task_id = ?1 AND state IN ('working', 'input_required')",
                )?
                .execute(params![task_id, now_ms])?;
            Ok(changed == 1)
        })
    }

    /// Takes an unsettled task over from `from`, its owner as read (dead, or `None`): of
    /// every process that noticed, exactly one gets `true` and settles it.
    pub fn take_over_task(&self, task_id: &str, from: Option<&str>) -> Result<bool, StoreError> {
        let me = self.instance_id().map(str::to_owned);
        self.write(|conn| {
            let changed = conn
                .prepare_cached(
                    "UPDATE tasks SET owner = ?3 WHERE task_id = ?1 AND owner IS ?2 \
                     AND state IN ('working', 'input_required')",
                )?
                .execute(params![task_id, from, me])?;
            Ok(changed == 1)
        })
    }
}

/// Which unsettled states a settlement may end.
#[derive(Debug, Clone, Copy)]
enum Unsettled {
    /// `working` or `input_required`.
    Any,
    /// `input_required` only.
    Waiting,
}

#[cfg(test)]
mod tests;
