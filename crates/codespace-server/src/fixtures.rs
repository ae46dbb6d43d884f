//! The official MCP conformance suite's fixtures: the `test_*` tools, resources, prompts and
//! completions its scenarios call, with exactly the content each scenario expects, and
//! `subscriptions/listen` for the resource subscriptions they advertise (the input-required
//! ones in `mrtr`). Every result carries `resultType` (rmcp drops it for a session of an
//! older revision). Built only with the `conformance-fixtures` feature (never by default,
//! never in a release); no fixture touches a workspace, and the real tools know nothing of
//! them.
// rmcp marks sampling and logging deprecated (a later protocol revision drops them); the
// suite's scenarios for the revisions served still exercise them.
#![expect(deprecated, reason = "the suite tests sampling and logging of the revisions served")]

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    CreateMessageRequestParams, ElicitRequestParams, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    LoggingMessageNotificationParam, ProgressNotificationParam, ReadResourceRequestParams,
    ReadResourceResult, ServerCapabilities, SubscriptionFilter, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

mod mrtr;

/// A 1x1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV header with no samples.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

/// Builds an rmcp model value from its wire JSON: the fixtures are specified as JSON.
fn wire<T: DeserializeOwned>(value: Value) -> Result<T, McpError> {
    serde_json::from_value(value)
        .map_err(|e| McpError::internal_error(format!("fixture: {e}"), None))
}

