//! HTTP-side message checks, between the guards and rmcp, so that every refusal at `/mcp`
//! is a JSON-RPC error body (rmcp alone answers some with plain text): a POST body gets the
//! same checks as a stdio line (`frame`) and a malformed one is 400; a message that needs a
//! session but comes without one (a request, a notification or a response that is not
//! `initialize` or of the stateless lifecycle) is 400 -32600; a session id that names no
//! session is 404 -32600, whatever the HTTP method; a second `initialize` on a session is
//! 400 -32600, like the other protocol errors. A batch is taken only on a session that
//! negotiated 2025-03-26, the revision that allowed them (`http_batch`). `DELETE` of a
//! session answers 204.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, Method, StatusCode, header};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::Value;

use crate::frame::{self, INVALID_REQUEST, Verdict};
use crate::http::MAX_BODY_BYTES;

pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// The last protocol revision whose sessions may send a batch.
pub(crate) const BATCH_REVISION: &str = "2025-03-26";

/// The largest plain-text refusal from rmcp read to wrap in a JSON-RPC error.
const MAX_REFUSAL_BYTES: usize = 64 * 1024;

/// What the checks know of the sessions: which exist, and which negotiated
/// [`BATCH_REVISION`].
#[derive(Clone)]
pub(crate) struct Sessions {
    manager: Arc<LocalSessionManager>,
    batching: Arc<Mutex<HashSet<String>>>,
    /// The MCP route without these checks, for a batch's elements.
    mcp: Router,
}

impl Sessions {
    pub(crate) fn new(manager: Arc<LocalSessionManager>, mcp: Router) -> Sessions {
        Sessions { manager, batching: Arc::default(), mcp }
    }

    async fn exists(&self, id: &str) -> bool {
        self.manager.has_session(&Arc::from(id)).await.unwrap_or(false)
    }

    fn batches(&self, id: &str) -> bool {
        self.batching.lock().is_ok_and(|s| s.contains(id))
    }

    fn set_batching(&self, id: &str, on: bool) {
        if let Ok(mut set) = self.batching.lock() {
            match on {
                true => set.insert(id.to_owned()),
                false => set.remove(id),
            };
        }
    }
}

pub(crate) fn answer(status: StatusCode, body: &Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

fn session_of(headers: &HeaderMap) -> Option<String> {
    headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// A request's id, when it has one a reply can echo.
fn id_of(value: &Value) -> Option<&Value> {
    value.get("id").filter(|id| id.is_string() || id.is_i64() || id.is_u64())
}

fn unknown_session(id: Option<&Value>) -> Response {
    let message = "Invalid Request: no such session (it ended or never existed); send initialize to open a new one";
    answer(StatusCode::NOT_FOUND, &frame::error(id, INVALID_REQUEST, message))
}

pub(crate) async fn check_message(
    State(sessions): State<Sessions>,
    req: Request,
    next: Next,
) -> Response {
    let session = session_of(req.headers());
    if req.method() != Method::POST {
        if let Some(id) = &session
            && !sessions.exists(id).await
        {
            sessions.set_batching(id, false);
            return unknown_session(None);
        }
        let delete = req.method() == Method::DELETE;
        let response = as_json_rpc(next.run(req).await, None).await;
        // A closed session is "no content"; some clients warn on rmcp's 202.
        if delete && response.status() == StatusCode::ACCEPTED {
            if let Some(id) = &session {
                sessions.set_batching(id, false);
            }
            return StatusCode::NO_CONTENT.into_response();
        }
        return response;
    }
    let (parts, body) = req.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_BODY_BYTES).await else {
        let message = "Invalid Request: the body is over 4 MiB or was cut short";
        return answer(
            StatusCode::PAYLOAD_TOO_LARGE,
            &frame::error(None, INVALID_REQUEST, message),
        );
    };
    let value = match frame::parse(&bytes) {
        Ok(value) => value,
        Err(reply) => return answer(StatusCode::BAD_REQUEST, &reply),
    };
    let id = id_of(&value).cloned();
    match &session {
        Some(s) if !sessions.exists(s).await => {
            sessions.set_batching(s, false);
            return unknown_session(id.as_ref());
        }
        Some(s) if value.is_array() && sessions.batches(s) => {
            return crate::http_batch::run(parts, value, sessions.mcp.clone()).await;
        }
        _ if value.is_array() => {
            let message = "Invalid Request: a batch is taken only on a session that negotiated 2025-03-26; send one message at a time";
            return answer(StatusCode::BAD_REQUEST, &frame::error(None, INVALID_REQUEST, message));
        }
        Some(_) if value.get("method").and_then(Value::as_str) == Some("initialize") => {
            let message = "Invalid Request: this session is already initialized: initialize is sent once per session";
            return answer(
                StatusCode::BAD_REQUEST,
                &frame::error(id.as_ref(), INVALID_REQUEST, message),
            );
        }
        Some(_) => {}
        None if value.is_object() && !frame::allowed_before_initialize(&value) => {
            let message = "Invalid Request: the session is not initialized; send initialize first";
            return answer(
                StatusCode::BAD_REQUEST,
                &frame::error(id.as_ref(), INVALID_REQUEST, message),
            );
        }
        None => {}
    }
    let opens = opened_revision(&value);
    match frame::check(value) {
        Verdict::Forward(_) => {
            let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
            if let (Some(revision), Some(new)) = (opens, session_of(response.headers())) {
                sessions.set_batching(&new, revision == BATCH_REVISION);
            }
            as_json_rpc(response, id.as_ref()).await
        }
        Verdict::Answer(reply) => answer(StatusCode::BAD_REQUEST, &reply),
        Verdict::Drop => {
            let message = "Invalid Request: a malformed notification";
            answer(StatusCode::BAD_REQUEST, &frame::error(None, INVALID_REQUEST, message))
        }
    }
}

/// The revision an `initialize` asks for (rmcp agrees to any it knows, as this server does).
fn opened_revision(value: &Value) -> Option<String> {
    (value.get("method").and_then(Value::as_str) == Some("initialize"))
        .then(|| value.get("params")?.get("protocolVersion")?.as_str().map(str::to_owned))
        .flatten()
}

/// rmcp's refusals in plain text (a GET without a session, a body it cannot take) as
/// JSON-RPC errors with the same status; every other response unchanged.
pub(crate) async fn as_json_rpc(response: Response, id: Option<&Value>) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let text = match to_bytes(response.into_body(), MAX_REFUSAL_BYTES).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_owned(),
        Err(_) => String::new(),
    };
    // rmcp's texts begin with the status's reason ("Bad Request: Session ID is required").
    let reason = status.canonical_reason().unwrap_or_default();
    let text = text.strip_prefix(reason).and_then(|t| t.strip_prefix(": ")).unwrap_or(&text);
    let text = if text.is_empty() { reason } else { text };
    answer(status, &frame::error(id, INVALID_REQUEST, &format!("Invalid Request: {text}")))
}
