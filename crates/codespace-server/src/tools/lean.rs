//! Lean schemas: what `tools/list` keeps of a schemars schema. Every keyword that constrains
//! a value stays exactly as generated; what goes is what only repeats or names: `title`
//! (the Rust type's name), `$schema` (2020-12 is MCP's default dialect), `format` (schemars'
//! integer widths, which `minimum`/`maximum` already state), the argument type's own
//! description (the tool's description says it), a choice of string constants written as
//! `oneOf` (one `enum` with the same values), and a `$defs` entry whenever writing it in
//! place is no larger (each tool's schema stays self-contained: every `$ref` left points
//! into its own `$defs`). An output schema also drops every description, and the `type`
//! beside an `enum` or `const` (the values say it): it is what answers are checked against,
//! not what a model reads; the fields are described in the protocol crate's types and the
//! README.

use rmcp::model::JsonObject;
use serde_json::Value;

/// The lean input schema: descriptions of fields (and of their values) are kept.
pub(crate) fn input(schema: &JsonObject) -> JsonObject {
    lean(schema, Side::Input)
}

/// The lean output schema: no prose at all.
pub(crate) fn output(schema: &JsonObject) -> JsonObject {
    lean(schema, Side::Output)
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    /// Read by a model: field descriptions stay (the root's goes), and every `type`.
    Input,
    /// Checks answers: no description, no `type` the values already say.
    Output,
}

fn lean(schema: &JsonObject, side: Side) -> JsonObject {
    let mut root = Value::Object(schema.clone());
    strip_null(&mut root);
    trim(&mut root, side);
    let Value::Object(mut root) = root else { return JsonObject::new() };
    root.remove("description");
    root.remove("$schema");
    inline_defs(&mut root);
    root
}

/// Calls `f` on every subschema directly beneath `map` (not on data: `enum`, `const`,
/// `default`, `required`, `examples`, nor on the names in `properties`).
fn children(map: &mut JsonObject, f: &mut impl FnMut(&mut Value)) {
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "patternProperties" | "dependentSchemas" => {
                if let Value::Object(named) = value {
                    named.values_mut().for_each(&mut *f);
                }
            }
            "items"
            | "additionalProperties"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "not"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else" => f(value),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(branches) = value {
                    branches.iter_mut().for_each(&mut *f);
                }
            }
            _ => {}
        }
    }
}

/// An optional field (`Option<T>`) is not required and has the plain type, with no `null`
/// alternative and no `default: null`.
fn strip_null(value: &mut Value) {
    let Value::Object(map) = value else { return };
    if map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".to_owned(), only);
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = map.get_mut(key) else { continue };
        branches.retain(|b| b.get("type") != Some(&Value::String("null".to_owned())));
        if branches.len() == 1 {
            // `{anyOf: [X, null]}` becomes X itself, keeping this level's description.
            if let Some(Value::Object(only)) = branches.pop() {
                map.remove(key);
                for (k, v) in only {
                    map.entry(k).or_insert(v);
                }
            }
        }
    }
    children(map, &mut strip_null);
}

/// Drops the names and repeated prose of one schema and its subschemas, and writes a choice
/// of string constants as one `enum`.
fn trim(value: &mut Value, side: Side) {
    let Value::Object(map) = value else { return };
    map.remove("title");
    map.remove("format");
    map.remove("$schema");
    children(map, &mut |child| trim(child, side));
    collapse_choice(map);
    if side == Side::Output {
        map.remove("description");
        let values_say_it = match (map.get("enum"), map.get("const"), map.get("type")) {
            (Some(Value::Array(e)), None, Some(Value::String(t))) => e.iter().all(|v| is(v, t)),
            (None, Some(c), Some(Value::String(t))) => is(c, t),
            _ => false,
        };
        if values_say_it {
            map.remove("type");
        }
    }
}

/// Whether `value` is of the JSON Schema type `name`.
fn is(value: &Value, name: &str) -> bool {
    match value {
        Value::String(_) => name == "string",
        Value::Bool(_) => name == "boolean",
        Value::Number(n) => name == "number" || (name == "integer" && (n.is_i64() || n.is_u64())),
        Value::Null => name == "null",
        Value::Array(_) => name == "array",
        Value::Object(_) => name == "object",
    }
}

