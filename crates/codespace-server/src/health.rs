//! The pod's endpoints beside `/mcp`: `GET /livez` (the process serves HTTP: always 200),
//! `GET /readyz` (200 only while serving; 503 with the reason while starting, while
//! draining after SIGTERM, when the ledger refuses writes or when the runner worker is
//! lost), `GET /metrics` (the Prometheus text format, `metrics.rs`) and `POST /reset` (an
//! operator's reset for warm reuse, with the person token: `Gateway::reset`). The probes
//! need no token and no Host check: they answer a state word and a reason, nothing else.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use codespace_gateway::Gateway;
use http::{StatusCode, header};

use crate::metrics::Metrics;

/// Where the server is in its life, as `/readyz` reports it.
#[derive(Debug)]
pub struct Health(AtomicU8);

const STARTING: u8 = 0;
const SERVING: u8 = 1;
const DRAINING: u8 = 2;

impl Health {
    /// Starting: `/readyz` answers 503 until [`Health::serving`].
    pub fn new() -> Arc<Health> {
        Arc::new(Health(AtomicU8::new(STARTING)))
    }

    /// Recovery is done and the listener is ours.
    pub fn serving(&self) {
        let _ = self.0.compare_exchange(STARTING, SERVING, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// SIGTERM: from now on `/readyz` answers 503 for good.
    pub fn draining(&self) {
        self.0.store(DRAINING, Ordering::SeqCst);
    }

    fn state(&self) -> u8 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Paths served without any guard.
pub(crate) fn is_probe(path: &str) -> bool {
    matches!(path, "/livez" | "/readyz")
}

#[derive(Clone)]
struct Pod {
    gateway: Arc<Gateway>,
    health: Arc<Health>,
    metrics: Arc<Metrics>,
}

/// `/livez`, `/readyz` and `/metrics`.
pub(crate) fn routes(gateway: Arc<Gateway>, health: Arc<Health>, metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route("/livez", get(livez))
        .route("/readyz", get(readyz))
        .route("/metrics", get(scrape))
        .route("/reset", post(reset))
        .with_state(Pod { gateway, health, metrics })
}

fn answer(status: StatusCode, body: serde_json::Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

async fn livez() -> Response {
    answer(StatusCode::OK, serde_json::json!({ "live": true }))
}

async fn readyz(State(pod): State<Pod>) -> Response {
    let not_ready = match pod.health.state() {
        STARTING => Some(("starting", "the server is starting".to_owned())),
        DRAINING => Some((
            "draining",
            "the server is draining after SIGTERM: no new patch or command starts".to_owned(),
        )),
        _ => pod.gateway.unready().await.map(|reason| ("unhealthy", reason)),
    };
    match not_ready {
        None => answer(StatusCode::OK, serde_json::json!({ "ready": true, "state": "serving" })),
        Some((state, reason)) => answer(
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({ "ready": false, "state": state, "reason": reason }),
        ),
    }
}

async fn reset(State(pod): State<Pod>) -> Response {
    match pod.gateway.reset().await {
        Ok(report) => answer(StatusCode::OK, serde_json::json!(report)),
        Err(e) => answer(StatusCode::INTERNAL_SERVER_ERROR, serde_json::json!(e.to_body())),
    }
}

async fn scrape(State(pod): State<Pod>) -> Response {
    match pod.metrics.render(&pod.gateway).await {
        Ok(text) => (StatusCode::OK, [(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], text)
            .into_response(),
        Err(_) => answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            serde_json::json!({ "error": "internal", "reason": "the metrics could not be encoded" }),
        ),
    }
}
