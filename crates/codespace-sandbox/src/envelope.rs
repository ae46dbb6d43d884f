//! The one encoding of the messages between the server, the reaper shim, its spawn helper
//! and the sandbox launcher: postcard (serde) behind one version number, [`VERSION`], so a
//! peer from another build is refused with an error that says so instead of being misread.
//! A message travels as bytes over a socket, as frames (a little-endian `u32` length,
//! then the message) on a pipe, or as hex on a command line. The fixed-size status the
//! launcher's init sends its monitor right after `fork` (`launch/status.rs`) is not an
//! envelope: it is written where nothing may allocate.

use std::ffi::OsString;
use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// The version of every message's layout. Raise it whenever any message changes, or what
/// the shim understands of the supervisor's signals (2: SIGUSR1 asks it to send SIGTERM to
/// its tree; 3: the shim's external policy).
pub const VERSION: u32 = 3;

/// The largest frame [`frame`] makes and a reader should accept.
pub const MAX_FRAME: u32 = 1 << 20;

/// Hex digits per command-line argument: an argument may hold at most 128 KiB.
const ARG_CHUNK: usize = 64 * 1024;

/// Why a message could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvelopeError {
    /// The peer wrote another version of the messages.
    Version {
        /// The peer's version.
        got: u32,
    },
    /// The bytes are not a message of the expected kind.
    Malformed(String),
}

impl fmt::Display for EnvelopeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Version { got } => write!(
                f,
                "message version {got}, this build speaks version {VERSION} (the server and \
                 its reaper binary are from different builds)"
            ),
            Self::Malformed(why) => write!(f, "malformed message: {why}"),
        }
    }
}

impl std::error::Error for EnvelopeError {}

fn malformed(e: impl fmt::Display) -> EnvelopeError {
    EnvelopeError::Malformed(e.to_string())
}

/// `message` behind the version.
pub fn encode<T: Serialize>(message: &T) -> Result<Vec<u8>, EnvelopeError> {
    postcard::to_stdvec(&(VERSION, message)).map_err(malformed)
}

/// The message in `bytes`, which must hold exactly one, of this version.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, EnvelopeError> {
    let (got, rest) = postcard::take_from_bytes::<u32>(bytes).map_err(malformed)?;
    if got != VERSION {
        return Err(EnvelopeError::Version { got });
    }
    let (message, rest) = postcard::take_from_bytes::<T>(rest).map_err(malformed)?;
    if !rest.is_empty() {
        return Err(malformed(format!("{} bytes after the message", rest.len())));
    }
    Ok(message)
}

/// `message` as one frame for a stream: its length (little-endian `u32`), then the
/// envelope. Written with one `write`, so frames of several writers never interleave.
pub fn frame<T: Serialize>(message: &T) -> Result<Vec<u8>, EnvelopeError> {
    let body = encode(message)?;
    let len = u32::try_from(body.len())
        .ok()
        .filter(|n| *n <= MAX_FRAME)
        .ok_or_else(|| malformed("too large for a frame"))?;
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// `message` as command-line arguments (hex, in chunks an argument can hold).
pub fn to_args<T: Serialize>(message: &T) -> Result<Vec<OsString>, EnvelopeError> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let bytes = encode(message)?;
    let hex: Vec<u8> = bytes
        .iter()
        .flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 0xf)]])
        .collect();
    Ok(hex.chunks(ARG_CHUNK).map(|c| String::from_utf8_lossy(c).into_owned().into()).collect())
}

/// The message [`to_args`] made, from all of `args`.
pub fn from_args<T: DeserializeOwned>(args: &[OsString]) -> Result<T, EnvelopeError> {
    let mut hex = String::new();
    for arg in args {
        hex.push_str(arg.to_str().ok_or_else(|| malformed("an argument is not hex"))?);
    }
    if hex.is_empty() || !hex.len().is_multiple_of(2) {
        return Err(malformed("not an even number of hex digits"));
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("x"), 16))
        .collect::<Result<Vec<u8>, _>>()
        .map_err(|_| malformed("an argument is not hex"))?;
    decode(&bytes)
}

#[cfg(test)]
mod tests;