/// `oneOf`/`anyOf` whose every branch is a string constant (or a string `enum`), with
/// nothing but prose beside, becomes `{type: string, enum: [...]}`: the same values.
fn collapse_choice(map: &mut JsonObject) {
    for key in ["oneOf", "anyOf"] {
        let Some(Value::Array(branches)) = map.get(key) else { continue };
        let mut values = Vec::new();
        for branch in branches {
            let Value::Object(b) = branch else { return };
            let string = b.get("type").is_none_or(|t| t == "string");
            let plain =
                b.keys().all(|k| matches!(k.as_str(), "const" | "enum" | "type" | "description"));
            if !string || !plain {
                return;
            }
            match (b.get("const"), b.get("enum")) {
                (Some(c @ Value::String(_)), None) => values.push(c.clone()),
                (None, Some(Value::Array(e))) if e.iter().all(Value::is_string) => {
                    values.extend(e.iter().cloned());
                }
                _ => return,
            }
        }
        map.remove(key);
        map.insert("type".to_owned(), Value::from("string"));
        map.insert("enum".to_owned(), Value::Array(values));
        return;
    }
}

fn size(value: &Value) -> usize {
    serde_json::to_string(value).map_or(0, |s| s.len())
}

fn pointer(name: &str) -> String {
    format!("#/$defs/{name}")
}

/// How many `$ref`s anywhere in `value` point at `target`.
fn count_refs(value: &Value, target: &str) -> usize {
    match value {
        Value::Object(map) => {
            let here = usize::from(map.get("$ref").and_then(Value::as_str) == Some(target));
            here + map.values().map(|v| count_refs(v, target)).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(|v| count_refs(v, target)).sum(),
        _ => 0,
    }
}

/// Writes each `$defs` entry in place of its references whenever that is no larger than the
/// entry plus its references, and drops entries nothing references. A definition that refers
/// to itself, or whose keywords a reference's siblings would contradict, stays.
fn inline_defs(root: &mut JsonObject) {
    loop {
        let Some(Value::Object(defs)) = root.get("$defs") else { return };
        let whole = Value::Object(root.clone());
        let pick = defs.iter().find_map(|(name, body)| {
            let target = pointer(name);
            if count_refs(body, &target) > 0 {
                return None;
            }
            let uses = count_refs(&whole, &target);
            let reference = size(&serde_json::json!({ "$ref": target }));
            let entry = size(&Value::from(name.as_str())) + 1 + size(body);
            let inline = uses * size(body) <= entry + uses * reference;
            (inline && !contradicted(&whole, &target, body)).then(|| (name.clone(), body.clone()))
        });
        let Some((name, body)) = pick else { return };
        if let Some(Value::Object(defs)) = root.get_mut("$defs") {
            defs.remove(&name);
            if defs.is_empty() {
                root.remove("$defs");
            }
        }
        let target = pointer(&name);
        for value in root.values_mut() {
            substitute(value, &target, &body);
        }
    }
}

/// Whether some reference to `target` has a sibling keyword the definition also sets,
/// differently (merging them would drop one).
fn contradicted(value: &Value, target: &str, body: &Value) -> bool {
    match value {
        Value::Object(map) => {
            let here = map.get("$ref").and_then(Value::as_str) == Some(target)
                && map.iter().any(|(k, v)| {
                    k != "$ref" && k != "description" && body.get(k).is_some_and(|b| b != v)
                });
            here || map.values().any(|v| contradicted(v, target, body))
        }
        Value::Array(items) => items.iter().any(|v| contradicted(v, target, body)),
        _ => false,
    }
}

/// Replaces every `{$ref: target, ...siblings}` with the definition's keywords and the
/// siblings (a sibling description, the field's own, wins over the type's).
fn substitute(value: &mut Value, target: &str, body: &Value) {
    match value {
        Value::Object(map) => {
            if map.get("$ref").and_then(Value::as_str) == Some(target) {
                map.remove("$ref");
                if let Value::Object(keywords) = body {
                    for (k, v) in keywords {
                        map.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
            map.values_mut().for_each(|v| substitute(v, target, body));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| substitute(v, target, body)),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
