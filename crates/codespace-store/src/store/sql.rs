//! The TEXT columns of the ledger and the typed values they hold, both ways: statuses,
//! change kinds, event names and versions. Writing uses each type's exhaustive `as_str`
//! (or `Display`); reading accepts exactly those texts, and anything else is a corrupt
//! row, never a panic and never a default.

use codespace_types::{ChangeKind, EventName, Version};

use crate::error::StoreError;
use crate::model::OpStatus;

pub(super) fn status_text(status: OpStatus) -> &'static str {
    status.as_str()
}

/// The status column of `operation_id`'s row (or of one of its events).
pub(super) fn status(operation_id: &str, text: &str) -> Result<OpStatus, StoreError> {
    OpStatus::parse(text).ok_or_else(|| StoreError::CorruptRow {
        operation_id: operation_id.to_owned(),
        detail: format!("status {text:?} is not a known status"),
    })
}

pub(super) fn event_text(name: EventName) -> &'static str {
    name.as_str()
}

pub(super) fn event(operation_id: &str, text: &str) -> Result<EventName, StoreError> {
    EventName::parse(text).ok_or_else(|| StoreError::CorruptRow {
        operation_id: operation_id.to_owned(),
        detail: format!("event name {text:?} is not a known event"),
    })
}

pub(super) fn kind_text(kind: ChangeKind) -> &'static str {
    kind.as_str()
}

/// A planned file's kind; the reason names the column, for the caller's corrupt-row detail.
pub(super) fn kind(text: &str) -> Result<ChangeKind, String> {
    ChangeKind::parse(text)
        .ok_or_else(|| format!("kind {text:?} is not one of add, update, delete, move"))
}

/// A planned file's version column `field`; the reason names it.
pub(super) fn version(field: &str, text: &str) -> Result<Version, String> {
    text.parse().map_err(|_| {
        format!("{field} {text:?} is neither `absent` nor `sha256:<64 lowercase hex>`")
    })
}
