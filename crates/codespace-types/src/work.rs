//! The words of a work and its queue of user instructions: [`WorkState`], [`IntentState`],
//! [`Delivery`] and [`IntentKind`]. Each text form is the one the ledger stores and the wire
//! shows; parsing accepts exactly those texts.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Declares a text-backed enum: serde in `snake_case`, `ALL`, `as_str`, `parse`, `Display`.
macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The stored and wire form.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The inverse of `as_str`; `None` for any other text.
            pub fn parse(text: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|value| value.as_str() == text)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

text_enum! {
    /// The state of a work: open (`active`, `closing`) or ended (`closed`, `cancelled`).
    WorkState {
        /// Open; only `next_checkpoint` instructions are claimable.
        Active => "active",
        /// `work_finish` found `after_current_work` instructions: they are claimable now.
        Closing => "closing",
        /// Finished: no pending instruction was left.
        Closed => "closed",
        /// Ended without finishing (reserved: no call sets it yet).
        Cancelled => "cancelled",
    }
}

impl WorkState {
    /// `active` or `closing`: the agent may still claim from it.
    pub fn is_open(self) -> bool {
        match self {
            WorkState::Active | WorkState::Closing => true,
            WorkState::Closed | WorkState::Cancelled => false,
        }
    }
}

text_enum! {
    /// The state of one user instruction.
    IntentState {
        /// Written by the person, invisible to the agent until queued.
        Draft => "draft",
        /// Waiting for the agent.
        Queued => "queued",
        /// Taken by the agent; its content is frozen.
        Claimed => "claimed",
        /// The agent did it.
        Done => "done",
        /// The agent could not do it.
        Blocked => "blocked",
        /// Withdrawn by the person before the agent took it.
        Cancelled => "cancelled",
        /// Replaced by a newer instruction (reserved: no call sets it yet).
        Superseded => "superseded",
    }
}

impl IntentState {
    /// `draft` or `queued`: the person may still edit, queue or cancel it.
    pub fn is_editable(self) -> bool {
        match self {
            IntentState::Draft | IntentState::Queued => true,
            IntentState::Claimed
            | IntentState::Done
            | IntentState::Blocked
            | IntentState::Cancelled
            | IntentState::Superseded => false,
        }
    }
}

text_enum! {
    /// When an instruction reaches the agent.
    Delivery {
        /// At the agent's next checkpoint, while the work is active.
        NextCheckpoint => "next_checkpoint",
        /// Once the agent asks to finish the work.
        AfterCurrentWork => "after_current_work",
        /// With the next work opened in the workspace.
        NextWork => "next_work",
    }
}

text_enum! {
    /// What an instruction is.
    IntentKind {
        /// Something more to do.
        FollowUp => "follow_up",
        /// Information, nothing to do.
        Note => "note",
        /// The person pressed stop: the workspace's processes were killed.
        StopNotice => "stop_notice",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T>(all: &[T], as_str: fn(T) -> &'static str, parse: fn(&str) -> Option<T>)
    where
        T: Copy + PartialEq + std::fmt::Debug + Serialize,
    {
        for value in all {
            assert_eq!(parse(as_str(*value)), Some(*value));
            let json = serde_json::to_value(value).unwrap();
            assert_eq!(json, serde_json::Value::String(as_str(*value).to_owned()));
        }
        assert_eq!(parse(""), None);
        assert_eq!(parse("Queued"), None);
    }

    #[test]
    fn text_forms_agree_and_round_trip() {
        round_trip(WorkState::ALL, WorkState::as_str, WorkState::parse);
        round_trip(IntentState::ALL, IntentState::as_str, IntentState::parse);
        round_trip(Delivery::ALL, Delivery::as_str, Delivery::parse);
        round_trip(IntentKind::ALL, IntentKind::as_str, IntentKind::parse);
    }
}
