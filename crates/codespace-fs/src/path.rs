//! [`WorkspacePath`]: the lexical validation every client-supplied path goes through.
//!
//! This is only the first gate. It guarantees the kernel never sees `..`, an absolute
//! path, a NUL or an over-long name; containment against symlinks and races is decided
//! later, by the kernel, beneath the root descriptor.

use std::fmt;
use std::str::FromStr;

use codespace_types::{LexicalRefusal, normalise_relative};

use crate::error::{FsError, PathEscapeReason};

/// Longest accepted component, in bytes (`NAME_MAX`).
pub const MAX_COMPONENT_BYTES: usize = 255;
/// Longest accepted path, in bytes, before normalisation (`PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// How much of a refused path is kept for the error message.
const SHOWN_BYTES: usize = 256;

/// A validated, normalised, workspace-relative path.
///
/// Non-empty, relative, NUL-free and `/`-separated. `.` and empty components are
/// dropped and `..` pops a component, but may never climb above the root (decided
/// lexically, which matches the kernel because symlinks are refused anyway). No component
/// is longer than 255 bytes and the input is at most 4096 bytes. Comparison is
/// byte-exact: no Unicode normalisation, so NFC and NFD spellings are different paths.
/// `~` is an ordinary name. A backslash is an ordinary byte, as it is on Linux.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WorkspacePath(String);

impl WorkspacePath {
    /// Validates and normalises `s` (`"sub/../a"` becomes `"a"`).
    pub fn parse(s: &str) -> Result<Self, FsError> {
        let reject = |reason| Err(FsError::PathEscape { path: shown(s), reason });
        if s.is_empty() {
            return reject(PathEscapeReason::Empty);
        }
        if s.len() > MAX_PATH_BYTES {
            return reject(PathEscapeReason::TooLong);
        }
        let lexical = normalise_relative(s);
        // A NUL or a leading `/` is refused before the names are looked at; an over-long
        // name next, on the text as given, so `..` cannot hide it.
        if !matches!(lexical, Err(LexicalRefusal::Nul | LexicalRefusal::Absolute))
            && s.split('/').any(|component| component.len() > MAX_COMPONENT_BYTES)
        {
            return reject(PathEscapeReason::ComponentTooLong);
        }
        match lexical {
            Ok(normalised) => Ok(Self(normalised)),
            Err(LexicalRefusal::Nul) => reject(PathEscapeReason::Nul),
            Err(LexicalRefusal::Absolute) => reject(PathEscapeReason::Absolute),
            Err(LexicalRefusal::ParentEscape) => reject(PathEscapeReason::ParentEscape),
            Err(LexicalRefusal::Root) => reject(PathEscapeReason::Root),
        }
    }

    /// The normalised form, e.g. `"src/main.rs"`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The components, root first; never empty, never `.` or `..`.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }

    /// The parent path, or `None` when the parent is the root.
    pub fn parent(&self) -> Option<&str> {
        self.0.rsplit_once('/').map(|(parent, _)| parent)
    }

    /// The last component.
    pub fn file_name(&self) -> &str {
        self.0.rsplit_once('/').map_or(self.0.as_str(), |(_, name)| name)
    }
}

/// A bounded copy of a refused input, so an error never carries megabytes of path.
fn shown(s: &str) -> String {
    if s.len() <= SHOWN_BYTES {
        return s.to_owned();
    }
    let mut end = SHOWN_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// A path crosses the runner's socket as its text and is checked again when it arrives.
impl serde::Serialize for WorkspacePath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for WorkspacePath {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        WorkspacePath::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for WorkspacePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for WorkspacePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl AsRef<str> for WorkspacePath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl FromStr for WorkspacePath {
    type Err = FsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl TryFrom<&str> for WorkspacePath {
    type Error = FsError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests;
