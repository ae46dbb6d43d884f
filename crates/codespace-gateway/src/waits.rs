//! What a process tool waits for before it answers: a `wait_ms` wait (cut to
//! [`MAX_WAIT_MS`], ended early when the client cancels the request), and `exec_command`'s
//! answer after one: the command's state, its exit and the first bytes of its output.

use std::time::Duration;

use codespace_protocol::{
    DEFAULT_READ_PROCESS_BYTES, DispatchStatus, ExecCommandParams, ExecCommandResult,
    MAX_READ_PROCESS_BYTES, MAX_WAIT_MS, OutputChunk,
};
use codespace_runner::{Runner, WaitFor, ops};

use crate::{Gateway, GatewayError};

/// The bytes one reply may carry: `max_bytes` (default 64 KiB), refused beyond 256 KiB.
pub(crate) fn read_limit(max_bytes: Option<u64>) -> Result<usize, GatewayError> {
    let max = max_bytes.unwrap_or(u64::from(DEFAULT_READ_PROCESS_BYTES));
    if max == 0 || max > u64::from(MAX_READ_PROCESS_BYTES) {
        return Err(GatewayError::OutputLimit {
            what: "max_bytes",
            value: max,
            max: u64::from(MAX_READ_PROCESS_BYTES),
        });
    }
    // At most 256 KiB, so the cast cannot truncate.
    Ok(max as usize)
}

/// Waits up to `wait_ms` (cut to [`MAX_WAIT_MS`]) for `what`, or until `cancelled` (the
/// client gave up on the request) resolves. No wait at all without `wait_ms`.
pub(crate) async fn wait_for(
    runner: &Runner,
    id: &str,
    what: WaitFor,
    wait_ms: Option<u64>,
    cancelled: impl Future<Output = ()>,
) -> Result<(), GatewayError> {
    let Some(ms) = wait_ms.filter(|ms| *ms > 0) else { return Ok(()) };
    let limit = Duration::from_millis(ms.min(MAX_WAIT_MS));
    tracing::debug!(process_id = id, asked_ms = ms, "a wait of up to {} ms", limit.as_millis());
    tokio::select! {
        waited = runner.wait(ops::Wait { id: id.to_owned(), what, limit }) => waited.map_err(GatewayError::from),
        () = cancelled => Ok(()),
    }
}

/// What `exec_command` waits for once its command started, taken from its arguments
/// before they move into the start (or into a hold the person grants in the same call).
#[derive(Debug, Clone, Copy)]
pub struct ExecWait {
    wait_ms: Option<u64>,
    max_bytes: Option<u64>,
}

impl From<&ExecCommandParams> for ExecWait {
    fn from(p: &ExecCommandParams) -> ExecWait {
        ExecWait { wait_ms: p.wait_ms, max_bytes: p.max_bytes }
    }
}

impl Gateway {
    /// With `wait_ms`: waits for the started command's exit (or the wait's end, or the
    /// client's cancel), then adds its state, exit and first `max_bytes` of output to
    /// `started`. Without it, `started` as it is. The command is already running, so a
    /// failure after the start (the answer of a lost worker, say) never hides its
    /// `process_id`: the start is answered alone, and `process_status` tells the rest.
    pub async fn exec_wait(
        &self,
        started: ExecCommandResult,
        wait: ExecWait,
        cancelled: impl Future<Output = ()>,
    ) -> Result<ExecCommandResult, GatewayError> {
        if wait.wait_ms.is_none_or(|ms| ms == 0)
            || started.dispatch_status != DispatchStatus::Confirmed
        {
            return Ok(started);
        }
        let max = read_limit(wait.max_bytes)?;
        match self.settle(started.clone(), wait.wait_ms, max, cancelled).await {
            Ok(settled) => Ok(settled),
            Err(e) => {
                tracing::debug!(process_id = %started.process_id, error = %e, "the wait failed: exec_command answers the start alone");
                Ok(started)
            }
        }
    }

    /// Waits for the exit, then reads the output with the state in one runner operation
    /// (taken together, so an `exited` state always comes with the output's end when it
    /// fits in `max`).
    async fn settle(
        &self,
        started: ExecCommandResult,
        wait_ms: Option<u64>,
        max: usize,
        cancelled: impl Future<Output = ()>,
    ) -> Result<ExecCommandResult, GatewayError> {
        let id = &started.process_id;
        wait_for(&self.runner, id, WaitFor::Exit, wait_ms, cancelled).await?;
        let job = ops::ReadOutput { id: id.clone(), cursor: 0, max };
        let ops::OutputRead { chunk: read, status: st } = self.runner.run(job).await?;
        Ok(ExecCommandResult {
            state: Some(st.state),
            termination: st.termination,
            exit_code: st.exit_code,
            signal: st.signal,
            output: Some(OutputChunk {
                chunk: crate::text_of(read.chunk).0,
                cursor: read.cursor,
                eof: read.eof,
                output_lost: read.output_lost,
            }),
            ..started
        })
    }
}
