//! The tool catalog, made from the protocol's tool table (`for_each_tool!`): names, titles,
//! descriptions, input and output schemas, annotations.
//! Schemas are lean for clients (`lean`): an optional field is simply not required, names
//! and repeated prose are left out, an output schema carries no prose; a `workspace_id` is
//! marked for its routing header.

mod lean;

use std::sync::Arc;

use codespace_protocol::WORKSPACE_ID_HEADER;
use rmcp::handler::server::common::{schema_for_output, schema_for_type};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use rmcp::schemars::JsonSchema;
use serde_json::Value;

/// What a tool does to the world, for its annotations.
#[derive(Clone, Copy)]
enum Effect {
    /// Reads only.
    Read,
    /// Changes files or processes; a retry with the same arguments may act twice.
    Mutate,
    /// Changes a process in a way that destroys nothing (a terminal size).
    Adjust,
    /// Ends something; doing it again changes nothing more.
    Stop,
    /// Changes a work's queue, destroys nothing, but a retry acts twice (a second work, a
    /// second claim).
    Coordinate,
    /// Records a decision about a held action; repeating it changes nothing more.
    Decide,
    /// Runs a held action once; a repeat returns the stored result.
    Resume,
    /// Puts an operation's files back once; a repeat is refused and changes nothing more.
    Undo,
}

fn spec<P: JsonSchema + 'static, R: JsonSchema + 'static>(
    name: &'static str,
    title: &'static str,
    effect: Effect,
    description: &'static str,
) -> Tool {
    // A hint equal to its default in the MCP schema (readOnlyHint false, destructiveHint
    // true, idempotentHint false) is left out: absent, it means the same.
    let stated = |hint: bool, default: bool| (hint != default).then_some(hint);
    let mut annotations = ToolAnnotations::with_title(title);
    annotations.read_only_hint = stated(matches!(effect, Effect::Read), false);
    annotations.destructive_hint = stated(
        matches!(effect, Effect::Mutate | Effect::Stop | Effect::Resume | Effect::Undo),
        true,
    );
    // Only reads are idempotent: apply_patch is only with an operation_key, and a retried
    // exec_command or write_stdin starts a second process or writes twice.
    annotations.idempotent_hint =
        stated(!matches!(effect, Effect::Mutate | Effect::Coordinate), false);
    annotations.open_world_hint = Some(false);
    let input = routed(lean::input(&schema_for_type::<P>()));
    let output = lean::output(&schema_for_output::<R>());
    Tool::new(name, description, Arc::new(input))
        .with_title(title)
        .with_raw_output_schema(Arc::new(output))
        .with_annotations(annotations)
}

/// `schema` with its `workspace_id` marked for mirroring in the routing header
/// [`WORKSPACE_ID_HEADER`] (SEP-2243's `x-mcp-header`): a top-level one, or the one inside
/// `approval_create`'s `arguments` (the held tool's own argument object, declared here as
/// having a string `workspace_id` so that the annotation sits on a `properties` path).
fn routed(mut schema: JsonObject) -> JsonObject {
    let header = || (String::from("x-mcp-header"), Value::from(WORKSPACE_ID_HEADER));
    let Some(Value::Object(properties)) = schema.get_mut("properties") else { return schema };
    if let Some(Value::Object(field)) = properties.get_mut("workspace_id") {
        field.extend([header()]);
    } else if let Some(Value::Object(held)) = properties.get_mut("arguments") {
        let field =
            serde_json::json!({"type": "string", "description": "Registered workspace id."});
        let mut field = field.as_object().cloned().unwrap_or_default();
        field.extend([header()]);
        let fields = held.entry("properties").or_insert_with(|| Value::Object(JsonObject::new()));
        if let Value::Object(fields) = fields {
            fields.insert("workspace_id".to_owned(), Value::Object(field));
        }
    }
    schema
}

/// Every live tool, in the table's order; made once per process (every session shares it).
macro_rules! catalog {
    ($($name:ident, $konst:ident, $params:ty => $result:ty, $effect:ident, $drive:ident, $title:literal, $description:literal;)*) => {
        pub(crate) fn catalog() -> Arc<Vec<Tool>> {
            static CATALOG: std::sync::OnceLock<Arc<Vec<Tool>>> = std::sync::OnceLock::new();
            CATALOG
                .get_or_init(|| {
                    Arc::new(vec![$(
                        spec::<$params, $result>(stringify!($name), $title, Effect::$effect, $description),
                    )*])
                })
                .clone()
        }
    };
}

codespace_protocol::for_each_tool!(catalog);
