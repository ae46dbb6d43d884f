//! The checks every incoming JSON-RPC message passes before rmcp sees it, on stdio and over
//! HTTP, so that malformed input always gets an answer: invalid JSON (invalid UTF-8 and lone
//! surrogates included) is -32700, a batch or a message that is not a request is -32600,
//! `tools/call` arguments that are not an object are -32602, and a request before
//! `initialize` is -32600. rmcp alone would drop some of these silently or answer them with
//! a code that points the client elsewhere.

use rmcp::model::ClientJsonRpcMessage;
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

/// Checks one parsed message.
pub(crate) fn check(value: Value) -> Verdict {
    let Value::Object(obj) = &value else {
        let what = if value.is_array() {
            "Invalid Request: batches are not supported; send one message at a time"
        } else {
            "Invalid Request: a message is a JSON object"
        };
        return Verdict::Answer(error(None, INVALID_REQUEST, what));
    };
    let id = obj.get("id").filter(|id| id.is_string() || id.is_number());
    let method = obj.get("method").and_then(Value::as_str);
    if method == Some("tools/call") {
        let args = obj.get("params").and_then(|p| p.get("arguments"));
        if args.is_some_and(|a| !a.is_object() && !a.is_null()) {
            let message = "Invalid params: tools/call arguments must be an object";
            return Verdict::Answer(error(id, INVALID_PARAMS, message));
        }
    }
    // From the borrowed value: cloning the tree first copied every message (a patch's
    // whole text with it) once more.
    match ClientJsonRpcMessage::deserialize(&value) {
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
        || value
            .get("params")
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(INLINE_VERSION_KEY))
            .is_some()
}

/// The answer to a request sent before `initialize` (None for a notification or response).
pub(crate) fn not_initialized(value: &Value) -> Option<Value> {
    let id = value.get("id").filter(|id| id.is_string() || id.is_number())?;
    value.get("method")?;
    Some(error(
        Some(id),
        INVALID_REQUEST,
        "Invalid Request: the session is not initialized; send initialize first",
    ))
}

#[cfg(test)]
mod tests;
