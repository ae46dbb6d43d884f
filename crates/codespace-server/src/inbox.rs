//! HTTP `/inbox`: the person's side of a work's instruction queue, as the reference's JSON
//! API (`/inbox/works...`, `/inbox/intents...`), and a page that drives it (`/inbox/`, in
//! `inbox/page.rs`). Both sit behind the same Host, Origin and bearer guards as `/mcp`; only
//! the page's three static files are served without the token, and they carry no secret.
//!
//! Beyond the reference, `GET /inbox/holds` lists the confirmation holds waiting for a
//! decision and `POST /inbox/holds/{id}/grant|deny` decides one (as `approval_resolve`).
//!
//! Every refusal is the `ErrorBody` JSON with the reference's status mapping: 404 for a
//! work, instruction or hold that does not exist, 409 for a state or revision conflict, 403
//! for the policy, 500 for the server's own failures, 400 for everything else.

mod page;

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post};
use codespace_gateway::{Gateway, GatewayError};
use codespace_protocol::{ApprovalResolveParams, Decision, ErrorCode};
use http::{StatusCode, header};
use serde::Serialize;
use serde::de::DeserializeOwned;

pub(crate) use page::is_public;

/// The HTTP status of a refused `/inbox` call.
fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::WorkNotFound | ErrorCode::IntentNotFound | ErrorCode::ApprovalNotFound => {
            StatusCode::NOT_FOUND
        }
        ErrorCode::IntentAlreadyClaimed
        | ErrorCode::IntentRevisionConflict
        | ErrorCode::WorkClosed
        | ErrorCode::ApprovalConflict
        | ErrorCode::ApprovalDenied
        | ErrorCode::ApprovalRequired
        | ErrorCode::ApprovalAmbiguous
        | ErrorCode::ApprovalUnverified
        | ErrorCode::ApprovalRootMismatch
        | ErrorCode::RootReplaced
        | ErrorCode::TaskInterrupted => StatusCode::CONFLICT,
        ErrorCode::Unauthorized | ErrorCode::ApprovalPersonRequired => StatusCode::FORBIDDEN,
        ErrorCode::LedgerError | ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::ServerDraining => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::InvalidArguments
        | ErrorCode::WorkspaceNotFound
        | ErrorCode::InvalidPattern
        | ErrorCode::PathEscape
        | ErrorCode::FileNotFound
        | ErrorCode::PathNotDirectory
        | ErrorCode::FileOperationFailed
        | ErrorCode::SymlinkRejected
        | ErrorCode::SpecialFileRejected
        | ErrorCode::OutputLimit
        | ErrorCode::WorkspaceBusy
        | ErrorCode::ResourceQueueFull
        | ErrorCode::InvalidPatch
        | ErrorCode::AddFileExists
        | ErrorCode::MoveDestinationExists
        | ErrorCode::VersionConflict
        | ErrorCode::OperationKeyConflict
        | ErrorCode::OperationNotFound
        | ErrorCode::OperationNotRevertible
        | ErrorCode::OperationAlreadyReverted
        | ErrorCode::UndoPruned
        | ErrorCode::WorkspaceIdRequired
        | ErrorCode::InvalidCommand
        | ErrorCode::ProcessSpawnFailed
        | ErrorCode::ProcessNotFound
        | ErrorCode::ProcessNotTty
        | ErrorCode::ProcessNotRunning
        | ErrorCode::StdinClosed
        | ErrorCode::ProcessIoFailed
        | ErrorCode::Timeout
        | ErrorCode::IntentNotEditable
        | ErrorCode::UnsafePathName
        | ErrorCode::RequestStateInvalid
        | ErrorCode::RequestStateExpired => StatusCode::BAD_REQUEST,
    }
}

