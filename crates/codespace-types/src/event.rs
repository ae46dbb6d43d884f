//! [`EventName`]: the steps of an operation's history.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One step of an operation's recorded history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventName {
    /// The operation id was minted.
    Minted,
    /// The plan was recorded, before the first write.
    Planned,
    /// The terminal result was recorded.
    Finished,
    /// The operation was classified at start after an interruption.
    Recovered,
    /// Content the undo log kept was put back by an operator (`codespace operations
    /// restore`); the terminal status stays as it was.
    Restored,
}

impl EventName {
    /// Every name, in lifecycle order.
    pub const ALL: [EventName; 5] = [
        EventName::Minted,
        EventName::Planned,
        EventName::Finished,
        EventName::Recovered,
        EventName::Restored,
    ];

    /// The stored and wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            EventName::Minted => "minted",
            EventName::Planned => "planned",
            EventName::Finished => "finished",
            EventName::Recovered => "recovered",
            EventName::Restored => "restored",
        }
    }

    /// The inverse of [`EventName::as_str`]; `None` for any other text.
    pub fn parse(text: &str) -> Option<EventName> {
        EventName::ALL.into_iter().find(|name| name.as_str() == text)
    }
}

impl std::fmt::Display for EventName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_forms_agree_and_round_trip() {
        for name in EventName::ALL {
            assert_eq!(EventName::parse(name.as_str()), Some(name));
            let json = serde_json::to_value(name).unwrap();
            assert_eq!(json, serde_json::Value::String(name.as_str().to_owned()));
        }
        assert_eq!(EventName::parse("teleported"), None);
    }
}
