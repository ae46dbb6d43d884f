//! What a long call hears from its client and says back while it runs: a cancellation
//! (`notifications/cancelled`) raises the walk's stop flag, and a `progressToken` gets
//! `notifications/progress` from the walk's counters, or, for a `wait_ms` wait, every few
//! seconds while it waits.

use std::time::Duration;

use codespace_fs::{Cancel, Progress};
use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use tokio::task::JoinHandle;

/// How often a running find or grep reports progress; a report is sent only when the
/// counters moved, so an idle wait costs nothing.
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// How often a waiting call reports that it still waits: often enough that a client which
/// restarts its request timeout on progress (60 s is common) never gives up on a wait, and
/// seldom enough to cost nothing.
const WAIT_PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// The stop flag and the counters of one blocking find or grep, tied to its request: the
/// flag is raised when the request's token is cancelled, and the counters are reported
/// while the request carries a progress token. Dropping it (the call ended) stops both.
pub(crate) struct CallSignals {
    pub(crate) cancel: Cancel,
    pub(crate) progress: Progress,
    watch: JoinHandle<()>,
    report: Option<JoinHandle<()>>,
}

impl CallSignals {
    pub(crate) fn new(context: &RequestContext<RoleServer>) -> CallSignals {
        let cancel = Cancel::new();
        let (raise, ct) = (cancel.clone(), context.ct.clone());
        let watch = tokio::spawn(async move {
            ct.cancelled().await;
            raise.cancel();
        });
        let progress = Progress::new();
        let report = context.meta.get_progress_token().map(|token| {
            let (peer, counters) = (context.peer.clone(), progress.clone());
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(PROGRESS_EVERY);
                tick.tick().await;
                let mut last = 0;
                loop {
                    tick.tick().await;
                    let (entries, files) = (counters.entries(), counters.files_searched());
                    let done = entries + files;
                    if done == last {
                        continue;
                    }
                    last = done;
                    let message = format!("{entries} entries walked, {files} files searched");
                    let note = ProgressNotificationParam::new(token.clone(), done as f64)
                        .with_message(message);
                    if peer.notify_progress(note).await.is_err() {
                        return;
                    }
                }
            })
        });
        CallSignals { cancel, progress, watch, report }
    }
}

impl Drop for CallSignals {
    fn drop(&mut self) {
        self.watch.abort();
        if let Some(report) = &self.report {
            report.abort();
        }
    }
}

/// The heartbeat of one waiting call whose request carries a progress token: a report
/// every [`WAIT_PROGRESS_EVERY`] (the seconds waited so far, always rising) until it is
/// dropped (the call ended). Nothing without a token, or for a wait that ends sooner.
pub(crate) struct WaitProgress(Option<JoinHandle<()>>);

impl WaitProgress {
    pub(crate) fn new(context: &RequestContext<RoleServer>) -> WaitProgress {
        WaitProgress(context.meta.get_progress_token().map(|token| {
            let peer = context.peer.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(WAIT_PROGRESS_EVERY);
                tick.tick().await;
                let started = tokio::time::Instant::now();
                loop {
                    tick.tick().await;
                    let waited = started.elapsed().as_secs();
                    let note = ProgressNotificationParam::new(token.clone(), waited as f64)
                        .with_message(format!("still waiting after {waited} s"));
                    if peer.notify_progress(note).await.is_err() {
                        return;
                    }
                }
            })
        }))
    }
}

impl Drop for WaitProgress {
    fn drop(&mut self) {
        if let Some(report) = &self.0 {
            report.abort();
        }
    }
}
