//! What a long call hears from its client and says back while it runs: a cancellation
//! (`notifications/cancelled`) raises the walk's stop flag, and a `progressToken` gets
//! `notifications/progress` from the walk's counters.

use std::time::Duration;

use codespace_fs::{Cancel, Progress};
use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use tokio::task::JoinHandle;

/// How often a running find or grep reports progress; a report is sent only when the
/// counters moved, so an idle wait costs nothing.
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

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
