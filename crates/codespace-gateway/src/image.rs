//! What `read` tells of a window's bytes: text or base64 ([`encode`]), and an image's type
//! and size from its first bytes ([`sniff`]: PNG, JPEG, GIF, WebP), so a client can show it.

use base64::Engine;
use codespace_protocol::{Encoding, ImageInfo};

/// The window as `read` answers it: the text when it is valid UTF-8 with no NUL, otherwise
/// base64. A text window cut inside a character by its end (`more` bytes follow) gives up
/// the character's first bytes (at most 3): the returned count is the bytes kept.
pub(crate) fn encode(mut bytes: Vec<u8>, more: bool) -> (String, Encoding, usize) {
    if !bytes.contains(&0) {
        let keep = match std::str::from_utf8(&bytes) {
            Ok(_) => Some(bytes.len()),
            // An incomplete character at the very end of a window that continues.
            Err(e) if more && e.error_len().is_none() && e.valid_up_to() > 0 => {
                Some(e.valid_up_to())
            }
            Err(_) => None,
        };
        if let Some(keep) = keep {
            bytes.truncate(keep);
            match String::from_utf8(bytes) {
                Ok(text) => return (text, Encoding::Utf8, keep),
                Err(e) => bytes = e.into_bytes(),
            }
        }
    }
    let n = bytes.len();
    (base64::engine::general_purpose::STANDARD.encode(&bytes), Encoding::Base64, n)
}

/// The image type and pixel size of a file that starts with `head`, when it is a PNG,
/// JPEG, GIF or WebP; `None` for anything else.
pub(crate) fn sniff(head: &[u8]) -> Option<ImageInfo> {
    let info = |mime: &str, size: Option<(u32, u32)>| ImageInfo {
        mime_type: mime.to_owned(),
        width: size.map(|s| s.0),
        height: size.map(|s| s.1),
    };
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        let size = (head.get(12..16) == Some(b"IHDR")).then(|| (be32(head, 16), be32(head, 20)));
        return Some(info("image/png", size.and_then(both)));
    }
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        return Some(info("image/gif", both((le16(head, 6), le16(head, 8)))));
    }
    if head.starts_with(b"\xff\xd8\xff") {
        return Some(info("image/jpeg", jpeg_size(head)));
    }
    if head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
        return Some(info("image/webp", webp_size(head)));
    }
    None
}

fn both(size: (Option<u32>, Option<u32>)) -> Option<(u32, u32)> {
    Some((size.0?, size.1?))
}

fn be16(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 2).map(|s| u32::from(u16::from_be_bytes([s[0], s[1]])))
}

fn le16(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 2).map(|s| u32::from(u16::from_le_bytes([s[0], s[1]])))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

fn le24(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 3).map(|s| u32::from_le_bytes([s[0], s[1], s[2], 0]))
}

/// The frame size from the first start-of-frame marker (SOF0..SOF15 but DHT, JPG, DAC).
fn jpeg_size(b: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        while *b.get(at)? != 0xff {
            at += 1;
        }
        while *b.get(at)? == 0xff {
            at += 1;
        }
        let marker = *b.get(at)?;
        at += 1;
        if (0xd0..=0xd9).contains(&marker) || marker == 0x01 {
            continue;
        }
        let len = usize::try_from(be16(b, at)?).ok()?;
        if (0xc0..=0xcf).contains(&marker) && ![0xc4, 0xc8, 0xcc].contains(&marker) {
            return both((be16(b, at + 5), be16(b, at + 3)));
        }
        at += len.max(2);
    }
}

/// The canvas size of a lossy (`VP8 `), lossless (`VP8L`) or extended (`VP8X`) WebP.
fn webp_size(b: &[u8]) -> Option<(u32, u32)> {
    match b.get(12..16)? {
        b"VP8X" => Some((le24(b, 24)? + 1, le24(b, 27)? + 1)),
        b"VP8L" => {
            let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
            Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
        }
        b"VP8 " => Some((le16(b, 26)? & 0x3fff, le16(b, 28)? & 0x3fff)),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
