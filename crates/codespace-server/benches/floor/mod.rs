//! The HTTP floor the HTTP benchmarks measure against in the same run: a bare axum server
//! (the same HTTP stack and runtime as the server, two worker threads on two cores) that
//! reads each POST's body, parses it as JSON and answers a fixed reply with the request's
//! id: what any JSON-RPC server over HTTP must do, without MCP.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::response::Response;
use serde_json::Value;

/// A running floor server; stopped when dropped.
pub(crate) struct Floor {
    pub(crate) addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

/// What the floor answers a request with: its reply's bytes, given the request.
type Reply = Arc<dyn Fn(&Value) -> Vec<u8> + Send + Sync>;

/// Starts the floor on a loopback port, answering each POST with `reply(request)`.
pub(crate) fn start(reply: impl Fn(&Value) -> Vec<u8> + Send + Sync + 'static) -> Floor {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let reply: Reply = Arc::new(reply);
    // Bound here, served there: `block_on` is refused inside the benchmark's own runtime.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new().fallback(answer).with_state(reply);
    runtime.spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        axum::serve(listener, app).await
    });
    Floor { addr, runtime: Some(runtime) }
}

async fn answer(State(reply): State<Reply>, req: Request) -> Response {
    let bytes = to_bytes(req.into_body(), 4 << 20).await.unwrap_or_default();
    let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(reply(&value)))
        .unwrap()
}

/// `{"jsonrpc":"2.0","id":ID,"result":{}}`: the answer to a `ping`.
#[allow(dead_code, reason = "only the ping benchmark answers pings")]
pub(crate) fn pong(request: &Value) -> Vec<u8> {
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string().into_bytes()
}

impl Drop for Floor {
    fn drop(&mut self) {
        // Dropped from inside another runtime (the benchmark's), a runtime may not block.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