/// A finished result (`resultType: "complete"`) from its wire JSON.
fn finished<T: DeserializeOwned>(mut value: Value) -> Result<T, McpError> {
    value["resultType"] = json!("complete");
    wire(value)
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

pub(crate) fn capabilities(mut caps: ServerCapabilities) -> ServerCapabilities {
    caps.completions = Some(Default::default());
    caps.prompts = Some(Default::default());
    caps.resources = wire(json!({"subscribe": true})).ok();
    caps
}

/// What a `subscriptions/listen` gets: whatever it asked for (rmcp narrows it to what the
/// capabilities above advertise, resource subscriptions).
pub(crate) fn accepted_subscription_filter(requested: &SubscriptionFilter) -> SubscriptionFilter {
    requested.clone()
}

fn no_args(name: &str, description: &str) -> Value {
    json!({"name": name, "description": description,
           "inputSchema": {"type": "object", "properties": {}}})
}

fn one_arg(name: &str, description: &str, arg: &str) -> Value {
    json!({"name": name, "description": description, "inputSchema": {"type": "object",
           "properties": {arg: {"type": "string", "description": arg}}, "required": [arg]}})
}

pub(crate) fn tools() -> Vec<Tool> {
    let list = vec![
        no_args("test_simple_text", "Returns simple text"),
        no_args("test_image_content", "Returns an image"),
        no_args("test_audio_content", "Returns audio"),
        no_args("test_embedded_resource", "Returns an embedded resource"),
        no_args("test_multiple_content_types", "Returns text, an image and a resource"),
        no_args("test_tool_with_logging", "Sends three log messages"),
        no_args("test_tool_with_progress", "Reports progress"),
        no_args("test_error_handling", "Always fails"),
        no_args("test_reconnection", "Answers after a pause"),
        no_args("test_elicitation_sep1034_defaults", "Elicits with defaults"),
        no_args("test_elicitation_sep1330_enums", "Elicits with enums"),
        one_arg("test_sampling", "Asks the client's model", "prompt"),
        one_arg("test_elicitation", "Asks the user", "message"),
        json!({"name": "json_schema_2020_12_tool",
               "description": "Tool with JSON Schema 2020-12 features",
               "inputSchema": {
                   "$schema": "https://json-schema.org/draft/2020-12/schema",
                   "type": "object",
                   "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                       "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
                   "properties": {"name": {"type": "string"},
                                  "address": {"$ref": "#/$defs/address"},
                                  "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                                  "phone": {"type": "string"}, "email": {"type": "string"}},
                   "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                   "if": {"properties": {"contactMethod": {"const": "phone"}},
                          "required": ["contactMethod"]},
                   "then": {"required": ["phone"]},
                   "else": {"required": ["email"]},
                   "additionalProperties": false}}),
    ];
    let mrtr = mrtr::TOOLS.iter().map(|(name, description)| no_args(name, description));
    list.into_iter().chain(mrtr).filter_map(|t| serde_json::from_value(t).ok()).collect()
}

/// Answers a fixture tool, or None for any other name.
pub(crate) async fn call(
    name: &str,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Option<Result<CallToolResponse, McpError>> {
    let arg = |key: &str| {
        request
            .arguments
            .as_ref()
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    if let Some(answer) = mrtr::call(name, request, context).await {
        return Some(answer);
    }
    let peer = &context.peer;
    let result = match name {
        "test_simple_text" => content(vec![text("This is a simple text response for testing.")]),
        "test_image_content" => content(vec![image()]),
        "test_audio_content" => {
            content(vec![json!({"type": "audio", "data": WAV, "mimeType": "audio/wav"})])
        }
        "test_embedded_resource" => content(vec![json!({"type": "resource", "resource": {
            "uri": "test://embedded-resource", "mimeType": "text/plain",
            "text": "This is an embedded resource content."}})]),
        "test_multiple_content_types" => content(vec![
            text("Multiple content types test:"),
            image(),
            json!({"type": "resource", "resource": {"uri": "test://mixed-content-resource",
                "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}}),
        ]),
        "test_error_handling" => Ok(CallToolResult::error(vec![rmcp::model::ContentBlock::text(
            "This tool intentionally returns an error for testing",
        )])),
        "test_tool_with_logging" => logging(peer).await,
        "test_tool_with_progress" => progress(peer, context).await,
        "test_reconnection" => {
            tokio::time::sleep(Duration::from_millis(100)).await;
            content(vec![text("Reconnection test completed successfully")])
        }
        "test_sampling" => sampling(peer, arg("prompt").unwrap_or_default()).await,
        "test_elicitation" => {
            elicit(peer, basic_form(arg("message").unwrap_or_default()), "User response").await
        }
        "test_elicitation_sep1034_defaults" => {
            elicit(peer, defaults_form(), "Elicitation completed").await
        }
        "test_elicitation_sep1330_enums" => {
            elicit(peer, enums_form(), "Elicitation completed").await
        }
        "json_schema_2020_12_tool" => content(vec![text("ok")]),
        _ => return None,
    };
    Some(result.map(Into::into))
}

fn image() -> Value {
    json!({"type": "image", "data": PNG, "mimeType": "image/png"})
}

fn content(blocks: Vec<Value>) -> Result<CallToolResult, McpError> {
    finished(json!({"content": blocks}))
}

fn peer_error(e: rmcp::ServiceError) -> McpError {
    McpError::internal_error(format!("request to the client failed: {e}"), None)
}

async fn logging(peer: &Peer<RoleServer>) -> Result<CallToolResult, McpError> {
    for (i, message) in
        ["Tool execution started", "Tool processing data", "Tool execution completed"]
            .iter()
            .enumerate()
    {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let note: LoggingMessageNotificationParam =
            wire(json!({"level": "info", "logger": "conformance", "data": message}))?;
        peer.notify_logging_message(note).await.map_err(peer_error)?;
    }
    content(vec![text("Logging test completed")])
}

async fn progress(
    peer: &Peer<RoleServer>,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, McpError> {
    let token = context.meta.get_progress_token();
    for (i, step) in [0, 50, 100].iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if let Some(token) = &token {
            let note: ProgressNotificationParam =
                wire(json!({"progressToken": token, "progress": step, "total": 100}))?;
            peer.notify_progress(note).await.map_err(peer_error)?;
        }
    }
    content(vec![text("Progress test completed")])
}

async fn sampling(peer: &Peer<RoleServer>, prompt: String) -> Result<CallToolResult, McpError> {
    let params: CreateMessageRequestParams = wire(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": 100}))?;
    let answer = peer.create_message(params).await.map_err(peer_error)?;
    let said = serde_json::to_value(&answer.message.content).unwrap_or_default();
    let said = said
        .get("text")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| said.to_string());
    content(vec![text(&format!("LLM response: {said}"))])
}

async fn elicit(
    peer: &Peer<RoleServer>,
    form: Value,
    prefix: &str,
) -> Result<CallToolResult, McpError> {
    let params: ElicitRequestParams = wire(form)?;
    let answer = peer.create_elicitation(params).await.map_err(peer_error)?;
    let answer = serde_json::to_value(&answer).unwrap_or_default();
    let action = answer.get("action").and_then(Value::as_str).unwrap_or("cancel");
    let given = answer.get("content").cloned().unwrap_or(json!({}));
    content(vec![text(&format!("{prefix}: action={action}, content={given}"))])
}

fn basic_form(message: String) -> Value {
    json!({"mode": "form", "message": message, "requestedSchema": {"type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}},
        "required": ["username", "email"]}})
}

fn defaults_form() -> Value {
    json!({"mode": "form", "message": "Please review and update the form fields with defaults",
        "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status",
                       "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": true}}}})
}

fn enums_form() -> Value {
    let titled = |prefix: &str, names: [&str; 3]| -> Vec<Value> {
        (1..=3)
            .zip(names)
            .map(|(i, t)| json!({"const": format!("{prefix}{i}"), "title": t}))
            .collect()
    };
    json!({"mode": "form", "message": "Please select options from the enum fields",
        "requestedSchema": {"type": "object", "properties": {
            "untitledSingle": {"type": "string", "description": "Untitled single-select",
                "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Titled single-select",
                "oneOf": titled("value", ["First Option", "Second Option", "Third Option"])},
            "legacyEnum": {"type": "string", "description": "Legacy titled enum",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Untitled multi-select",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Titled multi-select",
                "items": {"anyOf": titled("value", ["First Choice", "Second Choice", "Third Choice"])}}}}})
}

pub(crate) fn list_resources() -> Result<ListResourcesResult, McpError> {
    finished(json!({"resources": [
        {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain",
         "description": "A static text resource"},
        {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png",
         "description": "A static binary resource"},
        {"uri": "test://watched-resource", "name": "watched-resource", "mimeType": "text/plain",
         "description": "A resource to subscribe to"}]}))
}

pub(crate) fn list_resource_templates() -> Result<ListResourceTemplatesResult, McpError> {
    finished(json!({"resourceTemplates": [{"uriTemplate": "test://template/{id}/data",
        "name": "template", "description": "Data by id", "mimeType": "application/json"}]}))
}

pub(crate) fn read_resource(
    request: &ReadResourceRequestParams,
) -> Result<ReadResourceResult, McpError> {
    let uri = request.uri.as_str();
    let body = match uri {
        "test://static-text" | "test://watched-resource" => json!({"uri": uri,
            "mimeType": "text/plain", "text": "This is the content of the static text resource."}),
        "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
        _ => {
            let id = uri.strip_prefix("test://template/").and_then(|r| r.strip_suffix("/data"));
            let Some(id) = id else {
                let data = json!({"uri": uri});
                return Err(McpError::resource_not_found(format!("no resource {uri}"), Some(data)));
            };
            let data =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            json!({"uri": uri, "mimeType": "application/json", "text": data.to_string()})
        }
    };
    finished(json!({"contents": [body]}))
}

pub(crate) fn list_prompts() -> Result<ListPromptsResult, McpError> {
    let arg = |name: &str| json!({"name": name, "description": name, "required": true});
    finished(json!({"prompts": [
        {"name": "test_simple_prompt", "description": "A simple prompt"},
        {"name": "test_prompt_with_arguments", "description": "A prompt with arguments",
         "arguments": [arg("arg1"), arg("arg2")]},
        {"name": "test_prompt_with_embedded_resource", "description": "A prompt with a resource",
         "arguments": [arg("resourceUri")]},
        {"name": "test_prompt_with_image", "description": "A prompt with an image"},
        {"name": mrtr::PROMPT, "description": "A prompt that asks for its context first"}]}))
}

pub(crate) fn get_prompt(request: &GetPromptRequestParams) -> Result<GetPromptResponse, McpError> {
    let arg = |key: &str| {
        request
            .arguments
            .as_ref()
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let user = |content: Value| json!({"role": "user", "content": content});
    let messages = match request.name.as_str() {
        "test_simple_prompt" => vec![user(text("This is a simple prompt for testing."))],
        "test_prompt_with_arguments" => vec![user(text(&format!(
            "Prompt with arguments: arg1='{}', arg2='{}'",
            arg("arg1"),
            arg("arg2")
        )))],
        "test_prompt_with_embedded_resource" => vec![
            user(json!({"type": "resource", "resource": {"uri": arg("resourceUri"),
                "mimeType": "text/plain", "text": "Embedded resource content for testing."}})),
            user(text("Please process the embedded resource above.")),
        ],
        "test_prompt_with_image" => {
            vec![user(image()), user(text("Please analyze the image above."))]
        }
        mrtr::PROMPT => return mrtr::prompt(request),
        other => return Err(McpError::invalid_params(format!("no prompt {other}"), None)),
    };
    finished::<rmcp::model::GetPromptResult>(json!({"messages": messages})).map(Into::into)
}

pub(crate) fn complete(request: &CompleteRequestParams) -> Result<CompleteResult, McpError> {
    let typed = serde_json::to_value(&request.argument).unwrap_or_default();
    let prefix = typed.get("value").and_then(Value::as_str).unwrap_or("");
    let values: Vec<&str> =
        ["paris", "park", "party"].into_iter().filter(|v| v.starts_with(prefix)).collect();
    finished(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
}
