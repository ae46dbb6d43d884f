//! The checks every incoming JSON-RPC message passes before rmcp sees it, on stdio and over
//! HTTP, so that malformed input always gets an answer, before `initialize` as after it:
//! invalid JSON (invalid UTF-8 and lone surrogates included) is -32700; a batch, a message
//! that is not an object, and a request whose `id` is not a string or an integer (an object,
//! `null`, `1.5`) are -32600 with id `null` (no id can be echoed); a standard method whose
//! params do not fit it (`tools/call` without a `name`, arguments that are not an object) is
//! -32602; and a request before `initialize` is -32600. rmcp alone would drop some of these
//! silently or answer them with a code that points the client elsewhere.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use serde::Deserialize;
use serde_json::{Value, json};

/// JSON-RPC: the text is not JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: JSON, but not a request this server takes.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: a known method with parameters of the wrong shape.
pub(crate) const INVALID_PARAMS: i64 = -32602;

/// The `_meta` key that carries a request's protocol version in the stateless lifecycle: a
/// request with it needs no `initialize` first.
const INLINE_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// What to do with one incoming message.
pub(crate) enum Verdict {
    /// Hand it to rmcp.
    Forward(Box<ClientJsonRpcMessage>),
    /// Answer it with this JSON-RPC error response instead.
    Answer(Value),
    /// A notification or response nothing can be said about: drop it.
    Drop,
}

/// A JSON-RPC error response.
pub(crate) fn error(id: Option<&Value>, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null),
           "error": {"code": code, "message": message}})
}

/// Parses one message's bytes; invalid JSON gets its answer.
pub(crate) fn parse(bytes: &[u8]) -> Result<Value, Value> {
    serde_json::from_slice(bytes)
        .map_err(|e| error(None, PARSE_ERROR, &format!("Parse error: {e}")))
}

/// The standard request methods: one of these that rmcp reads as a custom request had params
/// that do not fit it.
const STANDARD_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "subscriptions/listen",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// The standard methods the 2026-07-28 revision removed: a request of the stateless lifecycle
/// that names one is rmcp's to answer -32601, whatever its params.
const REMOVED_IN_2026: &[&str] =
    &["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"];

/// Whether `method` is a standard one whose params, read as a custom request, did not fit.
fn misfit(value: &Value, method: &str) -> bool {
    STANDARD_METHODS.contains(&method)
        && !(REMOVED_IN_2026.contains(&method) && carries_inline_version(value))
}

/// Whether a message carries its protocol version inline (the stateless lifecycle).
fn carries_inline_version(value: &Value) -> bool {
    value
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(INLINE_VERSION_KEY))
        .is_some()
}

/// Whether `id` may be a request's id: MCP allows a string or an integer, never `null`.
fn is_request_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// What is wrong with a message's shape, whatever the session's state: a batch, a message
/// that is not an object, a request whose id cannot be one. None for a message of the right
/// shape, or for a response (never answered) whose id is not a request's.
pub(crate) fn misshapen(value: &Value) -> Option<Verdict> {
    let refuse = |what| Some(Verdict::Answer(error(None, INVALID_REQUEST, what)));
    let Value::Object(obj) = value else {
        return match value.is_array() {
            true => {
                refuse("Invalid Request: batches are not supported; send one message at a time")
            }
            false => refuse("Invalid Request: a message is a JSON object"),
        };
    };
    match obj.get("id") {
        Some(id) if !is_request_id(id) && obj.contains_key("method") => {
            refuse("Invalid Request: a request's id is a string or an integer")
        }
        Some(id) if !is_request_id(id) => Some(Verdict::Drop),
        _ => None,
    }
}

/// Checks one parsed message.
pub(crate) fn check(value: Value) -> Verdict {
    if let Some(verdict) = misshapen(&value) {
        return verdict;
    }
    let Value::Object(obj) = &value else { return Verdict::Drop };
    let id = obj.get("id").filter(|id| is_request_id(id));
    let method = obj.get("method").and_then(Value::as_str);
    if method == Some("tools/call") {
        let params = obj.get("params");
        let args = params.and_then(|p| p.get("arguments"));
        if args.is_some_and(|a| !a.is_object() && !a.is_null()) {
            let message = "Invalid params: tools/call arguments must be an object";
            return Verdict::Answer(error(id, INVALID_PARAMS, message));
        }
        if id.is_some() && !params.and_then(|p| p.get("name")).is_some_and(Value::is_string) {
            let message = "Invalid params: tools/call needs `name`, the tool's name as a string";
            return Verdict::Answer(error(id, INVALID_PARAMS, message));
        }
    }
    // From the borrowed value: cloning the tree first copied every message (a patch's
    // whole text with it) once more.
    match ClientJsonRpcMessage::deserialize(&value) {
        Ok(ClientJsonRpcMessage::Request(request))
            if id.is_some()
                && method.is_some_and(|m| misfit(&value, m))
                && matches!(request.request, ClientRequest::CustomRequest(_)) =>
        {
            let m = method.unwrap_or_default();
            let message = format!("Invalid params: the params do not fit {m}");
            Verdict::Answer(error(id, INVALID_PARAMS, &message))
        }
        Ok(message) => Verdict::Forward(Box::new(message)),
        // A notification is never answered, even when it is malformed.
        Err(_) if id.is_none() && method.is_some() => Verdict::Drop,
        Err(e) => match (id, method) {
            (Some(_), Some(m)) if obj.get("jsonrpc") == Some(&json!("2.0")) => {
                Verdict::Answer(error(id, INVALID_PARAMS, &format!("Invalid params for {m}: {e}")))
            }
            _ => Verdict::Answer(error(id, INVALID_REQUEST, &format!("Invalid Request: {e}"))),
        },
    }
}

/// Whether a message may come before the session is initialized: `initialize` itself,
/// `ping`, discovery, and a request of the stateless lifecycle (it carries its protocol
/// version inline). Anything else first is answered by [`not_initialized`] or dropped.
pub(crate) fn allowed_before_initialize(value: &Value) -> bool {
    let method = value.get("method").and_then(Value::as_str);
    matches!(method, Some("initialize" | "ping" | "server/discover"))
        || carries_inline_version(value)
}

/// The answer to a request sent before `initialize` (None for a notification or response).
pub(crate) fn not_initialized(value: &Value) -> Option<Value> {
    let id = value.get("id").filter(|id| is_request_id(id))?;
    value.get("method")?;
    Some(error(
        Some(id),
        INVALID_REQUEST,
        "Invalid Request: the session is not initialized; send initialize first",
    ))
}

#[cfg(test)]
mod tests;
