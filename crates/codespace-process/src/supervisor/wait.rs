//! Waiting for a process's progress without polling: enough new output past a cursor, or
//! the exit. A waiter holds no lock while it waits (it subscribes to the handle's progress
//! signal, then checks the state under the state lock and lets go of it), so every other
//! call on this or another process goes on meanwhile.

use std::time::Duration;

use super::Supervisor;
use super::handle::Proc;
use crate::error::ProcError;
use crate::types::WaitFor;

impl Supervisor {
    /// Waits until `what` has happened or `limit` has passed, whichever comes first; then
    /// the caller reads or asks for the status as usual. Dropping the future ends the wait
    /// (a cancelled request). [`ProcError::NotFound`] for an unknown handle.
    pub async fn wait(&self, id: &str, what: WaitFor, limit: Duration) -> Result<(), ProcError> {
        let proc = self.get(id)?;
        let mut progress = proc.progress.subscribe();
        let until_ready = async {
            while !ready(&proc, what) {
                // The sender lives in the handle we hold, so this cannot fail; stop anyway
                // if it ever does rather than spin.
                if progress.changed().await.is_err() {
                    break;
                }
            }
        };
        // Elapsing is the normal end of a wait with nothing new.
        let _ = tokio::time::timeout(limit, until_ready).await;
        Ok(())
    }
}

fn ready(proc: &Proc, what: WaitFor) -> bool {
    let st = proc.state();
    // Once exited, the output is complete: nothing else is coming to wait for. A cursor
    // past the end is not waited on either: the read that follows refuses it.
    let exited = st.exit.is_some();
    match what {
        WaitFor::Output { cursor, min } => {
            let total = st.output.total();
            exited || total < cursor || total - cursor >= min.max(1)
        }
        WaitFor::Exit => exited,
    }
}
