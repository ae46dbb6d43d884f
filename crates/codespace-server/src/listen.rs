//! The HTTP listener's life. It is bound first, before the runner, the ledger and the
//! recovery of interrupted operations ([`bind`]): while the server starts, `/livez` answers
//! 200 and `/readyz` 503 `starting`, and every other path 503 `starting` (nothing reaches
//! the gateway before recovery classified what a crash left). Once the server is ready
//! ([`serve`]), the whole application answers on the same listener, `/readyz` turns 200, and
//! SIGTERM drains it (`drain.rs`).

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use ::http::{StatusCode, header};
use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::Failure;
use crate::cli::ServeArgs;
use crate::config::{self, TokenSource};
use crate::drain::{self, Drain, Drained};
use crate::{http, logging, mcp, person};

/// A listener bound and answering as a starting server.
pub(crate) struct Early {
    local: SocketAddr,
    /// The whole application, once the server is ready.
    app: Arc<OnceLock<Router>>,
    /// The drain SIGTERM runs once the server is ready.
    ready: tokio::sync::oneshot::Sender<Drain>,
    drained: Arc<OnceLock<Drained>>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// Binds `--host`/`--port` and answers there as a starting server.
pub(crate) async fn bind(args: &ServeArgs) -> Result<Early, Failure> {
    let addr_text = format!("{}:{}", bracketed(&args.host), args.port);
    let listener = tokio::net::TcpListener::bind(&addr_text)
        .await
        .map_err(|e| Failure::Runtime(format!("--host/--port {addr_text}: cannot bind: {e}")))?;
    let local: SocketAddr =
        listener.local_addr().map_err(|e| Failure::Runtime(format!("local address: {e}")))?;
    let app: Arc<OnceLock<Router>> = Arc::default();
    let switch = Router::new().fallback(switch).with_state(Arc::clone(&app));
    let (ready, drain) = tokio::sync::oneshot::channel::<Drain>();
    let drained = Arc::new(OnceLock::new());
    let outcome = Arc::clone(&drained);
    let served = tokio::spawn(async move {
        axum::serve(listener, switch)
            .with_graceful_shutdown(async move {
                // Until the server is ready SIGTERM keeps its default action: nothing is
                // under way to drain.
                let Ok(drain) = drain.await else { return std::future::pending().await };
                drain::shutdown_signal().await;
                let _ = outcome.set(drain.run().await);
            })
            .await
    });
    Ok(Early { local, app, ready, drained, served })
}

/// The whole application once it is there, the starting answers before.
async fn switch(State(app): State<Arc<OnceLock<Router>>>, req: Request) -> Response {
    let Some(app) = app.get() else { return starting(req.uri().path()) };
    match app.clone().oneshot(req).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

fn starting(path: &str) -> Response {
    let reason = "the server is starting (opening the workspaces and the ledger, recovering interrupted operations)";
    let (status, body) = match path {
        "/livez" => (StatusCode::OK, serde_json::json!({ "live": true })),
        "/readyz" => (
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({ "ready": false, "state": "starting", "reason": reason }),
        ),
        _ => (
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({ "error": "starting", "reason": format!("{reason}; retry shortly") }),
        ),
    };
    let json = (header::CONTENT_TYPE, "application/json");
    (status, [json, (header::RETRY_AFTER, "1")], body.to_string()).into_response()
}

/// Serves `handler` on the early listener until SIGTERM drains it (or the listener fails).
#[expect(clippy::disallowed_methods, reason = "the token file this server wrote dies with it")]
pub(crate) async fn serve(
    handler: mcp::CodeSpace,
    args: ServeArgs,
    (token, source): (Option<String>, TokenSource),
    person: person::PersonToken,
    early: Early,
) -> Result<(), Failure> {
    let gateway = handler.gateway();
    let health = handler.health();
    let local = early.local;
    let guard = http::Guard::new(
        &args.host,
        local.port(),
        &args.allowed_hosts,
        &args.allowed_origins,
        token.as_deref(),
        Some(person.token()),
    )
    .with_metrics_token(args.metrics_token);
    let shutdown = CancellationToken::new();
    let app = http::router(handler, guard, shutdown.clone());
    logging::serving();
    // A generated token is written only now that the port is ours, named for it.
    let written = match (&source, token.as_deref()) {
        (TokenSource::Generated(dir), Some(token)) => {
            Some(config::write_generated_token(dir, local.port(), token)?)
        }
        _ => None,
    };
    announce(&source, written.as_deref());
    let person_file = person.announce(local.port())?;
    if !crate::is_loopback(&args.host) {
        eprintln!(
            "warning: listening on a non-loopback address ({}); every request still needs the token",
            args.host
        );
    }
    // Ready: the whole application answers before the line that says where it listens.
    let _ = early.app.set(app);
    health.serving();
    let limit = Duration::from_secs(args.drain_timeout_secs);
    let drain = Drain { gateway: gateway.clone(), health, stop: shutdown, limit };
    let _ = early.ready.send(drain);
    let shown = bracketed(&local.ip().to_string());
    eprintln!("listening on http://{shown}:{}/mcp", local.port());
    eprintln!("inbox page for the person at http://{shown}:{}/inbox/", local.port());
    let served = match early.served.await {
        Ok(served) => served.map_err(|e| Failure::Runtime(format!("http server: {e}"))),
        Err(e) => Err(Failure::Runtime(format!("http server: {e}"))),
    };
    if early.drained.get().is_none() {
        // The listener failed without a signal: sessions ending never kill a process, the
        // server ending kills them all.
        gateway.shutdown().await;
    }
    // The token dies with the server that minted it.
    for path in written.into_iter().chain(person_file) {
        let _ = std::fs::remove_file(path);
    }
    served
}

/// Says where the bearer token came from.
fn announce(source: &TokenSource, written: Option<&std::path::Path>) {
    match (source, written) {
        (TokenSource::Generated(_), Some(path)) => {
            eprintln!("bearer token generated and written to {} (mode 0600)", path.display());
        }
        (TokenSource::Generated(_), None) => {}
        (TokenSource::File(path), _) => eprintln!("bearer token read from {}", path.display()),
        (TokenSource::Given, _) => {
            eprintln!("bearer token given by --token / CODESPACE_HTTP_TOKEN");
        }
        (TokenSource::None, _) => {
            eprintln!("warning: --no-auth: requests to /mcp are not authenticated");
        }
    }
}

fn bracketed(host: &str) -> String {
    if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host.to_owned() }
}
