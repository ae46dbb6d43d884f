//! The HTTP router in this process, driven with `tower::ServiceExt::oneshot`: the Host and
//! Origin allowlists (T1, T2), repeated headers, bearer tokens (T4), the declared-size cap,
//! 404s, and the `/inbox` guards and status mapping. No socket, no binary.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use codespace_server::http::{Guard, MAX_BODY_BYTES, router};
use codespace_server::mcp::CodeSpace;
use http::{Request, Response, StatusCode, header};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::support::{Env, in_process_gateway};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// The port the guards are told the server listens on.
const PORT: u16 = 8787;

/// The person's token `/inbox` takes in these routers.
const PERSON: &str = "a-person-secret";

/// The router of a server on `127.0.0.1:PORT` over a registry with one workspace, `ro`.
fn app(extra_hosts: &[&str], extra_origins: &[&str], token: Option<&str>) -> (Router, Env) {
    let mut env = Env::new();
    env.workspace("ro", json!({}));
    let store = codespace_store::Store::open_in_memory().unwrap();
    let handler = CodeSpace::new(Arc::new(in_process_gateway(&env, store)), Duration::ZERO);
    let owned = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let guard = Guard::new(
        "127.0.0.1",
        PORT,
        &owned(extra_hosts),
        &owned(extra_origins),
        token,
        Some(PERSON),
    );
    (router(handler, guard, CancellationToken::new()), env)
}

/// Sends one request with `headers` (each `(name, value)`, repeats kept) to `app`.
async fn send(
    app: &Router,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Response<Body> {
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Body::from(body.to_owned())).unwrap();
    app.clone().oneshot(request).await.unwrap()
}

async fn body_of(response: Response<Body>) -> String {
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[tokio::test]
async fn t1_t2_host_and_origin_allowlists() {
    let (app, _env) = app(&["codespace.internal"], &["https://app.example"], None);
    let post = |host: String, origin: Option<String>| {
        let app = app.clone();
        async move {
            let mut headers = vec![("host", host.as_str())];
            headers.extend(origin.as_deref().map(|o| ("origin", o)));
            send(&app, "POST", "/mcp", &headers, INIT).await
        }
    };
    for host in [
        format!("localhost:{PORT}"),
        format!("127.0.0.1:{PORT}"),
        "localhost".to_owned(),
        "codespace.internal".to_owned(),
        format!("codespace.internal:{PORT}"),
    ] {
        let r = post(host.clone(), None).await;
        assert_eq!(r.status(), StatusCode::OK, "Host {host}");
    }
    for host in [
        "evil.example".to_owned(),
        format!("evil.example:{PORT}"),
        format!("localhost.evil.com:{PORT}"),
        "127.0.0.1.nip.io".to_owned(),
    ] {
        let r = post(host.clone(), None).await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "Host {host}");
        assert!(!body_of(r).await.contains("jsonrpc"), "refused before dispatch");
    }
    let host = format!("127.0.0.1:{PORT}");
    for origin in [
        format!("http://localhost:{PORT}"),
        format!("http://127.0.0.1:{PORT}"),
        "https://app.example".to_owned(),
    ] {
        let r = post(host.clone(), Some(origin.clone())).await;
        assert_eq!(r.status(), StatusCode::OK, "Origin {origin}");
    }
    for origin in [
        "http://evil.example".to_owned(),
        "null".to_owned(),
        "http://localhost.evil.com".to_owned(),
        "http://localhost:1".to_owned(),
        "https://app.example.evil".to_owned(),
        format!("https://localhost:{PORT}"),
    ] {
        let r = post(host.clone(), Some(origin.clone())).await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "Origin {origin}");
    }
    // No wildcard CORS is ever sent.
    let r = post(host, Some(format!("http://localhost:{PORT}"))).await;
    let cors = r.headers().get("access-control-allow-origin");
    assert!(cors.is_none_or(|v| v != "*"));
}

#[tokio::test]
async fn t1_duplicate_host_or_origin_headers_are_refused() {
    let (app, _env) = app(&[], &[], None);
    let good_host = format!("127.0.0.1:{PORT}");
    let good_origin = format!("http://127.0.0.1:{PORT}");
    let cases: [&[(&str, &str)]; 4] = [
        &[("host", &good_host), ("origin", &good_origin), ("origin", "http://evil.example")],
        &[("host", &good_host), ("origin", &good_origin), ("origin", &good_origin)],
        &[("host", &good_host), ("host", "evil.example"), ("origin", &good_origin)],
        &[("host", &good_host), ("host", &good_host)],
    ];
    for headers in cases {
        let r = send(&app, "POST", "/mcp", headers, INIT).await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{headers:?}");
        assert!(r.headers().get("mcp-session-id").is_none(), "no session minted");
        assert!(!body_of(r).await.contains("jsonrpc"), "refused before dispatch");
    }
    let ok =
        send(&app, "POST", "/mcp", &[("host", &good_host), ("origin", &good_origin)], INIT).await;
    assert_eq!(ok.status(), StatusCode::OK, "a well-formed request is still served");
}

