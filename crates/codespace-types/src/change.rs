//! [`ChangeKind`]: what a patch does to one file.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Kind of one file change, as planned, recorded and reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Add,
    Update,
    Delete,
    Move,
}

impl ChangeKind {
    /// Every kind, in declaration order.
    pub const ALL: [ChangeKind; 4] =
        [ChangeKind::Add, ChangeKind::Update, ChangeKind::Delete, ChangeKind::Move];

    /// The stored and wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Add => "add",
            ChangeKind::Update => "update",
            ChangeKind::Delete => "delete",
            ChangeKind::Move => "move",
        }
    }

    /// The inverse of [`ChangeKind::as_str`]; `None` for any other text.
    pub fn parse(text: &str) -> Option<ChangeKind> {
        ChangeKind::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

impl std::fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_forms_agree_and_round_trip() {
        for kind in ChangeKind::ALL {
            assert_eq!(ChangeKind::parse(kind.as_str()), Some(kind));
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, serde_json::Value::String(kind.as_str().to_owned()));
        }
        assert_eq!(ChangeKind::parse("Add"), None);
        assert_eq!(ChangeKind::parse("rename"), None);
    }
}
