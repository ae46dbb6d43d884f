//! Streamable HTTP at `/mcp` and the person's `/inbox` (API and page), behind guards that
//! run before any MCP dispatch or inbox call: a repeated Host or Origin header (400), Host
//! allowlist and Origin allowlist (403), bearer token in constant time (401): the person's
//! token on `/inbox` (only the page's static files are served without it; the MCP token is
//! refused there), the MCP token everywhere else; body cap (413).
//! `/reset` (an operator's reset for warm reuse) takes the person's token, never the
//! agent's. The pod's probes (`/livez`, `/readyz`) pass no guard; `/metrics` needs no token unless
//! `--metrics-token` says so, and accepts an IP-literal Host (a scrape at the pod's address)
//! besides the allowed names. Every other path is 404.

use std::collections::HashSet;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;

use crate::mcp::CodeSpace;

/// Largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// What the guards let through.
pub struct Guard {
    hosts: HashSet<String>,
    origins: HashSet<String>,
    /// SHA-256 of the token: comparing digests keeps the comparison constant-time whatever
    /// the lengths are.
    token_digest: Option<[u8; 32]>,
    /// SHA-256 of the person's token, the only one `/inbox` takes; `None`: `/inbox` takes
    /// none (every call is refused).
    person_digest: Option<[u8; 32]>,
    /// Whether `/metrics` takes the MCP token (`--metrics-token`); by default it takes none.
    metrics_token: bool,
}

/// Which token a request needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Needs {
    /// The inbox page's static files.
    Nothing,
    /// `/mcp` and everything else.
    McpToken,
    /// `/inbox`'s API.
    PersonToken,
}

impl Guard {
    /// The guards of a server bound to `bind_host:port`: loopback names and origins, the
    /// operator's `extra_hosts` and `extra_origins`, the MCP bearer `token` if any, and the
    /// `person` token `/inbox` takes (none: `/inbox` is refused).
    pub fn new(
        bind_host: &str,
        port: u16,
        extra_hosts: &[String],
        extra_origins: &[String],
        token: Option<&str>,
        person: Option<&str>,
    ) -> Guard {
        let mut names: Vec<String> =
            ["localhost", "127.0.0.1", "[::1]"].iter().map(|h| (*h).to_owned()).collect();
        if !matches!(bind_host, "0.0.0.0" | "::" | "[::]") {
            names.push(bracket_v6(bind_host));
        }
        let mut hosts = HashSet::new();
        for h in extra_hosts {
            if h.contains(':') && !h.starts_with('[') {
                // NAME:PORT given: exactly that.
                hosts.insert(h.to_ascii_lowercase());
            } else {
                names.push(h.clone());
            }
        }
        for h in names {
            let h = h.to_ascii_lowercase();
            hosts.insert(format!("{h}:{port}"));
            hosts.insert(h);
        }
        let mut origins: HashSet<String> = ["localhost", "127.0.0.1", "[::1]"]
            .iter()
            .map(|h| format!("http://{h}:{port}"))
            .collect();
        origins.extend(extra_origins.iter().map(|o| o.trim_end_matches('/').to_ascii_lowercase()));
        let digest = |t: &str| Sha256::digest(t.as_bytes()).into();
        Guard {
            hosts,
            origins,
            token_digest: token.map(digest),
            person_digest: person.map(digest),
            metrics_token: false,
        }
    }

    /// `/metrics` takes the MCP token too (`--metrics-token`).
    pub fn with_metrics_token(mut self, required: bool) -> Guard {
        self.metrics_token = required;
        self
    }

