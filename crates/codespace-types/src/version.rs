//! [`Version`]: the whole-file content identity (`sha256:<64 lowercase hex>` or `absent`).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

/// The version of a file: SHA-256 of its whole content, or `Absent` when it does not exist.
///
/// Its only text form is `sha256:<64 lowercase hex>` or `absent`, in `Display`, `FromStr`
/// and serde alike.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Version {
    /// SHA-256 of every byte of the file.
    Sha256([u8; 32]),
    /// The file (or one of its ancestors) does not exist.
    Absent,
}

impl Version {
    /// The version a file with exactly `bytes` would have.
    pub fn of_bytes(bytes: &[u8]) -> Self {
        Self::Sha256(Sha256::digest(bytes).into())
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sha256(digest) => write!(f, "sha256:{}", hex::encode(digest)),
            Self::Absent => f.write_str("absent"),
        }
    }
}

/// A string that is neither `absent` nor `sha256:` followed by 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a version (expected \"absent\" or \"sha256:<64 lowercase hex>\")")]
pub struct ParseVersionError;

impl FromStr for Version {
    type Err = ParseVersionError;

    /// Strict: exactly the form [`Display`](fmt::Display) produces, so two spellings of
    /// one version cannot compare unequal as strings yet equal as values.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "absent" {
            return Ok(Self::Absent);
        }
        let text = s.strip_prefix("sha256:").ok_or(ParseVersionError)?;
        // `hex` also accepts uppercase, which Display never produces.
        if !text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(ParseVersionError);
        }
        let mut digest = [0u8; 32];
        hex::decode_to_slice(text, &mut digest).map_err(|_| ParseVersionError)?;
        Ok(Self::Sha256(digest))
    }
}

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for Version {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("Version")
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^(absent|sha256:[0-9a-f]{64})$",
        })
    }
}

#[cfg(test)]
mod tests;
