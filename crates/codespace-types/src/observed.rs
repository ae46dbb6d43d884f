//! [`ObservedChange`]: what the workspace watcher saw happen to one path.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Kind of one observed change to a path, coalesced over a span of events. An invalidation
/// hint, not a history: a path created and then edited is `created`, one removed and then
/// created again is `modified`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ObservedChange {
    /// The path did not exist before (as far as the watcher saw) and does now.
    Created,
    /// The path's content or metadata changed, or it was replaced.
    Modified,
    /// The path no longer exists (removed, or renamed away).
    Removed,
}

impl ObservedChange {
    /// Every kind, in declaration order.
    pub const ALL: [ObservedChange; 3] =
        [ObservedChange::Created, ObservedChange::Modified, ObservedChange::Removed];

    /// The wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            ObservedChange::Created => "created",
            ObservedChange::Modified => "modified",
            ObservedChange::Removed => "removed",
        }
    }

    /// The inverse of [`ObservedChange::as_str`]; `None` for any other text.
    pub fn parse(text: &str) -> Option<ObservedChange> {
        ObservedChange::ALL.into_iter().find(|kind| kind.as_str() == text)
    }

    /// The kind that sums `self` followed by `later` on one path.
    pub fn then(self, later: ObservedChange) -> ObservedChange {
        match (self, later) {
            (ObservedChange::Created, ObservedChange::Created | ObservedChange::Modified) => {
                ObservedChange::Created
            }
            (ObservedChange::Removed, ObservedChange::Created)
            | (ObservedChange::Modified, ObservedChange::Created | ObservedChange::Modified)
            | (ObservedChange::Removed, ObservedChange::Modified) => ObservedChange::Modified,
            (_, ObservedChange::Removed) => ObservedChange::Removed,
        }
    }
}

impl std::fmt::Display for ObservedChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ObservedChange::{Created, Modified, Removed};

    #[test]
    fn text_forms_agree_and_round_trip() {
        for kind in ObservedChange::ALL {
            assert_eq!(ObservedChange::parse(kind.as_str()), Some(kind));
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, serde_json::Value::String(kind.as_str().to_owned()));
        }
        assert_eq!(ObservedChange::parse("Created"), None);
    }

    #[test]
    fn coalescing_keeps_what_an_agent_needs_to_know() {
        assert_eq!(Created.then(Modified), Created);
        assert_eq!(Created.then(Removed), Removed);
        assert_eq!(Removed.then(Created), Modified);
        assert_eq!(Modified.then(Removed), Removed);
        assert_eq!(Modified.then(Modified), Modified);
    }
}