fn json(status: StatusCode, value: &impl Serialize) -> Response {
    match serde_json::to_string(value) {
        Ok(body) => (status, [(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(e) => refusal(&GatewayError::Internal(format!("result serialization: {e}"))),
    }
}

fn refusal(e: &GatewayError) -> Response {
    let body = e.to_body();
    json(status_of(body.code), &body)
}

fn answer<T: Serialize>(status: StatusCode, result: Result<T, GatewayError>) -> Response {
    match result {
        Ok(value) => json(status, &value),
        Err(e) => refusal(&e),
    }
}

/// Decodes a JSON body; one that does not fit is `INVALID_ARGUMENTS` naming the field. An
/// empty body decodes as `{}`.
fn decode<T: DeserializeOwned>(what: &str, body: &Bytes) -> Result<T, GatewayError> {
    let text: &[u8] = if body.iter().all(u8::is_ascii_whitespace) { b"{}" } else { body };
    serde_json::from_slice(text).map_err(|e| GatewayError::InvalidArguments {
        tool: format!("/inbox {what}"),
        detail: e.to_string(),
    })
}

type Gw = State<Arc<Gateway>>;

/// The value of `name` in a query string (`+` and `%XX` decoded); `None` when absent,
/// empty or not UTF-8 once decoded.
fn query_value(query: Option<&str>, name: &str) -> Option<String> {
    let raw = query?.split('&').find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))?;
    let mut bytes = Vec::with_capacity(raw.len());
    let mut rest = raw.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        rest = tail;
        let hex =
            |s: &[u8]| std::str::from_utf8(s).ok().and_then(|h| u8::from_str_radix(h, 16).ok());
        match b {
            b'+' => bytes.push(b' '),
            b'%' if rest.len() >= 2 && hex(&rest[..2]).is_some() => {
                bytes.extend(hex(&rest[..2]));
                rest = &rest[2..];
            }
            _ => bytes.push(b),
        }
    }
    String::from_utf8(bytes).ok().filter(|v| !v.is_empty())
}

async fn works(State(g): Gw, uri: http::Uri) -> Response {
    let ws = query_value(uri.query(), "workspace_id");
    answer(StatusCode::OK, g.inbox_works(ws.as_deref()).await)
}

async fn work(State(g): Gw, Path(id): Path<String>) -> Response {
    answer(StatusCode::OK, g.inbox_work(&id).await)
}

async fn intents(State(g): Gw, Path(id): Path<String>) -> Response {
    answer(StatusCode::OK, g.inbox_intents(&id).await)
}

async fn create(State(g): Gw, Path(id): Path<String>, body: Bytes) -> Response {
    match decode("create", &body) {
        Ok(p) => answer(StatusCode::CREATED, g.inbox_create(&id, p).await),
        Err(e) => refusal(&e),
    }
}

async fn edit(State(g): Gw, Path(id): Path<String>, body: Bytes) -> Response {
    match decode("edit", &body) {
        Ok(p) => answer(StatusCode::OK, g.inbox_edit(&id, p).await),
        Err(e) => refusal(&e),
    }
}

async fn queue(State(g): Gw, Path(id): Path<String>, body: Bytes) -> Response {
    match decode("queue", &body) {
        Ok(p) => answer(StatusCode::OK, g.inbox_queue(&id, p).await),
        Err(e) => refusal(&e),
    }
}

async fn cancel(State(g): Gw, Path(id): Path<String>) -> Response {
    answer(StatusCode::OK, g.inbox_cancel(&id).await)
}

async fn reorder(State(g): Gw, Path(id): Path<String>, body: Bytes) -> Response {
    match decode("reorder", &body) {
        Ok(p) => answer(StatusCode::OK, g.inbox_reorder(&id, p).await),
        Err(e) => refusal(&e),
    }
}

async fn stop(State(g): Gw, Path(id): Path<String>, body: Bytes) -> Response {
    match decode("stop", &body) {
        Ok(p) => answer(StatusCode::OK, g.inbox_stop(&id, p).await),
        Err(e) => refusal(&e),
    }
}

async fn holds(State(g): Gw) -> Response {
    answer(StatusCode::OK, g.inbox_holds().await)
}

async fn resolve(g: &Gateway, approval_id: String, decision: Decision) -> Response {
    answer(StatusCode::OK, g.person_resolve(ApprovalResolveParams { approval_id, decision }).await)
}

async fn grant(State(g): Gw, Path(id): Path<String>) -> Response {
    resolve(&g, id, Decision::Grant).await
}

async fn deny(State(g): Gw, Path(id): Path<String>) -> Response {
    resolve(&g, id, Decision::Deny).await
}

/// The `/inbox` routes: the JSON API and the page.
pub(crate) fn routes(gateway: Arc<Gateway>) -> Router {
    Router::new()
        .route("/inbox/works", get(works))
        .route("/inbox/works/{id}", get(work))
        .route("/inbox/works/{id}/intents", get(intents).post(create))
        .route("/inbox/works/{id}/reorder", post(reorder))
        .route("/inbox/works/{id}/stop", post(stop))
        .route("/inbox/intents/{id}", patch(edit))
        .route("/inbox/intents/{id}/queue", post(queue))
        .route("/inbox/intents/{id}/cancel", post(cancel))
        .route("/inbox/holds", get(holds))
        .route("/inbox/holds/{id}/grant", post(grant))
        .route("/inbox/holds/{id}/deny", post(deny))
        .with_state(gateway)
        .merge(page::routes())
}
