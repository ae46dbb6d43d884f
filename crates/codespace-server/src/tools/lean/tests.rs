//! Unit tests of the lean schemas: what goes, what stays exactly.

use serde_json::{Value, json};

use super::{input, output};

fn object(v: Value) -> rmcp::model::JsonObject {
    v.as_object().cloned().unwrap()
}

#[test]
fn names_and_widths_go_constraints_stay() {
    let schema = object(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "ReadParams",
        "description": "Arguments of `read`.",
        "type": "object",
        "properties": {
            "limit": {"description": "Window size.", "type": "integer", "format": "uint64",
                      "minimum": 1, "maximum": 1_048_576},
            "title": {"description": "A field named title stays.", "type": ["string", "null"],
                      "default": null},
        },
        "required": ["limit"],
    }));
    let lean = Value::Object(input(&schema));
    assert_eq!(
        lean,
        json!({
            "type": "object",
            "properties": {
                "limit": {"description": "Window size.", "type": "integer", "minimum": 1,
                          "maximum": 1_048_576},
                "title": {"description": "A field named title stays.", "type": "string"},
            },
            "required": ["limit"],
        })
    );
    let out = Value::Object(output(&schema));
    assert_eq!(
        out["properties"]["limit"],
        json!({"type": "integer", "minimum": 1, "maximum": 1_048_576})
    );
    assert!(!out.to_string().contains("description"), "{out}");
}

#[test]
fn a_choice_of_constants_is_one_enum_with_the_same_values() {
    let schema = object(json!({
        "type": "object",
        "properties": {"state": {"description": "State.", "oneOf": [
            {"enum": ["off"], "type": "string"},
            {"const": "confirm", "description": "Held.", "type": "string"},
        ]}},
    }));
    let lean = Value::Object(input(&schema));
    assert_eq!(
        lean["properties"]["state"],
        json!({"description": "State.", "type": "string", "enum": ["off", "confirm"]})
    );
    // An output schema keeps the values alone: they say the type.
    assert_eq!(
        Value::Object(output(&schema))["properties"]["state"],
        json!({"enum": ["off", "confirm"]})
    );
    // A branch with a constraint beside its constant is left as it is.
    let mixed = object(json!({"type": "object", "properties": {"x": {"oneOf": [
        {"const": "a", "type": "string"}, {"type": "integer", "minimum": 0},
    ]}}}));
    assert_eq!(Value::Object(output(&mixed))["properties"]["x"]["oneOf"][1]["minimum"], 0);
}

#[test]
fn definitions_are_written_in_place_when_that_is_no_larger() {
    let big: Vec<String> = (0..40).map(|i| format!("CODE_NUMBER_{i}")).collect();
    let schema = object(json!({
        "type": "object",
        "$defs": {
            "Once": {"type": "object", "properties": {"a": {"type": "boolean"}},
                     "required": ["a"]},
            "Big": {"type": "string", "enum": big},
            "Unused": {"type": "string"},
            "Tree": {"type": "object", "properties": {"up": {"$ref": "#/$defs/Tree"}}},
        },
        "properties": {
            "once": {"$ref": "#/$defs/Once", "description": "The field's own words."},
            "first": {"$ref": "#/$defs/Big"},
            "second": {"items": {"$ref": "#/$defs/Big"}, "type": "array"},
            "tree": {"$ref": "#/$defs/Tree"},
        },
    }));
    let lean = Value::Object(input(&schema));
    assert_eq!(
        lean["properties"]["once"],
        json!({"description": "The field's own words.", "type": "object",
               "properties": {"a": {"type": "boolean"}}, "required": ["a"]})
    );
    // Used twice and large: shared, once; recursive: kept; unused: gone.
    assert_eq!(lean["properties"]["first"], json!({"$ref": "#/$defs/Big"}));
    assert_eq!(lean["properties"]["second"]["items"], json!({"$ref": "#/$defs/Big"}));
    let defs: Vec<&String> = lean["$defs"].as_object().unwrap().keys().collect();
    assert_eq!(defs, ["Big", "Tree"]);
}

#[test]
fn a_reference_whose_siblings_contradict_the_definition_stays() {
    let schema = object(json!({
        "type": "object",
        "$defs": {"N": {"type": "integer", "minimum": 0}},
        "properties": {"n": {"$ref": "#/$defs/N", "minimum": 5}},
    }));
    let lean = Value::Object(output(&schema));
    assert_eq!(lean["properties"]["n"], json!({"$ref": "#/$defs/N", "minimum": 5}));
}
