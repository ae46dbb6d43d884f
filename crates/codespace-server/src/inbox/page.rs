//! The person's page: one HTML file, its script and its style sheet, compiled into the
//! binary and served as they are (no build step, no external asset). The Content Security
//! Policy allows scripts, styles and connections from this server only and no inline
//! script, so even a string that slipped into the page as markup could not run; the
//! script also renders every ledger string with `textContent`, never as HTML.
//!
//! These three files are the only paths served without the bearer token (a browser cannot
//! send it on a navigation); they carry no secret, and the Host and Origin guards still
//! apply. The page asks for the token and keeps it in the tab's session storage.

use axum::Router;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use http::{HeaderValue, Method, header};

const HTML: &str = include_str!("page.html");
const SCRIPT: &str = include_str!("page.js");
const STYLE: &str = include_str!("page.css");

const PAGE: &str = "/inbox/";
const SCRIPT_PATH: &str = "/inbox/inbox.js";
const STYLE_PATH: &str = "/inbox/inbox.css";

/// The policy of every page response.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
     img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Whether a request may skip the bearer token: a GET (or HEAD) of one of the page's files.
pub(crate) fn is_public(method: &Method, path: &str) -> bool {
    (method == Method::GET || method == Method::HEAD)
        && matches!(path, "/inbox" | PAGE | SCRIPT_PATH | STYLE_PATH)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

pub(super) fn routes() -> Router {
    Router::new()
        .route("/inbox", get(|| async { Redirect::permanent(PAGE) }))
        .route(PAGE, get(|| async { asset("text/html; charset=utf-8", HTML) }))
        .route(SCRIPT_PATH, get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }))
        .route(STYLE_PATH, get(|| async { asset("text/css; charset=utf-8", STYLE) }))
}
