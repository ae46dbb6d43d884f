//! The registry file's shape, decoded by serde: unknown keys and values are refused by the
//! types themselves, and a decoding error is reported as the key path and the reason.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Error as _, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use codespace_types::{
    Approvals, Approvers, EnvironmentKind, NetworkPolicy, Profile, SandboxSetting,
};

use crate::registry::RegistryError;

/// The whole document.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object")]
pub(crate) struct RegistryFile {
    #[serde(default)]
    pub(crate) environments: BTreeMap<String, Object<EnvironmentFile>>,
    #[serde(default)]
    pub(crate) workspaces: BTreeMap<String, Object<WorkspaceFile>>,
}

/// `environments.<id>`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object")]
pub(crate) struct EnvironmentFile {
    /// Required; checked after decoding so a missing kind is named by its own key.
    #[serde(default, deserialize_with = "present_word")]
    pub(crate) kind: Option<EnvironmentKind>,
}

/// `workspaces.<id>`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object")]
pub(crate) struct WorkspaceFile {
    /// Required; checked after decoding so a missing root is named by its own key.
    #[serde(default, deserialize_with = "present")]
    pub(crate) root: Option<String>,
    #[serde(default, deserialize_with = "word")]
    pub(crate) profile: Profile,
    #[serde(default, deserialize_with = "word")]
    pub(crate) network: NetworkPolicy,
    #[serde(default, deserialize_with = "word")]
    pub(crate) approvals: Approvals,
    #[serde(default, deserialize_with = "word")]
    pub(crate) approvers: Approvers,
    #[serde(default, deserialize_with = "word")]
    pub(crate) sandbox: SandboxSetting,
    #[serde(default, deserialize_with = "present")]
    pub(crate) environment: Option<String>,
    #[serde(default)]
    pub(crate) extra_read_roots: Vec<String>,
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) timeout_secs: Option<u64>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) max_timeout_secs: Option<u64>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) kill_grace_ms: Option<u64>,
}

/// A JSON object decoded as `T`. The derived decoders would also take an array of the
/// fields in order, which the registry refuses.
#[derive(Debug)]
pub(crate) struct Object<T>(pub(crate) T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(ObjectVisitor(PhantomData)).map(Object)
    }
}

/// An optional key that, when present, must hold a value: `null` is refused rather than
/// read as absent.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// One of an enum's names. Read as a string first: serde_json reports a non-string where
/// an enum is expected as a syntax error, without the key.
fn word<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    let name = String::deserialize(d)?;
    T::deserialize(name.into_deserializer())
        .map_err(|e: serde::de::value::Error| D::Error::custom(e))
}

fn present_word<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    word(d).map(Some)
}

/// Decodes the registry text; errors carry the key path.
pub(crate) fn decode(text: &str) -> Result<RegistryFile, RegistryError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let Object(file) = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let key = e.path().to_string();
        from_serde(&key, e.inner())
    })?;
    de.end().map_err(|e| from_serde(".", &e))?;
    Ok(file)
}

/// Words serde_json's messages in the registry's terms: `unknown key`, `unknown value`,
/// `expected a string, found a number`. Anything else keeps serde's own message.
fn from_serde(path: &str, e: &serde_json::Error) -> RegistryError {
    let key = if path == "." { TOP_LEVEL.to_owned() } else { path.to_owned() };
    if !e.is_data() {
        return RegistryError { key: TOP_LEVEL.to_owned(), reason: format!("not valid JSON: {e}") };
    }
    // serde_json appends " at line L column C"; the key path says where.
    let text = e.to_string();
    let message = text.rsplit_once(" at line ").map_or(text.as_str(), |(m, _)| m);
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (name, expected) = rest.split_once('`').unwrap_or((rest, ""));
        let expected = expected.trim_start_matches(", expected ").trim_start_matches("one of ");
        return RegistryError {
            key: child(&key, name),
            reason: format!(
                "unknown key (expected one of: {})",
                expected.replace('`', "").replace(" or ", ", ")
            ),
        };
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let (value, expected) = rest.split_once('`').unwrap_or((rest, ""));
        let expected = expected.trim_start_matches(", expected ").replace('`', "\"");
        let what = if key.ends_with(".kind") { "kind" } else { "value" };
        return RegistryError {
            key,
            reason: format!("unknown {what} {value:?} (expected {expected})"),
        };
    }
    if let Some((found, expected)) =
        message.strip_prefix("invalid type: ").and_then(|rest| rest.split_once(", expected "))
    {
        let reason = format!("expected {}, found {}", json_word(&key, expected), found_word(found));
        return RegistryError { key, reason };
    }
    RegistryError { key, reason: message.to_owned() }
}

/// The key of the document itself.
pub(crate) const TOP_LEVEL: &str = "(top level)";

/// The unknown key's path: serde_path_to_error already ends the path with it.
fn child(key: &str, name: &str) -> String {
    if key == name || key.ends_with(&format!(".{name}")) {
        key.to_owned()
    } else if key == TOP_LEVEL {
        name.to_owned()
    } else {
        format!("{key}.{name}")
    }
}

/// serde's name of an expected shape at `key`, in JSON's words.
fn json_word<'a>(key: &str, expected: &'a str) -> &'a str {
    match expected {
        "a sequence" => "an array",
        "a map" => "an object",
        "u64" if key.ends_with("_ms") => "a whole number of milliseconds",
        "u64" => "a whole number of seconds",
        other => other,
    }
}

/// serde's description of what it found (`integer `7``, `string "x"`), in JSON's words.
fn found_word(found: &str) -> &'static str {
    match found.split([' ', '`']).next().unwrap_or("") {
        "integer" | "floating" => "a number",
        "string" => "a string",
        "boolean" => "a boolean",
        "sequence" => "an array",
        "map" => "an object",
        "null" | "unit" => "null",
        _ => "a value of another type",
    }
}