#[tokio::test]
async fn t4_bearer_token_rules() {
    let token = "correct-horse-battery-staple";
    let (app, _env) = app(&[], &[], Some(token));
    let host = format!("127.0.0.1:{PORT}");
    let cases = [
        None,
        Some("Bearer wrong"),
        Some("Bearer correct-horse-battery-stapl"),
        Some("Bearer correct-horse-battery-staple-and-more"),
        Some("Basic Y29ycmVjdA=="),
        Some("correct-horse-battery-staple"),
    ];
    for auth in cases {
        let mut headers = vec![("host", host.as_str())];
        headers.extend(auth.map(|a| ("authorization", a)));
        let r = send(&app, "POST", "/mcp", &headers, INIT).await;
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{auth:?}");
        assert_eq!(r.headers().get("www-authenticate").unwrap(), "Bearer");
        assert!(!body_of(r).await.contains(token));
    }
    let query = format!("/mcp?token={token}");
    let q = send(&app, "POST", &query, &[("host", &host)], INIT).await;
    assert_eq!(q.status(), StatusCode::UNAUTHORIZED, "the query string is never a credential");
    for auth in [format!("Bearer {token}"), format!("bearer {token}")] {
        let ok =
            send(&app, "POST", "/mcp", &[("host", &host), ("authorization", &auth)], INIT).await;
        assert_eq!(ok.status(), StatusCode::OK, "scheme is case-insensitive: {auth}");
    }
}

#[tokio::test]
async fn a_declared_body_over_the_cap_and_unknown_paths_are_refused() {
    let (app, _env) = app(&[], &[], None);
    let host = format!("127.0.0.1:{PORT}");
    let over = (MAX_BODY_BYTES + 1).to_string();
    let big = send(&app, "POST", "/mcp", &[("host", &host), ("content-length", &over)], "{").await;
    assert_eq!(big.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        serde_json::from_str::<Value>(&body_of(big).await).unwrap()["error"],
        "payload_too_large"
    );
    // (Beneath /inbox the person's token comes first, --no-auth or not.)
    let person = format!("Bearer {PERSON}");
    for path in ["/", "/mcp/extra", "/inbox/unknown", "/.well-known/oauth-authorization-server"] {
        let r =
            send(&app, "POST", path, &[("host", &host), ("authorization", &person)], INIT).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{path}");
    }
    let ok = send(&app, "POST", "/mcp", &[("host", &host)], INIT).await;
    assert_eq!(ok.status(), StatusCode::OK, "still served afterwards");
}

#[tokio::test]
async fn inbox_guards_and_status_mapping_in_process() {
    let token = "inbox-token";
    let (app, _env) = app(&[], &[], Some(token));
    let host = format!("127.0.0.1:{PORT}");
    let bearer = format!("Bearer {PERSON}");
    let anonymous = send(&app, "GET", "/inbox/works", &[("host", &host)], "").await;
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    // The MCP token is not the person's.
    let mcp = format!("Bearer {token}");
    let agent = [("host", host.as_str()), ("authorization", &mcp)];
    let agent = send(&app, "GET", "/inbox/works", &agent, "").await;
    assert_eq!(agent.status(), StatusCode::UNAUTHORIZED);
    let foreign =
        [("host", host.as_str()), ("authorization", &bearer), ("origin", "https://evil.example")];
    let r = send(&app, "GET", "/inbox/works", &foreign, "").await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    // The page needs no token and carries none.
    let page = send(&app, "GET", "/inbox/", &[("host", &host)], "").await;
    assert_eq!(page.status(), StatusCode::OK);
    let page = body_of(page).await;
    assert!(!page.contains(token) && !page.contains(PERSON));
    let person = [("host", host.as_str()), ("authorization", &bearer)];
    let ok = send(&app, "GET", "/inbox/works", &person, "").await;
    assert_eq!(ok.status(), StatusCode::OK);
    for (method, path, status, code) in [
        ("GET", "/inbox/works/work-nope", StatusCode::NOT_FOUND, "WORK_NOT_FOUND"),
        ("GET", "/inbox/works/work-nope/intents", StatusCode::NOT_FOUND, "WORK_NOT_FOUND"),
        ("POST", "/inbox/intents/fb-nope/cancel", StatusCode::NOT_FOUND, "INTENT_NOT_FOUND"),
        ("GET", "/inbox/works?workspace_id=nope", StatusCode::BAD_REQUEST, "WORKSPACE_NOT_FOUND"),
    ] {
        let r = send(&app, method, path, &person, "").await;
        assert_eq!(r.status(), status, "{method} {path}");
        let body: Value = serde_json::from_str(&body_of(r).await).unwrap();
        assert_eq!(body["code"], code, "{method} {path}: {body}");
    }
}