    fn check(&self, headers: &HeaderMap, needs: Needs, ip_host: bool) -> Result<(), Box<Response>> {
        // Only the first value of a header is looked at below, so a second one (a foreign
        // Origin after an allowed one) would go unchecked. RFC 9112 makes a repeated Host a
        // 400, and RFC 6454 allows one Origin value, so both are malformed, not foreign.
        for name in [header::HOST, header::ORIGIN] {
            if headers.get_all(&name).iter().nth(1).is_some() {
                return Err(Box::new(refuse(
                    StatusCode::BAD_REQUEST,
                    "bad_request",
                    &format!("more than one {name} header"),
                )));
            }
        }
        let host =
            headers.get(header::HOST).and_then(|v| v.to_str().ok()).map(str::to_ascii_lowercase);
        // An IP literal is never a rebinding (the browser sends the name it resolved), so
        // where `ip_host` says so (a scrape at the pod's address) it is accepted too.
        if !host.is_some_and(|h| self.hosts.contains(&h) || (ip_host && is_ip_literal(&h))) {
            return Err(Box::new(refuse(
                StatusCode::FORBIDDEN,
                "forbidden",
                "Host header is not allowed",
            )));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let ok = origin.to_str().is_ok_and(|o| self.origins.contains(&o.to_ascii_lowercase()));
            if !ok {
                return Err(Box::new(refuse(
                    StatusCode::FORBIDDEN,
                    "forbidden",
                    "Origin is not allowed",
                )));
            }
        }
        let expected = match needs {
            Needs::Nothing => None,
            Needs::McpToken => self.token_digest.map(Some),
            // Without a person token nothing is accepted: never the MCP token instead.
            Needs::PersonToken => Some(self.person_digest),
        };
        if let Some(expected) = expected {
            let given = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split_once(' '))
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(_, t)| Sha256::digest(t.trim().as_bytes()));
            let ok = match (given, expected) {
                (Some(g), Some(e)) => bool::from(g.as_slice().ct_eq(e.as_slice())),
                (None, _) | (_, None) => false,
            };
            if !ok {
                let reason = match needs {
                    Needs::PersonToken => {
                        "the person token is required on /inbox (the MCP token is not accepted there)"
                    }
                    Needs::Nothing | Needs::McpToken => "a valid bearer token is required",
                };
                let mut r = refuse(StatusCode::UNAUTHORIZED, "unauthorized", reason);
                r.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                return Err(Box::new(r));
            }
        }
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
            return Err(Box::new(refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "request bodies are limited to 4 MiB",
            )));
        }
        Ok(())
    }
}

/// `10.0.0.5`, `10.0.0.5:8787`, `[fd00::1]` or `[fd00::1]:8787`.
fn is_ip_literal(host: &str) -> bool {
    let address = match host.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map(|(v6, _)| v6),
        None => Some(host.split_once(':').map_or(host, |(v4, _)| v4)),
    };
    address.is_some_and(|a| a.parse::<std::net::IpAddr>().is_ok())
}

fn bracket_v6(host: &str) -> String {
    if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host.to_owned() }
}

fn refuse(status: StatusCode, error: &str, reason: &str) -> Response {
    let body = serde_json::json!({ "error": error, "reason": reason }).to_string();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn check_request(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if crate::health::is_probe(path) {
        return next.run(req).await;
    }
    let metrics = path == "/metrics";
    let needs = if crate::inbox::is_public(req.method(), path) || (metrics && !guard.metrics_token)
    {
        Needs::Nothing
    } else if path == "/inbox" || path.starts_with("/inbox/") || path == "/reset" {
        Needs::PersonToken
    } else {
        Needs::McpToken
    };
    match guard.check(req.headers(), needs, metrics) {
        Ok(()) => next.run(req).await,
        Err(refusal) => *refusal,
    }
}

async fn not_found() -> Response {
    refuse(StatusCode::NOT_FOUND, "not_found", "the MCP endpoint is /mcp; the inbox is /inbox/")
}

/// The whole HTTP application.
pub fn router(handler: CodeSpace, guard: Guard, shutdown: CancellationToken) -> Router {
    // Host and Origin are enforced by `guard` (with the operator's extra names), so rmcp's
    // own fixed loopback list is turned off rather than kept as a second, narrower list.
    // A stateless request (2026-07-28) whose first message is its final response is answered
    // as one `application/json` body by rmcp itself; a session's streams are made plain JSON
    // by `http_json`.
    let config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(shutdown);
    let gateway = handler.gateway();
    let pod = crate::health::routes(gateway.clone(), handler.health(), handler.metrics());
    let manager = Arc::new(LocalSessionManager::default());
    let service: StreamableHttpService<CodeSpace, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(handler.session()), manager.clone(), config);
    let mcp = Router::new()
        .route_service("/mcp", service)
        .layer(middleware::from_fn(crate::http_json::prefer_json));
    let sessions = crate::http_body::Sessions::new(manager, mcp.clone());
    mcp.layer(middleware::from_fn_with_state(sessions, crate::http_body::check_message))
        .merge(crate::inbox::routes(gateway))
        .merge(pod)
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(Arc::new(guard), check_request))
}
