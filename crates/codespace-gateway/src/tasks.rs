//! The ledger's tasks (the MCP Tasks extension), each call on the blocking pool: created
//! before the client hears of them, changed and settled once by their owner, and taken
//! over from an owner that is gone.

use codespace_store::{TaskRow, TaskSettle};
use codespace_types::TaskState;

use crate::{Gateway, GatewayError};

/// Unix milliseconds now.
fn now_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl Gateway {
    /// Records `task` (its creation time now) as this server's; it is committed when this
    /// returns, so a `CreateTaskResult` sent after it names a task that survives a restart.
    pub async fn task_create(&self, mut task: TaskRow) -> Result<TaskRow, GatewayError> {
        task.created_at_ms = now_ms();
        task.updated_at_ms = task.created_at_ms;
        task.owner = self.ledger.instance_id();
        self.ledger
            .run(move |store| {
                store.create_task(&task)?;
                Ok(task)
            })
            .await
    }

    /// The task `task_id` as the ledger has it; `None` when unknown.
    pub async fn task(&self, task_id: String) -> Result<Option<TaskRow>, GatewayError> {
        self.ledger.run(move |store| Ok(store.task(&task_id)?)).await
    }

    /// Moves an unsettled task between `working` and `input_required`, or notes its
    /// process; `false` once it settled.
    pub async fn task_progress(
        &self,
        task_id: String,
        state: TaskState,
        message: Option<String>,
        process_id: Option<String>,
    ) -> Result<bool, GatewayError> {
        self.ledger
            .run(move |store| {
                let (message, process) = (message.as_deref(), process_id.as_deref());
                Ok(store.update_task(&task_id, state, message, process, now_ms())?)
            })
            .await
    }

    /// Settles the task once; `false` when it had settled already.
    pub async fn task_settle(
        &self,
        task_id: String,
        settle: TaskSettle,
    ) -> Result<bool, GatewayError> {
        self.ledger.run(move |store| Ok(store.settle_task(&task_id, &settle, now_ms())?)).await
    }

    /// Puts the task in `input_required`, waiting for the answers to `input_requests` (JSON,
    /// key to request), on the hold `approval_id` when it waits on one; `false` once it
    /// settled.
    pub async fn task_await_input(
        &self,
        task_id: String,
        approval_id: Option<String>,
        input_requests: String,
        message: Option<String>,
    ) -> Result<bool, GatewayError> {
        self.ledger
            .run(move |store| {
                let (hold, message) = (approval_id.as_deref(), message.as_deref());
                Ok(store.await_task_input(&task_id, hold, &input_requests, message, now_ms())?)
            })
            .await
    }

    /// Takes a waiting task back to `working`, this server its owner: `true` for exactly one
    /// of the servers an answer reached, which runs the rest of it; `false` when it no longer
    /// waits or its cancel was asked for.
    pub async fn task_resume(&self, task_id: String) -> Result<bool, GatewayError> {
        self.ledger.run(move |store| Ok(store.resume_task(&task_id, now_ms())?)).await
    }

    /// Cancels a task waiting in `input_required` (nothing of it runs): settles it with
    /// `settle`, and withdraws the hold it waited on (denied while pending, an unclaimed
    /// grant taken back) unless another waiting task shares that hold, so nobody is asked
    /// about a request no one waits for; `false` once it runs again or has settled.
    pub async fn task_cancel_waiting(
        &self,
        task_id: String,
        settle: TaskSettle,
    ) -> Result<bool, GatewayError> {
        self.ledger
            .run(move |store| {
                if !store.settle_waiting_task(&task_id, &settle, now_ms())? {
                    return Ok(false);
                }
                if let Some(hold) = store.task(&task_id)?.and_then(|t| t.approval_id)
                    && store.tasks_waiting_on(&hold)? == 0
                    && crate::holds::withdraw(store, &hold)?
                {
                    tracing::info!(task_id, approval_id = %hold, "the cancelled task's hold is withdrawn");
                }
                Ok(true)
            })
            .await
    }

    /// This server's unsettled tasks whose cancel any server sharing the ledger recorded.
    pub async fn task_cancels(&self) -> Result<Vec<String>, GatewayError> {
        self.ledger.run(move |store| Ok(store.cancelled_tasks()?)).await
    }

    /// Records that the client cancelled the task; `false` when it had settled already.
    pub async fn task_cancel(&self, task_id: String) -> Result<bool, GatewayError> {
        self.ledger.run(move |store| Ok(store.request_task_cancel(&task_id, now_ms())?)).await
    }

    /// An unsettled task whose owner is gone (its server exited, however it exited) is
    /// taken over by this server with one compare-and-swap; `true` when this call won it
    /// and must settle it. A task of a live server (this one included) is left alone.
    pub async fn task_take_over(&self, task: &TaskRow) -> Result<bool, GatewayError> {
        if task.state.is_terminal() {
            return Ok(false);
        }
        let (id, owner) = (task.task_id.clone(), task.owner.clone());
        self.ledger
            .run(move |store| {
                if store.owner_alive(owner.as_deref()) {
                    return Ok(false);
                }
                Ok(store.take_over_task(&id, owner.as_deref())?)
            })
            .await
    }
}
