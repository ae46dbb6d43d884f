//! [`Version`]: the whole-file content identity (`sha256:<hex>` or `absent`).

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

/// The version of a file: SHA-256 of its whole content, or `Absent` when it does not exist.
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
            Self::Sha256(digest) => {
                f.write_str("sha256:")?;
                digest.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
            }
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
        let hex = s.strip_prefix("sha256:").ok_or(ParseVersionError)?.as_bytes();
        if hex.len() != 64 {
            return Err(ParseVersionError);
        }
        let nibble = |c: u8| match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            _ => Err(ParseVersionError),
        };
        let mut digest = [0u8; 32];
        for (byte, pair) in digest.iter_mut().zip(hex.chunks_exact(2)) {
            *byte = nibble(pair[0])? << 4 | nibble(pair[1])?;
        }
        Ok(Self::Sha256(digest))
    }
}

#[cfg(test)]
mod tests;
