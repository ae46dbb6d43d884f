//! A JSON-RPC batch on a session that negotiated 2025-03-26, the one revision whose clients
//! may send them (later revisions removed batching, and their sessions get -32600). Each
//! element passes the same checks as a single message and is then sent on, one after
//! another, through the same MCP service as a POST of its own; the answer is the array of
//! their responses (a malformed element's error among them), or 202 when the batch held only
//! notifications and responses. A server request made while an element runs (an
//! elicitation) cannot reach the client before the whole answer, so a batched call that
//! needs one waits out its timeout.

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderValue, StatusCode, header};
use serde_json::Value;
use tower::ServiceExt;

use crate::frame::{self, Verdict};
use crate::http::MAX_BODY_BYTES;
use crate::http_body::answer;

/// Runs every element of `batch` through `mcp` (the MCP route, without these checks).
pub(crate) async fn run(parts: Parts, batch: Value, mcp: Router) -> Response {
    let Value::Array(elements) = batch else { return StatusCode::BAD_REQUEST.into_response() };
    if elements.is_empty() {
        let message = "Invalid Request: an empty batch";
        return answer(
            StatusCode::BAD_REQUEST,
            &frame::error(None, frame::INVALID_REQUEST, message),
        );
    }
    let mut replies = Vec::new();
    for element in elements {
        if element.is_array() {
            let message = "Invalid Request: a batch inside a batch";
            replies.push(frame::error(None, frame::INVALID_REQUEST, message));
            continue;
        }
        match frame::check(element.clone()) {
            Verdict::Answer(reply) => replies.push(reply),
            Verdict::Drop => {}
            Verdict::Forward(_) => {
                if let Some(reply) = one(&parts, &element, mcp.clone()).await {
                    replies.push(reply);
                }
            }
        }
    }
    match replies.is_empty() {
        true => StatusCode::ACCEPTED.into_response(),
        false => answer(StatusCode::OK, &Value::Array(replies)),
    }
}

/// Sends one element as a POST of its own; its response, if it is a request.
async fn one(parts: &Parts, element: &Value, mcp: Router) -> Option<Value> {
    let mut req = Request::builder().method(parts.method.clone()).uri(parts.uri.clone());
    for (name, value) in &parts.headers {
        if name != header::CONTENT_LENGTH && name != header::ACCEPT {
            req = req.header(name, value);
        }
    }
    let req = req
        .header(header::ACCEPT, HeaderValue::from_static("application/json, text/event-stream"))
        .body(Body::from(element.to_string()))
        .ok()?;
    let response = mcp.oneshot(req).await.ok()?;
    let id = element.get("id")?.clone();
    element.get("method")?;
    let bytes = to_bytes(response.into_body(), MAX_BODY_BYTES * 8).await.ok()?;
    let text = String::from_utf8_lossy(&bytes);
    // One JSON response, or an SSE stream whose events end with it.
    let whole = serde_json::from_str::<Value>(&text).ok().into_iter();
    let events = text
        .split("\n\n")
        .flat_map(|event| event.lines().filter_map(|l| l.strip_prefix("data:")))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok());
    let reply = whole.chain(events).find(|m| m.get("id") == Some(&id) && m.get("method").is_none());
    Some(reply.unwrap_or_else(|| {
        frame::error(Some(&id), -32603, "Internal error: the batched request got no response")
    }))
}
