//! A resume's wait for a person's decision on a pending hold (`operation_resume` with
//! `wait_ms`). The decision may come from this process (`approval_resolve`, the `/inbox`
//! page, elicitation: they ring `Gateway::decisions`) or from another process on the same
//! ledger (`codespace approvals grant|deny`), which only the ledger tells: so the wait
//! also reads the hold's row every [`LOOK_EVERY`], a cheap read on the blocking pool.

use std::time::Duration;

use codespace_protocol::{ApprovalState, MAX_WAIT_MS};
use tokio::time::Instant;

use super::resume::load;
use crate::{Gateway, GatewayError};

/// How often a waiting resume reads the hold's row for a decision made in another process.
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// Waits up to `wait_ms` (cut to [`MAX_WAIT_MS`]) while the hold is pending, or until
/// `cancelled` (the client gave up on the request). No wait without `wait_ms`, or for a
/// hold that is not pending; a missing hold is `APPROVAL_NOT_FOUND` at once.
pub(super) async fn decision(
    gw: &Gateway,
    id: &str,
    wait_ms: Option<u64>,
    cancelled: impl Future<Output = ()>,
) -> Result<(), GatewayError> {
    let Some(ms) = wait_ms.filter(|ms| *ms > 0) else { return Ok(()) };
    let deadline = Instant::now() + Duration::from_millis(ms.min(MAX_WAIT_MS));
    tracing::debug!(approval_id = id, asked_ms = ms, "waiting for a decision on the hold");
    let mut cancelled = std::pin::pin!(cancelled);
    loop {
        let hold = load(gw, id).await?;
        if hold.state != ApprovalState::Pending || Instant::now() >= deadline {
            return Ok(());
        }
        // Taken before the nap: a decision in this process from here on wakes it.
        let decided_here = gw.decisions.notified();
        let nap = tokio::time::sleep_until(deadline.min(Instant::now() + LOOK_EVERY));
        tokio::select! {
            () = decided_here => {}
            () = nap => {}
            () = &mut cancelled => return Ok(()),
        }
    }
}
