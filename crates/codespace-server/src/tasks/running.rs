//! The tasks this server runs now: each one's cancel signal, and (for a task that asks its
//! client in memory, the conformance fixtures) where `tasks/update` delivers its answers.
//! A cancel recorded in the ledger by another server sharing it reaches the owner here: once
//! this server ran a task it looks at the ledger every [`CANCEL_POLL`] for cancels of its
//! own unsettled tasks, raises the signal of each one it runs (a command's tree then ends
//! with its grace) and settles a waiting one `cancelled`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use codespace_gateway::Gateway;
use rmcp::model::InputResponses;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How often the ledger is read for cancels of this server's tasks.
pub(crate) const CANCEL_POLL: Duration = Duration::from_millis(500);

/// The tasks this server runs now, shared by every session.
#[derive(Default)]
pub(crate) struct Running {
    tokens: Mutex<HashMap<String, CancellationToken>>,
    inboxes: Mutex<HashMap<String, mpsc::UnboundedSender<InputResponses>>>,
    watching: AtomicBool,
}

impl Running {
    /// Notes `task_id` as running here: its cancel signal.
    pub(super) fn add(&self, task_id: &str) -> CancellationToken {
        let token = CancellationToken::new();
        let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        tokens.insert(task_id.to_owned(), token.clone());
        token
    }

    /// The task no longer runs here.
    pub(super) fn remove(&self, task_id: &str) {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner).remove(task_id);
        self.inboxes.lock().unwrap_or_else(PoisonError::into_inner).remove(task_id);
    }

    /// Raises the task's cancel signal; `false` when it does not run here.
    pub(super) fn cancel(&self, task_id: &str) -> bool {
        let tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        tokens.get(task_id).map(CancellationToken::cancel).is_some()
    }

    /// Where the answers `tasks/update` delivers to `task_id` arrive, while it runs here.
    pub(super) fn inbox(&self, task_id: &str) -> mpsc::UnboundedReceiver<InputResponses> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.inboxes.lock().unwrap_or_else(PoisonError::into_inner).insert(task_id.to_owned(), tx);
        rx
    }

    /// Delivers answers to a task asking in memory here; `false` when none does.
    pub(super) fn deliver(&self, task_id: &str, responses: InputResponses) -> bool {
        let inboxes = self.inboxes.lock().unwrap_or_else(PoisonError::into_inner);
        inboxes.get(task_id).is_some_and(|tx| tx.send(responses).is_ok())
    }

    /// Starts looking at the ledger for cancels of this server's tasks (once).
    pub(super) fn watch(self: &Arc<Self>, gateway: &Arc<Gateway>) {
        if self.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        tokio::spawn(poll(gateway.clone(), Arc::downgrade(self)));
    }
}

async fn poll(gateway: Arc<Gateway>, running: Weak<Running>) {
    loop {
        tokio::time::sleep(CANCEL_POLL).await;
        let Some(running) = running.upgrade() else { return };
        let ids = match gateway.task_cancels().await {
            Ok(ids) => ids,
            Err(e) => {
                tracing::debug!(error = %e, "the ledger's task cancels could not be read");
                continue;
            }
        };
        for task_id in ids {
            if running.cancel(&task_id) {
                tracing::debug!(task_id, "a cancel recorded in the ledger stops the task");
                continue;
            }
            let settle =
                super::run::cancelled("tasks/cancel: it waited for input; nothing of it ran");
            if let Err(e) = gateway.task_cancel_waiting(task_id.clone(), settle).await {
                tracing::debug!(task_id, error = %e, "a waiting task's cancel was not recorded");
            }
        }
    }
}
