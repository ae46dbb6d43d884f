//! HTTP-side message checks, between the guards and rmcp: a POST body gets the same checks
//! as a stdio line (`frame`), and a malformed one is answered 400 with a JSON-RPC error
//! body (rmcp alone answers 415 with plain text); a request that needs a session but comes
//! without one and is not `initialize` is -32600. `DELETE` of a session answers 204.

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{Method, StatusCode, header};
use serde_json::Value;

use crate::frame::{self, INVALID_REQUEST, Verdict};
use crate::http::MAX_BODY_BYTES;

const SESSION_HEADER: &str = "mcp-session-id";

fn answer(status: StatusCode, body: &Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

pub(crate) async fn check_message(req: Request, next: Next) -> Response {
    if req.method() == Method::DELETE {
        let response = next.run(req).await;
        // A closed session is "no content"; some clients warn on rmcp's 202.
        if response.status() == StatusCode::ACCEPTED {
            return StatusCode::NO_CONTENT.into_response();
        }
        return response;
    }
    if req.method() != Method::POST {
        return next.run(req).await;
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
    let sessionless = !parts.headers.contains_key(SESSION_HEADER);
    if sessionless
        && !frame::allowed_before_initialize(&value)
        && let Some(reply) = frame::not_initialized(&value)
    {
        return answer(StatusCode::BAD_REQUEST, &reply);
    }
    match frame::check(value) {
        Verdict::Forward(_) => next.run(Request::from_parts(parts, Body::from(bytes))).await,
        Verdict::Answer(reply) => answer(StatusCode::BAD_REQUEST, &reply),
        Verdict::Drop => {
            let message = "Invalid Request: a malformed notification";
            answer(StatusCode::BAD_REQUEST, &frame::error(None, INVALID_REQUEST, message))
        }
    }
}
