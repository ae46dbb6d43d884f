//! The dispatch of one `tools/call` to its gateway method, driven as the tool's row of
//! `for_each_tool!` says: plain, a walk (cancel and progress), held (a hold put to the
//! person), a wait (ended by a cancel), or held then waited for.

use codespace_gateway::Gateway;
use codespace_protocol::tool;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::CodeSpace;
use super::answer::{Shape, run, run_asked};
use crate::metrics::Metrics;
use crate::mrtr::{Asked, Retry};
use crate::signals::{CallSignals, WaitProgress};

/// One tool call, driven as its table row says (see `for_each_tool!`).
macro_rules! drive {
    (plain, $name:ident, $call:expr) => {{
        let Call { shape, name, args, gateway: g, metrics: m, .. } = $call;
        run((shape, name, m), args, |p| g.$name(p)).await
    }};
    // A cancellation raises the walk's stop flag; a progress token gets its counts.
    (walk, $name:ident, $call:expr) => {{
        let Call { shape, name, args, gateway: g, context, metrics: m, .. } = $call;
        let signals = CallSignals::new(context);
        let (cancel, progress) = (signals.cancel.clone(), signals.progress.clone());
        run((shape, name, m), args, |p| g.$name(p, cancel, progress)).await
    }};
    // A fresh hold may be put to the person, and its result returned in the same call (or
    // asked in the result, on 2026-07-28, and run in the retry that answers).
    (held, $name:ident, $call:expr) => {{
        let Call { shape, name, args, gateway: g, context, elicit_wait: wait, metrics: m, retry } =
            $call;
        run_asked((shape, name, m), args, |p| async move {
            let call = |p| g.$name(p);
            crate::mrtr::held(g, context, wait, retry, (name, p), call, |r| r.$name).await
        })
        .await
    }};
    // A wait_ms wait ends when the client cancels the request; a progress token hears
    // that it still waits.
    (wait, $name:ident, $call:expr) => {{
        let Call { shape, name, args, gateway: g, context, metrics: m, .. } = $call;
        tracing::debug!(
            "request {} ({name}) started: a wait ends when it is cancelled",
            context.id
        );
        let _progress = WaitProgress::new(context);
        let answer = run((shape, name, m), args, |p| g.$name(p, context.ct.cancelled())).await;
        note_cancelled(context, name);
        answer
    }};
    // `held`, then `wait` for the command it started (there, or in the hold the person
    // granted in the same call or in the retry that answered).
    (held_wait, $name:ident, $call:expr) => {{
        let Call { shape, name, args, gateway: g, context, elicit_wait: wait, metrics: m, retry } =
            $call;
        tracing::debug!(
            "request {} ({name}) started: a wait ends when it is cancelled",
            context.id
        );
        let _progress = WaitProgress::new(context);
        let answer = run_asked((shape, name, m), args, |p| async move {
            let settle = codespace_gateway::ExecWait::from(&p);
            let call = |p| g.$name(p);
            let asked = crate::mrtr::held(g, context, wait, retry, (name, p), call, |r| r.$name);
            match asked.await? {
                Asked::Ran(started) => {
                    g.exec_wait(started, settle, context.ct.cancelled()).await.map(Asked::Ran)
                }
                Asked::Input(question) => Ok(Asked::Input(question)),
            }
        })
        .await;
        note_cancelled(context, name);
        answer
    }};
}

/// What one `tools/call` brings to its tool.
struct Call<'a> {
    shape: Shape,
    /// The tool table's name, never the request's text: it labels the call's metrics.
    name: &'static str,
    args: Option<rmcp::model::JsonObject>,
    gateway: &'a Gateway,
    context: &'a RequestContext<RoleServer>,
    elicit_wait: std::time::Duration,
    metrics: &'a Metrics,
    /// What a retry of an `input_required` answer brought back.
    retry: Retry,
}

/// The dispatch: each tool of the table to its gateway method, driven as its row says.
macro_rules! dispatch {
    ($($name:ident, $konst:ident, $params:ty => $result:ty, $effect:ident, $drive:ident, $title:literal, $description:literal;)*) => {
        impl CodeSpace {
            pub(super) async fn dispatch(
                &self,
                name: &str,
                request: CallToolRequestParams,
                context: &RequestContext<RoleServer>,
            ) -> Option<Result<CallToolResponse, McpError>> {
                let name: &'static str = match name {
                    $(tool::$konst => tool::$konst,)*
                    _ => return None,
                };
                let call = Call {
                    shape: self.shape.get().copied().unwrap_or(Shape::WithTextCopy),
                    name,
                    args: request.arguments,
                    gateway: &self.gateway,
                    context,
                    elicit_wait: self.elicit_wait,
                    metrics: &self.metrics,
                    retry: Retry { state: request.request_state, responses: request.input_responses },
                };
                Some(match name {
                    $(tool::$konst => drive!($drive, $name, call),)*
                    _ => return None,
                })
            }
        }
    };
}

codespace_protocol::for_each_tool!(dispatch);

/// Logs a waiting call that ended because its request was cancelled: rmcp sends no reply to
/// a cancelled request, so this line is the only trace that the wait ended then.
fn note_cancelled(context: &RequestContext<RoleServer>, name: &str) {
    if context.ct.is_cancelled() {
        tracing::debug!(
            "request {} ({name}) cancelled: its wait ended, no reply is sent",
            context.id
        );
    }
}
