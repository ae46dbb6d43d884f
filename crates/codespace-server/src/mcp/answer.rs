//! One call's answer: its arguments decoded, the gateway's result shaped as the session
//! asked (`Shape`), and the call counted in the metrics with its outcome code and time.

use codespace_gateway::GatewayError;
use codespace_protocol::STRUCTURED_ONLY_CAPABILITY;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, InitializeRequestParams, ResourceContents,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::metrics::{self, Metrics};
use crate::mrtr::Asked;

/// How a session's successful results are shaped on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// `structuredContent` plus the same JSON as text, as the MCP spec says a tool SHOULD
    /// (clients that read only `content` see the result): the default.
    WithTextCopy,
    /// `structuredContent` alone with an empty `content`: the client declared
    /// [`STRUCTURED_ONLY_CAPABILITY`].
    StructuredOnly,
}

impl Shape {
    pub(super) fn declared_by(request: &InitializeRequestParams) -> Shape {
        let experimental = request.capabilities.experimental.as_ref();
        match experimental.is_some_and(|e| e.contains_key(STRUCTURED_ONLY_CAPABILITY)) {
            true => Shape::StructuredOnly,
            false => Shape::WithTextCopy,
        }
    }
}

/// Decodes tool arguments. Arguments that do not fit the schema are the model's to fix, so
/// they are a tool result with `isError` naming the field (SEP-1303), not a protocol error.
fn decode<T: DeserializeOwned>(
    name: &str,
    args: Option<rmcp::model::JsonObject>,
) -> Result<T, GatewayError> {
    let value = serde_json::Value::Object(args.unwrap_or_default());
    serde_json::from_value(value).map_err(|e| GatewayError::InvalidArguments {
        tool: name.to_owned(),
        detail: e.to_string(),
    })
}

/// A `read` answered with `encoding: image`: its base64 `content` moves out of the result
/// into an image content block (after the text copy, which stays first), leaving it empty.
fn image_block(json: &mut serde_json::Value) -> Option<ContentBlock> {
    if json.get("encoding")?.as_str()? != "image" {
        return None;
    }
    let mime = json.get("image")?.get("mime_type")?.as_str()?.to_owned();
    let empty = serde_json::Value::String(String::new());
    let serde_json::Value::String(data) = std::mem::replace(json.get_mut("content")?, empty) else {
        return None;
    };
    Some(ContentBlock::image(data, mime))
}

/// A `read` window that is not text, answered with the text copy: its base64 `content` moves
/// out of the result into the blob of an embedded resource block (after the text copy),
/// leaving it empty and `encoding` `resource`. The bytes then cross the wire once: a window
/// carried in both the text copy and `structuredContent` makes a line twice as long, which
/// a client that assembles its lines chunk by chunk pays for quadratically.
fn resource_block(json: &mut serde_json::Value) -> Option<ContentBlock> {
    if json.get("encoding")?.as_str()? != "base64" {
        return None;
    }
    let uri = window_uri(json)?;
    let empty = serde_json::Value::String(String::new());
    let serde_json::Value::String(blob) = std::mem::replace(json.get_mut("content")?, empty) else {
        return None;
    };
    json["encoding"] = serde_json::Value::from("resource");
    let contents = ResourceContents::blob(blob, uri).with_mime_type("application/octet-stream");
    Some(ContentBlock::resource(contents))
}

/// The embedded resource's name for a `read` window: `codespace:` and the workspace-relative
/// path (each byte other than an unreserved character or `/` percent-encoded), with the
/// window's `offset` and `byte_count`, so two windows of one file are two resources.
fn window_uri(json: &serde_json::Value) -> Option<String> {
    let path = json.get("path")?.as_str()?;
    let offset = json.get("offset").and_then(serde_json::Value::as_u64).unwrap_or(0);
    let count = json.get("byte_count")?.as_u64()?;
    let mut uri = String::from("codespace:");
    for &b in path.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str(&format!("?offset={offset}&byte_count={count}"));
    Some(uri)
}

fn respond<T: Serialize>(
    shape: Shape,
    result: Result<T, GatewayError>,
) -> Result<CallToolResponse, McpError> {
    match result {
        Ok(value) => {
            let failed =
                |e| McpError::internal_error(format!("result serialization failed: {e}"), None);
            let mut json = serde_json::to_value(value).map_err(failed)?;
            let mut blocks = Vec::from_iter(image_block(&mut json));
            let mut content = match shape {
                // The text copy through serde_json's writer, not `Value`'s `Display` (what
                // `CallToolResult::structured` uses), which escapes a long string several
                // times slower through `fmt::Formatter`.
                Shape::WithTextCopy => {
                    blocks.extend(resource_block(&mut json));
                    vec![ContentBlock::text(serde_json::to_string(&json).map_err(failed)?)]
                }
                Shape::StructuredOnly => vec![],
            };
            content.extend(blocks);
            let mut result = CallToolResult::success(content);
            result.structured_content = Some(json);
            Ok(result.into())
        }
        Err(e) => {
            let body = e.to_body();
            tracing::debug!(code = %body.code, "tool refused");
            let text = serde_json::to_string(&body).map_err(|e| {
                McpError::internal_error(format!("error serialization failed: {e}"), None)
            })?;
            Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into())
        }
    }
}

/// Decodes, then runs one gateway call, and counts it with its outcome code and time.
pub(super) async fn run<P, R, Fut>(
    (shape, name, metrics): (Shape, &'static str, &Metrics),
    args: Option<rmcp::model::JsonObject>,
    call: impl FnOnce(P) -> Fut,
) -> Result<CallToolResponse, McpError>
where
    P: DeserializeOwned,
    R: Serialize,
    Fut: std::future::Future<Output = Result<R, GatewayError>>,
{
    run_asked((shape, name, metrics), args, |p| async move { call(p).await.map(Asked::Ran) }).await
}

/// [`run`] for a held call, whose answer may be a question for the person
/// (`input_required`, counted as `INPUT_REQUIRED`).
pub(super) async fn run_asked<P, R, Fut>(
    (shape, name, metrics): (Shape, &'static str, &Metrics),
    args: Option<rmcp::model::JsonObject>,
    call: impl FnOnce(P) -> Fut,
) -> Result<CallToolResponse, McpError>
where
    P: DeserializeOwned,
    R: Serialize,
    Fut: std::future::Future<Output = Result<Asked<R>, GatewayError>>,
{
    let started = std::time::Instant::now();
    let result = match decode(name, args) {
        Ok(params) => call(params).await,
        Err(e) => Err(e),
    };
    let code = match &result {
        Ok(Asked::Ran(_)) => metrics::OK,
        Ok(Asked::Input(_)) => metrics::INPUT_REQUIRED,
        Err(e) => e.code().as_str(),
    };
    let took = started.elapsed();
    metrics.call(name, code, took);
    tracing::debug!(code, took_ms = took.as_millis() as u64, "tool call answered");
    match result {
        Ok(Asked::Input(question)) => Ok(CallToolResponse::InputRequired(question)),
        Ok(Asked::Ran(r)) => respond(shape, Ok(r)),
        Err(e) => respond::<R>(shape, Err(e)),
    }
}
