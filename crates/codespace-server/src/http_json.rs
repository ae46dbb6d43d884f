//! Plain JSON replies over HTTP: rmcp answers every POST of a session as an SSE stream, even
//! when the whole answer is one JSON-RPC response. When the client accepts
//! `application/json` and the stream's first message is the request's final response, that
//! message is the reply, as `application/json` (the spec allows either; one JSON body costs
//! a client no SSE parsing and no per-event size limit). A stream whose first message is
//! anything else (progress, a log line, an elicitation request) is passed on unchanged,
//! with what was read put back in front. (A stateless request's reply, 2026-07-28, is made
//! plain JSON by rmcp itself, `json_response` in `http::router`, and passes here unread.)

use std::borrow::Cow;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use futures_util::StreamExt;
use http::{HeaderValue, Method, header};
use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};

/// Past this much buffered stream, the reply stays a stream.
const MAX_BUFFERED: usize = 32 << 20;

pub(crate) async fn prefer_json(req: Request, next: Next) -> Response {
    let accepts_json = req.method() == Method::POST
        && req
            .headers()
            .get_all(header::ACCEPT)
            .iter()
            .any(|v| v.to_str().is_ok_and(|v| v.contains("application/json")));
    let response = next.run(req).await;
    let is_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !accepts_json || !is_stream {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let mut stream = body.into_data_stream();
    let mut seen: Vec<u8> = Vec::new();
    // Up to here no event ended: the events are looked at only when one more has ended,
    // not once per chunk of a large reply.
    let mut scanned: usize = 0;
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else { break };
        seen.extend_from_slice(&chunk);
        let from = scanned.saturating_sub(2);
        let Some(end) = event_end(&seen[from..]) else {
            scanned = seen.len();
            if seen.len() > MAX_BUFFERED {
                break;
            }
            continue;
        };
        scanned = from + end;
        match first_message(&seen) {
            First::Incomplete if seen.len() <= MAX_BUFFERED => continue,
            First::Incomplete | First::Other => break,
            First::Response(data) => {
                parts
                    .headers
                    .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                parts.headers.remove(header::CACHE_CONTROL);
                parts.headers.remove("x-accel-buffering");
                return Response::from_parts(parts, Body::from(data));
            }
        }
    }
    let replay = futures_util::stream::once(async move { Ok::<_, axum::Error>(Bytes::from(seen)) });
    Response::from_parts(parts, Body::from_stream(replay.chain(stream)))
}

/// Where the first blank line (the end of an SSE event) in `buf` ends, if there is one.
fn event_end(buf: &[u8]) -> Option<usize> {
    let lf = buf.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    let crlf = buf.windows(3).position(|w| w == b"\n\r\n").map(|i| i + 3);
    lf.into_iter().chain(crlf).min()
}

/// What the stream read so far starts with.
#[derive(Debug, PartialEq, Eq)]
enum First {
    /// No complete event with data yet.
    Incomplete,
    /// The first message is a final response (`result` or `error` with an `id`).
    Response(String),
    /// The first message is a notification or a request.
    Other,
}

/// The first SSE event that carries data (priming events carry none), if complete.
fn first_message(buf: &[u8]) -> First {
    let text = String::from_utf8_lossy(buf);
    let text = match text.contains('\r') {
        true => Cow::Owned(text.replace("\r\n", "\n")),
        false => text,
    };
    let mut events = text.split("\n\n").collect::<Vec<_>>();
    // The last piece has no blank line after it yet: not a complete event.
    events.pop();
    for event in events {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        let data = data.join("\n");
        if data.trim().is_empty() {
            continue;
        }
        // Only the top-level keys matter: the values are skipped, not built (a 1 MiB window
        // is one long string).
        return match serde_json::from_str::<Probe>(&data) {
            Ok(Probe { id: Present(true), result: Present(r), error: Present(e) }) if r || e => {
                First::Response(data)
            }
            Ok(_) | Err(_) => First::Other,
        };
    }
    First::Incomplete
}

/// Which of a JSON-RPC message's top-level keys are present, whatever their values.
#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    id: Present,
    #[serde(default)]
    result: Present,
    #[serde(default)]
    error: Present,
}

/// A key that is present (with any value, `null` included).
#[derive(Default)]
struct Present(bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Present(true))
    }
}

#[cfg(test)]
mod tests;
